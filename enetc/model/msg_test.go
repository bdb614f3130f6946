package model

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/sim/simdma"
)

// vfPair is a PF and its VF 0 on one IOMMU, as the functions of one
// LS1028A share the SMMU domain of a VFIO container.
func vfPair(t *testing.T) (pf, vf *Device, io *simdma.IOMMU) {
	io = simdma.NewIOMMU(false)
	pf = New(Config{Name: "pf", PF: true, IOMMU: io, MAC: [6]byte{2, 0, 0, 0, 0, 1}})
	vf = New(Config{Name: "vf", IOMMU: io, MAC: [6]byte{2, 0, 0, 0, 1, 1}})
	if err := pf.AttachVF(vf, 0); err != nil {
		t.Fatal(err)
	}
	return pf, vf, io
}

func mapped(t *testing.T, io *simdma.IOMMU, n int) ([]byte, uint64) {
	b := make([]byte, n)
	m, err := io.Map(b, dma.Attr{Name: "msg"})
	if err != nil {
		t.Fatal(err)
	}
	return b, m.IOVA
}

// TestMailbox: a VF's message lands in the PF's receive buffer and is
// flagged in PSIMSGRR; the VF stays busy until the PF answers; the PF's
// code reaches VSIMSGSR (MS set for a code other than 0).
func TestMailbox(t *testing.T) {
	pf, vf, io := vfPair(t)
	msg, msgIOVA := mapped(t, io, 64)
	copy(msg, "\x01\x00\x01\x00set-mac")
	rcv, rcvIOVA := mapped(t, io, MsgMaxSize)

	// Sent before the PF set a receive buffer: busy, not delivered.
	vf.Write32(regPSIVMSGRCVAR1, uint32(msgIOVA>>32))
	vf.Write32(regPSIVMSGRCVAR0, uint32(msgIOVA)|64>>5)
	if vf.Read32(regPSIMSGRR)&vsimsgsr_MB == 0 || pf.Read32(regPSIMSGRR) != 0 {
		t.Fatalf("VSIMSGSR %#x PSIMSGRR %#x: want busy, not yet received", vf.Read32(regPSIMSGRR), pf.Read32(regPSIMSGRR))
	}
	pf.Write32(regPSIVMSGRCVAR1, uint32(rcvIOVA>>32))
	pf.Write32(regPSIVMSGRCVAR0, uint32(rcvIOVA))
	if pf.Read32(regPSIMSGRR) != 1<<1 || pf.Read32(regPSIIDR)&(1<<1) == 0 {
		t.Fatalf("PSIMSGRR %#x PSIIDR %#x after the receive buffer was set", pf.Read32(regPSIMSGRR), pf.Read32(regPSIIDR))
	}
	if !bytes.Equal(rcv[:64], msg) {
		t.Fatalf("PF received %q", rcv[:16])
	}
	if vf.Read32(regPSIMSGRR)&vsimsgsr_MB == 0 {
		t.Fatal("VF not busy before the PF answered")
	}
	pf.Write32(regPSIMSGRR, 0<<16|1<<1) // answer OK
	if st := vf.Read32(regPSIMSGRR); st != 0 || pf.Read32(regPSIMSGRR) != 0 {
		t.Fatalf("after an OK answer: VSIMSGSR %#x PSIMSGRR %#x", st, pf.Read32(regPSIMSGRR))
	}

	// A second message, refused with code 1.
	vf.Write32(regPSIVMSGRCVAR0, uint32(msgIOVA)|64>>5)
	if pf.Read32(regPSIMSGRR) != 1<<1 {
		t.Fatal("second message not flagged")
	}
	pf.Write32(regPSIMSGRR, 1<<16|1<<1)
	if st := vf.Read32(regPSIMSGRR); st != 1<<16|vsimsgsr_MS {
		t.Fatalf("after a refusal: VSIMSGSR %#x, want code 1 and MS", st)
	}
	if e := append(pf.ModelErrors(), vf.ModelErrors()...); len(e) != 0 {
		t.Fatalf("model errors: %q", e)
	}
}

// TestMailboxNoPF: a VF without a PF stays busy; sending again while busy
// is a model error.
func TestMailboxNoPF(t *testing.T) {
	io := simdma.NewIOMMU(false)
	vf := New(Config{Name: "vf", IOMMU: io})
	_, iova := mapped(t, io, 64)
	vf.Write32(regPSIVMSGRCVAR0, uint32(iova)|2)
	if vf.Read32(regPSIMSGRR)&vsimsgsr_MB == 0 {
		t.Fatal("a message with no PF to take it is not busy")
	}
	vf.Write32(regPSIVMSGRCVAR0, uint32(iova)|2)
	if e := vf.ModelErrors(); len(e) != 1 || !strings.Contains(e[0], "busy") {
		t.Fatalf("model errors %q", e)
	}
}

// TestVFPrimaryMAC: the PF's PSIPMAR0/1(1) is the VF's SIPMAR0/1; the VF
// cannot write its own.
func TestVFPrimaryMAC(t *testing.T) {
	pf, vf, _ := vfPair(t)
	pf.Write32(regPSIPMAR0+PSIPMARStride, 0x44332202)
	pf.Write32(regPSIPMAR1+PSIPMARStride, 0x6655)
	if vf.Read32(regSIPMAR0) != 0x44332202 || vf.Read32(regSIPMAR1) != 0x6655 {
		t.Fatalf("VF SIPMAR %#x/%#x", vf.Read32(regSIPMAR0), vf.Read32(regSIPMAR1))
	}
	pf.Write32(regPSIPMAR0+2*PSIPMARStride, 0x11111102) // VF 1: not attached
	if vf.Read32(regSIPMAR0) != 0x44332202 {
		t.Fatal("VF 0 took VF 1's MAC")
	}
	vf.Write32(regSIPMAR0, 0x12345602)
	if vf.Read32(regSIPMAR0) != 0x44332202 {
		t.Fatal("a VF changed its own SIPMAR0")
	}
	if e := vf.ModelErrors(); len(e) != 1 || !strings.Contains(e[0], "set by its PF") {
		t.Fatalf("model errors %q", e)
	}
}

// TestVFRingsFromPF: an attached VF owns no ring until its PF assigns
// some in PSICFGR0(n+1) (Linux enetc_port_si_configure does it at PF
// probe); it then owns what was assigned, at most the rings it has. A VF
// with no PF in the model keeps the rings it was made with.
func TestVFRingsFromPF(t *testing.T) {
	pf, vf, io := vfPair(t)
	if c := vf.Read32(regSICAPR0); c != 0 {
		t.Fatalf("VF SICAPR0 = %#x before the PF assigned rings, want 0", c)
	}
	pf.Write32(regPSICFGR0+PSICFGR0Stride, 4|4<<16)
	if c := vf.Read32(regSICAPR0); c != 4|4<<16 {
		t.Fatalf("VF SICAPR0 = %#x after PSICFGR0(1) = 4/4, want 0x40004", c)
	}
	pf.Write32(regPSICFGR0+PSICFGR0Stride, 200|200<<16)
	if c := vf.Read32(regSICAPR0); c != 8|8<<16 {
		t.Fatalf("VF SICAPR0 = %#x after PSICFGR0(1) = 200/200, want the VF's 8/8", c)
	}
	if c := pf.Read32(regPCAPR0); c>>16&0xFF != MaxRings || c>>24 != MaxRings {
		t.Fatalf("PF PCAPR0 = %#x, want %d port rings each way", c, MaxRings)
	}
	alone := New(Config{Name: "vf2", IOMMU: io, TxRings: 2, RxRings: 3})
	if c := alone.Read32(regSICAPR0); c != 2|3<<16 {
		t.Fatalf("VF with no PF in the model: SICAPR0 = %#x, want its own 2/3", c)
	}
}

// TestUninitializedMemories: the port's RFS and RSS memories start with
// every entry unwritten; a class-4 set of one entry (116 bytes, Linux's
// struct enetc_cmd_rfse) and a class-3 set of the table count as written,
// and an FLR does not undo that; a wrong RFS length or index is refused.
func TestUninitializedMemories(t *testing.T) {
	h := newHarness(t, Config{PF: true})
	c := newCBDR(h)
	if rfs, rss := h.d.UninitializedMemories(); rfs != RFSEntries || rss != RSSTableLen {
		t.Fatalf("fresh model: %d RFS / %d RSS unwritten, want %d / %d", rfs, rss, RFSEntries, RSSTableLen)
	}
	rfsSet := func(idx, length int) uint8 {
		return c.run(func(b []byte) {
			binary.LittleEndian.PutUint32(b[0:], uint32(c.data.iova))
			binary.LittleEndian.PutUint32(b[4:], uint32(c.data.iova>>32))
			binary.LittleEndian.PutUint16(b[24:], uint16(idx))
			binary.LittleEndian.PutUint16(b[26:], uint16(length))
			b[28], b[29] = 0, CBDClassRFS
		})
	}
	if st := rfsSet(3, RFSEntrySize); st != CBDErrNone {
		t.Fatalf("RFS set of entry 3: status %d", st)
	}
	if st := rfsSet(4, 64); st != CBDErrLength {
		t.Fatalf("RFS set with 64 bytes: status %d, want CBDErrLength", st)
	}
	if st := rfsSet(RFSEntries, RFSEntrySize); st != CBDErrIndex {
		t.Fatalf("RFS set past the memory: status %d, want CBDErrIndex", st)
	}
	if st := c.rssSet(make([]byte, RSSTableLen)); st != CBDErrNone {
		t.Fatalf("RSS set: status %d", st)
	}
	h.d.Reset()
	if rfs, rss := h.d.UninitializedMemories(); rfs != RFSEntries-1 || rss != 0 {
		t.Fatalf("after the sets and an FLR: %d RFS / %d RSS unwritten, want %d / 0", rfs, rss, RFSEntries-1)
	}
}

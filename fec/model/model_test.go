package model

import (
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/internal/mii"
)

func TestNewUnknownSoCListsProfiles(t *testing.T) {
	t.Parallel()
	_, err := New(Config{SoC: "imx99"})
	if err == nil {
		t.Fatal("New accepted SoC imx99")
	}
	for _, p := range []string{"imx6q", "imx6sx", "imx6ul", "imx7d", "imx8mq", "imx8mp", "imx93"} {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not list profile %s", err, p)
		}
	}
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Profile().Name != DefaultSoC {
		t.Errorf("default profile %s, want %s", d.Profile().Name, DefaultSoC)
	}
}

func TestRegisterTable(t *testing.T) {
	t.Parallel()
	seen := map[uint32]string{}
	for _, r := range Registers() {
		if prev, dup := seen[r.Offset]; dup {
			t.Errorf("offset %#x holds %s and %s", r.Offset, prev, r.Name)
		}
		seen[r.Offset] = r.Name
		switch r.Access {
		case "rw", "ro", "w1c", "trigger":
		default:
			t.Errorf("%s: access %q", r.Name, r.Access)
		}
	}
	for _, c := range []struct {
		name   string
		off    uint32
		access string
	}{
		{"EIR", 0x004, "w1c"}, {"EIMR", 0x008, "rw"}, {"RDAR", 0x010, "trigger"}, {"TDAR", 0x014, "trigger"},
		{"ECR", 0x024, "rw"}, {"MMFR", 0x040, "rw"}, {"MSCR", 0x044, "rw"}, {"MIBC", 0x064, "rw"},
		{"RCR", 0x084, "rw"}, {"TCR", 0x0C4, "rw"}, {"PALR", 0x0E4, "rw"}, {"PAUR", 0x0E8, "rw"},
		{"OPD", 0x0EC, "rw"}, {"GALR", 0x124, "rw"}, {"TFWR", 0x144, "rw"}, {"RDSR1", 0x160, "rw"},
		{"RDSR", 0x180, "rw"}, {"TDSR", 0x184, "rw"}, {"MRBR", 0x188, "rw"}, {"FTRL", 0x1B0, "rw"},
		{"TACC", 0x1C0, "rw"}, {"RACC", 0x1C4, "rw"}, {"RDAR1", 0x1E0, "trigger"}, {"TDAR2", 0x1EC, "trigger"},
		{"RMON_T_DROP", 0x200, "ro"}, {"IEEE_T_OCTETS_OK", 0x274, "ro"}, {"RMON_R_PACKETS", 0x284, "ro"},
		{"IEEE_R_OCTETS_OK", 0x2E0, "ro"}, {"TGSR", 0x604, "w1c"}, {"TCCR3", 0x624, "rw"},
	} {
		if got := seen[c.off]; got != c.name {
			t.Errorf("offset %#x: %q, want %q", c.off, got, c.name)
		}
	}
}

func TestResetValues(t *testing.T) {
	t.Parallel()
	d, err := New(Config{SoC: "imx6ul", MAC: [6]byte{0, 4, 0x9f, 1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Read32(regPALR); got != 0x00049f01 {
		t.Errorf("PALR at power-up %#x, want the boot loader's 0x00049f01", got)
	}
	// Scribble over everything writable, then reset.
	for _, r := range Registers() {
		if r.Access == "rw" && r.Offset != regECR {
			d.Write32(r.Offset, 0xFFFFFFFF)
		}
	}
	d.Write32(regECR, ecr_RESET)
	for _, c := range []struct {
		name string
		off  uint32
		want uint32
	}{
		{"ECR", regECR, 0xF0000000}, {"RCR", regRCR, 0x05EE0001}, {"MIBC", regMIBC, 0xC0000000},
		{"OPD", regOPD, 0x00010000}, {"PALR", regPALR, 0}, {"PAUR", regPAUR, 0x8808},
		{"FTRL", regFTRL, 0x7FF}, {"TIPG", regTIPG, 12}, {"RAEM", regRAEM, 4}, {"RAFL", regRAFL, 4},
		{"TAEM", regTAEM, 4}, {"TAFL", regTAFL, 8}, {"MRBR", regMRBR, 0}, {"TCR", regTCR, 0},
		{"EIMR", regEIMR, 0}, {"RACC", regRACC, 0}, {"MSCR", regMSCR, 0}, {"RDAR", regRDAR, 0},
	} {
		if got := d.Read32(c.off); got != c.want {
			t.Errorf("%s after ECR.RESET = %#x, want %#x", c.name, got, c.want)
		}
	}
}

func TestWriteMasks(t *testing.T) {
	t.Parallel()
	d, _ := New(Config{SoC: "imx8mp"})
	for _, c := range []struct {
		name string
		off  uint32
		v    uint32
		want uint32
	}{
		{"MRBR keeps bits 13:4", regMRBR, 0xFFFFFFFF, 0x3FF0},
		{"RDSR drops the low 3 bits", regRDSR, 0x1234567F, 0x12345678},
		{"PAUR type half is read-only", regPAUR, 0xAABB1234, 0xAABB8808},
		{"OPD opcode half reads 1", regOPD, 0xFFFFFFF0, 0x0001FFF0},
		{"TFWR", regTFWR, 0xFFFFFFFF, 0x13F},
		{"RACC", regRACC, 0xFFFFFFFF, 0xC7},
		{"TACC", regTACC, 0xFFFFFFFF, 0x19},
		{"MSCR", regMSCR, 0xFFFFFFFF, 0x7FE},
		{"RCR GRS is status", regRCR, 0xFFFFFFFF, 0x7FFFF37F},
	} {
		d.Write32(c.off, c.v)
		if got := d.Read32(c.off); got != c.want {
			t.Errorf("%s: wrote %#x, read %#x, want %#x", c.name, c.v, got, c.want)
		}
	}
}

func TestEIRWriteOneToClear(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	d := td.d
	td.send(0, testFrame(ourMAC, 50, 1))
	d.Write32(regMMFR, 0x60060000) // BMSR read: raises MII
	want := uint32(eir_TXF | eir_TXB | eir_MII)
	if got := d.Read32(regEIR); got&want != want {
		t.Fatalf("EIR %#x, want TXF|TXB|MII (%#x) set", got, want)
	}
	d.Write32(regEIR, eir_TXB) // clears TXB only
	if got := d.Read32(regEIR); got&want != eir_TXF|eir_MII {
		t.Fatalf("after W1C of TXB: EIR %#x", got)
	}
	d.Write32(regEIR, 0) // writing zeros changes nothing
	if got := d.Read32(regEIR); got&want != eir_TXF|eir_MII {
		t.Fatalf("after writing 0: EIR %#x", got)
	}
	d.Write32(regEIR, 0xFFFFFFFF)
	if got := d.Read32(regEIR); got != 0 {
		t.Fatalf("after W1C of all: EIR %#x", got)
	}
}

func TestTriggerRegisters(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp", nrx: 2})
	d := td.d
	if got := d.Read32(regRDAR); got != activeBit {
		t.Fatalf("RDAR after start with empty BDs = %#x, want active", got)
	}
	// Fill both BDs: the engine finds no empty BD and clears RDAR.
	d.SetWire(nil)
	for i := 0; i < 2; i++ {
		if !d.Receive(testFrame(ourMAC, 60, i)) {
			t.Fatalf("frame %d refused", i)
		}
	}
	if got := d.Read32(regRDAR); got != 0 {
		t.Fatalf("RDAR with a full ring = %#x, want 0", got)
	}
	if d.Receive(testFrame(ourMAC, 60, 9)) {
		t.Fatal("frame accepted with a full ring")
	}
	if s := d.Stats(); s.RxNoBuffer != 1 {
		t.Fatalf("RxNoBuffer %d, want 1", s.RxNoBuffer)
	}
	// A refill without RDAR does not restart reception: the driver must
	// write RDAR.
	td.initRxBD(0, 0)
	if d.Receive(testFrame(ourMAC, 60, 10)) {
		t.Fatal("frame accepted after refill without an RDAR write")
	}
	d.Write32(regRDAR, 0)
	if !d.Receive(testFrame(ourMAC, 60, 11)) {
		t.Fatal("frame refused after refill and RDAR")
	}
	// TDAR: processed inside the write in synchronous mode, then clear.
	td.send(0, testFrame(ourMAC, 60, 1))
	if got := d.Read32(regTDAR); got != 0 {
		t.Fatalf("TDAR after the ring drained = %#x", got)
	}
	// Triggers are ignored while ETHEREN is clear.
	d.Write32(regECR, d.Read32(regECR)&^ecr_ETHEREN)
	d.Write32(regTDAR, 0)
	d.Write32(regRDAR, 0)
	if d.Read32(regTDAR) != 0 || d.Read32(regRDAR) != 0 {
		t.Fatal("TDAR/RDAR went active while the MAC is disabled")
	}
	// RDAR: three rings started at bring-up, one after the refill, one
	// while disabled.
	if s := d.Stats(); s.TDARWrites != 2 || s.RDARWrites != 5 {
		t.Fatalf("TDAR writes %d, RDAR writes %d; want 2, 5", s.TDARWrites, s.RDARWrites)
	}
}

func TestOutOfWindowAndUnaligned(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		soc  string
		off  uint32
		want string
	}{
		{"imx6q", 0x4000, "offset 0x4000 outside the 0x4000-byte window"},
		{"imx8mp", 0x10000, "offset 0x10000 outside the 0x10000-byte window"},
		{"imx8mp", 0x26, "unaligned 32-bit register access at offset 0x26"},
	} {
		d, _ := New(Config{SoC: c.soc})
		if d.Err() != nil {
			t.Fatal(d.Err())
		}
		if got := d.Read32(c.off); got != 0xFFFFFFFF {
			t.Errorf("%s read at %#x = %#x, want all ones", c.soc, c.off, got)
		}
		d.Write32(c.off+4, 1) // a second bad access does not replace the first
		if err := d.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Err = %v, want it to say %q", c.soc, err, c.want)
		}
	}
}

func TestUnimplementedRegisters(t *testing.T) {
	t.Parallel()
	d, _ := New(Config{SoC: "imx6q"}) // single queue, no coalescing, no EEE
	for _, off := range []uint32{regTXIC0, regRDSR1, regTDAR1, regFRBR, regLPISleep, 0x800, 0x3FFC} {
		d.Write32(off, 0xFFFFFFFF)
		if got := d.Read32(off); got != 0 {
			t.Errorf("unimplemented %#x reads %#x", off, got)
		}
	}
	acc := d.Unimplemented()
	if len(acc) != 14 || d.Stats().Unimplemented != 14 {
		t.Fatalf("recorded %d accesses (%d counted), want 14", len(acc), d.Stats().Unimplemented)
	}
	if acc[0] != (Access{Offset: regTXIC0, Write: true, Value: 0xFFFFFFFF}) || acc[1] != (Access{Offset: regTXIC0}) {
		t.Fatalf("first accesses %+v", acc[:2])
	}
	if d.Err() != nil {
		t.Fatalf("in-window unimplemented access set Err: %v", d.Err())
	}
	// The same registers exist on a multi-queue part.
	d2, _ := New(Config{SoC: "imx6sx"})
	d2.Write32(regRDSR1, 0x1000)
	if d2.Read32(regRDSR1) != 0x1000 || d2.Stats().Unimplemented != 0 {
		t.Fatal("RDSR1 missing on imx6sx")
	}
	// LPI registers only where the reference lists EEE (imx8mq and later).
	d3, _ := New(Config{SoC: "imx8mp"})
	d3.Write32(regLPIWake, 0x40)
	if d3.Read32(regLPIWake) != 0x40 || d3.Stats().Unimplemented != 0 {
		t.Fatal("LPI_WAKE missing on imx8mp")
	}
}

// TestTxRxEveryProfileAndFormat sends and receives frames through both BD
// formats on every profile: the wire and memory must hold exactly the
// expected bytes.
func TestTxRxEveryProfileAndFormat(t *testing.T) {
	t.Parallel()
	for _, soc := range Profiles() {
		for _, enh := range []bool{false, true} {
			name := soc + "/legacy"
			if enh {
				name = soc + "/enhanced"
			}
			t.Run(name, func(t *testing.T) {
				td := newTDrv(t, tOpts{soc: soc, enh: enh, nrx: 4, ntx: 4})
				c := &capture{}
				td.d.SetWire(c)
				var sent [][]byte
				for round := 0; round < 3; round++ { // wraps the 4-entry rings
					f1, f2 := testFrame([6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 100+round, round), testFrame(ourMAC, 1500, round)
					offs := td.send(0, f1, f2)
					sent = append(sent, f1, f2)
					for _, off := range offs {
						sc, _ := td.w0(off)
						if sc&txbd_R != 0 {
							t.Fatalf("TX BD still ready after TDAR: sc %#x", sc)
						}
						if enh && td.getWord(off+bdBDU)&bd_BDU == 0 {
							t.Fatal("enhanced TX BD without BDU")
						}
					}
				}
				got := c.get()
				if len(got) != len(sent) {
					t.Fatalf("wire got %d frames, want %d", len(got), len(sent))
				}
				for i := range sent {
					mustEqual(t, "TX frame", got[i], sent[i])
				}
				for i := 0; i < 6; i++ {
					f := testFrame(ourMAC, 46+i*200, i)
					if !td.d.Receive(f) {
						t.Fatalf("frame %d refused", i)
					}
					r, ok := td.recv(0)
					if !ok {
						t.Fatalf("frame %d not in ring", i)
					}
					if r.sc&(bd_L|rxErrBits) != bd_L || int(r.length) != len(f)+4 {
						t.Fatalf("frame %d: sc %#x length %d, want L and %d", i, r.sc, r.length, len(f)+4)
					}
					mustEqual(t, "RX frame", r.data[:len(f)], f)
					if fcs := binary.LittleEndian.Uint32(r.data[len(f):]); fcs != crc32.ChecksumIEEE(f) {
						t.Fatalf("FCS %#x, want %#x", fcs, crc32.ChecksumIEEE(f))
					}
					if enh && (r.bdu&bd_BDU == 0 || r.esc&rxbd_UC == 0 || r.esc&rxbd_INT == 0) {
						t.Fatalf("enhanced RX: esc %#x bdu %#x", r.esc, r.bdu)
					}
				}
			})
		}
	}
}

// TestDescriptorByteOrder: ENET-MAC parts read descriptors big-endian
// unless ECR.DBSWP is set, so a driver that writes little-endian BDs and
// forgets DBSWP gets nothing out (QEMU would hide this).
func TestDescriptorByteOrder(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		noDBSWP bool
		writeLE bool
		works   bool
	}{
		{"DBSWP set, little-endian BDs", false, true, true},
		{"DBSWP clear, big-endian BDs", true, false, true},
		{"DBSWP forgotten, little-endian BDs", true, true, false},
	} {
		for _, soc := range []string{"imx6q", "imx8mp"} {
			t.Run(soc+"/"+c.name, func(t *testing.T) {
				td := newTDrv(t, tOpts{soc: soc, noDBSWP: c.noDBSWP, writeLE: c.writeLE})
				w := &capture{}
				td.d.SetWire(w)
				f := testFrame(ourMAC, 64, 3)
				td.send(0, f)
				rx := td.d.Receive(f)
				if c.works {
					if len(w.get()) != 1 || !rx {
						t.Fatalf("sent %d frames, received %v; want 1, true", len(w.get()), rx)
					}
					mustEqual(t, "TX", w.get()[0], f)
					r, ok := td.recv(0)
					if !ok {
						t.Fatal("RX BD not filled")
					}
					mustEqual(t, "RX", r.data[:len(f)], f)
					return
				}
				if len(w.get()) != 0 {
					t.Fatalf("a frame left although the BDs are in the wrong byte order: % x", w.get()[0])
				}
				if rx {
					if _, ok := td.recv(0); ok {
						t.Fatal("received into wrongly ordered BDs as if they were right")
					}
				}
			})
		}
	}
}

func TestShift16(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp", shift16: true})
	f := testFrame(ourMAC, 80, 5)
	td.d.Receive(f)
	r, ok := td.recv(0)
	if !ok {
		t.Fatal("no frame")
	}
	if int(r.length) != 2+len(f)+4 {
		t.Fatalf("length %d, want %d (2 pad + frame + FCS)", r.length, 2+len(f)+4)
	}
	mustEqual(t, "pad", r.data[:2], []byte{0, 0})
	mustEqual(t, "frame after pad", r.data[2:2+len(f)], f)

	// TACC.SHIFT16: the first two bytes of the TX buffer are skipped.
	td.d.Write32(regTACC, tacc_SHIFT16)
	w := &capture{}
	td.d.SetWire(w)
	td.send(0, append([]byte{0xAA, 0xBB}, f...))
	mustEqual(t, "TX with TACC.SHIFT16", w.get()[0], f)
}

func TestShortFramePaddedOnTX(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx93"})
	w := &capture{}
	td.d.SetWire(w)
	f := testFrame(ourMAC, 20, 1) // 34 bytes
	td.send(0, f)
	got := w.get()[0]
	if len(got) != 60 {
		t.Fatalf("wire frame of %d bytes, want 60 (padded, no FCS)", len(got))
	}
	mustEqual(t, "frame", got[:len(f)], f)
	mustEqual(t, "pad", got[len(f):], make([]byte, 60-len(f)))
}

func TestMultiBufferTXFrame(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mq"})
	w := &capture{}
	td.d.SetWire(w)
	f := testFrame(ourMAC, 900, 2)
	// Two BDs: the first without L, the second with L.
	parts := [][]byte{f[:400], f[400:]}
	for i, p := range parts {
		off, b := td.txBD(0, i), td.txBuf(0, i)
		copy(td.buf.Bytes()[b:], p)
		td.buf.SyncForDevice(b, len(p))
		td.setWord(off+bdAddr, uint32(td.buf.IOVAAt(b)))
		sc := uint16(txbd_R | txbd_TC)
		if i == 1 {
			sc |= bd_L
		}
		td.setW0(off, sc, uint16(len(p)))
	}
	td.d.Write32(regTDAR, 0)
	if len(w.get()) != 1 {
		t.Fatalf("%d frames on the wire, want 1", len(w.get()))
	}
	mustEqual(t, "gathered frame", w.get()[0], f)
}

func TestMultiBufferRXFrame(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp", mrbr: 256})
	f := testFrame(ourMAC, 600, 4) // 614 + 4 FCS = 618: three BDs of 256
	td.d.Receive(f)
	var data []byte
	for k := 0; k < 3; k++ {
		r, ok := td.recv(0)
		if !ok {
			t.Fatalf("BD %d not filled", k)
		}
		last := k == 2
		if (r.sc&bd_L != 0) != last {
			t.Fatalf("BD %d: sc %#x, L only on the last", k, r.sc)
		}
		if !last && r.length != 256 {
			t.Fatalf("BD %d length %d, want MRBR 256", k, r.length)
		}
		if last && int(r.length) != len(f)+4 {
			t.Fatalf("last BD length %d, want whole frame %d", r.length, len(f)+4)
		}
		n := 256
		if last {
			n = len(f) + 4 - 512
		}
		data = append(data, r.data[:n]...)
	}
	mustEqual(t, "reassembled", data[:len(f)], f)
}

func TestRXErrorBits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		inject RxError
		size   int // payload
		maxFL  uint32
		want   uint16
		eir    uint32
	}{
		{"injected CRC", RxCRC, 100, 0, rxbd_CR, 0},
		{"injected oversize", RxOversize, 100, 0, rxbd_LG, eir_BABR},
		{"injected truncation", RxTruncate, 500, 0, rxbd_TR, 0},
		{"injected overrun", RxOverrun, 100, 0, rxbd_OV, 0},
		{"injected non-octet", RxNonOctet, 100, 0, rxbd_NO, 0},
		{"injected short", RxShort, 100, 0, rxbd_SH, 0},
		{"longer than MAX_FL", -1, 1500, 1518 - 100, rxbd_LG, eir_BABR},
	} {
		t.Run(c.name, func(t *testing.T) {
			td := newTDrv(t, tOpts{soc: "imx8mp", enh: true, maxFL: c.maxFL})
			if c.inject >= 0 {
				if err := td.d.InjectRxErrors(c.inject, 1); err != nil {
					t.Fatal(err)
				}
			}
			td.d.Write32(regEIR, 0xFFFFFFFF)
			f := testFrame(ourMAC, c.size, 1)
			td.d.Receive(f)
			r, ok := td.recv(0)
			if !ok {
				t.Fatal("no frame")
			}
			if r.sc&rxErrBits != c.want || r.sc&bd_L == 0 {
				t.Fatalf("sc %#x, want L and error bits %#x", r.sc, c.want)
			}
			if r.esc&rxbd_ME == 0 {
				t.Fatalf("esc %#x without ME", r.esc)
			}
			if c.eir != 0 && td.d.Read32(regEIR)&c.eir == 0 {
				t.Fatalf("EIR %#x without %#x", td.d.Read32(regEIR), c.eir)
			}
			if c.inject == RxCRC {
				n := len(f)
				if binary.LittleEndian.Uint32(r.data[n:]) == crc32.ChecksumIEEE(f) {
					t.Fatal("CRC error frame carries a good FCS")
				}
			}
			if c.inject == RxTruncate && r.length != 64 {
				t.Fatalf("truncated length %d, want 64", r.length)
			}
			// The next frame is clean again.
			td.d.Receive(testFrame(ourMAC, 100, 2))
			r, _ = td.recv(0)
			if r.sc&rxErrBits != 0 {
				t.Fatalf("fault lasted past one frame: sc %#x", r.sc)
			}
			if td.d.Stats().RxErrors != 1 {
				t.Fatalf("RxErrors %d, want 1", td.d.Stats().RxErrors)
			}
		})
	}
}

func TestFTRLTruncates(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	td.d.Write32(regFTRL, 200)
	td.d.Receive(testFrame(ourMAC, 400, 1))
	r, _ := td.recv(0)
	if r.sc&rxbd_TR == 0 || r.length != 200 {
		t.Fatalf("sc %#x length %d, want TR and 200", r.sc, r.length)
	}
}

func TestOverrunWhenRingRunsOutMidFrame(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp", mrbr: 256, nrx: 2})
	td.d.Receive(testFrame(ourMAC, 700, 1)) // needs 3 BDs, 2 posted
	r1, _ := td.recv(0)
	r2, ok := td.recv(0)
	if !ok || r1.sc&bd_L != 0 || r2.sc&(bd_L|rxbd_OV) != bd_L|rxbd_OV {
		t.Fatalf("BD sc %#x, %#x: want the second to end the frame with OV", r1.sc, r2.sc)
	}
	if td.d.Stats().RxOverrun != 1 {
		t.Fatalf("RxOverrun %d", td.d.Stats().RxOverrun)
	}
}

func TestMDIO(t *testing.T) {
	t.Parallel()
	d, _ := New(Config{SoC: "imx8mp", PHYAddr: 3})
	read := func(pa, ra uint32) (uint32, bool) {
		d.Write32(regEIR, eir_MII)
		d.Write32(regMMFR, 0x60020000|pa<<23|ra<<18)
		done := d.Read32(regEIR)&eir_MII != 0
		return d.Read32(regMMFR) & 0xFFFF, done
	}
	// MSCR is 0 after reset: no MDC, the frame does not run.
	if _, done := read(3, 2); done {
		t.Fatal("MDIO frame completed with MSCR = 0")
	}
	// CLEAR_SETUP_MII: setting MSCR with MMFR pending runs it.
	d.Write32(regMSCR, 0x1A)
	if d.Read32(regEIR)&eir_MII == 0 || d.Read32(regMMFR)&0xFFFF != 0x0022 {
		t.Fatalf("setting MSCR with a pending frame: EIR %#x MMFR %#x", d.Read32(regEIR), d.Read32(regMMFR))
	}
	for _, c := range []struct {
		pa, ra uint32
		want   uint32
	}{
		{3, 2, 0x0022}, {3, 3, 0x1622}, {3, 1, 0x796D}, {3, 10, 0x3C00}, {0, 2, 0xFFFF}, {4, 1, 0xFFFF},
	} {
		v, done := read(c.pa, c.ra)
		if !done || v != c.want {
			t.Errorf("PHY %d reg %d: %#x (MII %v), want %#x", c.pa, c.ra, v, done, c.want)
		}
	}
	// Write: ANAR.
	d.Write32(regEIR, eir_MII)
	d.Write32(regMMFR, 0x50020000|3<<23|4<<18|0x0061)
	if d.Read32(regEIR)&eir_MII == 0 {
		t.Fatal("write frame without MII event")
	}
	if v, _ := read(3, 4); v != 0x0061 {
		t.Fatalf("ANAR read back %#x", v)
	}
	// Link flap: BMSR link is latched low until read.
	d.FlapLink(1)
	if v, _ := read(3, mii.BMSR); v&mii.BMSR_LINK != 0 {
		t.Fatalf("BMSR %#x after a flap: link bit should read 0 once", v)
	}
	if v, _ := read(3, mii.BMSR); v&mii.BMSR_LINK == 0 {
		t.Fatalf("BMSR %#x on second read: link is up", v)
	}
}

func TestAddressFilter(t *testing.T) {
	t.Parallel()
	other := [6]byte{2, 0, 0, 0, 0, 0x77}
	mcast := [6]byte{0x01, 0x00, 0x5e, 0, 0, 1}
	h := hashBit(mcast[:])
	for _, c := range []struct {
		name   string
		prom   bool
		hash   bool
		dst    [6]byte
		accept bool
		sc     uint16
	}{
		{"own address", false, false, ourMAC, true, 0},
		{"other unicast", false, false, other, false, 0},
		{"other unicast, promiscuous", true, false, other, true, rxbd_M},
		{"broadcast", false, false, [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, true, rxbd_BC},
		{"multicast not in hash", false, false, mcast, false, 0},
		{"multicast in group hash", false, true, mcast, true, rxbd_MC},
		{"multicast, promiscuous", true, false, mcast, true, rxbd_MC | rxbd_M},
	} {
		t.Run(c.name, func(t *testing.T) {
			td := newTDrv(t, tOpts{soc: "imx8mp", prom: c.prom})
			if c.hash {
				if h >= 32 {
					td.d.Write32(regGAUR, 1<<(h-32))
				} else {
					td.d.Write32(regGALR, 1<<h)
				}
			}
			got := td.d.Receive(testFrame(c.dst, 60, 1))
			if got != c.accept {
				t.Fatalf("accepted %v, want %v", got, c.accept)
			}
			if c.accept {
				r, _ := td.recv(0)
				if r.sc&(rxbd_M|rxbd_BC|rxbd_MC) != c.sc {
					t.Fatalf("sc %#x, want M/BC/MC %#x", r.sc, c.sc)
				}
			}
		})
	}
}

func TestLoopbackAfterReset(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp", loop: true})
	w := &capture{}
	td.d.SetWire(w)
	f := testFrame(ourMAC, 70, 1)
	td.send(0, f)
	if len(w.get()) != 0 {
		t.Fatal("frame reached the wire with RCR.LOOP set")
	}
	r, ok := td.recv(0)
	if !ok {
		t.Fatal("looped frame not received")
	}
	mustEqual(t, "looped", r.data[:len(f)], f)
	if td.d.Receive(f) {
		t.Fatal("wire frame accepted in loopback")
	}
	// The MAC sent the looped frame and received it: both sides count it.
	for name, off := range map[string]uint32{"IEEE_T_FRAME_OK": mibTFrameOK, "RMON_T_PACKETS": mibTPackets,
		"IEEE_R_FRAME_OK": mibRFrameOK, "RMON_R_PACKETS": mibRPackets} {
		if v := td.d.Read32(off); v != 1 {
			t.Errorf("%s = %d after one looped frame, want 1", name, v)
		}
	}
}

func TestLinkDownAndSpeedMismatch(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	w := &capture{}
	td.d.SetWire(w)
	td.d.SetLink(false)
	td.send(0, testFrame(ourMAC, 60, 1))
	if td.d.Receive(testFrame(ourMAC, 60, 1)) || len(w.get()) != 0 {
		t.Fatal("a frame passed while the link was down")
	}
	td.d.SetLink(true)
	// MAC at 100 Mb/s, PHY at 1000: nothing passes.
	td.d.Write32(regECR, td.d.Read32(regECR)&^ecr_SPEED|ecr_ETHEREN)
	td.send(0, testFrame(ourMAC, 60, 2))
	if len(w.get()) != 0 || td.d.Stats().SpeedMismatch == 0 {
		t.Fatal("frame passed with ECR.SPEED not matching the PHY")
	}
	s := td.d.Stats()
	if s.TxLinkDown != 2 {
		t.Fatalf("TxLinkDown %d, want 2", s.TxLinkDown)
	}
}

func TestERR006358(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx6q"})
	w := &capture{}
	td.d.SetWire(w)
	td.send(0, testFrame(ourMAC, 60, 1)) // the ring runs empty: R=0 seen
	if err := td.d.ArmERR006358(); err != nil {
		t.Fatal(err)
	}
	offs := td.send(0, testFrame(ourMAC, 60, 2))
	if len(w.get()) != 1 {
		t.Fatalf("%d frames sent, want 1: the second TDAR write must be lost", len(w.get()))
	}
	if sc, _ := td.w0(offs[0]); sc&txbd_R == 0 || td.d.Read32(regTDAR) != 0 {
		t.Fatalf("BD sc %#x, TDAR %#x: want R still set and TDAR clear", sc, td.d.Read32(regTDAR))
	}
	// The workaround: BDs pending and TDAR reads 0, so write TDAR again.
	td.d.Write32(regTDAR, 0)
	if len(w.get()) != 2 {
		t.Fatal("re-written TDAR did not send the waiting frame")
	}
	if td.d.Stats().LostTDAR != 1 {
		t.Fatalf("LostTDAR %d", td.d.Stats().LostTDAR)
	}
	d2, _ := New(Config{SoC: "imx8mp"})
	if err := d2.ArmERR006358(); err == nil || !strings.Contains(err.Error(), "imx8mp") {
		t.Fatalf("ArmERR006358 on imx8mp: %v", err)
	}
}

func TestERR006358NeedsEmptyRing(t *testing.T) {
	t.Parallel()
	// Armed before anything was sent the engine never saw R=0: no loss.
	td := newTDrv(t, tOpts{soc: "imx6q"})
	w := &capture{}
	td.d.SetWire(w)
	_ = td.d.ArmERR006358()
	td.send(0, testFrame(ourMAC, 60, 1))
	if len(w.get()) != 1 {
		t.Fatal("TDAR lost without the erratum's condition")
	}
}

func TestTXStall(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	w := &capture{}
	td.d.SetWire(w)
	td.d.SetTxStall(true)
	td.send(0, testFrame(ourMAC, 60, 1))
	if len(w.get()) != 0 || td.d.Read32(regTDAR) != activeBit {
		t.Fatalf("stalled TX sent %d frames, TDAR %#x; want 0 and active", len(w.get()), td.d.Read32(regTDAR))
	}
	td.d.SetTxStall(false)
	if len(w.get()) != 1 || td.d.Read32(regTDAR) != 0 {
		t.Fatal("TX did not resume after the stall")
	}
}

func TestGracefulStop(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	w := &capture{}
	td.d.SetWire(w)
	td.d.Write32(regEIR, 0xFFFFFFFF)
	td.d.Write32(regTCR, 1<<2|tcr_GTS)
	if td.d.Read32(regEIR)&eir_GRA == 0 {
		t.Fatal("GTS without GRA")
	}
	td.send(0, testFrame(ourMAC, 60, 1))
	if len(w.get()) != 0 {
		t.Fatal("frame sent during graceful stop")
	}
	td.d.Write32(regTCR, 1<<2)
	if len(w.get()) != 1 {
		t.Fatal("frame not sent after GTS cleared")
	}
}

func TestDMAFault(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp", enh: true})
	w := &capture{}
	td.d.SetWire(w)
	td.d.InjectTxDMAFault(1)
	offs := td.send(0, testFrame(ourMAC, 60, 1))
	if len(w.get()) != 0 {
		t.Fatal("frame sent through a faulted DMA read")
	}
	if sc, _ := td.w0(offs[0]); sc&txbd_R != 0 {
		t.Fatal("faulted BD not completed")
	}
	if esc := td.getWord(offs[0] + bdESC); esc&txbd_TXE == 0 {
		t.Fatalf("esc %#x without TXE", esc)
	}
	if td.d.Read32(regEIR)&eir_EBERR == 0 {
		t.Fatal("no EIR.EBERR")
	}
	fl := td.mmu.Faults()
	if len(fl) != 1 || fl[0].IOVA < 1<<32 || fl[0].Write {
		t.Fatalf("IOMMU faults %v", fl)
	}
	// RX: the frame is dropped, the BD stays empty.
	td.d.InjectRxDMAFault(1)
	if td.d.Receive(testFrame(ourMAC, 60, 2)) {
		t.Fatal("frame accepted through a faulted DMA write")
	}
	if _, ok := td.recv(0); ok {
		t.Fatal("BD handed back after a faulted DMA write")
	}
	if fl := td.mmu.Faults(); len(fl) != 2 || !fl[1].Write {
		t.Fatalf("IOMMU faults %v", fl)
	}
	if td.d.Stats().DMAFaults != 2 || td.d.LastModelError() == nil {
		t.Fatal("DMA faults not counted")
	}
}

func TestMissingWrapBitFaults(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp", ntx: tRingMax})
	// Mark every BD of the 6-ring block ready without any wrap bit: the
	// engine runs off the end of the ring memory.
	for i := 0; td.txBD(0, i) < td.ring.Len(); i++ {
		off := td.txBD(0, i)
		td.setWord(off+bdAddr, uint32(td.buf.IOVAAt(0)))
		td.setW0(off, txbd_R|bd_L|txbd_TC, 60)
	}
	td.d.Write32(regTDAR, 0)
	if td.d.Read32(regEIR)&eir_EBERR == 0 || td.d.Read32(regTDAR) != 0 {
		t.Fatal("running off the ring did not raise EBERR and clear TDAR")
	}
	if err := td.d.LastModelError(); err == nil || !strings.Contains(err.Error(), "wrap") {
		t.Fatalf("model error %v", err)
	}
}

func TestCorruptWriteback(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	if err := td.d.CorruptRxWriteback(CorruptLength, 1); err != nil {
		t.Fatal(err)
	}
	f := testFrame(ourMAC, 60, 1)
	td.d.Receive(f)
	r, _ := td.recv(0)
	if int(r.length) == len(f)+4 || r.sc&bd_L == 0 {
		t.Fatalf("write-back not corrupted: sc %#x length %d", r.sc, r.length)
	}
	td.d.Receive(f)
	if r, _ := td.recv(0); int(r.length) != len(f)+4 {
		t.Fatalf("corruption lasted: length %d", r.length)
	}
}

// TestCorruptTxWriteback: a TX BD's write-back comes back with its length
// garbled and R cleared; the frame itself leaves, and the next BD is clean.
func TestCorruptTxWriteback(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	w := &capture{}
	td.d.SetWire(w)
	if err := td.d.CorruptTxWriteback(CorruptLength, 1); err != nil {
		t.Fatal(err)
	}
	f := testFrame(ourMAC, 60, 1)
	offs := td.send(0, f, f)
	if got := len(w.get()); got != 2 {
		t.Fatalf("%d frames on the wire, want 2", got)
	}
	if sc, length := td.w0(offs[0]); sc&txbd_R != 0 || int(length) == len(f) {
		t.Fatalf("first BD: sc %#x length %d, want R clear and the length garbled", sc, length)
	}
	if sc, length := td.w0(offs[1]); sc&txbd_R != 0 || int(length) != len(f) {
		t.Fatalf("second BD: sc %#x length %d, want R clear and length %d", sc, length, len(f))
	}
}

// TestFaultCounts: injected counts add up, and a kind or count the FEC
// does not have is refused by name.
func TestFaultCounts(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	for i := 0; i < 2; i++ {
		if err := td.d.InjectRxErrors(RxCRC, 1); err != nil {
			t.Fatal(err)
		}
	}
	f := testFrame(ourMAC, 60, 1)
	for i := 0; i < 3; i++ {
		td.d.Receive(f)
		r, ok := td.recv(0)
		if want := i < 2; !ok || (r.sc&rxbd_CR != 0) != want {
			t.Fatalf("frame %d: ok %v sc %#x, want CR %v", i, ok, r.sc, want)
		}
	}
	for _, err := range []error{
		td.d.InjectRxErrors(RxError(-1), 1),
		td.d.InjectRxErrors(RxShort, -1),
		td.d.CorruptRxWriteback(Corruption(0), 1),
		td.d.CorruptTxWriteback(Corruption(5), 1),
		td.d.CorruptRxWriteback(CorruptLength, -1),
	} {
		if err == nil || !strings.Contains(err.Error(), td.d.Name()) {
			t.Errorf("error %v, want one naming the device", err)
		}
	}
}

// TestNonCoherentStaleTX: on a non-coherent part, TX buffer bytes the CPU
// wrote but did not clean (SyncForDevice) are not what the DMA reads.
func TestNonCoherentStaleTX(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	w := &capture{}
	td.d.SetWire(w)
	f := testFrame(ourMAC, 60, 1)
	// Write the buffer and the BD as td.send does, minus SyncForDevice.
	b, off := td.txBuf(0, 0), td.txBD(0, 0)
	copy(td.buf.Bytes()[b:], f)
	td.setWord(off+bdAddr, uint32(td.buf.IOVAAt(b)))
	td.setW0(off, txbd_R|bd_L|txbd_TC, uint16(len(f)))
	td.d.Write32(regTDAR, 0)
	got := w.get()
	if len(got) != 1 {
		t.Fatalf("%d frames", len(got))
	}
	if string(got[0]) == string(f) {
		t.Fatal("device read the CPU's uncleaned bytes: the cache model is off")
	}
	// With the clean, the right bytes leave.
	td.txPos[0] = 1
	td.send(0, f)
	mustEqual(t, "after SyncForDevice", w.get()[1], f)
}

func TestNonCoherentStaleRX(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx6ul"})
	f := testFrame(ourMAC, 60, 7)
	td.d.Receive(f)
	sc, _ := td.w0(td.rxBD(0, 0))
	if sc&rxbd_E != 0 {
		t.Fatal("no frame")
	}
	b := td.rxBuf(0, 0)
	if string(td.buf.Bytes()[b:b+len(f)]) == string(f) {
		t.Fatal("CPU sees device writes without SyncForCPU")
	}
	td.buf.SyncForCPU(b, len(f)+4)
	mustEqual(t, "after SyncForCPU", td.buf.Bytes()[b:b+len(f)], f)
}

func TestMIBCounters(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	d := td.d
	td.send(0, testFrame(ourMAC, 100, 1), testFrame([6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 100, 2))
	d.Receive(testFrame(ourMAC, 100, 3))
	for _, c := range []struct {
		name string
		off  uint32
		want uint32
	}{
		{"RMON_T_PACKETS", mibTPackets, 2}, {"RMON_T_BC_PKT", mibTBC, 1}, {"IEEE_T_FRAME_OK", mibTFrameOK, 2},
		{"RMON_R_PACKETS", mibRPackets, 1}, {"IEEE_R_FRAME_OK", mibRFrameOK, 1},
		{"RMON_R_OCTETS", mibROctets, 118}, {"RMON_R_P65TO127", mibRP64 + 4, 1},
		{"RMON_T_P65TO127", mibTP64 + 4, 2},
	} {
		if got := d.Read32(c.off); got != c.want {
			t.Errorf("%s = %d, want %d", c.name, got, c.want)
		}
	}
	// MIB_CLEAR zeroes, MIB_DIS freezes.
	d.Write32(regMIBC, mibc_MIB_CLEAR)
	d.Write32(regMIBC, mibc_MIB_DIS)
	d.Receive(testFrame(ourMAC, 100, 4))
	if got := d.Read32(mibRPackets); got != 0 {
		t.Fatalf("RMON_R_PACKETS %d after clear with counting disabled", got)
	}
}

func TestMultiQueue(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	d := td.d
	// Ring 1 takes VLAN priorities 0-3, ring 2 takes 4-7 (as Linux sets).
	d.Write32(regRCMR1, rcmr_MATCHEN|0x3210)
	d.Write32(regRCMR2, rcmr_MATCHEN|0x7654)
	tagged := func(pcp byte) []byte {
		f := testFrame(ourMAC, 60, int(pcp))
		f = append(f[:12:12], append([]byte{0x81, 0x00, pcp << 5, 1}, f[12:]...)...)
		return f
	}
	for _, c := range []struct {
		frame []byte
		ring  int
	}{
		{testFrame(ourMAC, 60, 1), 0}, {tagged(1), 1}, {tagged(6), 2},
	} {
		d.Write32(regEIR, 0xFFFFFFFF)
		d.Receive(c.frame)
		r, ok := td.recv(c.ring)
		if !ok {
			t.Fatalf("frame not on ring %d", c.ring)
		}
		mustEqual(t, "frame", r.data[:len(c.frame)], c.frame)
		if want := eirRXFBits[c.ring]; d.Read32(regEIR)&want == 0 {
			t.Fatalf("EIR %#x without ring %d RXF", d.Read32(regEIR), c.ring)
		}
	}
	w := &capture{}
	d.SetWire(w)
	d.Write32(regEIR, 0xFFFFFFFF)
	f := testFrame(ourMAC, 60, 9)
	td.send(2, f)
	if len(w.get()) != 1 || d.Read32(regEIR)&eir_TXF2 == 0 {
		t.Fatal("ring 2 TX did not send or raise TXF2")
	}
}

func TestTXChecksumInsertion(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	w := &capture{}
	td.d.SetWire(w)
	td.d.Write32(regTACC, tacc_IPCHK|tacc_PROCHK)
	f := make([]byte, 14+20+8+10)
	copy(f, ourMAC[:])
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], 38)
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	binary.BigEndian.PutUint16(ip[24:], 8) // UDP length... ports left 0
	binary.BigEndian.PutUint16(ip[20+4:], 18)
	td.send(0, f)
	got := w.get()[0]
	ipBad, l4Bad, _ := checkChecksums(got)
	if ipBad || l4Bad || binary.BigEndian.Uint16(got[14+10:]) == 0 {
		t.Fatalf("checksums not inserted: ip bad %v, udp bad %v", ipBad, l4Bad)
	}
}

func TestOutOfRangeConfig(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{SoC: "imx8mp", PHYAddr: 32}); err == nil {
		t.Error("PHY address 32 accepted")
	}
	if _, err := New(Config{SoC: "imx8mp", LinkSpeed: 2500}); err == nil {
		t.Error("2500 Mb/s accepted")
	}
}

var _ = dma.CacheLine

// ipv4UDP builds an IPv4/UDP frame to our address with correct checksums.
func ipv4UDP(payload int) []byte {
	f := make([]byte, 14+20+8+payload)
	copy(f, ourMAC[:])
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+payload))
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	binary.BigEndian.PutUint16(ip[20:], 1000)
	binary.BigEndian.PutUint16(ip[22:], 2000)
	binary.BigEndian.PutUint16(ip[24:], uint16(8+payload))
	insertChecksums(f, true, true)
	return f
}

func TestRXChecksumFlags(t *testing.T) {
	t.Parallel()
	good := ipv4UDP(30)
	badIP := ipv4UDP(30)
	badIP[14+10] ^= 0xFF
	badUDP := ipv4UDP(30)
	badUDP[len(badUDP)-1] ^= 0xFF
	v6 := testFrame(ourMAC, 60, 1)
	binary.BigEndian.PutUint16(v6[12:], 0x86DD)
	for _, c := range []struct {
		name    string
		frame   []byte
		racc    uint32
		accept  bool
		escWant uint32
	}{
		{"good IPv4/UDP", good, 0, true, 0},
		{"bad IP header checksum", badIP, 0, true, rxbd_ICE},
		{"bad UDP checksum", badUDP, 0, true, rxbd_PCR},
		{"bad IP header, IPDIS", badIP, racc_IPDIS, false, 0},
		{"bad UDP, PRODIS", badUDP, racc_PRODIS, false, 0},
		{"good, IPDIS|PRODIS", good, racc_IPDIS | racc_PRODIS, true, 0},
		{"IPv6 frame", v6, 0, true, rxbd_IPV6},
	} {
		t.Run(c.name, func(t *testing.T) {
			td := newTDrv(t, tOpts{soc: "imx8mp", enh: true})
			td.d.Write32(regRACC, c.racc)
			if got := td.d.Receive(c.frame); got != c.accept {
				t.Fatalf("accepted %v, want %v", got, c.accept)
			}
			if !c.accept {
				return
			}
			r, _ := td.recv(0)
			if r.esc&(rxbd_ICE|rxbd_PCR|rxbd_IPV6) != c.escWant {
				t.Fatalf("esc %#x, want %#x", r.esc, c.escWant)
			}
		})
	}
}

func TestRead64SplitsIntoTwoReads(t *testing.T) {
	t.Parallel()
	d, _ := New(Config{SoC: "imx8mp"})
	d.Write32(regPALR, 0x11223344)
	d.Write32(regPAUR, 0x55660000)
	if got := d.Read64(0x0E8); got != 0x0001000055668808 {
		t.Fatalf("Read64(0xE8) = %#x, want OPD:PAUR 0x0001000055668808", got)
	}
	if d.Stats().RegReads != 2 {
		t.Fatalf("Read64 counted %d register reads, want 2", d.Stats().RegReads)
	}
}

func TestPHYResetAndDefaultWire(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx6q"})
	d := td.d
	d.Write32(regMMFR, 0x50020000|4<<18|0x0021) // ANAR := 0x21
	d.Write32(regMMFR, 0x50020000|0<<18|0x8000) // BMCR reset
	d.Write32(regMMFR, 0x60020000|4<<18)
	if got := d.Read32(regMMFR) & 0xFFFF; got != 0x01E1 {
		t.Fatalf("ANAR after PHY reset %#x, want 0x01e1", got)
	}
	td.send(0, testFrame(ourMAC, 60, 1))
	cd, ok := d.Wire().(*CountingDiscard)
	if !ok || cd.Frames() != 1 || cd.Bytes() != 74 {
		t.Fatalf("default wire %T counted %v", d.Wire(), cd)
	}
	if d.Port() == nil || d.PHYAddr() != 0 || !d.LinkUp() {
		t.Fatal("accessors")
	}
}

func TestMDIOTakesTime(t *testing.T) {
	t.Parallel()
	// Long enough that no scheduler pause between the write and the first
	// read (qemu-user on a loaded machine) makes the frame look done at once.
	const mdio = 50 * time.Millisecond
	d, _ := New(Config{SoC: "imx8mp", MDIOTime: mdio})
	d.Write32(regMSCR, 0x1A)
	d.Write32(regEIR, eir_MII)
	start := time.Now()
	d.Write32(regMMFR, 0x60020000|2<<18) // PHY 0, ID1
	if d.Read32(regEIR)&eir_MII != 0 || d.Read32(regMMFR)&0xFFFF != 0 {
		if time.Since(start) < mdio {
			t.Fatalf("MDIO frame done at once although it takes %v", mdio)
		}
	}
	for d.Read32(regEIR)&eir_MII == 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("MDIO frame of %v not done after 5 s: EIR %#x", mdio, d.Read32(regEIR))
		}
		time.Sleep(time.Millisecond)
	}
	if took := time.Since(start); took < mdio {
		t.Fatalf("MDIO frame done after %v, before the %v it takes", took, mdio)
	}
	if got := d.Read32(regMMFR) & 0xFFFF; got != phyIDHigh {
		t.Fatalf("MMFR data %#x, want the PHY's ID1 %#x", got, phyIDHigh)
	}
}

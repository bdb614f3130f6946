package model

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

func TestTxGatherAndPad(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		frame   []byte
		segs    int
		wantLen int
	}{
		{"64-byte frame, one BD", sized(64), 1, 64},
		{"60-byte frame, one BD", sized(60), 1, 60},
		{"short frame padded", sized(60)[:20], 1, 60},
		{"short frame in two BDs padded", sized(60)[:42], 2, 60},
		{"1514 bytes in three BDs", sized(1514), 3, 1514},
		{"jumbo 9000 bytes in five BDs", sized(9000), 5, 9000},
		{"IPv6/TCP one BD", tcp6(1, 2), 1, len(tcp6(1, 2))},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true})
			h.up()
			h.setupTx(0, 64)
			h.send(0, c.segs, c.frame, c.frame)
			got := h.w.get()
			if len(got) != 2 {
				t.Fatalf("%d frames on the wire, want 2", len(got))
			}
			want := append([]byte(nil), c.frame...)
			for len(want) < c.wantLen {
				want = append(want, 0)
			}
			for _, f := range got {
				if !bytes.Equal(f, want) {
					t.Fatalf("wire frame (%d bytes) differs from the one queued (%d bytes)", len(f), len(want))
				}
			}
			bds := uint32(len(split(c.frame, c.segs)) * 2)
			if ci := h.d.Read32(regTBCIR); ci != bds {
				t.Errorf("TBCIR = %d after %d BDs", ci, bds)
			}
			if h.d.Read32(regTBSR)&tbsr_BUSY != 0 {
				t.Error("TBSR busy after the ring drained")
			}
			s := h.d.Stats()
			if s.TxDoorbells[0] != 1 || s.TxFrames != 2 || s.TxBytes != uint64(2*c.wantLen) {
				t.Errorf("stats: doorbells %d frames %d bytes %d", s.TxDoorbells[0], s.TxFrames, s.TxBytes)
			}
			if h.d.Read32(regPM0_TFRM) != 2 || h.d.Read64(regPM0_TEOCT) != uint64(2*(c.wantLen+4)) || h.d.Read64(regSITFRM) != 2 || h.d.Read64(regSITOCT) != uint64(2*c.wantLen) {
				t.Errorf("counters: TFRM %d TEOCT %d SITFRM %d SITOCT %d", h.d.Read32(regPM0_TFRM), h.d.Read64(regPM0_TEOCT), h.d.Read64(regSITFRM), h.d.Read64(regSITOCT))
			}
			h.noModelErrors()
		})
	}
}

func TestTxRingWrapsManyLaps(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupTx(1, 16)
	for i := 0; i < 100; i++ {
		h.send(1, 1+i%3, udp4(uint16(i), 9, 64+i))
	}
	got := h.w.get()
	if len(got) != 100 {
		t.Fatalf("%d frames", len(got))
	}
	for i, f := range got {
		if !bytes.Equal(f, udp4(uint16(i), 9, 64+i)) {
			t.Fatalf("frame %d differs", i)
		}
	}
	h.noModelErrors()
}

func TestTxNeedsEnables(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		undo func(h *harness)
		redo func(h *harness)
	}{
		{"MAC TX_EN", func(h *harness) { h.d.Write32(regPM0_CMD_CFG, pm_cmd_cfg_TXP) }, func(h *harness) { h.d.Write32(regPM0_CMD_CFG, pm_cmd_cfg_TXP|pm_cmd_cfg_TX_EN|pm_cmd_cfg_RX_EN) }},
		{"port SI0 enable", func(h *harness) { h.d.Write32(regPMR, 0) }, func(h *harness) { h.d.Write32(regPMR, pmr_EN) }},
		{"SI enable", func(h *harness) { h.d.Write32(regSIMR, 0) }, func(h *harness) { h.d.Write32(regSIMR, simr_EN) }},
		{"ring enable", func(h *harness) { h.d.Write32(regTBMR, 0) }, func(h *harness) { h.d.Write32(regTBMR, tbmr_EN) }},
		{"link", func(h *harness) { h.d.SetLink(false) }, func(h *harness) { h.d.SetLink(true) }},
		{"TX stall fault", func(h *harness) { h.d.SetTxStall(true) }, func(h *harness) { h.d.SetTxStall(false) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true})
			h.up()
			h.setupTx(0, 32)
			c.undo(h)
			h.send(0, 1, sized(60), sized(100))
			if n := len(h.w.get()); n != 0 {
				t.Fatalf("%d frames left with %s off", n, c.name)
			}
			if h.d.Read32(regTBCIR) != 0 || h.d.Read32(regTBSR)&tbsr_BUSY == 0 {
				t.Fatalf("CI %d busy %d: frames must stay queued", h.d.Read32(regTBCIR), h.d.Read32(regTBSR))
			}
			c.redo(h)
			if n := len(h.w.get()); n != 2 {
				t.Fatalf("%d frames left after %s came back, want the 2 queued", n, c.name)
			}
			if h.d.Read32(regTBCIR) != 2 {
				t.Fatalf("CI %d", h.d.Read32(regTBCIR))
			}
		})
	}
}

func TestTxErratumIndices(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupTx(0, 32)
	h.send(0, 1, sized(60), sized(60), sized(60))
	h.d.Write32(regTBMR, 0)
	h.d.Write32(regTBCIR, 0)
	h.d.Write32(regTBPIR, 0)
	if ci := h.d.Read32(regTBCIR); ci != 3 {
		t.Fatalf("TBCIR reset by software to %d", ci)
	}
	errs := h.d.ModelErrors()
	if len(errs) != 2 || !strings.Contains(errs[0], "TBCIR") || !strings.Contains(errs[1], "TBPIR") {
		t.Fatalf("model errors %q: want the TBCIR write and the TBPIR reset recorded", errs)
	}
	// Only a function reset clears them.
	h.d.Reset()
	if h.d.Read32(regTBPIR) != 0 || h.d.Read32(regTBCIR) != 0 {
		t.Fatalf("PI %d CI %d after FLR", h.d.Read32(regTBPIR), h.d.Read32(regTBCIR))
	}
	if h.d.Read32(regPM0_RX_FIFO) != 2 || h.d.Read32(regSIMR) != 0 {
		t.Fatal("FLR did not restore power-on values")
	}
}

func TestTxRingReprogramWhileBusy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupTx(0, 32)
	h.d.SetLink(false)
	h.send(0, 1, sized(60))
	h.d.Write32(regTBBAR0, 0)
	if errs := h.d.ModelErrors(); len(errs) != 1 || !strings.Contains(errs[0], "PI 1 != CI 0") {
		t.Fatalf("model errors %q", errs)
	}
}

func TestRxWriteBack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		frame  []byte
		parse  uint16
		hashed bool
	}{
		{"ARP", arp(), ParseL2Only, false},
		{"IPv4/UDP", udp4(1234, 53, 80), ParseIPv4 | ParseUDP, true},
		{"IPv4/TCP", tcp4(net.IPv4(1, 2, 3, 4), net.IPv4(5, 6, 7, 8), 80, 443), ParseIPv4 | ParseTCP, true},
		{"IPv6/TCP", tcp6(1000, 22), ParseIPv6 | ParseTCP, true},
		{"IPv6/UDP", udp6(1000, 53), ParseIPv6 | ParseUDP, true},
		{"VLAN IPv4/UDP (tag kept)", vlanTag(udp4(1, 2, 80), 0x0123), ParseIPv4 | ParseUDP, true},
		{"broadcast 1518", append(ether(bcast, macB, 0x88B5, nil), make([]byte, 1504)...), ParseL2Only, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true})
			h.up()
			h.setupRx(0, 64, 2048, 0)
			h.d.Write32(regPRSSK, 0x12345678)
			h.d.Write32(regSIMR, simr_EN|simr_RSSE)
			if !h.d.Receive(c.frame) {
				t.Fatal("frame not accepted")
			}
			bds, ok := h.recv(0)
			if !ok || len(bds) != 1 {
				t.Fatalf("got %d BDs (ok %v)", len(bds), ok)
			}
			b := bds[0]
			if b.status != 0xC0 || b.err != 0 {
				t.Errorf("status %#x error %#x, want R|F and no error", b.status, b.err)
			}
			if int(b.bufLen) != len(c.frame) || !bytes.Equal(b.data, c.frame) {
				t.Errorf("buf_len %d, frame %d bytes; data equal %v", b.bufLen, len(c.frame), bytes.Equal(b.data, c.frame))
			}
			if b.parse != c.parse {
				t.Errorf("parse summary %#x, want %#x", b.parse, c.parse)
			}
			wantHash, _ := h.d.FlowHash(c.frame)
			if b.hash != wantHash || (c.hashed && wantHash == 0) {
				t.Errorf("RSS hash %#x, want %#x", b.hash, wantHash)
			}
			if h.d.Read32(regRBPIR) != 1 {
				t.Errorf("RBPIR %d", h.d.Read32(regRBPIR))
			}
			if h.d.Read32(regPM0_RFRM) != 1 || h.d.Read64(regPM0_REOCT) != uint64(len(c.frame)+4) || h.d.Read64(regSIRFRM) != 1 || h.d.Read64(regSIROCT) != uint64(len(c.frame)) {
				t.Errorf("RFRM %d REOCT %d SIRFRM %d SIROCT %d", h.d.Read32(regPM0_RFRM), h.d.Read64(regPM0_REOCT), h.d.Read64(regSIRFRM), h.d.Read64(regSIROCT))
			}
			h.noModelErrors()
		})
	}
}

func TestRxVLANExtraction(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupRx(0, 64, 2048, rbmr_VTE)
	inner := udp4(1, 2, 80)
	h.d.Receive(vlanTag(inner, 0x2064))
	bds, _ := h.recv(0)
	b := bds[0]
	if b.flags&RxFlagVLAN == 0 || b.vlan != 0x2064 || !bytes.Equal(b.data, inner) {
		t.Fatalf("flags %#x vlan %#x stripped %v", b.flags, b.vlan, bytes.Equal(b.data, inner))
	}
}

func TestRxExtendedBDs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupRx(0, 16, 2048, rbmr_BDS)
	for i := 0; i < 3; i++ {
		h.d.Receive(sized(100 + i))
	}
	for i := 0; i < 3; i++ {
		bds, ok := h.recv(0)
		if !ok || int(bds[0].bufLen) != 100+i {
			t.Fatalf("frame %d: ok %v", i, ok)
		}
	}
}

func TestRxNoBufferDrops(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		pi, ci   uint32
		sent     int
		accepted int
	}{
		{"RBPIR 0 RBCIR 1: device owns nothing", 0, 1, 5, 0},
		{"RBCIR == RBPIR: all but one BD", 0, 0, 20, 15},
		{"ten posted", 0, 11, 20, 10},
		// Linux and DPDK post ring size - 1 buffers at setup (RBCIR =
		// 15): the device fills 14 of them, the 15th waits for the next
		// refill (§4.1: it never advances RBPIR onto RBCIR).
		{"ring size - 1 posted", 0, 15, 20, 14},
		{"wrapped window", 12, 4, 20, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true})
			h.up()
			h.setupRx(0, 16, 2048, 0)
			h.d.Write32(regRBPIR, c.pi)
			h.d.Write32(regRBCIR, c.ci)
			acc := 0
			for i := 0; i < c.sent; i++ {
				if h.d.Receive(sized(64)) {
					acc++
				}
			}
			if acc != c.accepted {
				t.Errorf("%d accepted, want %d", acc, c.accepted)
			}
			drops := uint64(c.sent - c.accepted)
			if h.d.Read32(regRBDCR) != uint32(drops) || h.d.Stats().NoBufferDrops != drops {
				t.Errorf("RBDCR %d NoBufferDrops %d, want %d", h.d.Read32(regRBDCR), h.d.Stats().NoBufferDrops, drops)
			}
			if pi := h.d.Read32(regRBPIR); pi == h.d.Read32(regRBCIR) && c.accepted > 0 {
				t.Errorf("RBPIR advanced onto RBCIR (%d)", pi)
			}
		})
	}
}

func TestRxMultiBD(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		size, bs int
		lens     []int
	}{
		{1000, 256, []int{256, 256, 256, 232}},
		{1024, 256, []int{256, 256, 256, 256}},
		{9000, 2048, []int{2048, 2048, 2048, 2048, 808}},
		{64, 64, []int{64}},
	} {
		h := newHarness(t, Config{PF: true})
		h.up()
		h.setupRx(0, 32, c.bs, 0)
		f := sized(c.size)
		for lap := 0; lap < 20; lap++ { // wraps the ring several times
			if !h.d.Receive(f) {
				t.Fatalf("%d/%d lap %d: not accepted", c.size, c.bs, lap)
			}
			bds, ok := h.recv(0)
			if !ok || len(bds) != len(c.lens) {
				t.Fatalf("%d/%d: %d BDs, want %d", c.size, c.bs, len(bds), len(c.lens))
			}
			for i, b := range bds {
				last := i == len(bds)-1
				if int(b.bufLen) != c.lens[i] || (b.status&0x80 != 0) != last || b.status&0x40 == 0 {
					t.Fatalf("%d/%d BD %d: len %d status %#x", c.size, c.bs, i, b.bufLen, b.status)
				}
			}
			if !bytes.Equal(frameOf(bds), f) {
				t.Fatalf("%d/%d: reassembled frame differs", c.size, c.bs)
			}
		}
		h.noModelErrors()
	}
}

func TestRxOversizeAndMAXFRM(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupRx(0, 32, 2048, 0)
	h.d.Write32(regPM0_MAXFRM, 1518)
	h.d.Receive(sized(1514)) // 1518 with FCS: fits
	h.d.Receive(sized(1600))
	bds, _ := h.recv(0)
	if bds[0].err != 0 {
		t.Fatalf("1514-byte frame flagged %#x", bds[0].err)
	}
	bds, _ = h.recv(0)
	if bds[0].err&RxErrOversize == 0 || bds[0].bufLen != 1514 {
		t.Fatalf("oversize frame: error %#x len %d, want RxErrOversize and truncation at MAXFRM", bds[0].err, bds[0].bufLen)
	}
	if h.d.Read32(regPM0_ROVR) != 1 || h.d.Read32(regPM0_RERR) != 1 || h.d.Read32(regPM0_RFRM) != 1 || h.d.Read32(regPM0_RPKT) != 2 {
		t.Errorf("ROVR %d RERR %d RFRM %d RPKT %d", h.d.Read32(regPM0_ROVR), h.d.Read32(regPM0_RERR), h.d.Read32(regPM0_RFRM), h.d.Read32(regPM0_RPKT))
	}
}

func TestRxNeedsEnables(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		undo func(d *Device)
		stat func(s Stats) uint64
	}{
		{"link down", func(d *Device) { d.SetLink(false) }, func(s Stats) uint64 { return s.RxLinkDown }},
		{"MAC RX_EN off", func(d *Device) { d.Write32(regPM0_CMD_CFG, pm_cmd_cfg_TX_EN) }, func(s Stats) uint64 { return s.RxMACDisabled }},
		{"port SI0 off", func(d *Device) { d.Write32(regPMR, 0) }, func(s Stats) uint64 { return s.RxSIDisabled }},
		{"SI off", func(d *Device) { d.Write32(regSIMR, 0) }, func(s Stats) uint64 { return s.RxSIDisabled }},
		{"ring off", func(d *Device) { d.Write32(regRBMR, 0) }, func(s Stats) uint64 { return s.RxRingDisabled }},
		{"not for us, not promiscuous", func(d *Device) { d.Write32(regPSIPMR, 0) }, func(s Stats) uint64 { return s.RxFiltered }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true, MAC: [6]byte{2, 9, 9, 9, 9, 9}})
			h.up()
			h.setupRx(0, 32, 2048, 0)
			c.undo(h.d)
			if h.d.Receive(sized(64)) {
				t.Fatal("frame accepted")
			}
			if c.stat(h.d.Stats()) != 1 {
				t.Errorf("drop not counted: %+v", h.d.Stats())
			}
			if h.d.RxRoom() != 0 && c.name != "not for us, not promiscuous" {
				t.Errorf("RxRoom %d while the port cannot receive", h.d.RxRoom())
			}
		})
	}
}

func TestRxMACFilter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, MAC: [6]byte{2, 9, 9, 9, 9, 9}})
	h.up()
	h.d.Write32(regPSIPMR, 0)
	h.setupRx(0, 32, 2048, 0)
	own := ether([]byte{2, 9, 9, 9, 9, 9}, macB, 0x88B5, make([]byte, 50))
	other := ether(macA, macB, 0x88B5, make([]byte, 50))
	mcast := ether([]byte{0x01, 0, 0x5e, 0, 0, 1}, macB, 0x88B5, make([]byte, 50))
	for _, c := range []struct {
		f    []byte
		want bool
	}{{own, true}, {other, false}, {mcast, false}, {arp(), true}} {
		if got := h.d.Receive(c.f); got != c.want {
			t.Errorf("dst %x: accepted %v, want %v", c.f[:6], got, c.want)
		}
	}
	if h.d.Read32(regUFDMF) != 1 || h.d.Read32(regMFDMF) != 1 {
		t.Errorf("UFDMF %d MFDMF %d", h.d.Read32(regUFDMF), h.d.Read32(regMFDMF))
	}
	// An exact-match entry through the control ring admits macA.
	c := newCBDR(h)
	c.macEntry(3, macA, 1)
	if !h.d.Receive(other) {
		t.Error("frame to a MAC filter entry dropped")
	}
	if m, si, en := h.d.MACFilter(3); !en || si != 1 || !bytes.Equal(m[:], macA) {
		t.Errorf("entry 3: %x si %d en %v", m, si, en)
	}
}

func TestRxFIFOErratum(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, FIFOLockAfter: 10})
	h.up()
	h.d.Write32(regPM0_RX_FIFO, 2) // as after power-on, without the fix
	h.setupRx(0, 64, 2048, 0)
	acc := 0
	for i := 0; i < 20; i++ {
		if h.d.Receive(sized(64)) {
			acc++
		}
	}
	if acc != 10 || h.d.Stats().RxFIFOLocked != 10 || h.d.Read32(regPM0_RDRNTP) != 10 {
		t.Fatalf("accepted %d, FIFO-locked drops %d, RDRNTP %d", acc, h.d.Stats().RxFIFOLocked, h.d.Read32(regPM0_RDRNTP))
	}
	if e := h.d.ModelErrors(); len(e) != 1 || !strings.Contains(e[0], "PM0_RX_FIFO") {
		t.Fatalf("model errors %q", e)
	}
	h.d.Reset()
	h.up() // writes PM0_RX_FIFO = 1
	h.setupRx(0, 64, 2048, 0)
	for i := 0; i < 50; i++ {
		if !h.d.Receive(sized(64)) {
			t.Fatalf("frame %d dropped with PM0_RX_FIFO = 1", i)
		}
		h.recv(0)
	}
}

func TestRingRuleViolations(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		prog func(h *harness)
		tx   bool
		want string
	}{
		{"TX base not 128-byte aligned", func(h *harness) { h.d.Write32(regTBBAR0, uint32(h.tx[0].ring.iova)+64) }, true, "aligned"},
		{"TX length 0", func(h *harness) { h.d.Write32(regTBLENR, 0) }, true, "no BDs"},
		{"TX length not a multiple of 8", func(h *harness) { h.d.Write32(regTBLENR, 30) }, true, "multiple of 8"},
		{"TX ring not mapped", func(h *harness) { h.d.Write32(regTBBAR1, 0x10) }, true, "not mapped"},
		{"RX base not 128-byte aligned", func(h *harness) { h.d.Write32(regRBBAR0, uint32(h.rx[0].ring.iova)+32) }, false, "aligned"},
		{"RX length 0", func(h *harness) { h.d.Write32(regRBLENR, 0) }, false, "no BDs"},
		{"RX length not a multiple of 8", func(h *harness) { h.d.Write32(regRBLENR, 33) }, false, "multiple of 8"},
		{"RX buffer size 0", func(h *harness) { h.d.Write32(regRBBSR, 0) }, false, "RBBSR 0"},
		{"RX CI past the ring", func(h *harness) { h.d.Write32(regRBCIR, 100) }, false, "past the ring"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true})
			h.up()
			h.setupTx(0, 32)
			h.setupRx(0, 32, 2048, 0)
			h.d.SetLink(false) // program while nothing moves
			c.prog(h)
			h.d.SetLink(true)
			for i := 0; i < 3; i++ {
				if c.tx {
					h.send(0, 1, sized(64))
				} else {
					h.d.Receive(sized(64))
				}
			}
			errs := h.d.ModelErrors()
			if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), c.want) {
				t.Fatalf("model errors %q: want one saying %q", errs, c.want)
			}
			if uint64(len(errs)) != h.d.Stats().ModelErrors {
				t.Errorf("list %d, count %d", len(errs), h.d.Stats().ModelErrors)
			}
		})
	}
}

// TestRxParserPortConfig: PAR_PORT_CFG's L3 bit turns the IPv4 header
// checksum check off (§2.3): a frame with a bad header checksum then
// arrives without the parse-error bit; a malformed header still sets it.
func TestRxParserPortConfig(t *testing.T) {
	t.Parallel()
	bad := udp4(1, 2, 80)
	bad[14+10] ^= 0x40 // header checksum field
	short := udp4(1, 2, 80)
	short[14] = 0x44 // IHL 4: shorter than an IPv4 header
	for _, c := range []struct {
		name  string
		cfg   uint32
		frame []byte
		want  uint16
	}{
		// An L3 error: the IPv4 code alone (parseFrame).
		{"checks on (reset value)", 0, bad, ParseIPv4 | ParseError},
		{"L4 check off only", par_L4CD, bad, ParseIPv4 | ParseError},
		{"L3 check off", par_L3CD, bad, ParseIPv4 | ParseUDP},
		{"both off (DPDK without checksum offloads)", par_L3CD | par_L4CD, bad, ParseIPv4 | ParseUDP},
		{"L3 check off, malformed header", par_L3CD, short, ParseIPv4 | ParseError},
		// FreeBSD's names (Config.PARBitsFreeBSD): bit 1 is the L3 check.
		{"FreeBSD bits: bit 0 set", par_L3CD, bad, ParseIPv4 | ParseError},
		{"FreeBSD bits: bit 1 set", par_L4CD, bad, ParseIPv4 | ParseUDP},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true, PARBitsFreeBSD: strings.HasPrefix(c.name, "FreeBSD")})
			h.up()
			h.d.Write32(regPAR_PORT_CFG, c.cfg)
			h.setupRx(0, 16, 2048, 0)
			if !h.d.Receive(c.frame) {
				t.Fatal("frame not accepted")
			}
			bds, ok := h.recv(0)
			if !ok {
				t.Fatal("nothing received")
			}
			if bds[0].parse != c.want {
				t.Errorf("parse summary %#x, want %#x", bds[0].parse, c.want)
			}
			if !bytes.Equal(bds[0].data, c.frame) {
				t.Error("frame data changed")
			}
		})
	}
}

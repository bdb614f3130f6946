package model

import (
	"bytes"
	"strings"
	"testing"
)

func TestRxFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		inject func(d *Device) error
		check  func(t *testing.T, h *harness, first rxBD, firstOK bool)
	}{
		{"CRC error", func(d *Device) error { return d.InjectRxErrors(RxCRC, 1) }, func(t *testing.T, h *harness, b rxBD, ok bool) {
			if !ok || b.err != RxErrCRC || h.d.Read32(regPM0_RFCS) != 1 || h.d.Read32(regPM0_RERR) != 1 {
				t.Errorf("error byte %#x RFCS %d RERR %d", b.err, h.d.Read32(regPM0_RFCS), h.d.Read32(regPM0_RERR))
			}
		}},
		{"oversize", func(d *Device) error { return d.InjectRxErrors(RxOversize, 1) }, func(t *testing.T, h *harness, b rxBD, ok bool) {
			if !ok || b.err != RxErrOversize || h.d.Read32(regPM0_ROVR) != 1 {
				t.Errorf("error byte %#x ROVR %d", b.err, h.d.Read32(regPM0_ROVR))
			}
		}},
		{"length past the buffer", func(d *Device) error { return d.CorruptRxWriteback(CorruptLength, 1) }, func(t *testing.T, h *harness, b rxBD, ok bool) {
			if !ok || int(b.bufLen) <= h.rx[0].bs {
				t.Errorf("buf_len %d with %d-byte buffers", b.bufLen, h.rx[0].bs)
			}
		}},
		{"zero status", func(d *Device) error { return d.CorruptRxWriteback(CorruptZeroStatus, 1) }, func(t *testing.T, h *harness, b rxBD, ok bool) {
			if ok {
				t.Errorf("BD 0 shows a status: %+v", b)
			}
			if b1, ok1 := h.bdAt(0, 1); !ok1 || b1.status != 0xC0 {
				t.Errorf("the next frame's BD is not ready: %+v", b1)
			}
		}},
		{"missing final bit", func(d *Device) error { return d.CorruptRxWriteback(CorruptNoFinal, 1) }, func(t *testing.T, h *harness, b rxBD, ok bool) {
			if !ok || b.status != 0x40 {
				t.Errorf("status %#x, want R without F", b.status)
			}
		}},
		{"bogus fields", func(d *Device) error { return d.CorruptRxWriteback(CorruptBogus, 1) }, func(t *testing.T, h *harness, b rxBD, ok bool) {
			if !ok || b.bufLen != 0 || b.parse != 0xFFFF || b.status != 0xC0 {
				t.Errorf("BD %+v", b)
			}
		}},
		{"DMA to an unmapped IOVA", func(d *Device) error { d.InjectRxDMAFault(1); return nil }, func(t *testing.T, h *harness, b rxBD, ok bool) {
			if !ok || b.err&RxErrDMA == 0 {
				t.Errorf("error byte %#x", b.err)
			}
			f := h.io.Faults()
			if len(f) != 1 || !f[0].Write || f[0].IOVA < unmappedDelta {
				t.Errorf("IOMMU faults %v", f)
			}
			if h.d.Stats().DMAFaults != 1 {
				t.Errorf("DMAFaults %d", h.d.Stats().DMAFaults)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true})
			h.up()
			h.setupRx(0, 32, 2048, 0)
			if err := c.inject(h.d); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if !h.d.Receive(sized(100)) {
					t.Fatalf("frame %d not accepted", i)
				}
			}
			b, ok := h.bdAt(0, 0)
			c.check(t, h, b, ok)
			if h.d.Stats().FaultsInjected != 1 {
				t.Errorf("FaultsInjected %d, want 1", h.d.Stats().FaultsInjected)
			}
			// The second frame is clean.
			b1, ok1 := h.bdAt(0, 1)
			if !ok1 || b1.err != 0 || b1.status != 0xC0 || b1.bufLen != 100 {
				t.Errorf("second frame's BD %+v", b1)
			}
		})
	}
}

func TestTxFaults(t *testing.T) {
	t.Parallel()
	t.Run("DMA fault", func(t *testing.T) {
		h := newHarness(t, Config{PF: true})
		h.up()
		h.setupTx(0, 32)
		h.d.InjectTxDMAFault(1)
		h.send(0, 1, sized(64), sized(65))
		if got := h.w.get(); len(got) != 1 || len(got[0]) != 65 {
			t.Fatalf("%d frames on the wire", len(got))
		}
		if h.d.Read32(regPM0_TERR) != 1 || h.d.Stats().TxErrors != 1 || h.d.Read32(regTBCIR) != 2 {
			t.Errorf("TERR %d TxErrors %d CI %d", h.d.Read32(regPM0_TERR), h.d.Stats().TxErrors, h.d.Read32(regTBCIR))
		}
		if f := h.io.Faults(); len(f) != 1 || f[0].Write {
			t.Errorf("IOMMU faults %v", f)
		}
	})
	t.Run("bogus consumer index", func(t *testing.T) {
		h := newHarness(t, Config{PF: true})
		h.up()
		h.setupTx(0, 32)
		h.send(0, 1, sized(64))
		h.d.InjectBogusTxCI(1)
		if ci := h.d.Read32(regTBCIR); ci < 32 {
			t.Errorf("TBCIR %d: not past the ring", ci)
		}
		if ci := h.d.Read32(regTBCIR); ci != 1 {
			t.Errorf("TBCIR %d after the fault", ci)
		}
	})
	t.Run("stall", func(t *testing.T) {
		h := newHarness(t, Config{PF: true})
		h.up()
		h.setupTx(0, 32)
		h.d.SetTxStall(true)
		h.send(0, 1, sized(64))
		if h.d.Read32(regTBCIR) != 0 || h.d.Stats().FaultsInjected != 1 {
			t.Fatal("CI moved during a stall")
		}
		h.d.SetTxStall(false)
		if h.d.Read32(regTBCIR) != 1 || len(h.w.get()) != 1 {
			t.Fatal("queued frame did not leave after the stall")
		}
	})
}

func TestLinkFlap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupRx(0, 32, 2048, 0)
	h.setupTx(0, 32)
	h.d.SetLink(false)
	if h.d.Receive(sized(64)) || h.d.Stats().RxLinkDown != 1 {
		t.Fatal("frame received with the link down")
	}
	h.send(0, 1, sized(64))
	h.d.FlapLink(3)
	if !h.d.LinkUp() || len(h.w.get()) != 1 {
		t.Fatal("after flaps the link is up and the queued frame left")
	}
	if !h.d.Receive(sized(64)) {
		t.Fatal("no RX after the flaps")
	}
	if h.d.Stats().FaultsInjected != 3 {
		t.Errorf("FaultsInjected %d", h.d.Stats().FaultsInjected)
	}
}

func TestStartsLinkDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, LinkDown: true})
	if h.d.LinkUp() || h.d.Read32(regPM0_STATUS) != 0 {
		t.Fatal("link up although Config.LinkDown")
	}
}

func TestMACLoopback(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupTx(0, 32)
	h.setupRx(0, 32, 2048, 0)
	h.d.Write32(regPM0_CMD_CFG, h.d.Read32(regPM0_CMD_CFG)|pm_cmd_cfg_XGLP)
	h.send(0, 2, sized(300))
	if len(h.w.get()) != 0 {
		t.Fatal("frame reached the wire in loopback")
	}
	bds, ok := h.recv(0)
	if !ok || !bytes.Equal(frameOf(bds), sized(300)) {
		t.Fatal("looped-back frame not received")
	}
}

// TestFaultCounts: a count of n applies to n frames, counts add up, and a
// kind or count the ENETC does not have is refused by name.
func TestFaultCounts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupRx(0, 32, 2048, 0)
	if err := h.d.CorruptRxWriteback(CorruptLength, 1); err != nil {
		t.Fatal(err)
	}
	if err := h.d.CorruptRxWriteback(CorruptLength, 1); err != nil {
		t.Fatal(err)
	}
	if err := h.d.InjectRxErrors(RxCRC, 2); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if !h.d.Receive(sized(100)) {
			t.Fatalf("frame %d not accepted", i)
		}
	}
	for slot := uint32(0); slot < 3; slot++ {
		b, ok := h.bdAt(0, slot)
		corrupted, crc := int(b.bufLen) > h.rx[0].bs, b.err == RxErrCRC
		if want := slot < 2; !ok || corrupted != want || crc != want {
			t.Errorf("BD %d: %+v, want corrupted length and CRC error %v", slot, b, want)
		}
	}
	if got := h.d.Stats().FaultsInjected; got != 4 {
		t.Errorf("FaultsInjected %d, want 4", got)
	}
	for _, err := range []error{
		h.d.InjectRxErrors(RxError(9), 1),
		h.d.InjectRxErrors(RxCRC, -1),
		h.d.CorruptRxWriteback(CorruptNone, 1),
		h.d.CorruptRxWriteback(nCorruptions, 1),
		h.d.CorruptRxWriteback(CorruptBogus, -1),
	} {
		if err == nil || !strings.Contains(err.Error(), h.d.Name()) {
			t.Errorf("error %v, want one naming the device", err)
		}
	}
}

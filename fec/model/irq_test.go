package model

import (
	"sync"
	"testing"
	"time"
)

// line records what the model's interrupt output did.
type line struct {
	mu     sync.Mutex
	rises  int
	falls  int
	risen  chan struct{}
	levels []bool
}

func newLine(d *Device) *line {
	l := &line{risen: make(chan struct{}, 64)}
	d.SetIRQ(func(level bool) {
		l.mu.Lock()
		l.levels = append(l.levels, level)
		if level {
			l.rises++
		} else {
			l.falls++
		}
		l.mu.Unlock()
		if level {
			l.risen <- struct{}{}
		}
	})
	return l
}

func (l *line) counts() (rises, falls int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rises, l.falls
}

func TestIRQMaskedDoesNotFire(t *testing.T) {
	td := newTDrv(t, tOpts{soc: "imx8mp", enh: true, prom: true})
	l := newLine(td.d)
	for i := 0; i < 3; i++ {
		if !td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, i)) {
			t.Fatalf("frame %d not received", i)
		}
	}
	if td.d.Read32(regEIR)&eir_RXF == 0 {
		t.Fatal("EIR.RXF not set by a received frame (BD INT set)")
	}
	if r, _ := l.counts(); r != 0 || td.d.IRQLevel() {
		t.Fatalf("EIMR = 0: line rose %d times, level %v; want never", r, td.d.IRQLevel())
	}
}

func TestIRQArmedFiresOnFrameAndW1CLowers(t *testing.T) {
	td := newTDrv(t, tOpts{soc: "imx8mp", enh: true, prom: true})
	l := newLine(td.d)
	td.d.Write32(regEIMR, eir_RXF)
	if r, _ := l.counts(); r != 0 {
		t.Fatalf("armed with EIR clear: line rose %d times", r)
	}
	td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, 0))
	if r, _ := l.counts(); r != 1 || !td.d.IRQLevel() {
		t.Fatalf("after a frame: %d rises, level %v; want 1, high", r, td.d.IRQLevel())
	}
	// A second frame while the level is high is no new edge.
	td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, 1))
	if r, _ := l.counts(); r != 1 {
		t.Fatalf("second frame with the level high: %d rises; want 1", r)
	}
	td.d.Write32(regEIR, eir_RXF|eir_RXB)
	if _, f := l.counts(); f != 1 || td.d.IRQLevel() {
		t.Fatalf("after EIR W1C: %d falls, level %v; want 1, low", f, td.d.IRQLevel())
	}
	// Masking with EIR pending lowers the line too; unmasking raises it.
	td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, 2))
	td.d.Write32(regEIMR, 0)
	td.d.Write32(regEIMR, eir_RXF)
	if r, f := l.counts(); r != 3 || f != 2 {
		t.Fatalf("mask/unmask with RXF pending: %d rises, %d falls; want 3, 2", r, f)
	}
	// A frame without INT in its BD raises no RXF (enhanced BDs).
	td.d.Write32(regEIR, 0xFFFFFFFF)
	for i := 0; i < td.nrx; i++ {
		td.setWord(td.rxBD(0, i)+bdESC, 0)
	}
	td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, 3))
	if td.d.Read32(regEIR)&eir_RXF != 0 {
		t.Fatal("RXF set for a BD without INT")
	}
}

func TestIRQCoalescingFrameThreshold(t *testing.T) {
	td := newTDrv(t, tOpts{soc: "imx8mp", enh: true, prom: true, nrx: 16})
	l := newLine(td.d)
	td.d.Write32(regRXIC0, ic_ICEN|ic_ICCS|4<<ic_ICFT_SHIFT) // 4 frames, no timer
	td.d.Write32(regEIMR, eir_RXF)
	for i := 0; i < 3; i++ {
		td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, i))
	}
	if r, _ := l.counts(); r != 0 || td.d.Read32(regEIR)&eir_RXF != 0 {
		t.Fatalf("3 of 4 frames: %d rises, EIR %#x; want none held back", r, td.d.Read32(regEIR))
	}
	td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, 3))
	if r, _ := l.counts(); r != 1 {
		t.Fatalf("4th frame: %d rises; want 1 for the bundle", r)
	}
	td.d.Write32(regEIR, eir_RXF)
	// The count restarted: three more hold back again.
	for i := 4; i < 7; i++ {
		td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, i))
	}
	if r, _ := l.counts(); r != 1 {
		t.Fatalf("after the bundle, 3 frames: %d rises; want still 1", r)
	}
	// Coalescing off: every frame's RXF passes at once.
	td.d.Write32(regRXIC0, 0)
	td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, 7))
	if r, _ := l.counts(); r != 2 {
		t.Fatalf("coalescing off: %d rises; want 2", r)
	}
}

func TestIRQCoalescingTimer(t *testing.T) {
	td := newTDrv(t, tOpts{soc: "imx8mp", enh: true, prom: true})
	td.d.irq.clock = 1_000_000 // 1 MHz: one ICTT unit is 64 us
	l := newLine(td.d)
	const tt = 15625 // 15625 × 64 us = 1 s
	td.d.Write32(regRXIC0, ic_ICEN|ic_ICCS|200<<ic_ICFT_SHIFT|tt)
	td.d.Write32(regEIMR, eir_RXF)
	start := time.Now()
	td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, 0))
	td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, 1))
	if r, _ := l.counts(); r != 0 && time.Since(start) < time.Second {
		t.Fatalf("2 of 200 frames, timer running: fired at once")
	}
	select {
	case <-l.risen:
	case <-time.After(20 * time.Second):
		t.Fatal("the coalescing timer never released the held frames")
	}
	if el := time.Since(start); el < time.Second {
		t.Fatalf("timer released after %v; programmed 1 s", el)
	}
	if r, _ := l.counts(); r != 1 || td.d.Read32(regEIR)&eir_RXF == 0 {
		t.Fatalf("%d rises, EIR %#x; want 1 with RXF set", r, td.d.Read32(regEIR))
	}
	// A reset voids a running timer.
	td.d.Write32(regEIR, eir_RXF)
	td.d.Receive(testFrame([6]byte{2, 0, 0, 0, 0, 1}, 64, 2))
	_ = td.d.Reset()
	td.d.irq.mu.Lock()
	held := td.d.irq.held[0]
	td.d.irq.mu.Unlock()
	if held != 0 {
		t.Fatalf("held %d frames after reset", held)
	}
}

// lineRec counts one line's rises.
type lineRec struct {
	mu    sync.Mutex
	rises int
}

func (l *lineRec) set(level bool) {
	if level {
		l.mu.Lock()
		l.rises++
		l.mu.Unlock()
	}
}

func (l *lineRec) n() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rises
}

// vlanFrame is a frame to ourMAC tagged with priority pcp.
func vlanFrame(pcp int) []byte {
	f := testFrame(ourMAC, 64, pcp)
	g := append(append(append([]byte(nil), f[:12]...), 0x81, 0x00, byte(pcp<<5), 1), f[12:]...)
	return g
}

// TestIRQLinesSplitByRing: on the i.MX8M (and i.MX7D, i.MX93) ring 1's
// and ring 2's events raise lines int1 and int2 and nothing else, the
// rest int0 (docs/hardware-fec.md §1: the "IRQ <-> queue assignment" of
// the netdev thread on the i.MX8M trees' interrupt order); on the i.MX6SX
// profile, with one line, ring 1's events raise int0. The device tree's
// interrupt i is line DTIRQLine(i): int1, int2, int0 on the i.MX8M.
func TestIRQLinesSplitByRing(t *testing.T) {
	for _, c := range []struct {
		soc   string
		lines int
		ring1 int // the line ring 1's frame raises
	}{{"imx8mp", 3, 1}, {"imx7d", 3, 1}, {"imx6sx", 1, 0}} {
		td := newTDrv(t, tOpts{soc: c.soc, enh: true, prom: true})
		if td.d.IRQLines() != c.lines {
			t.Fatalf("%s: %d lines, want %d", c.soc, td.d.IRQLines(), c.lines)
		}
		var ls [3]lineRec
		for n := range ls {
			td.d.SetIRQLine(n, ls[n].set)
		}
		td.d.Write32(regRCMR1, rcmr_MATCHEN|2) // priority 2 to ring 1
		td.d.Write32(regEIMR, eir_RXF|eir_RXF1|eir_RXF2)
		if !td.d.Receive(vlanFrame(2)) {
			t.Fatalf("%s: ring 1's frame not received", c.soc)
		}
		for n := range ls {
			if want := btoi(n == c.ring1); ls[n].n() != want {
				t.Fatalf("%s: ring 1's frame: line %d rose %d times, want %d", c.soc, n, ls[n].n(), want)
			}
		}
		if c.lines == 3 && (!td.d.IRQLineLevel(1) || td.d.IRQLineLevel(0)) {
			t.Fatalf("%s: levels int0 %v int1 %v after ring 1's frame", c.soc, td.d.IRQLineLevel(0), td.d.IRQLineLevel(1))
		}
		if !td.d.Receive(testFrame(ourMAC, 64, 1)) {
			t.Fatalf("%s: ring 0's frame not received", c.soc)
		}
		if c.lines == 3 && ls[0].n() != 1 {
			t.Fatalf("%s: ring 0's frame: int0 rose %d times, want 1", c.soc, ls[0].n())
		}
	}
	p, _ := LookupProfile("imx8mp")
	if p.DTIRQLine(0) != 1 || p.DTIRQLine(1) != 2 || p.DTIRQLine(2) != 0 || p.DTIRQLine(3) != -1 {
		t.Errorf("imx8mp tree order: %d %d %d %d, want 1 2 0 -1", p.DTIRQLine(0), p.DTIRQLine(1), p.DTIRQLine(2), p.DTIRQLine(3))
	}
	p, _ = LookupProfile("imx7d")
	if p.DTIRQLine(0) != 0 || p.DTIRQLine(2) != 2 {
		t.Errorf("imx7d tree order: %d .. %d, want 0 .. 2", p.DTIRQLine(0), p.DTIRQLine(2))
	}
	p, _ = LookupProfile("imx6ul")
	if p.DTIRQLine(0) != 0 || p.DTIRQLine(1) != -1 {
		t.Errorf("imx6ul: %d %d, want 0 -1", p.DTIRQLine(0), p.DTIRQLine(1))
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

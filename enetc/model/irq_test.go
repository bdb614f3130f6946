package model

import (
	"sync"
	"testing"
	"time"
)

// msiLog records the model's MSI-X messages.
type msiLog struct {
	mu   sync.Mutex
	vecs []int
	c    chan int
}

func newMSILog(d *Device) *msiLog {
	l := &msiLog{c: make(chan int, 64)}
	d.SetMSI(func(v int) {
		l.mu.Lock()
		l.vecs = append(l.vecs, v)
		l.mu.Unlock()
		l.c <- v
	})
	return l
}

func (l *msiLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.vecs)
}

func TestMSIMaskedDoesNotFire(t *testing.T) {
	h := newIRQHarness(t)
	l := newMSILog(h.d)
	h.d.Write32(rxRingOff(regRBICR0, 0), rbicr0_ICEN|1)
	for i := 0; i < 3; i++ {
		h.rxFrame(t)
	}
	if l.count() != 0 {
		t.Fatalf("RBIER = 0: %d messages; want none", l.count())
	}
	if h.d.Read32(regSIRXIDR)&1 == 0 {
		t.Fatal("SIRXIDR bit 0 not set by received frames")
	}
	// Enabling with the detect pending sends the message then.
	h.d.Write32(regSIMSIRRV, 5)
	h.d.Write32(rxRingOff(regRBIER, 0), rbier_RXTIE)
	if l.count() != 1 || l.vecs[0] != 5 {
		t.Fatalf("enable with detect pending: messages %v; want [5] (SIMSIRRV(0))", l.vecs)
	}
}

func TestMSIArmedFiresOncePerDetect(t *testing.T) {
	h := newIRQHarness(t)
	l := newMSILog(h.d)
	h.d.Write32(regSIMSIRRV, 3)
	h.d.Write32(rxRingOff(regRBICR0, 0), rbicr0_ICEN|1)
	h.d.Write32(regSIRXIDR, 0xFFFF)
	h.d.Write32(rxRingOff(regRBIER, 0), rbier_RXTIE)
	if l.count() != 0 {
		t.Fatalf("enabled with no detect: %d messages", l.count())
	}
	h.rxFrame(t)
	if l.count() != 1 || l.vecs[0] != 3 {
		t.Fatalf("first frame: messages %v, want [3]", l.vecs)
	}
	h.rxFrame(t)
	if l.count() != 1 {
		t.Fatalf("second frame with the detect pending: %d messages, want 1", l.count())
	}
	h.d.Write32(regSIRXIDR, 1) // W1C re-arms
	if h.d.Read32(regSIRXIDR)&1 != 0 {
		t.Fatal("SIRXIDR bit 0 not cleared by writing 1")
	}
	h.rxFrame(t)
	if l.count() != 2 {
		t.Fatalf("after the clear: %d messages, want 2", l.count())
	}
}

func TestMSICoalescingPacketThreshold(t *testing.T) {
	h := newIRQHarness(t)
	l := newMSILog(h.d)
	h.d.Write32(rxRingOff(regRBICR0, 0), rbicr0_ICEN|4)
	h.d.Write32(rxRingOff(regRBIER, 0), rbier_RXTIE)
	for i := 0; i < 3; i++ {
		h.rxFrame(t)
	}
	if l.count() != 0 || h.d.Read32(regSIRXIDR)&1 != 0 {
		t.Fatalf("3 of ICPT=4 frames: %d messages, SIRXIDR %#x", l.count(), h.d.Read32(regSIRXIDR))
	}
	h.rxFrame(t)
	if l.count() != 1 {
		t.Fatalf("4th frame: %d messages, want 1 for the bundle", l.count())
	}
}

func TestMSICoalescingTimer(t *testing.T) {
	h := newIRQHarness(t)
	h.d.msi.clock = 1_000_000 // 1 MHz: RBICR1 counts microseconds
	l := newMSILog(h.d)
	h.d.Write32(rxRingOff(regRBICR0, 0), rbicr0_ICEN|100)
	h.d.Write32(rxRingOff(regRBICR1, 0), 1_000_000) // 1 s
	h.d.Write32(rxRingOff(regRBIER, 0), rbier_RXTIE)
	start := time.Now()
	h.rxFrame(t)
	if l.count() != 0 && time.Since(start) < time.Second {
		t.Fatal("1 of 100 frames with a 1 s timer: a message at once")
	}
	select {
	case <-l.c:
	case <-time.After(20 * time.Second):
		t.Fatal("the RBICR1 timer never sent the message")
	}
	if el := time.Since(start); el < time.Second {
		t.Fatalf("message after %v; RBICR1 programmed 1 s", el)
	}
}

func newIRQHarness(t *testing.T) *harness {
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupRx(0, 64, 2048, 0)
	return h
}

// rxFrame delivers one frame to ring 0 and checks it got there.
func (h *harness) rxFrame(t *testing.T) {
	t.Helper()
	if !h.d.Receive(udp4(1, 9, 64)) {
		t.Fatal("frame not received")
	}
}

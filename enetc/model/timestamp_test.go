package model

import (
	"testing"
	"time"
)

// TestRxExtendedBDTimestamps: with RBMR.BDS every written-back frame has
// the timestamp flag and, in its extension, the low 32 bits of the chip
// timer's time when it arrived; SICTR0/1 read that timer too.
func TestRxExtendedBDTimestamps(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	tm := NewTimer(TimerConfig{})
	if err := h.d.Chip().AttachTimer(tm); err != nil {
		t.Fatal(err)
	}
	tm.Write32(TmrADD, 0x80000000)
	tm.Write32(TmrCNTL, 0xFFFFFFFF-2500) // the low half wraps between frames
	tm.Write32(TmrCNTH, 7)
	tm.Write32(TmrCTRL, 5<<TmrCtrlTclkSh|TmrCtrlTE)
	h.up()
	h.setupRx(0, 16, 2048, rbmr_BDS)
	var want []uint64
	for i := range 3 {
		tm.Advance(time.Microsecond)
		want = append(want, tm.Time())
		h.d.Receive(sized(100 + i))
	}
	tm.Advance(time.Millisecond) // read later: the stamps stay
	for i := range 3 {
		bds, ok := h.recv(0)
		if !ok || bds[0].flags&RxFlagTSTMP == 0 || bds[0].tstamp != uint32(want[i]) {
			t.Fatalf("frame %d: ok %v flags %#x stamp %#x, want the timestamp flag and %#x", i, ok, bds[0].flags, bds[0].tstamp, uint32(want[i]))
		}
	}
	now := tm.Time()
	if lo, hi := h.d.Read32(regSICTR0), h.d.Read32(regSICTR1); uint64(hi)<<32|uint64(lo) != now {
		t.Fatalf("SICTR1:SICTR0 = %#x:%#x, want the timer's %#x", hi, lo, now)
	}
}

// TestRxNoTimestampCorruption: CorruptNoTimestamp writes one frame's
// extended BD back without the flag and stamp; the next is stamped.
func TestRxNoTimestampCorruption(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	tm := NewTimer(TimerConfig{})
	if err := h.d.Chip().AttachTimer(tm); err != nil {
		t.Fatal(err)
	}
	tm.Write32(TmrADD, 0x80000000)
	tm.Write32(TmrCTRL, 5<<TmrCtrlTclkSh|TmrCtrlTE)
	h.up()
	h.setupRx(0, 16, 2048, rbmr_BDS)
	if err := h.d.CorruptRxWriteback(CorruptNoTimestamp, 1); err != nil {
		t.Fatal(err)
	}
	tm.Advance(time.Microsecond)
	h.d.Receive(sized(100))
	tm.Advance(time.Microsecond)
	want := tm.Time()
	h.d.Receive(sized(100))
	if bds, ok := h.recv(0); !ok || bds[0].flags&RxFlagTSTMP != 0 || bds[0].tstamp != 0 {
		t.Fatalf("corrupted frame: ok %v flags %#x stamp %#x, want no timestamp flag and a zero stamp", ok, bds[0].flags, bds[0].tstamp)
	}
	if bds, ok := h.recv(0); !ok || bds[0].flags&RxFlagTSTMP == 0 || bds[0].tstamp != uint32(want) {
		t.Fatalf("next frame: ok %v flags %#x stamp %#x, want the flag and %#x", ok, bds[0].flags, bds[0].tstamp, uint32(want))
	}
}

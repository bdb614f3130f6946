package model

import (
	"testing"
	"time"
)

func TestTimerRegisterSemantics(t *testing.T) {
	tm := NewTimer(TimerConfig{})
	// Stopped (TE clear): model time passes, the counter does not.
	tm.Write32(TmrADD, 0x80000000)
	tm.Write32(TmrCTRL, 5<<TmrCtrlTclkSh)
	tm.Advance(time.Second)
	if tm.Read32(TmrCNTL) != 0 {
		t.Fatal("the counter ran with TE clear")
	}
	// The counter is written low then high; the high write commits.
	tm.Write32(TmrCNTL, 0x1234)
	if tm.Time() != 0 {
		t.Fatal("a TMR_CNT_L write alone changed the counter")
	}
	tm.Write32(TmrCNTH, 2)
	if got := tm.Time(); got != 2<<32|0x1234 {
		t.Fatalf("counter after L, H writes = %#x", got)
	}
	tm.Write32(TmrCTRL, 5<<TmrCtrlTclkSh|TmrCtrlTE)
	// Reading the low word latches the high word: a carry between the
	// two reads is not seen.
	tm.Write32(TmrCNTL, 0xFFFFFFFF-4)
	tm.Write32(TmrCNTH, 0)
	lo := tm.Read32(TmrCNTL)
	tm.Advance(time.Microsecond) // 1000 ns: the low word wraps
	if hi := tm.Read32(TmrCNTH); hi != 0 || lo != 0xFFFFFFFF-4 {
		t.Fatalf("read L then H across a carry = %#x:%#x, want the latched 0:%#x", hi, lo, uint32(0xFFFFFFFF-4))
	}
	if tm.Time() != 1<<32+995 {
		t.Fatalf("time after the carry = %#x", tm.Time())
	}
	// TMR_OFF adds to the time.
	tm.Write32(TmrOFFL, 5)
	tm.Write32(TmrOFFH, 0)
	if tm.Time() != 1<<32+1000 {
		t.Fatalf("time with TMR_OFF 5 = %#x", tm.Time())
	}
	// Alarm 1 sets ALM1 in TMR_TEVENT, which is write-1-to-clear.
	tm.Write32(TmrALARM1L, 2000)
	tm.Write32(TmrALARM1H, 1)
	tm.Advance(time.Microsecond)
	if tm.Read32(TmrTEVENT)&TmrEvALM1 == 0 {
		t.Fatal("alarm 1 passed without TMR_TEVENT.ALM1")
	}
	tm.Write32(TmrTEVENT, TmrEvALM1)
	if tm.Read32(TmrTEVENT)&TmrEvALM1 != 0 {
		t.Fatal("writing 1 did not clear ALM1")
	}
	// Outside the window: all ones, and the error names the offset.
	if v := tm.Read32(TimerWindow); v != 0xFFFFFFFF || tm.Err() == nil {
		t.Fatalf("read past the window = %#x, err %v", v, tm.Err())
	}
}

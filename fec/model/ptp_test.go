package model

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/internal/simtime"
)

func TestPTPRegisterSemantics(t *testing.T) {
	d, err := New(Config{Name: "fec-ptp", Timeline: simtime.NewManual()})
	if err != nil {
		t.Fatal(err)
	}
	d.Write32(regATINC, 10)
	d.Write32(regATCR, atcrEN)
	d.Write32(regATVR, 1000)
	d.AdvanceTime(time.Microsecond)
	// ATVR reads the last capture, not the running counter.
	if v := d.Read32(regATVR); v != 0 {
		t.Fatalf("ATVR before a capture = %d, want 0 (nothing captured yet)", v)
	}
	d.Write32(regATCR, atcrEN|atcrCAPTURE)
	if v := d.Read32(regATVR); v != 2000 {
		t.Fatalf("ATVR after a capture = %d, want 2000", v)
	}
	if d.Read32(regATCR)&atcrCAPTURE != 0 {
		t.Fatal("CAPTURE reads back set")
	}
	// Correction: every 4th cycle adds 12 instead of 10: +5%.
	d.Write32(regATINC, 10|12<<atincCORRSh)
	d.Write32(regATCOR, 4)
	before := d.PTPCounter()
	d.AdvanceTime(400 * time.Nanosecond) // 40 cycles
	if got := d.PTPCounter() - before; got != 420 {
		t.Fatalf("40 cycles with every 4th corrected to 12 ns added %d, want 420", got)
	}
	// The counter wraps at ATPER.
	d.Write32(regATCOR, 0)
	d.Write32(regATPER, 1000)
	d.Write32(regATVR, 990)
	d.AdvanceTime(30 * time.Nanosecond)
	if got := d.PTPCounter(); got != 20 {
		t.Fatalf("counter past ATPER 1000 = %d, want 20", got)
	}
	// A compare channel in a pulse mode flags TF and TGSR; TF is w1c.
	d.Write32(regATPER, 0)
	d.Write32(regTCSR0+4, 100) // TCCR0
	d.Write32(regTCSR0, 0xf<<tcsrTMODESh)
	d.AdvanceTime(time.Microsecond)
	if d.Read32(regTCSR0)&tcsrTF == 0 || d.Read32(regTGSR)&1 == 0 {
		t.Fatal("the compare passed without TF and TGSR.TF0")
	}
	if p := d.PTPPulses(); len(p) != 1 || p[0].Counter != 100 || p[0].Mode != 0xf {
		t.Fatalf("pulses = %+v", p)
	}
	d.Write32(regTCSR0, d.Read32(regTCSR0))
	if d.Read32(regTCSR0)&tcsrTF != 0 || d.Read32(regTCSR0)>>tcsrTMODESh&0xf != 0xf {
		t.Fatal("writing TF back did not clear it, or cleared the mode")
	}
	// ECR.RESET wipes the timer.
	d.Write32(regECR, ecr_RESET)
	if d.Read32(regATCR) != 0 || d.Read32(regATINC) != 0 {
		t.Fatal("ECR.RESET left the timer programmed")
	}
}

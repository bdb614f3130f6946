package fec

import "testing"

// Arming opens the queue's handle once; a frame while armed is one
// interrupt the handle sees; a frame while disarmed is none (EIMR masks
// it), and the next arm starts from a clean EIR.
func TestInterruptCounts(t *testing.T) {
	p, m := openInternal(t, "soc=imx8mp&link-poll=0")
	q := p.rx[0]
	if err := q.ArmInterrupt(); err != nil {
		t.Fatal(err)
	}
	m.Port().Receive(patternFrame(64, 1))
	q.DisarmInterrupt()
	if armed, fired := q.interruptStats(); armed != 1 || fired != 1 {
		t.Fatalf("one frame while armed: armed %d, fired %d; want 1, 1", armed, fired)
	}
	m.Port().Receive(patternFrame(64, 2)) // disarmed: masked
	if err := q.ArmInterrupt(); err != nil {
		t.Fatal(err)
	}
	q.DisarmInterrupt()
	if armed, fired := q.interruptStats(); armed != 2 || fired != 1 {
		t.Fatalf("a frame while disarmed, then arm and disarm: armed %d, fired %d; want 2, 1", armed, fired)
	}
	if p.regs.Read32(regEIMR) != 0 {
		t.Fatalf("EIMR %#x after disarm; want 0", p.regs.Read32(regEIMR))
	}
}

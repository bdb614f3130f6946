package main

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// knownInputs is the surroundings of a port whose inputs produced n frames
// (as a simulated port's are known), calling onHold at the end-of-run hold.
type knownInputs struct {
	bare
	n      uint64
	holds  *atomic.Int32
	onHold func()
}

func (k knownInputs) produced() (uint64, bool) { return k.n, true }
func (k knownInputs) hold() {
	if k.holds.Add(1) > 1 { // the first hold is the set-up's
		k.onHold()
	}
}

// TestDrainOutlastsAStalledWorker: frames that sit in a port's RX ring when
// the run ends are still received and forwarded though the worker sees
// nothing for longer than the drain's quiet time (a loaded machine keeps it
// off its CPU): the drain ends when the accounting balances, not when
// nothing has moved for a moment, and the run exits 0 with every frame
// accounted for.
func TestDrainOutlastsAStalledWorker(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	const frames = 100
	p0.load(0, testFrames(t, frames, 64))
	rx := p0.rxq[0]
	rx.pauseUntil.Store(time.Now().Add(time.Hour).UnixNano()) // nothing flows until the end
	var holds0, holds1 atomic.Int32
	stall := 10 * drainQuiet
	old := surroundingsOf
	surroundingsOf = func(specs []string) []surround {
		return []surround{
			knownInputs{n: frames, holds: &holds0, onHold: func() { rx.pauseUntil.Store(time.Now().Add(stall).UnixNano()) }},
			knownInputs{n: 0, holds: &holds1, onHold: func() {}},
		}
	}
	t.Cleanup(func() { surroundingsOf = old })
	start := time.Now()
	code, out, errOut := runUntil(t, []string{"--stats-interval", "0", "sim:fake0", "sim:fake1"}, func() bool { return time.Since(start) > 20*time.Millisecond })
	if code != 0 || strings.Contains(out+errOut, "unaccounted") {
		t.Fatalf("exit %d; a stalled worker's frames were left behind:\n%s\n%s", code, out, errOut)
	}
	if got := len(p1.txq[0].frames()); got != frames {
		t.Fatalf("port 1 sent %d of the %d frames port 0 held at the end", got, frames)
	}
}

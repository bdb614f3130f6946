// Package simtime is the simulated timeline the device models' 1588 timers
// count on: model time that tests advance by hand (deterministic, no
// timing under load) or that follows the host's monotonic clock, and an
// oscillator with a nominal rate and a frequency error that turns model
// time into clock cycles.
package simtime

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Timeline is model time: nanoseconds since the timeline began. A manual
// timeline moves only by Advance; a wall timeline also follows the host's
// monotonic clock. Safe for concurrent use.
type Timeline struct {
	wall bool
	t0   time.Time
	adv  atomic.Int64
}

// NewManual returns a timeline that moves only when Advance is called.
func NewManual() *Timeline { return &Timeline{} }

// NewWall returns a timeline that follows the host's monotonic clock from
// now on (plus any Advance).
func NewWall() *Timeline { return &Timeline{wall: true, t0: time.Now()} }

// Now is the model time in nanoseconds.
func (t *Timeline) Now() int64 {
	n := t.adv.Load()
	if t.wall {
		n += int64(time.Since(t.t0))
	}
	return n
}

// Advance moves model time forward by d (negative d is ignored: model
// time never runs backwards).
func (t *Timeline) Advance(d time.Duration) {
	if d > 0 {
		t.adv.Add(int64(d))
	}
}

// Oscillator is a clock source: NominalHz cycles per second of true time,
// off by ErrorPPB parts per billion (positive: it runs fast).
type Oscillator struct {
	NominalHz uint64
	ErrorPPB  int64
}

// nanoHz is the actual rate in units of 1e-9 Hz.
func (o Oscillator) nanoHz() uint64 {
	// Hz * ppb * 1e-9 Hz is Hz*ppb nHz exactly.
	f := int64(o.NominalHz)*1_000_000_000 + int64(o.NominalHz)*o.ErrorPPB
	if f < 1 {
		f = 1
	}
	return uint64(f)
}

const nsTimesNHz = 1_000_000_000 * 1_000_000_000 // ns * nHz per cycle

// Cycles is how many cycles the oscillator has made by model time t ns
// (t >= 0), rounded down.
func (o Oscillator) Cycles(t int64) uint64 {
	if t <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(t), o.nanoHz())
	if hi >= nsTimesNHz {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, nsTimesNHz)
	return q
}

// TimeOf is the model time in ns at which cycle n happens: the smallest t
// with Cycles(t) >= n.
func (o Oscillator) TimeOf(n uint64) int64 {
	hi, lo := bits.Mul64(n, nsTimesNHz)
	f := o.nanoHz()
	if hi >= f {
		return int64(^uint64(0) >> 1)
	}
	q, r := bits.Div64(hi, lo, f)
	if r != 0 {
		q++
	}
	return int64(q)
}

package simtime

import (
	"testing"
	"time"
)

func TestOscillatorCycles(t *testing.T) {
	for _, c := range []struct {
		o    Oscillator
		t    int64
		want uint64
	}{
		{Oscillator{NominalHz: 400_000_000}, int64(time.Second), 400_000_000},
		{Oscillator{NominalHz: 400_000_000, ErrorPPB: 50_000}, int64(time.Second), 400_020_000},
		{Oscillator{NominalHz: 100_000_000, ErrorPPB: -1}, int64(time.Second), 99_999_999}, // 99999999.9, rounded down
		{Oscillator{NominalHz: 125_000_000}, 1000 * int64(time.Hour), 450_000_000_000_000},
		{Oscillator{NominalHz: 125_000_000}, 0, 0},
		{Oscillator{NominalHz: 125_000_000}, -5, 0},
	} {
		if got := c.o.Cycles(c.t); got != c.want {
			t.Errorf("%+v.Cycles(%d) = %d, want %d", c.o, c.t, got, c.want)
		}
	}
	// TimeOf is Cycles' inverse: the first instant a cycle count is reached.
	o := Oscillator{NominalHz: 333_333_333, ErrorPPB: 12345}
	for _, n := range []uint64{1, 2, 1000, 123456789, 1 << 40} {
		at := o.TimeOf(n)
		if o.Cycles(at) < n || o.Cycles(at-1) >= n {
			t.Errorf("TimeOf(%d) = %d: Cycles there %d, a ns before %d", n, at, o.Cycles(at), o.Cycles(at-1))
		}
	}
}

func TestTimeline(t *testing.T) {
	tl := NewManual()
	tl.Advance(5)
	tl.Advance(-3) // model time never runs backwards
	if tl.Now() != 5 {
		t.Fatalf("manual timeline at %d after +5, -3", tl.Now())
	}
	w := NewWall()
	a := w.Now()
	w.Advance(time.Hour)
	if w.Now() < a+int64(time.Hour) {
		t.Fatal("a wall timeline lost an Advance")
	}
}

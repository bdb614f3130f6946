package driver

import (
	"math"
	"testing"
	"time"
)

// A gate list's and a stream gate's cycle: CycleTime when given, else the
// intervals' sum, 0 for no entries, and a sum past the largest (smallest)
// Duration that instead of wrapping.
func TestCycle(t *testing.T) {
	const big = time.Duration(math.MaxInt64/2 + 1)
	for _, c := range []struct {
		name      string
		cycleTime time.Duration
		intervals []time.Duration
		want      time.Duration
	}{
		{"no entries", 0, nil, 0},
		{"zero intervals", 0, []time.Duration{0, 0}, 0},
		{"sum", 0, []time.Duration{300, 700}, 1000},
		{"cycle time given", 5000, []time.Duration{300, 700}, 5000},
		{"cycle time given, no entries", 5000, nil, 5000},
		{"sum at the largest", 0, []time.Duration{math.MaxInt64 - 1, 1}, math.MaxInt64},
		{"sum past the largest", 0, []time.Duration{big, big}, math.MaxInt64},
		{"sum past the largest, then more", 0, []time.Duration{big, big, big}, math.MaxInt64},
		{"sum past the smallest", 0, []time.Duration{-big, -big, -big}, math.MinInt64},
		{"cycle time given, intervals that overflow", 1000, []time.Duration{big, big}, 1000},
	} {
		g := GateList{CycleTime: c.cycleTime}
		sg := StreamGate{CycleTime: c.cycleTime}
		for i, v := range c.intervals {
			g.Entries = append(g.Entries, GateEntry{Gates: uint8(i), Interval: v})
			sg.Entries = append(sg.Entries, StreamGateEntry{Open: i%2 == 0, Interval: v})
		}
		if got := g.Cycle(); got != c.want {
			t.Errorf("%s: GateList.Cycle = %d, want %d", c.name, got, c.want)
		}
		if got := sg.Cycle(); got != c.want {
			t.Errorf("%s: StreamGate.Cycle = %d, want %d", c.name, got, c.want)
		}
	}
}

// Intervals that would wrap into a short cycle are refused as too long.
func TestCheckRefusesWrappingCycle(t *testing.T) {
	const big = time.Duration(math.MaxInt64/2 + 1)
	g := GateList{Entries: []GateEntry{{1, big}, {2, big}}}
	if err := g.Check(4, math.MaxInt64-1); err == nil {
		t.Errorf("GateList.Check of intervals summing past the largest Duration: nil, want the cycle refused (Cycle %d)", g.Cycle())
	}
}

// A cycle time shorter than intervals whose sum would wrap is refused.
func TestCheckRefusesCycleTimeUnderWrappingSum(t *testing.T) {
	const big = time.Duration(math.MaxInt64/2 + 1)
	g := GateList{CycleTime: 1000, Entries: []GateEntry{{1, big}, {2, big}}}
	if err := g.Check(4, math.MaxInt64); err == nil {
		t.Error("GateList.Check of a 1000 ns cycle-time under intervals summing past the largest Duration: nil, want it refused as shorter")
	}
}

package driver

import (
	"strings"
	"testing"
	"time"
)

// A base time already past starts at the first cycle boundary after now;
// one not past is kept; a cycle time of 0 is the sum of the intervals.
func TestGateListCycleStart(t *testing.T) {
	g := GateList{BaseTime: 100, Entries: []GateEntry{{1, 300}, {2, 700}}}
	if c := g.Cycle(); c != 1000 {
		t.Fatalf("Cycle = %v, want 1000 ns (the intervals' sum)", c)
	}
	for _, c := range []struct{ now, want Time }{{0, 100}, {100, 100}, {101, 1100}, {1100, 2100}, {5_000_050, 5_000_100}} {
		if got := g.CycleStart(c.now); got != c.want {
			t.Errorf("CycleStart(%d) = %d, want %d", c.now, got, c.want)
		}
	}
}

func TestGateListCheck(t *testing.T) {
	ok := GateList{CycleTime: time.Millisecond, Entries: []GateEntry{{1, 300 * time.Microsecond}, {2, 700 * time.Microsecond}}}
	if err := ok.Check(2, time.Second); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		g    GateList
		max  int
		want string
	}{
		{GateList{}, 4, "no sched-entry"},
		{ok, 1, "2 entries; the hardware takes at most 1"},
		{GateList{CycleTime: 2 * time.Second, Entries: ok.Entries}, 4, "cycle time 2000000000 ns; the hardware takes at most 1000000000"},
		{GateList{CycleTimeExtension: -1, Entries: ok.Entries}, 4, "negative"},
	} {
		if err := c.g.Check(c.max, time.Second); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%+v, %d): %v, want %q", c.g, c.max, err, c.want)
		}
	}
}

// Queue and ClassOfQueue read the map both ways; String is mqprio's.
func TestTCMapLookups(t *testing.T) {
	m := TCMap{NumTC: 2, Queues: []QueueRange{{2, 0}, {1, 2}}}
	m.PrioTC[7] = 1
	if m.Queue(7) != 2 || m.Queue(0) != 0 || m.Queue(16) != -1 || m.ClassOfQueue(1) != 0 || m.ClassOfQueue(2) != 1 {
		t.Errorf("lookups: Queue(7)=%d Queue(0)=%d Queue(16)=%d ClassOfQueue(1)=%d ClassOfQueue(2)=%d", m.Queue(7), m.Queue(0), m.Queue(16), m.ClassOfQueue(1), m.ClassOfQueue(2))
	}
	if s := m.String(); s != "num_tc 2 map 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 queues 2@0 1@2" {
		t.Errorf("String = %q", s)
	}
	if (TCMap{}).Queue(3) != 0 {
		t.Error("the zero map puts every priority on queue 0")
	}
}

package driver

import (
	"strings"
	"testing"
	"time"
)

func TestStreamCheck(t *testing.T) {
	caps := StreamCaps{Streams: 8, MaxGateEntries: 2, Meters: true}
	gate := StreamGate{Entries: []StreamGateEntry{{Open: true, Interval: 300}, {Interval: 700}}}
	ok := Stream{Handle: 7, DMAC: [6]byte{1}, VID: 12, Gate: gate, MaxSDU: 1500, Meter: &Meter{CIRBytes: 1000, CBSBytes: 1000}}
	if err := ok.Check(caps); err != nil {
		t.Fatalf("Check(%+v) = %v", ok, err)
	}
	for _, c := range []struct {
		mod  func(*Stream, *StreamCaps)
		want string
	}{
		{func(s *Stream, c *StreamCaps) { c.Streams = 0 }, "no stream filters"},
		{func(s *Stream, c *StreamCaps) { s.Handle = 8 }, "handles are 0-7"},
		{func(s *Stream, c *StreamCaps) { s.VID = -2 }, "vlan_id -2"},
		{func(s *Stream, c *StreamCaps) { s.MaxSDU = 70000 }, "max SDU 70000"},
		{func(s *Stream, c *StreamCaps) { s.Gate.CycleTime = 999 }, "cycle-time 999 ns is shorter"},
		{func(s *Stream, c *StreamCaps) { s.Gate.Entries = append(s.Gate.Entries, gate.Entries[0]) }, "at most 2"},
		{func(s *Stream, c *StreamCaps) { s.Gate.Entries = []StreamGateEntry{{Interval: 0}} }, "entry 0: interval 0"},
		{func(s *Stream, c *StreamCaps) { c.Meters = false }, "no flow meters"},
		{func(s *Stream, c *StreamCaps) { s.Meter = &Meter{CIRBytes: 1, CBSBytes: 0} }, "burst 0"},
	} {
		s, cp := ok, caps
		s.Gate.Entries = append([]StreamGateEntry(nil), gate.Entries...)
		c.mod(&s, &cp)
		if err := s.Check(cp); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check = %v, want an error with %q", err, c.want)
		}
	}
	g := StreamGate{BaseTime: 100, Entries: []StreamGateEntry{{Open: true, Interval: time.Microsecond}}}
	if got := g.CycleStart(50); got != 100 {
		t.Errorf("CycleStart before the base = %v, want the base", got)
	}
	if got := g.CycleStart(2500); got != 3100 {
		t.Errorf("CycleStart past the base = %d, want 3100 (base + 3 cycles)", got)
	}
}

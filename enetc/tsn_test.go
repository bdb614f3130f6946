package enetc_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
)

// openTSN opens the chip's timer at clock time 1000 s on a manual timeline
// (model time stands still unless advanced) and a started port on the same
// chip with txq TX queues.
func openTSN(t *testing.T, txq int) (*simPort, driver.TSN, driver.Time) {
	t.Helper()
	c, _, _ := openTimer(t, "")
	base := 1000 * sec
	if err := c.Set(base); err != nil {
		t.Fatal(err)
	}
	s := openSim(t, "", driver.Config{TxQueues: txq})
	ts, err := driver.TSNOf(s.port)
	if err != nil {
		t.Fatal(err)
	}
	return s, ts, base
}

// sendOn transmits n frames of size bytes (FCS excluded) on TX queue q.
func sendOn(t *testing.T, s *simPort, q, n, size int) {
	t.Helper()
	pl := s.port.RxQueue(0).Pool()
	for i := 0; i < n; i++ {
		pk := pl.Alloc()
		if pk == nil {
			t.Fatal("pool empty")
		}
		f := pk.Append(size)
		clear(f)
		copy(f, macB)
		copy(f[6:], macA)
		f[12], f[13], f[14] = 0x88, 0xb5, byte(q) // local experimental EtherType, queue number
		if got := s.port.TxQueue(q).TxBurst([]*driver.Packet{pk}); got != 1 {
			t.Fatalf("TX queue %d frame %d: TxBurst = %d", q, i, got)
		}
	}
}

// qrs is queue ranges from count, offset pairs.
func qrs(v ...int) []driver.QueueRange {
	var r []driver.QueueRange
	for i := 0; i+1 < len(v); i += 2 {
		r = append(r, driver.QueueRange{Count: v[i], Offset: v[i+1]})
	}
	return r
}

// twoClasses maps priority 1 to class 1 (TX queue 1), every other
// priority to class 0 (TX queue 0).
func twoClasses() driver.TCMap {
	m := driver.TCMap{NumTC: 2, Queues: []driver.QueueRange{{Count: 1, Offset: 0}, {Count: 1, Offset: 1}}}
	m.PrioTC[1] = 1
	return m
}

// A gate list of "S 01 300us, S 02 700us" on a 1 ms cycle: class 0 sends
// in the first 300 us of each cycle, class 1 in the other 700 us. Frames
// of both classes queued at the list's base time leave in their class's
// window, each whole (from preamble to FCS) inside it, back to back at the
// 1 Gb/s wire rate, and class 0's frames that do not fit its first window
// wait for the next cycle's.
func TestGateListDepartures(t *testing.T) {
	t.Parallel()
	s, ts, base := openTSN(t, 2)
	if err := ts.SetTCMap(twoClasses()); err != nil {
		t.Fatal(err)
	}
	gl := driver.GateList{BaseTime: base, CycleTime: time.Millisecond, Entries: []driver.GateEntry{
		{Gates: 0x01, Interval: 300 * time.Microsecond},
		{Gates: 0x02, Interval: 700 * time.Microsecond},
	}}
	if err := ts.SetGateList(gl); err != nil {
		t.Fatal(err)
	}
	if n := s.model.GateListsLoaded(); n != 1 {
		t.Fatalf("model loaded %d gate lists, want 1", n)
	}
	const size = 1000
	sendOn(t, s, 1, 10, size)
	sendOn(t, s, 0, 50, size)
	deps := s.model.Departures()
	if len(deps) != 60 {
		t.Fatalf("%d departures, want 60", len(deps))
	}
	if got := len(s.wire.take()); got != 60 {
		t.Fatalf("%d frames on the wire, want 60", got)
	}
	// 1000 bytes + FCS + preamble: 8096 ns at 1 Gb/s; with the gap 8192 ns.
	const onWire, slot = 8096, 8192
	b := int64(base)
	var tc0, tc1 []model.Departure
	for _, d := range deps {
		if d.End-d.Start != onWire {
			t.Errorf("ring %d frame at %d: %d ns on the wire, want %d", d.Ring, d.Start, d.End-d.Start, onWire)
		}
		phase := (d.Start - b) % 1_000_000
		endPhase := phase + (d.End - d.Start)
		switch d.TC {
		case 0:
			if phase < 0 || endPhase > 300_000 {
				t.Errorf("class 0 frame %d..%d ns into its cycle: outside the 0-300000 window", phase, endPhase)
			}
			tc0 = append(tc0, d)
		case 1:
			if phase < 300_000 || endPhase > 1_000_000 {
				t.Errorf("class 1 frame %d..%d ns into its cycle: outside the 300000-1000000 window", phase, endPhase)
			}
			tc1 = append(tc1, d)
		default:
			t.Errorf("departure of class %d (ring %d)", d.TC, d.Ring)
		}
	}
	if len(tc0) != 50 || len(tc1) != 10 {
		t.Fatalf("%d class 0 and %d class 1 departures, want 50 and 10", len(tc0), len(tc1))
	}
	for j, d := range tc1 {
		if want := b + 300_000 + int64(j)*slot; d.Start != want {
			t.Errorf("class 1 frame %d left at %d, want %d (the window's start, back to back)", j, d.Start-b, want-b)
		}
	}
	// The first window holds 36 frames: the 37th would end past 300 us.
	for k, d := range tc0 {
		want := b + int64(k)*slot
		if k >= 36 {
			want = b + 1_000_000 + int64(k-36)*slot
		}
		if d.Start != want {
			t.Errorf("class 0 frame %d left at %d, want %d", k, d.Start-b, want-b)
		}
	}
	st, err := ts.TSNState()
	if err != nil {
		t.Fatal(err)
	}
	if !st.Gating || st.GateStart != base || len(st.Gates.Entries) != 2 || st.Gates.Cycle() != time.Millisecond {
		t.Errorf("state: gating %v from %v, %d entries, cycle %v; want on from %v, 2 entries, 1ms", st.Gating, st.GateStart, len(st.Gates.Entries), st.Gates.Cycle(), base)
	}
	// Gating off: frames leave unscheduled, and the model times none.
	if err := ts.SetGateList(driver.GateList{}); err != nil {
		t.Fatal(err)
	}
	sendOn(t, s, 1, 3, size)
	if d := s.model.Departures(); len(d) != 0 {
		t.Errorf("%d departures timed with gating off", len(d))
	}
	if st, _ := ts.TSNState(); st.Gating {
		t.Error("state reports gating after the zero list")
	}
	s.close(false)
}

// A base time in the past starts the list at the next cycle boundary
// after now (802.1Q's SetCycleStartTime), as tc taprio's "base-time 0"
// relies on.
func TestGateListPastBaseTime(t *testing.T) {
	t.Parallel()
	s, ts, now := openTSN(t, 2)
	if err := ts.SetTCMap(twoClasses()); err != nil {
		t.Fatal(err)
	}
	gl := driver.GateList{BaseTime: 0, CycleTime: 3 * time.Millisecond, Entries: []driver.GateEntry{
		{Gates: 0x02, Interval: time.Millisecond},
		{Gates: 0x01, Interval: 2 * time.Millisecond},
	}}
	if err := ts.SetGateList(gl); err != nil {
		t.Fatal(err)
	}
	// 1000 s is not a multiple of 3 ms: the next boundary is 1000.002 s.
	start := driver.Time(1000_002_000_000)
	st, _ := ts.TSNState()
	if st.GateStart != start {
		t.Fatalf("gate list starts at %v, want %v (the first 3 ms boundary after %v)", st.GateStart, start, now)
	}
	sendOn(t, s, 0, 1, 100)
	sendOn(t, s, 1, 1, 100)
	deps := s.model.Departures()
	if len(deps) != 2 {
		t.Fatalf("%d departures, want 2", len(deps))
	}
	// Before the list starts every gate is open (Linux loads it with all
	// gates open): class 0 leaves at once; class 1 too, right after it.
	if deps[0].Start != int64(now) || deps[1].Start != int64(now)+124*8 {
		t.Errorf("departures before the list starts at %d and %d, want %d and %d", deps[0].Start, deps[1].Start, int64(now), int64(now)+124*8)
	}
	// Past the start, class 0 waits for its window at 1 ms into the cycle.
	sim := s.model.Chip().Timer()
	sim.Advance(3 * time.Millisecond) // model time 1000.003 s: 1 ms into the first cycle
	sendOn(t, s, 0, 1, 100)
	sendOn(t, s, 1, 1, 100)
	deps = s.model.Departures()
	if len(deps) != 2 {
		t.Fatalf("%d departures, want 2", len(deps))
	}
	if want := int64(start) + 1_000_000; deps[0].TC != 0 || deps[0].Start != want {
		t.Errorf("class 0 frame left at %d, want %d (its window opens 1 ms into the cycle)", deps[0].Start, want)
	}
	if want := int64(start) + 3_000_000; deps[1].TC != 1 || deps[1].Start != want {
		t.Errorf("class 1 frame left at %d, want %d (the next cycle's first entry)", deps[1].Start, want)
	}
	s.close(false)
}

// A frame longer than every window of its class never fits: it is not
// sent, counted as a TX error and recorded, and the model names it.
func TestGateListFrameFitsNoWindow(t *testing.T) {
	t.Parallel()
	s, ts, base := openTSN(t, 2)
	if err := ts.SetTCMap(twoClasses()); err != nil {
		t.Fatal(err)
	}
	// Class 1's window is 5 us: 625 bytes at 1 Gb/s, preamble and FCS included.
	gl := driver.GateList{BaseTime: base, Entries: []driver.GateEntry{
		{Gates: 0x01, Interval: 995 * time.Microsecond},
		{Gates: 0x02, Interval: 5 * time.Microsecond},
	}}
	if err := ts.SetGateList(gl); err != nil {
		t.Fatal(err)
	}
	sendOn(t, s, 1, 1, 1000)
	sendOn(t, s, 1, 1, 600)
	deps := s.model.Departures()
	if len(deps) != 1 || deps[0].Len != 600 {
		t.Fatalf("departures %+v, want the 600-byte frame only", deps)
	}
	if s.model.GateDrops() != 1 {
		t.Errorf("model counted %d frames that fit no window, want 1", s.model.GateDrops())
	}
	if n := len(s.wire.take()); n != 1 {
		t.Errorf("%d frames on the wire, want 1", n)
	}
	errs := strings.Join(s.model.ModelErrors(), "\n")
	if !strings.Contains(errs, "fits no window") {
		t.Errorf("model errors %q do not name the frame that fits no window", errs)
	}
	s.close(true)
}

// The checks a gate list meets before it reaches the control ring, each
// error naming what is wrong.
func TestGateListRefused(t *testing.T) {
	t.Parallel()
	_, ts, base := openTSN(t, 2)
	e := func(n int) []driver.GateEntry {
		es := make([]driver.GateEntry, n)
		for i := range es {
			es[i] = driver.GateEntry{Gates: 1, Interval: time.Microsecond}
		}
		return es
	}
	for _, c := range []struct {
		gl   driver.GateList
		want string
	}{
		{driver.GateList{BaseTime: base, Entries: e(model.GateListMax + 1)}, "at most 64"},
		{driver.GateList{BaseTime: base, Entries: []driver.GateEntry{{Gates: 1}}}, "entry 0: interval 0 ns"},
		{driver.GateList{BaseTime: base, CycleTime: time.Microsecond, Entries: e(2)}, "cycle-time 1000 ns is shorter"},
		{driver.GateList{BaseTime: base, Entries: []driver.GateEntry{{Gates: 1, Interval: 5 * time.Second}}}, "interval 5000000000 ns: give 1 to 4294967295 ns"},
		{driver.GateList{BaseTime: -1, Entries: e(1)}, "before the clock's epoch"},
	} {
		if err := ts.SetGateList(c.gl); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("gate list %+v: error %v, want one containing %q", c.gl, err, c.want)
		}
	}
	if caps := ts.TSNCaps(); caps.MaxGateEntries != model.GateListMax || caps.TrafficClasses != 8 {
		t.Errorf("caps %+v: want %d gate entries (PTGCAPR) and 8 classes", caps, model.GateListMax)
	}
}

// Without the chip's timer open there is no clock for base times: the
// error says to open it.
func TestGateListNeedsClock(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{TxQueues: 2})
	err := s.port.SetGateList(driver.GateList{Entries: []driver.GateEntry{{Gates: 1, Interval: time.Millisecond}}})
	if !errors.Is(err, driver.ErrNoClock) || !strings.Contains(err.Error(), "OpenClock") {
		t.Fatalf("gate list with no clock: %v, want ErrNoClock saying to open the timer", err)
	}
}

// The traffic class map puts each TX ring's class in its TBMR priority
// field, kept across Stop and Start; a bad map is refused by name.
func TestTCMap(t *testing.T) {
	t.Parallel()
	s, ts, _ := openTSN(t, 4)
	m := driver.TCMap{NumTC: 3, Queues: []driver.QueueRange{{Count: 2, Offset: 0}, {Count: 1, Offset: 2}, {Count: 1, Offset: 3}}}
	m.PrioTC[3], m.PrioTC[5] = 1, 2
	if err := ts.SetTCMap(m); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for q, want := range []uint32{0, 0, 1, 2} {
			if got := s.model.Read32(modelReg("TBMR")+uint32(q)*model.RingStride) & 7; got != want {
				t.Errorf("%s: TX ring %d TBMR priority %d, want %d", when, q, got, want)
			}
		}
	}
	check("running")
	if err := s.port.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.port.Start(); err != nil {
		t.Fatal(err)
	}
	check("after Stop and Start")
	if q := m.Queue(5); q != 3 {
		t.Errorf("Queue(5) = %d, want 3", q)
	}
	sendOn(t, s, 3, 1, 100) // no gate list, no shaper: nothing timed
	if d := s.model.Departures(); len(d) != 0 {
		t.Errorf("%d departures timed with no gate list or shaper", len(d))
	}
	for _, c := range []struct {
		m    driver.TCMap
		want string
	}{
		{driver.TCMap{NumTC: 9, Queues: make([]driver.QueueRange, 9)}, "8 traffic classes"},
		{driver.TCMap{NumTC: 2, Queues: qrs(1, 0, 1, 4)}, "class 1 queues 1@4"},
		{driver.TCMap{NumTC: 2, Queues: qrs(2, 0, 1, 1)}, "TX queue 1 is in class 0 and class 1"},
		{driver.TCMap{NumTC: 2, PrioTC: [16]uint8{2}, Queues: qrs(1, 0, 1, 1)}, "priority 0 maps to class 2"},
	} {
		if err := ts.SetTCMap(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("map %v: error %v, want one containing %q", c.m, err, c.want)
		}
	}
	s.close(false)
}

// A credit-based shaper of 20% on class 1: its frames leave one per
// (frame bits / 200 Mb/s), so the wire sees class 1 at 20% of the link,
// while class 0's unshaped frames go back to back in between.
func TestCBSShapedRate(t *testing.T) {
	t.Parallel()
	s, ts, base := openTSN(t, 2)
	if err := ts.SetTCMap(twoClasses()); err != nil {
		t.Fatal(err)
	}
	if err := ts.SetCBS(1, 200_000); err != nil {
		t.Fatal(err)
	}
	const n, size = 20, 100
	sendOn(t, s, 1, n, size)
	sendOn(t, s, 0, 10, size)
	deps := s.model.Departures()
	var tc1 []model.Departure
	for _, d := range deps {
		if d.TC == 1 {
			tc1 = append(tc1, d)
		}
	}
	if len(tc1) != n || len(deps) != n+10 {
		t.Fatalf("%d class 1 departures of %d, want %d of %d", len(tc1), len(deps), n, n+10)
	}
	// 100 bytes + FCS, preamble and gap: 992 bits; at 200 Mb/s one every 4960 ns.
	for i := 1; i < n; i++ {
		if gap := tc1[i].Start - tc1[i-1].Start; gap != 4960 {
			t.Errorf("class 1 frames %d and %d left %d ns apart, want 4960", i-1, i, gap)
		}
	}
	span := tc1[n-1].Start + 4960 - tc1[0].Start
	if rate := float64(n*992) / float64(span) * 1000; rate != 200 {
		t.Errorf("class 1 on the wire at %.1f Mb/s, want 200", rate)
	}
	if tc1[0].Start != int64(base) {
		t.Errorf("first shaped frame left at %d, want at once (%d)", tc1[0].Start, int64(base))
	}
	st, _ := ts.TSNState()
	if len(st.CBS) != 1 || st.CBS[0].TC != 1 || st.CBS[0].Percent != 20 || st.CBS[0].IdleSlopeKbps != 200_000 {
		t.Errorf("state CBS %+v, want class 1 at 20%% (200000 kbit/s)", st.CBS)
	}
	if got := s.model.Read32(modelReg("PTCCBSR0") + 8); got != 1<<31|20 {
		t.Errorf("PTCCBSR0(1) = %#x, want CBSE | 20", got)
	}
	// Off again: class 1's frames go back to back, untimed.
	if err := ts.SetCBS(1, 0); err != nil {
		t.Fatal(err)
	}
	sendOn(t, s, 1, 2, size)
	if d := s.model.Departures(); len(d) != 0 {
		t.Errorf("%d departures timed after the shaper came off", len(d))
	}
	s.close(false)
}

// The shaper's refusals, each naming its reason.
func TestCBSRefused(t *testing.T) {
	t.Parallel()
	_, ts, _ := openTSN(t, 3)
	if err := ts.SetCBS(1, 100_000); err == nil || !strings.Contains(err.Error(), "traffic class map") {
		t.Errorf("CBS with no map: %v", err)
	}
	m := driver.TCMap{NumTC: 3, Queues: qrs(1, 0, 1, 1, 1, 2)}
	m.PrioTC[1], m.PrioTC[2] = 1, 2
	if err := ts.SetTCMap(m); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tc   int
		kbps int64
		want string
	}{
		{0, 100_000, "only the classes of the map's top two priorities (2 and 1)"},
		{2, 5_000, "under 1% of the 1000 Mb/s link"},
		{1, 100_000, "give class 2 its shaper before class 1"},
		{2, 1_000_000, "100%"},
	} {
		if err := ts.SetCBS(c.tc, c.kbps); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetCBS(%d, %d): %v, want an error containing %q", c.tc, c.kbps, err, c.want)
		}
	}
	if err := ts.SetCBS(2, 600_000); err != nil {
		t.Fatal(err)
	}
	if err := ts.SetCBS(1, 400_000); err == nil || !strings.Contains(err.Error(), "100%") {
		t.Errorf("60%% + 40%%: %v, want the sum refused", err)
	}
	if err := ts.SetCBS(1, 300_000); err != nil {
		t.Fatal(err)
	}
	if err := ts.SetCBS(2, 0); err == nil || !strings.Contains(err.Error(), "take the shaper of class 1 off before that of class 2") {
		t.Errorf("top class off before next: %v", err)
	}
	if err := ts.SetTCMap(twoClasses()); err == nil || !strings.Contains(err.Error(), "shapers off first") {
		t.Errorf("map change under shapers: %v", err)
	}
}

// Close leaves the port plain for its next owner: gating and shapers off.
func TestCloseTurnsTSNOff(t *testing.T) {
	t.Parallel()
	s, ts, base := openTSN(t, 2)
	if err := ts.SetTCMap(twoClasses()); err != nil {
		t.Fatal(err)
	}
	if err := ts.SetCBS(1, 300_000); err != nil {
		t.Fatal(err)
	}
	if err := ts.SetGateList(driver.GateList{BaseTime: base, Entries: []driver.GateEntry{{Gates: 3, Interval: time.Millisecond}}}); err != nil {
		t.Fatal(err)
	}
	if s.model.Read32(modelReg("PTGCR"))>>31 != 1 || s.model.Read32(modelReg("PTCCBSR0")+8) != 1<<31|30 {
		t.Fatalf("PTGCR %#x PTCCBSR0(1) %#x before Close: want TGE and CBSE|30", s.model.Read32(modelReg("PTGCR")), s.model.Read32(modelReg("PTCCBSR0")+8))
	}
	s.close(false)
	if g, c := s.model.Read32(modelReg("PTGCR")), s.model.Read32(modelReg("PTCCBSR0")+8); g != 0 || c != 0 {
		t.Errorf("after Close PTGCR %#x, PTCCBSR0(1) %#x; want both 0", g, c)
	}
}

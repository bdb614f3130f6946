package enetc_test

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// stickTx leaves TX queue 0 stuck: frames the device never takes make Stop
// report the ring, so the next Start resets the function.
func stickTx(t *testing.T, s *simPort) {
	t.Helper()
	s.model.SetTxStall(true)
	sendOn(t, s, 0, 3, 100)
	if err := s.port.Stop(); err == nil || !strings.Contains(err.Error(), "did not drain") {
		t.Fatalf("Stop with a stalled ring: err = %v", err)
	}
	s.model.SetTxStall(false)
}

// tsnSetUp is what TestResetRestoresSetUp sets before the reset: the gate
// list, the shaper of class 1, the MAC merge set-up and stream 3.
type tsnSetUp struct {
	gates   driver.GateList
	preempt driver.PreemptConfig
	stream  driver.Stream
}

func setTSN(t *testing.T, s *simPort, base driver.Time) tsnSetUp {
	t.Helper()
	u := tsnSetUp{
		gates: driver.GateList{BaseTime: base, CycleTime: time.Millisecond, Entries: []driver.GateEntry{
			{Gates: 0x01, Interval: 300 * time.Microsecond},
			{Gates: 0x02, Interval: 700 * time.Microsecond},
		}},
		preempt: driver.PreemptConfig{Enabled: true, PreemptableTCs: 1, VerifyTime: 20 * time.Millisecond, AddFragSize: 2},
		stream: driver.Stream{Handle: 3, DMAC: myMAC(s), VID: 12, Gate: driver.StreamGate{
			BaseTime: base, Entries: []driver.StreamGateEntry{{Open: true, Interval: 200 * time.Microsecond}, {Open: false, Interval: 800 * time.Microsecond}},
		}},
	}
	if err := s.port.SetTCMap(twoClasses()); err != nil {
		t.Fatal(err)
	}
	if err := s.port.SetCBS(1, 300_000); err != nil {
		t.Fatal(err)
	}
	if err := s.port.SetGateList(u.gates); err != nil {
		t.Fatal(err)
	}
	if err := s.port.SetPreemption(u.preempt); err != nil {
		t.Fatal(err)
	}
	if err := s.port.SetStream(u.stream); err != nil {
		t.Fatal(err)
	}
	return u
}

// checkTSN asserts that the port and its model hold u's set-up.
func checkTSN(t *testing.T, s *simPort, u tsnSetUp, when string) {
	t.Helper()
	st, err := s.port.TSNState()
	if err != nil {
		t.Fatal(err)
	}
	if !st.Gating || !slices.Equal(st.Gates.Entries, u.gates.Entries) || st.Gates.CycleTime != u.gates.CycleTime {
		t.Errorf("%s: TSNState gating %v with %v; want on with %v", when, st.Gating, st.Gates.Entries, u.gates.Entries)
	}
	if len(st.CBS) != 1 || st.CBS[0].TC != 1 || st.CBS[0].Percent != 30 {
		t.Errorf("%s: TSNState CBS %+v, want class 1 at 30%%", when, st.CBS)
	}
	if st.TCMap.NumTC != 2 {
		t.Errorf("%s: TSNState traffic class map of %d classes, want 2", when, st.TCMap.NumTC)
	}
	if v := s.model.Read32(modelReg("PTGCR")); v>>31 != 1 {
		t.Errorf("%s: model PTGCR %#x, want TGE", when, v)
	}
	if v := s.model.Read32(modelReg("PTCCBSR0") + 8); v != 1<<31|30 {
		t.Errorf("%s: model PTCCBSR0(1) %#x, want CBSE | 30", when, v)
	}
	if v := s.model.Read32(modelReg("MMCSR")); v&(1<<16) == 0 || v>>23&0x7F != 20 || v>>8&3 != 2 {
		t.Errorf("%s: model MMCSR %#x, want ME, VT 20 ms, RAFS 2", when, v)
	}
	if v := s.model.Read32(modelReg("PFPMR")); v&2 == 0 {
		t.Errorf("%s: model PFPMR %#x, want PMACE", when, v)
	}
	if v := s.model.Read32(modelReg("PPSFPMR")); v != 0xF {
		t.Errorf("%s: model PPSFPMR %#x, want 0xf", when, v)
	}
}

// After a stuck TX ring the next Start resets the function, which clears
// every register and table; what the user set (gate list, shaper, MAC
// merge, stream filter) is in the device again afterwards, the state
// readers report it, the stream's gate drops frames again from the next
// cycle on, and its counters go on from what they held.
func TestResetRestoresSetUp(t *testing.T) {
	t.Parallel()
	c, m, _ := openTimer(t, "")
	base := 1000 * sec
	if err := c.Set(base); err != nil {
		t.Fatal(err)
	}
	s := openSim(t, "", driver.Config{TxQueues: 2})
	u := setTSN(t, s, base)
	checkTSN(t, s, u, "before the reset")
	m.Advance(100 * time.Microsecond) // stream 3's gate is open
	if got := arrived(t, s, streamFrame(s, 12, 100, 1)); string(got) != "\x01" {
		t.Fatalf("gate open: frames %v arrived, want 1", got)
	}
	loads := s.model.GateListsLoaded()

	stickTx(t, s)
	if err := s.port.Start(); err != nil {
		t.Fatalf("Start after a stuck TX ring: %v", err)
	}
	if s.model.Stats().Resets == 0 {
		t.Fatal("Start did not reset the function")
	}
	checkTSN(t, s, u, "after the reset")
	if n := s.model.GateListsLoaded(); n != loads+1 {
		t.Errorf("model loaded %d gate lists after the reset, want 1", n-loads)
	}
	// A list loaded again starts at the next cycle boundary, in phase
	// with the one set: 500 us into the next cycle the gate is closed.
	m.Advance(1400 * time.Microsecond)
	if got := arrived(t, s, streamFrame(s, 12, 100, 2), streamFrame(s, 13, 100, 3)); string(got) != "\x03" {
		t.Errorf("gate closed after the reset: frames %v arrived, want 3 (2 is the stream's)", got)
	}
	ss, err := s.port.StreamStats(3)
	if err != nil {
		t.Fatal(err)
	}
	if want := (driver.StreamStats{Matching: 2, Passing: 1, GateDrops: 1}); ss != want {
		t.Errorf("StreamStats after the reset = %+v, want %+v (one frame before it, one after)", ss, want)
	}
	s.close(false)
}

// What cannot be loaded again after the reset (the clock the gate list
// and the stream's gate run on is closed) fails Start, naming each, and
// the state readers report what the device holds; Start loads them once
// the clock is back, and SetGateList and DeleteStream drop them.
func TestResetRestoreFails(t *testing.T) {
	t.Parallel()
	c, _, spec := openTimer(t, "")
	base := 1000 * sec
	if err := c.Set(base); err != nil {
		t.Fatal(err)
	}
	s := openSim(t, "", driver.Config{TxQueues: 2})
	u := setTSN(t, s, base)
	stickTx(t, s)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	err := s.port.Start()
	if err == nil || !strings.Contains(err.Error(), "gate list") || !strings.Contains(err.Error(), "stream 3") || !strings.Contains(err.Error(), "stays stopped") {
		t.Fatalf("Start after the reset without a clock: %v, want the gate list and stream 3 named", err)
	}
	if st, _ := s.port.TSNState(); st.Gating {
		t.Error("TSNState reports gating the reset cleared")
	}
	if _, err := s.port.StreamStats(3); err == nil || !strings.Contains(err.Error(), "function reset") {
		t.Errorf("StreamStats of a stream the reset cleared: %v", err)
	}
	if err := s.port.Start(); err == nil {
		t.Fatal("Start without a clock succeeded the second time: the gate list is still to load")
	}
	c2, err := driver.OpenClock(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := s.port.Start(); err != nil {
		t.Fatalf("Start with the clock back: %v", err)
	}
	checkTSN(t, s, u, "after the clock came back")

	// Dropped while pending: Start starts without them.
	stickTx(t, s)
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.port.SetGateList(driver.GateList{}); err != nil {
		t.Fatal(err)
	}
	if err := s.port.DeleteStream(3); err != nil {
		t.Fatal(err)
	}
	if err := s.port.Start(); err != nil {
		t.Fatalf("Start with the pending set-up dropped: %v", err)
	}
	if st, _ := s.port.TSNState(); st.Gating {
		t.Error("gating after the list was dropped")
	}
	if v := s.model.Read32(modelReg("PPSFPMR")); v != 0 {
		t.Errorf("PPSFPMR %#x after the stream was dropped, want 0", v)
	}
	s.close(false)
}

// The MAC a PF set for its VF (PSIPMAR0/1(1), where the port filter looks
// for the VF's address) is set again after a function reset of the PF.
func TestResetKeepsVFMAC(t *testing.T) {
	pf := openSim(t, "", pcsCfg)
	vf := openSim(t, "vf=1&pf="+strings.TrimPrefix(strings.Split(pf.spec, "?")[0], "sim:"), pcsCfg)
	mac := net.HardwareAddr{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x02}
	if err := vf.port.SetMAC(mac); err != nil {
		t.Fatalf("VF SetMAC: %v", err)
	}
	stickTx(t, pf)
	if err := pf.port.Start(); err != nil {
		t.Fatalf("PF Start after a stuck TX ring: %v", err)
	}
	if pf.model.Stats().Resets == 0 {
		t.Fatal("Start did not reset the PF")
	}
	if lo, hi := pf.model.Read32(0x10108), pf.model.Read32(0x1010C); lo != 0xccbbaa02 || hi != 0x02dd {
		t.Errorf("PF PSIPMAR0/1(1) after the PF's reset: %#x/%#x, want %s", lo, hi, mac)
	}
	if lo, hi := vf.model.Read32(0x80), vf.model.Read32(0x84); lo != 0xccbbaa02 || hi != 0x02dd {
		t.Errorf("the VF's SIPMAR after the PF's reset: %#x/%#x, want %s", lo, hi, mac)
	}
	vf.close(false)
	pf.close(false)
}

package enetc_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
)

// openQci opens the chip's timer at clock time 1000 s on a manual timeline
// and a started port on the same chip, and returns its stream filter.
func openQci(t *testing.T) (*simPort, driver.StreamFilter, *model.Timer, driver.Time) {
	t.Helper()
	c, m, _ := openTimer(t, "")
	base := 1000 * sec
	if err := c.Set(base); err != nil {
		t.Fatal(err)
	}
	s := openSim(t, "", driver.Config{})
	sf, err := driver.StreamFilterOf(s.port)
	if err != nil {
		t.Fatal(err)
	}
	return s, sf, m, base
}

// streamFrame is a frame of size bytes (FCS excluded) to the port's MAC,
// tagged with vid (untagged for 0), carrying id at byte 20.
func streamFrame(s *simPort, vid, size int, id byte) []byte {
	f := make([]byte, size)
	copy(f, s.port.Info().MAC)
	copy(f[6:], macA)
	binary.BigEndian.PutUint16(f[12:], 0x88b5)
	if vid != 0 {
		binary.BigEndian.PutUint16(f[12:], 0x8100)
		binary.BigEndian.PutUint16(f[14:], uint16(vid))
		binary.BigEndian.PutUint16(f[16:], 0x88b5)
	}
	f[20] = id
	return f
}

// arrived delivers frames to the model and returns the ids of those the
// port received.
func arrived(t *testing.T, s *simPort, frames ...[]byte) []byte {
	t.Helper()
	for _, f := range frames {
		s.model.Receive(f)
	}
	var ids []byte
	for _, pk := range s.rxAll(0, len(frames), 50) {
		ids = append(ids, frameOf(pk)[20])
		pk.Free()
	}
	return ids
}

func myMAC(s *simPort) [6]byte { return [6]byte(s.port.Info().MAC) }

// A stream (the port's MAC on VLAN 12) with a max SDU of 500 bytes and a
// gate open the first 200 us of each 1 ms cycle: its short frames pass
// while the gate is open, its long frame is dropped for its size, its
// frames in the closed part are dropped by the gate; frames of VLAN 13
// and untagged frames (no stream) pass throughout. The stream's counters
// say which frames went where.
func TestStreamFilterGateAndSDU(t *testing.T) {
	t.Parallel()
	s, sf, m, base := openQci(t)
	c := sf.StreamCaps()
	if c.Streams != model.StreamEntries || c.MaxGateEntries != model.StreamGateListMax || !c.Meters {
		t.Fatalf("StreamCaps = %+v, want %d streams, %d gate entries, meters", c, model.StreamEntries, model.StreamGateListMax)
	}
	st := driver.Stream{Handle: 3, DMAC: myMAC(s), VID: 12, MaxSDU: 500, Gate: driver.StreamGate{
		BaseTime: base, Entries: []driver.StreamGateEntry{{Open: true, Interval: 200 * time.Microsecond}, {Open: false, Interval: 800 * time.Microsecond}},
	}}
	if err := sf.SetStream(st); err != nil {
		t.Fatal(err)
	}
	m.Advance(100 * time.Microsecond) // the gate is open
	got := arrived(t, s, streamFrame(s, 12, 100, 1), streamFrame(s, 12, 500, 2), streamFrame(s, 12, 501, 3),
		streamFrame(s, 13, 100, 4), streamFrame(s, 0, 100, 5))
	if string(got) != "\x01\x02\x04\x05" {
		t.Errorf("gate open: frames %v arrived, want 1 2 4 5 (3 is over the max SDU)", got)
	}
	m.Advance(400 * time.Microsecond) // 500 us into the cycle: closed
	got = arrived(t, s, streamFrame(s, 12, 100, 6), streamFrame(s, 13, 100, 7), streamFrame(s, 12, 100, 8), streamFrame(s, 0, 100, 9))
	if string(got) != "\x07\x09" {
		t.Errorf("gate closed: frames %v arrived, want 7 9", got)
	}
	m.Advance(550 * time.Microsecond) // 50 us into the next cycle: open again
	if got = arrived(t, s, streamFrame(s, 12, 100, 10)); string(got) != "\x0a" {
		t.Errorf("next cycle: frames %v arrived, want 10", got)
	}
	ss, err := sf.StreamStats(3)
	if err != nil {
		t.Fatal(err)
	}
	if want := (driver.StreamStats{Matching: 6, Passing: 3, SDUDrops: 1, GateDrops: 2}); ss != want {
		t.Errorf("StreamStats = %+v, want %+v", ss, want)
	}
	if n := s.model.Stats().RxStreamDropped; n != 3 {
		t.Errorf("the model counts %d frames dropped by stream filtering, want 3", n)
	}
	// Deleted, the stream's frames pass at any time and it has no counters.
	if err := sf.DeleteStream(3); err != nil {
		t.Fatal(err)
	}
	m.Advance(400 * time.Microsecond)
	if got = arrived(t, s, streamFrame(s, 12, 600, 11)); string(got) != "\x0b" {
		t.Errorf("after DeleteStream: frames %v arrived, want 11", got)
	}
	if _, err := sf.StreamStats(3); err == nil || !strings.Contains(err.Error(), "no such stream") {
		t.Errorf("StreamStats of a deleted stream: %v", err)
	}
	s.close(false)
}

// A flow meter of 1 MB/s with a 3000-byte burst passes three 1000-byte
// frames (996 bytes and the FCS) at once and drops the next two as red;
// 2.1 ms later it has won back 2100 bytes: two more pass, the third is
// red. A frame of another VLAN is not metered.
func TestStreamFilterMeter(t *testing.T) {
	t.Parallel()
	s, sf, m, base := openQci(t)
	st := driver.Stream{Handle: 0, DMAC: myMAC(s), VID: driver.VLANAny,
		Gate:  driver.StreamGate{BaseTime: base, Entries: []driver.StreamGateEntry{{Open: true, Interval: time.Millisecond}}},
		Meter: &driver.Meter{CIRBytes: 1_000_000, CBSBytes: 3000},
	}
	if err := sf.SetStream(st); err != nil {
		t.Fatal(err)
	}
	m.Advance(10 * time.Microsecond)
	var fs [][]byte
	for i := range 5 {
		fs = append(fs, streamFrame(s, 12, 996, byte(i+1)))
	}
	if got := arrived(t, s, fs...); string(got) != "\x01\x02\x03" {
		t.Errorf("burst: frames %v arrived, want 1 2 3", got)
	}
	m.Advance(2100 * time.Microsecond)
	if got := arrived(t, s, streamFrame(s, 0, 996, 6), streamFrame(s, 7, 996, 7), streamFrame(s, 12, 996, 8)); string(got) != "\x06\x07" {
		t.Errorf("after 2.1 ms: frames %v arrived, want 6 7 (any VLAN is the stream's)", got)
	}
	ss, err := sf.StreamStats(0)
	if err != nil {
		t.Fatal(err)
	}
	if want := (driver.StreamStats{Matching: 8, Passing: 5, MeterDrops: 3}); ss != want {
		t.Errorf("StreamStats = %+v, want %+v", ss, want)
	}
	// A stream of untagged frames only: a tagged frame to the MAC is not its.
	st = driver.Stream{Handle: 0, DMAC: myMAC(s), VID: driver.VLANUntagged, Gate: driver.StreamGate{BaseTime: base,
		Entries: []driver.StreamGateEntry{{Open: false, Interval: time.Millisecond}}}}
	if err := sf.SetStream(st); err != nil {
		t.Fatal(err)
	}
	// The base time is past: the list starts at the next cycle boundary,
	// base + 3 ms, and the gate is open until then.
	if got := arrived(t, s, streamFrame(s, 0, 100, 11)); string(got) != "\x0b" {
		t.Errorf("untagged stream before its list starts: frames %v arrived, want 11", got)
	}
	m.Advance(time.Millisecond)
	if got := arrived(t, s, streamFrame(s, 0, 100, 9), streamFrame(s, 5, 100, 10)); string(got) != "\x0a" {
		t.Errorf("untagged stream, gate closed: frames %v arrived, want 10", got)
	}
	s.close(false)
}

// What the hardware cannot take is refused, naming it; nothing changes.
func TestStreamFilterRefused(t *testing.T) {
	t.Parallel()
	s, sf, _, base := openQci(t)
	open := driver.StreamGate{BaseTime: base, Entries: []driver.StreamGateEntry{{Open: true, Interval: time.Millisecond}}}
	five := driver.StreamGate{BaseTime: base, Entries: make([]driver.StreamGateEntry, 5)}
	for i := range five.Entries {
		five.Entries[i] = driver.StreamGateEntry{Open: true, Interval: time.Microsecond}
	}
	for _, c := range []struct {
		s    driver.Stream
		want string
	}{
		{driver.Stream{Handle: model.StreamEntries, DMAC: myMAC(s), Gate: open}, "handles are 0-15"},
		{driver.Stream{Handle: 1, Gate: open}, "no dst_mac"},
		{driver.Stream{Handle: 1, DMAC: myMAC(s), VID: 4096, Gate: open}, "vlan_id 4096"},
		{driver.Stream{Handle: 1, DMAC: myMAC(s)}, "no gate sched-entry"},
		{driver.Stream{Handle: 1, DMAC: myMAC(s), Gate: five}, "at most 4"},
		{driver.Stream{Handle: 1, DMAC: myMAC(s), Gate: open, Meter: &driver.Meter{CIRBytes: 1000, CBSBytes: 1000, EIRBytes: 10}}, "excess rate"},
		{driver.Stream{Handle: 1, DMAC: myMAC(s), Gate: open, Meter: &driver.Meter{CIRBytes: 1000}}, "burst 0"},
	} {
		if err := sf.SetStream(c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetStream(%+v) = %v, want an error with %q", c.s, err, c.want)
		}
	}
	if err := sf.DeleteStream(1); err == nil || !strings.Contains(err.Error(), "none is set") {
		t.Errorf("DeleteStream of nothing: %v", err)
	}
	// Nothing was set: every frame passes.
	if got := arrived(t, s, streamFrame(s, 0, 100, 1)); string(got) != "\x01" {
		t.Errorf("frames %v arrived, want 1", got)
	}
	s.close(false)
}

// Close takes the streams off: PPSFPMR is 0 again, as at power-on.
func TestCloseTurnsStreamsOff(t *testing.T) {
	t.Parallel()
	s, sf, _, base := openQci(t)
	st := driver.Stream{Handle: 2, DMAC: myMAC(s), VID: driver.VLANAny,
		Gate: driver.StreamGate{BaseTime: base, Entries: []driver.StreamGateEntry{{Open: true, Interval: time.Millisecond}}}}
	if err := sf.SetStream(st); err != nil {
		t.Fatal(err)
	}
	if v := s.model.Read32(modelReg("PPSFPMR")); v != 0xF {
		t.Fatalf("PPSFPMR %#x with a stream set, want 0xf (PSFPEN, VS, PVC, PVZC as Linux sets them)", v)
	}
	s.close(false)
	if v := s.model.Read32(modelReg("PPSFPMR")); v != 0 {
		t.Errorf("PPSFPMR %#x after Close, want 0", v)
	}
}

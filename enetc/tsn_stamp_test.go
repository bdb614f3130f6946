package enetc_test

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// TestTxTimestampGatedFrame: with timestamps=tx and a gate list, a frame
// held for its gate is stamped with its departure, the time the wire saw
// its first bit leave, not the time it was handed over. Class 1's gate
// opens 300 us into the cycle; frames queued at the base time on its
// queue leave at 300 us and one frame time later, class 0's at once.
func TestTxTimestampGatedFrame(t *testing.T) {
	t.Parallel()
	c, m, _ := openTimer(t, "")
	base := 1000 * sec
	if err := c.Set(base); err != nil {
		t.Fatal(err)
	}
	s := openSim(t, "timestamps=tx", driver.Config{TxQueues: 2})
	ts, err := driver.TSNOf(s.port)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.SetTCMap(twoClasses()); err != nil {
		t.Fatal(err)
	}
	if err := ts.SetGateList(driver.GateList{BaseTime: base, CycleTime: time.Millisecond, Entries: []driver.GateEntry{
		{Gates: 0x01, Interval: 300 * time.Microsecond},
		{Gates: 0x02, Interval: 700 * time.Microsecond},
	}}); err != nil {
		t.Fatal(err)
	}
	const size = 1000
	send := func(q int, id uint64) {
		t.Helper()
		pk := s.port.RxQueue(0).Pool().Alloc()
		if pk == nil || !pk.SetLen(size) {
			t.Fatal("no buffer to send from")
		}
		clear(pk.Data())
		copy(pk.Data(), macB)
		pk.Data()[14] = byte(id)
		if !s.port.TxQueue(q).(driver.TxTimestamper).TxStamped(pk, id) {
			t.Fatalf("TX queue %d: TxStamped took nothing", q)
		}
	}
	send(1, 10)
	send(1, 11)
	send(0, 20)
	deps := s.model.Departures()
	if len(deps) != 3 {
		t.Fatalf("%d departures, want 3", len(deps))
	}
	m.Advance(2 * time.Millisecond) // every frame has left before the stamps are read
	// 1000 bytes, FCS, preamble and gap: 8192 ns at 1 Gb/s.
	want := map[uint64]driver.Time{10: base + 300_000, 11: base + 300_000 + 8192, 20: base}
	for q, ids := range [][]uint64{{20}, {10, 11}} {
		var st [4]driver.TxStamp
		n := s.port.TxQueue(q).(driver.TxTimestamper).TxTimestamps(st[:])
		if n != len(ids) {
			t.Fatalf("TX queue %d: %d stamps %+v, want %d", q, n, st[:n], len(ids))
		}
		for i, id := range ids {
			if st[i].ID != id || st[i].Lost || st[i].Time != want[id] {
				t.Errorf("TX queue %d: stamp %+v, want ID %d at base+%d ns", q, st[i], id, want[id]-base)
			}
		}
	}
	// The stamps are the wire's departures.
	for i, id := range []uint64{10, 11, 20} {
		if got := driver.Time(deps[i].Start); got != want[id] {
			t.Errorf("departure %d (ring %d) at base+%d ns, want base+%d", i, deps[i].Ring, got-base, want[id]-base)
		}
	}
	s.close(false)
}

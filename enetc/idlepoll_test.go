package enetc

import (
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestRxIdleRingRefillsAfterShortRefill: a refill that came up short (the
// pool ran dry) is retried by the polls of an idle ring, which return at
// BD ntc and skip the burst loop: once buffers are back, rxPeekEvery empty
// polls hand the device every free slot again, so it can write back a
// whole ring's worth of frames, and every one of them arrives.
func TestRxIdleRingRefillsAfterShortRefill(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg()) // 64 BDs, 63 posted
	q := p.rx[0]
	held := make([]*pool.Packet, 512)
	held = held[:q.pool.AllocBulk(held)] // the pool runs dry
	frame := fakeWB{data: make([]byte, 64), bufLen: 64, status: rxbd_LSTATUS_R | rxbd_LSTATUS_F}
	wbs := make([]fakeWB, 40)
	for i := range wbs {
		wbs[i] = frame
	}
	if !f.writeBack(0, wbs[:32]...) {
		t.Fatal("the device could not write back 32 frames into a fresh ring")
	}
	pk := make([]*pool.Packet, 64)
	if got := q.RxBurst(pk[:32]); got != 32 {
		t.Fatalf("RxBurst = %d, want 32", got)
	}
	if st := q.Stats(); st.Drops[driver.CauseNoMem] == 0 {
		t.Fatalf("drops %v: want a short refill counted as no_mem", st.Drops)
	}
	pool.FreeBulk(held)
	pool.FreeBulk(pk[:32])
	for i := 0; i < rxPeekEvery; i++ {
		if got := q.RxBurst(pk); got != 0 {
			t.Fatalf("an idle ring's poll returned %d frames", got)
		}
	}
	if !f.writeBack(0, wbs...) {
		t.Fatal("the device could not write back 40 frames: the idle polls did not refill the ring")
	}
	got := 0
	for i := 0; i < 4 && got < len(wbs); i++ {
		n := q.RxBurst(pk)
		pool.FreeBulk(pk[:n])
		got += n
	}
	if got != len(wbs) {
		t.Fatalf("received %d frames, want %d", got, len(wbs))
	}
	closeClean(t, p)
}

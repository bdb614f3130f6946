package main

import (
	"net"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim/simdma"
)

// TestIdleLanePublishesPoolCounters: a lane that forwarded a few bursts and
// then found its RX queue empty has published its pool's owner counters, so
// a scrape from another goroutine sees every allocation and free of the
// run, not the counts of the pool's last periodic publication.
func TestIdleLanePublishesPoolCounters(t *testing.T) {
	p := newFakePort("p0", 0, 1, net.HardwareAddr{2, 0, 0, 0, 0, 1}, simdma.NewIOMMU(false))
	rx := p.rxq[0]
	const frames = 40 // a few bursts: far fewer than the pool's own publication interval
	for i := 0; i < frames; i++ {
		rx.inbox = append(rx.inbox, make([]byte, 60))
	}
	l := &lane{rx: rx, pool: rx.pool, mode: modeDrop}
	burst := make([]*driver.Packet, 8)
	got := 0
	for got < frames {
		n := l.poll(burst)
		if n == 0 {
			t.Fatalf("RX empty after %d of %d frames", got, frames)
		}
		got += n
	}
	scrape := func() (allocs, frees uint64) { // as the metrics collector reads them
		c := make(chan [2]uint64)
		go func() {
			s := rx.pool.Stats()
			c <- [2]uint64{s.AllocFast + s.AllocSlow, s.RecycleCached + s.RecycleCacheFull}
		}()
		r := <-c
		return r[0], r[1]
	}
	if a, f := scrape(); a == frames && f == frames {
		t.Fatalf("counters published before the lane went idle (%d allocations, %d frees): the test shows nothing", a, f)
	}
	if n := l.poll(burst); n != 0 {
		t.Fatalf("poll after the inbox emptied received %d frames", n)
	}
	if a, f := scrape(); a != frames || f != frames {
		t.Fatalf("after the lane went idle a scrape sees %d allocations and %d frees, want %d of each", a, f, frames)
	}
}

// slowTx holds every frame it takes and gives back one per Reclaim, as a
// ring whose device finishes frames over time.
type slowTx struct {
	held     []*driver.Packet
	reclaims int
}

func (t *slowTx) TxBurst(pkts []*driver.Packet) int {
	t.held = append(t.held, pkts...)
	return len(pkts)
}

func (t *slowTx) Reclaim() int {
	t.reclaims++
	if len(t.held) == 0 {
		return 0
	}
	t.held[0].Free()
	t.held = t.held[1:]
	return 1
}

func (t *slowTx) Pending() int             { return len(t.held) }
func (t *slowTx) Stats() driver.QueueStats { return driver.QueueStats{} }

// TestIdleLaneReclaimsEveryFrame: an idle lane keeps taking back what its
// TX queue finished, poll after poll, until the queue holds nothing, even
// when the device finishes one frame at a time; once it holds nothing the
// empty polls stop asking.
func TestIdleLaneReclaimsEveryFrame(t *testing.T) {
	p := newFakePort("p0", 0, 1, net.HardwareAddr{2, 0, 0, 0, 0, 1}, simdma.NewIOMMU(false))
	rx := p.rxq[0]
	const frames = 5
	for i := 0; i < frames; i++ {
		rx.inbox = append(rx.inbox, make([]byte, 60))
	}
	tx := &slowTx{}
	l := &lane{rx: rx, tx: tx, pool: rx.pool, mode: modeFwd}
	burst := make([]*driver.Packet, 8)
	if n := l.poll(burst); n != frames {
		t.Fatalf("first poll received %d frames, want %d", n, frames)
	}
	if len(tx.held) != frames {
		t.Fatalf("TX holds %d frames, want %d", len(tx.held), frames)
	}
	for i := 0; i < frames; i++ {
		if n := l.poll(burst); n != 0 {
			t.Fatalf("empty poll %d received %d frames", i, n)
		}
	}
	if len(tx.held) != 0 {
		t.Fatalf("after %d empty polls TX still holds %d frames: an idle lane stopped reclaiming", frames, len(tx.held))
	}
	if s := rx.pool.Stats(); s.RecycleCached+s.RecycleCacheFull+s.RecycleRing != frames {
		t.Fatalf("the pool's published counters show %d frees, want %d", s.RecycleCached+s.RecycleCacheFull+s.RecycleRing, frames)
	}
	r := tx.reclaims
	for i := 0; i < 10; i++ {
		l.poll(burst)
	}
	if tx.reclaims != r {
		t.Fatalf("%d reclaims by empty polls after TX held nothing, want none", tx.reclaims-r)
	}
}

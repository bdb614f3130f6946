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

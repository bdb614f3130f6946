package main

import (
	"strconv"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

// openSimLanes opens two synchronous simulated ENETC ports fed by the
// generator and drained by sinks, and builds l2fwd's lanes over them.
func openSimLanes(t testing.TB, burst int) *app {
	o := &options{mode: modeFwd, burst: burst, queues: 1, ringSize: 512, macUpdating: true,
		specs: []string{"sim:enetc0?gen=1&sink=1&" + simOpts, "sim:enetc1?gen=1&sink=1&" + simOpts}}
	a := &app{o: o}
	if err := a.open(); err != nil {
		t.Fatal(err)
	}
	if err := a.setup(); err != nil {
		a.closeAll()
		t.Fatal(err)
	}
	for _, p := range a.ports {
		if err := p.Start(); err != nil {
			a.closeAll()
			t.Fatal(err)
		}
	}
	for _, s := range a.around {
		s.release() // as forward does once every port has started
	}
	t.Cleanup(func() {
		for _, p := range a.ports {
			p.Stop()
		}
		a.closeBounces()
		if leaks, errs := a.closePorts(); len(leaks)+len(errs) != 0 {
			t.Errorf("close: leaks %v errors %v", leaks, errs)
		}
	})
	return a
}

func TestSimForwardingDoesNotAllocate(t *testing.T) {
	a := openSimLanes(t, 32)
	var pkts [maxBurst]*driver.Packet
	poll := func() {
		for _, l := range a.lanes {
			l.poll(pkts[:32])
		}
	}
	for i := 0; i < 200; i++ {
		poll()
	}
	if n := testing.AllocsPerRun(1000, poll); n != 0 {
		t.Fatalf("%v allocations per round of bursts through model, driver and l2fwd", n)
	}
	var pj portJSON
	a.around[1].report(&pj)
	if a.lanes[0].handled.Load() == 0 || pj.Sink == nil || pj.Sink.Frames == 0 || pj.Sink.Lost != 0 {
		t.Fatalf("handled %d, sink %+v", a.lanes[0].handled.Load(), pj.Sink)
	}
}

// BenchmarkSimForward is l2fwd's loop over two synchronous simulated ENETC
// ports, the generator and the sinks, all on one goroutine (model, driver
// and forwarder together): go test -run '^$' -bench SimForward ./cmd/l2fwd
func BenchmarkSimForward(b *testing.B) {
	for _, burst := range []int{1, 8, 32, 64} {
		b.Run("burst-"+strconv.Itoa(burst), func(b *testing.B) {
			a := openSimLanes(b, burst)
			var pkts [maxBurst]*driver.Packet
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range a.lanes {
					l.poll(pkts[:burst])
				}
			}
			var n uint64
			for _, l := range a.lanes {
				n += l.handled.Load()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/pkt")
		})
	}
}

package main

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim/simdma"
)

// setupLanes builds l2fwd's lanes over two fake ports that receive frame
// forever and free what they transmit.
func setupLanes(t testing.TB, o *options, sameDomain bool) *app {
	var m0, m1 dma.Mapper = simdma.NewIOMMU(false), simdma.NewIOMMU(false)
	if sameDomain {
		m1 = m0
	}
	p0 := newFakePort("fake0", 0, 1, mac0, m0)
	p1 := newFakePort("fake1", 1, 1, mac1, m1)
	g := testFramesTB(t, 1, 64)[0]
	for _, p := range []*fakePort{p0, p1} {
		p.rxq[0].repeat = g
		p.txq[0].discard = true
	}
	a := &app{o: o, ports: []driver.Port{p0, p1}, specs: []string{"sim:fake0", "sim:fake1"}}
	if err := a.setup(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if a.cap != nil {
			a.cap.close()
		}
		a.closeBounces()
		a.closePorts()
	})
	return a
}

func TestForwardingLoopDoesNotAllocate(t *testing.T) {
	for _, c := range []struct {
		name    string
		mode    mode
		same    bool
		capture bool
		refuse  bool // every other burst, TX takes a few (its ring is full)
	}{
		{"fwd", modeFwd, true, false, false},
		{"fwd-bounce", modeFwd, false, false, false},
		{"fwd-capture", modeFwd, true, true, false},
		{"fwd-refused", modeFwd, true, false, true},
		{"tx", modeTx, true, false, false},
		{"drop", modeDrop, true, false, false},
		{"pass", modePass, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &options{mode: c.mode, burst: 32, queues: 1, ringSize: 512, macUpdating: true}
			if c.capture {
				o.capture = filepath.Join(t.TempDir(), "c.pcap")
			}
			a := setupLanes(t, o, c.same)
			var pkts [maxBurst]*driver.Packet
			burst := pkts[:o.burst]
			poll := func() {
				if c.refuse {
					for _, p := range a.ports {
						tx := p.(*fakePort).txq[0]
						tx.room = 10 // the next burst: the ring takes 10
					}
					for _, l := range a.lanes {
						l.poll(burst)
					}
				}
				for _, l := range a.lanes {
					l.poll(burst)
				}
			}
			for i := 0; i < 100; i++ { // warm the pools' caches
				poll()
			}
			if n := testing.AllocsPerRun(1000, poll); n != 0 {
				t.Fatalf("%v allocations per burst", n)
			}
			if a.lanes[0].handled.Load() == 0 {
				t.Fatal("nothing was forwarded")
			}
			// A full ring's rest is freed and counted.
			if l := a.lanes[0]; c.refuse && l.txRefused.Load() == 0 {
				t.Fatal("nothing was refused: the test did not fill the ring")
			}
		})
	}
}

// BenchmarkForwardingLoop measures l2fwd's own per-frame cost over fake
// ports (no device model): go test -run '^$' -bench ForwardingLoop ./cmd/l2fwd
func BenchmarkForwardingLoop(b *testing.B) {
	for _, burst := range []int{1, 8, 32, 64} {
		b.Run("burst-"+strconv.Itoa(burst), func(b *testing.B) {
			o := &options{mode: modeFwd, burst: burst, queues: 1, ringSize: 512, macUpdating: true}
			a := setupLanes(b, o, true)
			var pkts [maxBurst]*driver.Packet
			l := a.lanes[0]
			b.ReportAllocs()
			for b.Loop() {
				l.poll(pkts[:burst])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(l.handled.Load()), "ns/pkt")
		})
	}
}

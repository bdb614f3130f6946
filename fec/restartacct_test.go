package fec_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim"
)

// TestStopStartCountsEveryDiscard: a port stopped and started again while
// a rate-limited generator keeps sending. Frames reaching the disabled MAC
// are discarded and counted (RMON_R_DROP, IEEE_R_DROP); the driver's
// counters must hold every one the MAC counted, including those it counted
// while Start reset the MAC (a part without a RESET pulse keeps its
// counters running through it). Run with -race.
func TestStopStartCountsEveryDiscard(t *testing.T) {
	t.Parallel()
	name := fmt.Sprintf("fec%d", 200+simSeq.Add(1))
	spec := "sim:" + name + "?soc=imx8mp&mode=engine&gen=1&gen-rate=200k"
	p, err := driver.Open(spec)
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close %s: %v", spec, err)
		}
	})
	v, m := sim.ViewOf(spec), sim.FECModel(name)
	q := p.RxQueue(0)
	pkts := make([]*driver.Packet, 32)
	// poll receives until cond holds (the engine has done something the
	// test waits for), or fails at a deadline.
	poll := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not by the deadline (model %+v)", what, m.Stats())
			}
			n := q.RxBurst(pkts)
			for _, pk := range pkts[:n] {
				pk.Free()
			}
			if n == 0 {
				runtime.Gosched()
			}
		}
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		rx := m.Stats().RxFrames
		poll("frames received", func() bool { return m.Stats().RxFrames >= rx+20 })
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
		// Frames come while the MAC is disabled: wait until it has
		// discarded some.
		for drop, deadline := m.Stats().RxDropped, time.Now().Add(20*time.Second); m.Stats().RxDropped < drop+5; {
			if time.Now().After(deadline) {
				t.Fatalf("the stopped MAC discarded no frame by the deadline (model %+v)", m.Stats())
			}
			time.Sleep(100 * time.Microsecond)
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
	}
	v.Hold()
	// The driver's counters between two equal readings of the model's:
	// no discard ran in between (a pull in progress when Hold came ends).
	var st driver.PortStats
	ms := m.Stats()
	for {
		st = p.Stats()
		again := m.Stats()
		if again.RxDropped == ms.RxDropped && again.RxNoBuffer == ms.RxNoBuffer {
			break
		}
		ms = again
		time.Sleep(100 * time.Microsecond)
	}
	if got := st.Rx.Drops[driver.CauseMACDiscard]; got != ms.RxDropped {
		t.Errorf("driver counts %d mac_discard, the MAC discarded %d frames counted in RMON_R_DROP: %d lost to the counters", got, ms.RxDropped, int64(ms.RxDropped)-int64(got))
	}
	if got := st.Rx.Drops[driver.CauseNoBuffer]; got != ms.RxNoBuffer {
		t.Errorf("driver counts %d no_buffer, the MAC dropped %d frames counted in IEEE_R_DROP", got, ms.RxNoBuffer)
	}
}

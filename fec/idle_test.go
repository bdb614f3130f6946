package fec_test

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
)

// TestIdleEngineSleeps: the model's DMA engine with nothing to do (the
// driver started, a cable in, no traffic) sleeps until there is work: it
// does not wake while nothing moves, and a frame sent into the cable
// wakes it at once. The count of wake-ups, not a time, is the measure: a
// loaded machine only makes it smaller. (An engine that polled its
// sources every 20 µs woke hundreds of times in the interval.) The ENETC
// has the same test in sim/idle_test.go.
func TestIdleEngineSleeps(t *testing.T) {
	open := func(spec string) driver.Port {
		p, err := driver.Open(spec)
		if err != nil {
			t.Fatalf("open %s: %v", spec, err)
		}
		t.Cleanup(func() { p.Close() })
		if err := p.Start(); err != nil {
			t.Fatalf("start %s: %v", spec, err)
		}
		return p
	}
	// The sending port synchronous: its frames cross the cable's ring on
	// the test's goroutine, and only the source's wake can tell the
	// receiving engine.
	pa := open("sim:fec180?peer=sim:fec181&link-poll=0")
	pb := open("sim:fec181?mode=engine&link-poll=0")
	m := sim.FECModel("fec181")
	pkts := make([]*driver.Packet, 32)
	for lap := byte(1); lap <= 3; lap++ {
		for deadline := time.Now().Add(20 * time.Second); !m.EngineSleeping(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the engine never went to sleep with nothing to do")
			}
		}
		w0 := m.EngineWakeups()
		time.Sleep(300 * time.Millisecond)
		if n := m.EngineWakeups() - w0; n > 2 {
			t.Fatalf("lap %d: the idle engine woke %d times in 300 ms", lap, n)
		}
		pk := pa.RxQueue(0).Pool().Alloc()
		if pk == nil || !pk.SetLen(60) {
			t.Fatal("no buffer to send from")
		}
		b := pk.Data()
		clear(b)
		copy(b, []byte{0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x88, 0xb5, lap})
		if pa.TxQueue(0).TxBurst([]*driver.Packet{pk}) != 1 {
			t.Fatal("TxBurst took nothing")
		}
		got := false
		for deadline := time.Now().Add(20 * time.Second); !got && time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
			n := pb.RxQueue(0).RxBurst(pkts)
			for _, pk := range pkts[:n] {
				got = got || len(pk.Data()) > 14 && pk.Data()[14] == lap
			}
			pool.FreeBulk(pkts[:n])
		}
		if !got {
			t.Fatalf("lap %d: the frame sent never arrived", lap)
		}
	}
}

// TestRateLimitedGeneratorSleepsBetweenFrames: an engine whose only source
// is a generator at 200 frames/s sleeps until each frame is due: it wakes
// about once per frame, not hundreds of times between them.
func TestRateLimitedGeneratorSleepsBetweenFrames(t *testing.T) {
	p, err := driver.Open("sim:fec182?mode=engine&gen-rate=200&link-poll=0")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	m, g := sim.FECModel("fec182"), sim.GeneratorOf("fec182")
	for deadline := time.Now().Add(20 * time.Second); !m.EngineSleeping(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the engine never went to sleep between frames")
		}
	}
	f0, w0 := g.Stats().Frames, m.EngineWakeups()
	time.Sleep(300 * time.Millisecond)
	frames, wakes := g.Stats().Frames-f0, m.EngineWakeups()-w0
	if frames == 0 {
		t.Fatal("the generator sent nothing in 300 ms")
	}
	if wakes > 2*frames+4 {
		t.Fatalf("the engine woke %d times for %d frames", wakes, frames)
	}
}

package sim_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/testnote"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
)

// engineOf is what these tests read of a model's DMA engine.
type engineOf interface {
	EngineWakeups() uint64
	EngineSleeping() bool
}

// openStarted opens and starts a port, closed at the end of the test.
func openStarted(t *testing.T, spec string) driver.Port {
	t.Helper()
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

// asleep waits until the engine sleeps (the bound is only there to end
// a broken run).
func asleep(t *testing.T, e engineOf) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !e.EngineSleeping(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the engine never went to sleep with nothing to do")
		}
	}
}

// idleWakeups counts the engine's wake-ups over an idle interval.
func idleWakeups(e engineOf, d time.Duration) uint64 {
	w0 := e.EngineWakeups()
	time.Sleep(d)
	return e.EngineWakeups() - w0
}

// sendOne transmits one 60-byte frame on port p's queue 0.
func sendOne(t *testing.T, p driver.Port, mark byte) {
	t.Helper()
	pk := p.RxQueue(0).Pool().Alloc()
	if pk == nil || !pk.SetLen(60) {
		t.Fatal("no buffer to send from")
	}
	b := pk.Data()
	clear(b)
	copy(b, []byte{0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x88, 0xb5, mark})
	if p.TxQueue(0).TxBurst([]*driver.Packet{pk}) != 1 {
		pk.Free()
		t.Fatal("TxBurst took nothing")
	}
}

// receive polls p until a frame with mark arrives.
func receive(t *testing.T, p driver.Port, mark byte) {
	t.Helper()
	pkts := make([]*driver.Packet, 32)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		n := p.RxQueue(0).RxBurst(pkts)
		for _, pk := range pkts[:n] {
			if d := pk.Data(); len(d) > 14 && d[14] == mark {
				pool.FreeBulk(pkts[:n])
				return
			}
		}
		pool.FreeBulk(pkts[:n])
	}
	t.Fatalf("the frame marked %#x never arrived", mark)
}

// TestIdleEngineSleeps: a model's DMA engine with nothing to do (its
// driver started, a cable in, no traffic) sleeps until there is work: it
// does not wake while nothing moves, and a frame sent into the cable
// wakes it at once. The count of wake-ups, not a time, is the measure: a
// loaded machine only makes it smaller. (An engine that polled every 50 µs
// woke thousands of times in the interval.)
//
// The FEC's engine has the same test beside its driver (fec/idle_test.go):
// this binary must run without the FEC driver (TestFECOpenWithoutDriver).
func TestIdleEngineSleeps(t *testing.T) {
	for i, kind := range []string{"enetc"} {
		t.Run(kind, func(t *testing.T) {
			a, b := fmt.Sprintf("%s%d", kind, 150+2*i), fmt.Sprintf("%s%d", kind, 151+2*i)
			opt := "&link-poll=0"
			if kind == "enetc" {
				opt += "&chip=idle"
			}
			// The sending port synchronous: its frames cross the cable's
			// ring on the test's goroutine, and only the source's wake can
			// tell the receiving engine.
			pa := openStarted(t, "sim:"+a+"?peer=sim:"+b+opt)
			pb := openStarted(t, "sim:"+b+"?mode=engine"+opt)
			var e engineOf
			if m := sim.ENETCModel(b); m != nil {
				e = m
			} else {
				e = sim.FECModel(b)
			}
			for lap := byte(1); lap <= 3; lap++ {
				asleep(t, e)
				if n := idleWakeups(e, 300*time.Millisecond); n > 2 {
					t.Fatalf("lap %d: the idle engine woke %d times in 300 ms", lap, n)
				}
				sendOne(t, pa, lap)
				receive(t, pb, lap)
			}
		})
	}
}

// TestRateLimitedGeneratorSleepsBetweenFrames: an engine whose only source
// is a generator at 200 frames/s sleeps until each frame is due: it wakes
// about once per frame, not thousands of times between them.
func TestRateLimitedGeneratorSleepsBetweenFrames(t *testing.T) {
	for i, kind := range []string{"enetc"} {
		t.Run(kind, func(t *testing.T) {
			name := fmt.Sprintf("%s%d", kind, 158+i)
			opt := "&link-poll=0"
			if kind == "enetc" {
				opt += "&chip=idlegen"
			}
			openStarted(t, "sim:"+name+"?mode=engine&gen-rate=200"+opt)
			var e engineOf
			if m := sim.ENETCModel(name); m != nil {
				e = m
			} else {
				e = sim.FECModel(name)
			}
			g := sim.GeneratorOf(name)
			asleep(t, e)
			f0, w0 := g.Stats().Frames, e.EngineWakeups()
			time.Sleep(300 * time.Millisecond)
			frames, wakes := g.Stats().Frames-f0, e.EngineWakeups()-w0
			if frames == 0 {
				t.Fatal("the generator sent nothing in 300 ms")
			}
			if wakes > 2*frames+4 {
				t.Fatalf("the engine woke %d times for %d frames", wakes, frames)
			}
		})
	}
}

// TestIdleAFPacketPortSleeps: an engine-mode port joined to a Linux
// interface costs nothing while the interface is quiet: the socket reader
// sleeps in poll(2) and the engine sleeps until the reader hands it a
// frame, which then arrives at once.
func TestIdleAFPacketPortSleeps(t *testing.T) {
	testnote.SkipEmulated(t, "the idle AF_PACKET port test", "qemu-user does not pass AF_PACKET's socket options through")
	sfx := strconv.Itoa(os.Getpid() % 100000)
	ifA, ifB := "gpmdiA"+sfx, "gpmdiB"+sfx
	sim.VethPair(t, ifA, ifB)
	pb := openStarted(t, "sim:enetc162?mode=engine&link-poll=0&chip=idleafp&afpacket="+ifA)
	far, err := driver.Open("sim:enetc163?afpacket=" + ifB + "&chip=idleafp2") // synchronous, unstarted: only its wire is used
	if err != nil {
		t.Fatal(err)
	}
	defer far.Close()
	e, tx := sim.ENETCModel("enetc162"), sim.AFPacketOf("enetc163")
	for lap := byte(1); lap <= 3; lap++ {
		asleep(t, e)
		if n := idleWakeups(e, 300*time.Millisecond); n > 2 {
			t.Fatalf("lap %d: the engine of an idle afpacket port woke %d times in 300 ms", lap, n)
		}
		f := make([]byte, 60)
		copy(f, []byte{0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x88, 0xb5, lap})
		tx.Transmit(f)
		receive(t, pb, lap)
	}
}

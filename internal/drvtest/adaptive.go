package drvtest

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/irqfd"
	"github.com/gopmd/gopmd/pool"
)

// AdaptiveRig is what AdaptiveForward needs around two started ports.
type AdaptiveRig struct {
	In, Out driver.Port
	// Inject delivers one frame to In's wire side from the test goroutine
	// (a model's Receive, in engine mode) and reports whether it was taken.
	Inject func(frame []byte) bool
	// Sent returns the frames Out put on its wire so far, in order.
	Sent func() [][]byte
	// Frame builds test frame i.
	Frame func(i int) []byte
}

// adaptiveIdle is how many empty polls the test worker makes before it
// arms and sleeps.
const adaptiveIdle = 64

// AdaptiveForward runs an adaptive worker (poll while busy; after
// adaptiveIdle empty polls arm In's RX interrupt, re-check, sleep on it)
// forwarding In's RX queue 0 to Out's TX queue 0, and checks what a user
// sees: at zero traffic the worker stops polling (its poll count stands
// still while it sleeps); each burst of traffic wakes it and every frame
// comes out of Out unchanged and in order; the ports' counters balance
// with no drop; Stop of In wakes a sleeping worker.
func AdaptiveForward(t *testing.T, r AdaptiveRig) {
	t.Helper()
	rx, tx := r.In.RxQueue(0), r.Out.TxQueue(0)
	w, err := driver.NewRxWaiter(rx)
	if err != nil {
		t.Fatal(err)
	}
	var polls, sleeps, wakes atomic.Uint64
	var stop atomic.Bool
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pkts := make([]*pool.Packet, 32)
		send := func(n int) {
			s := tx.TxBurst(pkts[:n])
			pool.FreeBulk(pkts[s:n])
		}
		idle := 0
		for !stop.Load() {
			polls.Add(1)
			if n := rx.RxBurst(pkts); n > 0 {
				idle = 0
				send(n)
				continue
			}
			if idle++; idle < adaptiveIdle {
				continue
			}
			idle = 0
			if err := w.Arm(); err != nil {
				if !stop.Load() {
					errc <- fmt.Errorf("arm: %w", err)
				}
				return
			}
			polls.Add(1)
			if n := rx.RxBurst(pkts); n > 0 { // the re-check after arming
				w.Disarm()
				send(n)
				continue
			}
			sleeps.Add(1)
			if _, err := w.Wait(0); err != nil {
				errc <- fmt.Errorf("wait: %w", err)
				return
			}
			w.Disarm()
			wakes.Add(1)
		}
	}()
	fail := func(format string, args ...any) {
		stop.Store(true)
		_ = r.In.Stop()
		<-done
		t.Fatalf(format, args...)
	}
	waitFor := func(what string, cond func() bool) {
		for end := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			select {
			case err := <-errc:
				fail("worker: %v", err)
			default:
			}
			if time.Now().After(end) {
				fail("gave up waiting: %s (polls %d, sleeps %d, wakes %d)", what, polls.Load(), sleeps.Load(), wakes.Load())
			}
		}
	}
	asleep := func() {
		// Asleep: it said so and its poll count stands still.
		waitFor("the worker to sleep at zero traffic", func() bool { return sleeps.Load() > wakes.Load() })
		p0 := polls.Load()
		time.Sleep(50 * time.Millisecond)
		if p := polls.Load(); p != p0 {
			fail("at zero traffic the worker polled %d times in 50 ms after it went to sleep", p-p0)
		}
	}
	asleep()
	const rounds, per = 8, 40
	var want [][]byte
	for round := 0; round < rounds; round++ {
		s0 := sleeps.Load()
		for i := 0; i < per; i++ {
			f := r.Frame(len(want))
			if !r.Inject(f) {
				fail("round %d: the model refused frame %d (ring full)", round, i)
			}
			want = append(want, f)
		}
		waitFor(fmt.Sprintf("round %d: %d frames out", round, len(want)), func() bool { return len(r.Sent()) >= len(want) })
		waitFor("the worker to sleep again", func() bool { return sleeps.Load() > s0 && sleeps.Load() > wakes.Load() })
	}
	got := r.Sent()
	if len(got) != len(want) {
		fail("%d frames out of %d in", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			fail("frame %d out differs from frame %d in:\n got % x\nwant % x", i, i, got[i], want[i])
		}
	}
	if wakes.Load() < rounds {
		fail("%d wake-ups for %d bursts of traffic after sleeping", wakes.Load(), rounds)
	}
	// A sleeping worker wakes when its port stops.
	stop.Store(true)
	if err := r.In.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Stop did not wake the sleeping worker")
	}
	if err := r.Out.Stop(); err != nil { // TX counts a frame sent once the device is done with it
		t.Fatal(err)
	}
	ist, ost := r.In.Stats(), r.Out.Stats()
	if ist.Rx.Packets != uint64(len(want)) || ost.Tx.Packets != uint64(len(want)) {
		t.Fatalf("counters: in rx %d, out tx %d; want %d each", ist.Rx.Packets, ost.Tx.Packets, len(want))
	}
	if d := ist.Rx.TotalDrops() + ost.Tx.TotalDrops(); d != 0 {
		t.Fatalf("drops: rx %v, tx %v; want none", ist.Rx.Drops, ost.Tx.Drops)
	}
	t.Logf("%d frames in %d bursts: %d polls, %d sleeps, %d wake-ups", len(want), rounds, polls.Load(), sleeps.Load(), wakes.Load())
}

// Readable reports whether fd polls readable now.
func Readable(t *testing.T, fd int) bool {
	t.Helper()
	ok, err := irqfd.Poll([]unix.PollFd{{Fd: int32(fd)}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

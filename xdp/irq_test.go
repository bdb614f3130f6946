package xdp

import (
	"errors"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"golang.org/x/sys/unix"
)

// A worker asleep on an idle queue (driver.RxWaiter over the socket)
// wakes for each frame the peer sends, receives it, and sleeps again;
// Stop wakes it for good. The bound on each wait only keeps a broken
// driver from hanging the test: a wait that runs it out fails.
func TestAdaptiveWakesOnFrame(t *testing.T) {
	v := newPair(t, false)
	p := openPort(t, "xdp:"+v.host+"?mode=generic")
	fd := v.packetSocket()
	rq := p.RxQueue(0)
	w, err := driver.NewRxWaiter(rq)
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	asleep := make(chan struct{}, 1)
	got := make(chan int, n)
	type result struct {
		wakes, timeouts, frames int
		armErr                  error
	}
	done := make(chan result)
	go func() {
		var r result
		var burst [8]*pool.Packet
		for {
			if err := w.Arm(); err != nil {
				r.armErr = err
				done <- r
				return
			}
			k := rq.RxBurst(burst[:])
			for _, pk := range burst[:k] {
				if d := pk.Data(); len(d) >= 14 && d[12] == testType>>8 && d[13] == testType&0xff {
					r.frames++
					got <- r.frames
				}
				pk.Free()
			}
			if k == 0 {
				select {
				case asleep <- struct{}{}:
				default:
				}
				woke, err := w.Wait(30 * time.Second)
				if err != nil {
					r.armErr = err
					w.Disarm()
					done <- r
					return
				}
				if woke {
					r.wakes++
				} else {
					r.timeouts++
				}
			}
			w.Disarm()
		}
	}()
	for i := 0; i < n; i++ {
		<-asleep
		if err := unix.Send(fd, frame(v.hostMAC, v.peerMAC, i), 0); err != nil {
			t.Fatal(err)
		}
		select {
		case <-got:
		case r := <-done:
			t.Fatalf("worker ended after %d frames: %+v", i, r)
		}
	}
	<-asleep
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	armed, fired := p.(*port).queues[0].interruptStats()
	t.Logf("%+v; armed %d, fired %d", r, armed, fired)
	if r.frames != n || r.timeouts != 0 || r.wakes < n+1 {
		t.Errorf("worker received %d of %d frames with %d wake-ups (want at least %d: one per frame and Stop's) and %d waits that ran out", r.frames, n, r.wakes, n+1, r.timeouts)
	}
	if fired < n {
		t.Errorf("%d wake-ups counted as fired, want at least %d", fired, n)
	}
	if !errors.Is(r.armErr, driver.ErrStopped) {
		t.Errorf("arming a stopped port: %v, want ErrStopped", r.armErr)
	}
}

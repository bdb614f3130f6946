package drvtest

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TwoPollers runs two goroutines polling p's RX queue 0 while receive
// puts frames frames on the wire, one call each, freeing what they got from
// a third goroutine (the pool's shared path). It returns the
// driver.ConcurrentUse a burst panicked with once every frame was received
// or counted as dropped, and fails the test when none was reported. Any
// other panic in a burst is re-raised. The caller checks the report's names
// and that no buffer was lost or handed out twice.
func TwoPollers(t *testing.T, p driver.Port, frames int, receive func()) *driver.ConcurrentUse {
	t.Helper()
	q := p.RxQueue(0)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		held     []*pool.Packet
		reported atomic.Pointer[driver.ConcurrentUse]
		stop     atomic.Bool
	)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]*pool.Packet, 16)
			for !stop.Load() {
				n := 0
				if v := burstPanic(func() { n = q.RxBurst(buf) }); v != nil {
					cu, ok := v.(*driver.ConcurrentUse)
					if !ok {
						panic(v)
					}
					reported.Store(cu)
					continue
				}
				if n > 0 {
					mu.Lock()
					held = append(held, buf[:n]...)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < frames; i++ {
		receive()
		if i%32 == 31 {
			for j := 0; j < 8; j++ { // let the pollers take them; a full ring drops, counted
				runtime.Gosched()
			}
			mu.Lock()
			pool.FreeBulk(held) // from a third goroutine: the shared free path
			held = held[:0]
			mu.Unlock()
		}
	}
	for j := 0; j < 2000; j++ { // until the pollers took every frame the ring holds
		st := p.Stats()
		if reported.Load() != nil && st.Rx.Packets+st.Rx.TotalDrops() >= uint64(frames) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	pool.FreeBulk(held)
	cu := reported.Load()
	if cu == nil {
		t.Fatal("two goroutines polled one RX queue and nothing was reported")
	}
	return cu
}

// burstPanic runs f and returns what it panicked with, nil if nothing.
func burstPanic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

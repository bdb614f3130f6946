package model

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/wire"
)

// runState is the engine goroutine's control.
type runState struct {
	mu       sync.Mutex
	kickc    chan struct{}
	stop     chan struct{}
	done     chan struct{}
	running  bool
	sleeping atomic.Bool
	wakeups  atomic.Uint64
}

func (r *runState) init() { r.kickc = make(chan struct{}, 1) }

// kick wakes the engine; a kick while one is pending is merged.
func (r *runState) kick() {
	select {
	case r.kickc <- struct{}{}:
	default:
	}
}

// An idle engine sleeps until there is work: a doorbell (TDAR, RDAR) or a
// register write that lets frames move, a source that has a frame
// (wire.Waker), or the time a clocked source's next frame is due.
// sourcePoll is how often it still looks at a source that cannot wake it
// (a wire.Source that is not a wire.Waker), stateCheck how often at a
// lossless source waiting for receive room (room comes with RDAR writes,
// which wake it anyway).
const (
	sourcePoll = 20 * time.Microsecond
	stateCheck = 100 * time.Millisecond
)

// pumpLimit bounds the frames one Pump call pulls (a generator never ends).
const pumpLimit = 1 << 16

// Engine reports whether the model runs its DMA engine in a goroutine.
func (d *Device) Engine() bool { return d.engine }

// Start runs the DMA engine goroutine (engine mode only).
func (d *Device) Start() error {
	if !d.engine {
		return fmt.Errorf("fec model %s: Start needs engine mode (Config.Engine)", d.name)
	}
	d.run.mu.Lock()
	defer d.run.mu.Unlock()
	if d.run.running {
		return fmt.Errorf("fec model %s: engine already started", d.name)
	}
	d.run.running = true
	d.run.stop, d.run.done = make(chan struct{}), make(chan struct{})
	go d.loop(d.run.stop, d.run.done)
	return nil
}

// Stop ends the engine goroutine and waits for it; a no-op when stopped.
func (d *Device) Stop() {
	d.run.mu.Lock()
	defer d.run.mu.Unlock()
	if !d.run.running {
		return
	}
	close(d.run.stop)
	<-d.run.done
	d.run.running = false
}

// loop is the engine goroutine. It pulls no source before the receiver
// first runs: ECR.ETHEREN set and an RDAR write on ring 0 that found an
// empty BD (docs/hardware-fec.md §4.3), the moment synchronous mode pulls
// them first. A lossless source would wait for room anyway; a rate-limited
// one, a wire that runs on regardless, starts its clock then, so no frame
// of it meets a MAC its driver has not started (before the driver's
// counters are set up, where nothing could count it). From then on it runs
// regardless: what arrives while the MAC is disabled again is discarded
// and counted (RMON_R_DROP).
func (d *Device) loop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(time.Hour)
	t.Stop()
	rxStarted := false
	for {
		busy := false
		for i := 0; i < d.nrings; i++ {
			r := &d.tx[i]
			if r.req.Load() == 0 {
				continue
			}
			d.txMu.Lock()
			if d.runTX(r) {
				busy = true
			}
			d.txMu.Unlock()
		}
		srcs := *d.sources.Load()
		if !rxStarted && len(srcs) > 0 {
			rxStarted = d.rx[0].req.Load() != 0
		}
		if rxStarted && len(srcs) > 0 && d.pull(srcs, 64) > 0 {
			busy = true
		}
		if busy {
			select {
			case <-stop:
				return
			default:
			}
			continue
		}
		wait := noWait
		if rxStarted {
			wait = idleWait(srcs, time.Now(), d.roomWait)
		}
		d.run.sleeping.Store(true)
		if wait != noWait {
			t.Reset(wait)
		}
		select {
		case <-stop:
			t.Stop()
			return
		case <-d.run.kickc:
			t.Stop()
		case <-t.C:
		}
		d.run.wakeups.Add(1)
		d.run.sleeping.Store(false)
	}
}

// noWait is idleWait's "no deadline": sleep until kicked.
const noWait = time.Duration(-1)

// idleWait is how long an idle engine may sleep as its sources need it
// (roomWait: a lossless one waits for receive room): noWait when only
// kicks bring work. Engine goroutine only (it asks clocked sources when
// they are due).
func idleWait(srcs []wire.Source, now time.Time, roomWait bool) time.Duration {
	wait := noWait
	least := func(w time.Duration) {
		if wait == noWait || w < wait {
			wait = max(w, 0)
		}
	}
	for _, s := range srcs {
		w, ok := s.(wire.Waker)
		switch {
		case !ok:
			least(sourcePoll)
		case roomWait && s.Lossless():
			least(stateCheck)
		}
		if ok {
			if at, due := w.Due(); due {
				least(at.Sub(now))
			}
		}
	}
	return wait
}

// EngineWakeups counts the times the engine goroutine woke from sleep: an
// idle engine sleeps until there is work, so the count stays still while
// nothing moves.
func (d *Device) EngineWakeups() uint64 { return d.run.wakeups.Load() }

// EngineSleeping reports whether the engine goroutine is asleep now.
func (d *Device) EngineSleeping() bool { return d.run.sleeping.Load() }

// pull offers up to limit frames from the sources to the RX side. Lossless
// sources give frames only while the ring has room.
func (d *Device) pull(srcs []wire.Source, limit int) int {
	n := 0
	room := -1
	d.roomWait = false
	for _, s := range srcs {
		for n < limit {
			if s.Lossless() {
				if room <= 0 {
					room = d.RxRoom()
				}
				if room <= 0 {
					d.roomWait = true
					break
				}
			}
			k, ok := s.Next(d.srcBuf)
			if !ok {
				break
			}
			d.Receive(d.srcBuf[:k])
			room--
			n++
		}
	}
	return n
}

// Pump pulls frames from the attached sources into the RX side now and
// returns how many it offered (synchronous mode; the engine pulls on its
// own in engine mode, where Pump returns 0).
func (d *Device) Pump() int {
	if d.engine {
		return 0
	}
	return d.pull(*d.sources.Load(), pumpLimit)
}

// Port is the receive side of the MAC as the wire sees it.
func (d *Device) Port() wire.Port { return d }

// SetWire replaces the wire TX frames go to; nil restores a counting
// discard.
func (d *Device) SetWire(w wire.Wire) {
	if w == nil {
		w = &CountingDiscard{}
	}
	d.wire.Store(&wireHolder{w})
}

// Wire is the wire TX frames go to now.
func (d *Device) Wire() wire.Wire { return d.wire.Load().w }

// AddSource adds a frame source for the RX side: pulled by Pump in
// synchronous mode and by the engine in engine mode.
func (d *Device) AddSource(s wire.Source) {
	d.srcMu.Lock()
	defer d.srcMu.Unlock()
	old := *d.sources.Load()
	n := make([]wire.Source, len(old), len(old)+1)
	copy(n, old)
	n = append(n, s)
	d.sources.Store(&n)
	if w, ok := s.(wire.Waker); ok {
		w.SetWake(d.run.kick)
	}
	d.run.kick()
}

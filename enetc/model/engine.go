package model

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// engineIdleSpins is how many empty rounds the engine yields before it
// sleeps, and engineIdleTime how long at least: a driver that falls behind
// for a moment (its core taken by another thread, a GC pause) must not find
// the engine asleep when it catches up. Asleep, it wakes when there is
// work: a doorbell (TBPIR, RBCIR, SICBDRPIR) or a register write that lets
// frames move, a source that has a frame (wire.Waker), or the time a
// clocked source's next frame is due. engineNap is how often it still
// looks at a source that cannot wake it (a wire.Source that is not a
// wire.Waker), engineStateCheck how often at a lossless source waiting
// for receive room (room comes with RBCIR writes, which wake it anyway).
const (
	engineIdleSpins  = 256
	engineIdleTime   = time.Millisecond
	engineNap        = 50 * time.Microsecond
	engineStateCheck = 100 * time.Millisecond
)

// engineRxBatch is how many frames a round pulls from each source: small
// enough that the TX rings of every device the engine serves are visited
// often (a forwarder's TX ring fills while the engine receives), large
// enough that a round's fixed costs (locks, ring checks, the batched
// write-back) spread over many frames.
const engineRxBatch = 64

// Start launches the DMA-engine goroutine (engine mode only): it polls the
// TX doorbells, the control BD ring and the attached sources until Stop.
func (d *Device) Start() error {
	if !d.engine {
		return errors.New(d.name + ": Start: the model is in synchronous mode (Config.Engine false)")
	}
	if d.running.Swap(true) {
		return errors.New(d.name + ": Start: engine already running")
	}
	d.stop.Store(false)
	d.done = make(chan struct{})
	go d.run(d.done)
	return nil
}

// Stop ends the engine goroutine and waits for it. Queued TX frames stay
// in their rings.
func (d *Device) Stop() {
	if !d.running.Load() {
		return
	}
	if e := d.shared.Swap(nil); e != nil {
		e.detach(d)
		d.running.Store(false)
		return
	}
	d.stop.Store(true)
	d.kickEngine()
	<-d.done
	d.running.Store(false)
}

// kickEngine wakes a sleeping engine (a doorbell was written).
func (d *Device) kickEngine() {
	if e := d.shared.Load(); e != nil {
		e.kick()
		return
	}
	if d.sleeping.Load() {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// round is one pass of the DMA engine over this device: every TX ring with
// work, the control ring and the sources. It returns how much it did.
func (d *Device) round() int {
	d.engMu.Lock()
	work := 0
	for i := 0; i < d.nTx; i++ {
		t := &d.tx[i]
		if t.pi.Load() != t.ci.Load() {
			work += d.processTx(i)
		}
	}
	if d.get(regSICBDRPIR) != d.get(regSICBDRCIR) {
		work += d.processCBDR()
	}
	if !d.srcLive {
		d.srcLive = d.rxStarted()
	}
	if d.srcLive {
		d.rxMu.Lock()
		work += d.pump(engineRxBatch)
		d.rxMu.Unlock()
	}
	d.engMu.Unlock()
	return work
}

// rxStarted reports whether the receive side has been started: the SI
// enabled (SIMR.EN), its ring 0 (RBMR.EN), which a driver sets once the
// ring's BDs are written (docs/hardware-enetc.md §4.3), and on a PF the
// MAC's receive side (PM0_CMD_CFG.RX_EN), which drivers set last, at link
// up (Linux's mac_link_up, gopmd's first link poll, after its MDIO reads).
// The engine pulls no source before then, as synchronous mode pulls them
// first at the enabling writes: a lossless source would wait for room
// anyway; a rate-limited one, a wire that runs on regardless, starts its
// clock then, so none of its frames meets a port its driver has not
// finished starting. From then on it runs regardless (the MAC being off,
// the link down, a Stop): what the port cannot take is discarded and
// counted (RDRP, RBDCR).
func (d *Device) rxStarted() bool {
	return d.get(regSIMR)&simr_EN != 0 && d.get(regRBMR)&rbmr_EN != 0 &&
		(!d.pf || d.get(regPM0_CMD_CFG)&pm_cmd_cfg_RX_EN != 0)
}

// run is the engine of one device: rounds until Stop, yielding between busy
// rounds and sleeping when idle.
func (d *Device) run(done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	idle := 0
	var idleSince time.Time
	for !d.stop.Load() {
		if d.round() != 0 {
			idle = 0
			// Busy engines of several ports share cores with each other and
			// with the driver's workers: let them run between rounds.
			runtime.Gosched()
			continue
		}
		if !idleLong(&idle, &idleSince) {
			runtime.Gosched()
			continue
		}
		// Announce the sleep, then look once more: work published before
		// the announcement is found by this round, work published after it
		// sees the announcement and wakes us (kickEngine).
		d.sleeping.Store(true)
		if d.stop.Load() || d.round() != 0 {
			d.sleeping.Store(false)
			idle = 0
			continue
		}
		sleep(d.wake, timer, d.idleWait(time.Now(), noWait))
		d.wakeups.Add(1)
		d.sleeping.Store(false)
	}
}

// noWait is idleWait's "no deadline": sleep until woken.
const noWait = time.Duration(-1)

// sleep waits for a wake or for wait to pass (noWait: no timeout).
func sleep(wake chan struct{}, timer *time.Timer, wait time.Duration) {
	if wait == noWait {
		<-wake
		return
	}
	timer.Reset(wait)
	select {
	case <-wake:
		timer.Stop()
	case <-timer.C:
	}
}

// idleWait is how long the engine may sleep with this device idle, as the
// least of wait and what its sources need: noWait when only wakes bring
// work. Engine goroutine only (it asks clocked sources when they are due).
func (d *Device) idleWait(now time.Time, wait time.Duration) time.Duration {
	least := func(w time.Duration) {
		if wait == noWait || w < wait {
			wait = max(w, 0)
		}
	}
	if !d.srcLive {
		return wait // no source is pulled before RX starts (rxStarted)
	}
	d.rxMu.Lock() // the sources' owner state, as pump has it (a Pump call may pull too)
	defer d.rxMu.Unlock()
	for _, s := range *d.srcs.Load() {
		switch {
		case s.waker == nil:
			least(engineNap)
		case s.pendN != 0: // a lossless source's frame waits for room
			least(engineStateCheck)
		}
		if s.waker != nil {
			if at, ok := s.waker.Due(); ok {
				least(at.Sub(now))
			}
		}
	}
	return wait
}

// EngineWakeups counts the times the DMA engine running this device woke
// from sleep (for the shared engine, StartOn: its wake-ups, for all its
// devices): an idle engine sleeps until there is work, so the count stays
// still while nothing moves.
func (d *Device) EngineWakeups() uint64 {
	if e := d.shared.Load(); e != nil {
		return e.wakeups.Load()
	}
	return d.wakeups.Load()
}

// EngineSleeping reports whether the DMA engine running this device is
// asleep now.
func (d *Device) EngineSleeping() bool {
	if e := d.shared.Load(); e != nil {
		return e.sleeping.Load()
	}
	return d.sleeping.Load()
}

// idleLong counts one more empty round and reports whether the engine has
// now been idle long enough to sleep: engineIdleSpins rounds and
// engineIdleTime (the clock is read once every engineIdleSpins rounds).
func idleLong(idle *int, since *time.Time) bool {
	*idle++
	if *idle == 1 {
		*since = time.Now()
	}
	return *idle%engineIdleSpins == 0 && time.Since(*since) >= engineIdleTime
}

// Engine is one DMA-engine goroutine serving several devices in turn: the
// simulated NICs of a benchmark then take one core between them, as the
// NIC side of a real machine takes none of the CPU's, instead of each
// competing for the cores the forwarder's workers run on.
type Engine struct {
	mu       sync.Mutex // serialises Attach and Detach
	devs     atomic.Pointer[[]*Device]
	running  bool
	stop     atomic.Bool
	sleeping atomic.Bool
	wakeups  atomic.Uint64
	wake     chan struct{}
	done     chan struct{}
}

// NewEngine returns an engine with no devices; its goroutine runs while it
// has at least one.
func NewEngine() *Engine {
	e := &Engine{wake: make(chan struct{}, 1)}
	e.devs.Store(&[]*Device{})
	return e
}

// StartOn runs the device's DMA engine on e (engine mode only), instead of
// on a goroutine of its own as Start does. Stop detaches it.
func (d *Device) StartOn(e *Engine) error {
	if !d.engine {
		return errors.New(d.name + ": StartOn: the model is in synchronous mode (Config.Engine false)")
	}
	if d.running.Swap(true) {
		return errors.New(d.name + ": StartOn: engine already running")
	}
	d.shared.Store(e)
	e.attach(d)
	return nil
}

func (e *Engine) attach(d *Device) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := *e.devs.Load()
	n := append(append(make([]*Device, 0, len(old)+1), old...), d)
	e.devs.Store(&n)
	if !e.running {
		e.running = true
		e.stop.Store(false)
		e.done = make(chan struct{})
		go e.run(e.done)
	}
}

// detach removes d and stops the goroutine when no device is left; it
// returns after the goroutine has finished any round touching d.
func (e *Engine) detach(d *Device) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := *e.devs.Load()
	n := make([]*Device, 0, len(old))
	for _, x := range old {
		if x != d {
			n = append(n, x)
		}
	}
	e.devs.Store(&n)
	// A round in progress may still hold d: wait for d's round lock, which
	// the engine holds for the whole of a device's round.
	d.engMu.Lock()
	//lint:ignore SA2001 the lock is taken only to wait for that round
	d.engMu.Unlock()
	if len(n) == 0 && e.running {
		e.stop.Store(true)
		e.kick()
		<-e.done
		e.running = false
	}
}

func (e *Engine) kick() {
	if e.sleeping.Load() {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

func (e *Engine) run(done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	idle := 0
	var idleSince time.Time
	round := func() int {
		work := 0
		for _, d := range *e.devs.Load() {
			work += d.round()
		}
		return work
	}
	for !e.stop.Load() {
		if round() != 0 {
			idle = 0
			continue
		}
		if !idleLong(&idle, &idleSince) {
			runtime.Gosched()
			continue
		}
		// As Device.run: announce, look once more, then sleep.
		e.sleeping.Store(true)
		if e.stop.Load() || round() != 0 {
			e.sleeping.Store(false)
			idle = 0
			continue
		}
		wait, now := noWait, time.Now()
		for _, d := range *e.devs.Load() {
			d.engMu.Lock() // srcLive, and the sources' owner state
			wait = d.idleWait(now, wait)
			d.engMu.Unlock()
		}
		sleep(e.wake, timer, wait)
		e.wakeups.Add(1)
		e.sleeping.Store(false)
	}
}

package model

import (
	"errors"
	"runtime"
	"time"
)

// engineIdleSpins is how many empty rounds the engine yields before it
// sleeps; engineNap is how long it then sleeps unless a doorbell wakes it.
const (
	engineIdleSpins = 256
	engineNap       = 50 * time.Microsecond
)

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
	d.stop.Store(true)
	d.kickEngine()
	<-d.done
	d.running.Store(false)
}

// kickEngine wakes a sleeping engine (a doorbell was written).
func (d *Device) kickEngine() {
	if d.sleeping.Load() {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// run is the engine: one round processes every TX ring with work, the
// control ring and the sources.
func (d *Device) run(done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(engineNap)
	timer.Stop()
	idle := 0
	for !d.stop.Load() {
		d.engMu.Lock()
		work := 0
		for i := 0; i < d.nTx; i++ {
			t := &d.tx[i]
			if t.pi.Load() != t.ci.Load() {
				work += d.processTx(i)
			}
		}
		if d.get(SICBDRPIR) != d.get(SICBDRCIR) {
			work += d.processCBDR()
		}
		d.rxMu.Lock()
		work += d.pump()
		d.rxMu.Unlock()
		d.engMu.Unlock()
		if work != 0 {
			idle = 0
			// Busy engines of several ports share cores with each other and
			// with the driver's workers: let them run between rounds.
			runtime.Gosched()
			continue
		}
		idle++
		if idle < engineIdleSpins {
			runtime.Gosched()
			continue
		}
		d.sleeping.Store(true)
		timer.Reset(engineNap)
		select {
		case <-d.wake:
		case <-timer.C:
		}
		d.sleeping.Store(false)
	}
}

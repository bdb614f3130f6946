package fec

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/irqfd"
)

// RX interrupts (§2.1, §2.11, §8.3).
//
// The MAC raises its interrupt output while EIR & EIMR is not zero. Each
// RX BD asks for RXF/RXB with the INT bit of its enhanced descriptor
// (refill sets it; legacy BDs always raise them), and EIMR stays 0 while
// the port is polled, so the events cost nothing. To sleep, a queue's
// goroutine arms: W1C its ring's RXF and RXB in EIR, consume what its
// descriptor holds, set its RXF bit in EIMR and unmask the line (under
// uio_pdrv_genirq the kernel masks the line each time it fires; a write
// of 1 to /dev/uioN unmasks it). A frame completed before the EIR clear
// is in the ring, where the caller's re-check finds it; one completed
// after it sets RXF, which fires through EIMR. Disarming clears the EIMR
// bit. EIMR is shared by the rings: arm, disarm and Stop change it under
// irqState.mu.
//
// Coalescing (RXICn: ICEN, ICCS = the ENET system clock, ICFT frames,
// ICTT in units of 64 clock cycles) is programmed at Start from the spec
// options rx-coalesce-frames= and rx-coalesce-ticks=; left out, it is
// off and every frame raises RXF.

// EIR/EIMR receive bits per ring (§2.1).
var (
	eirRXFn = [3]uint32{eir_RXF, eir_RXF1, eir_RXF2}
	eirRXBn = [3]uint32{eir_RXB, eir_RXB1, eir_RXB2}
)

// irqState is the port's interrupt bookkeeping.
type irqState struct {
	mu sync.Mutex // EIMR's read-modify-write, opening lines, closed
	// wake is signalled by Stop and Close: a sleeping worker returns.
	wake     *irqfd.Eventfd
	stopping atomic.Bool // from New until Start and from Stop on
	waiters  atomic.Int32
	closed   bool
	// Coalescing from the spec options; frames 0: off.
	coalFrames, coalTicks int
}

// parseIRQOptions reads rx-coalesce-frames= and rx-coalesce-ticks=.
func (p *Port) parseIRQOptions(get func(string) (string, bool)) error {
	if v, ok := get("rx-coalesce-frames"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > ic_ICFT_MAX {
			return driver.BadOption("rx-coalesce-frames", v, "not a frame threshold", "1 to 255 frames per RX interrupt (RXICn.ICFT)")
		}
		p.irq.coalFrames = n
	}
	if v, ok := get("rx-coalesce-ticks"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > ic_ICTT_MAX {
			return driver.BadOption("rx-coalesce-ticks", v, "not a timer threshold", "1 to 65535 units of 64 ENET system clock cycles (RXICn.ICTT)")
		}
		if p.irq.coalFrames == 0 {
			return driver.BadOption("rx-coalesce-ticks", v, "needs rx-coalesce-frames", "give rx-coalesce-frames=N (1-255) with it: the timer bounds how long N frames may take")
		}
		p.irq.coalTicks = n
	}
	return nil
}

// startIRQ programs coalescing and lets queues arm; Start calls it with
// ctl held, after the reset that cleared EIMR and RXICn.
func (p *Port) startIRQ() {
	if p.prof.has(qENETMAC) && p.irq.coalFrames > 0 {
		ic := uint32(ic_ICEN|ic_ICCS) | uint32(p.irq.coalFrames)<<ic_ICFT_SHIFT | uint32(p.irq.coalTicks)
		for i := range p.rx {
			p.regs.Write32(regRXIC0+4*uint32(i), ic)
		}
	}
	p.irq.mu.Lock()
	if p.irq.wake != nil {
		_, _ = p.irq.wake.Ack() // a wake-up from the last Stop is old news
	}
	p.irq.stopping.Store(false)
	p.irq.mu.Unlock()
}

// stopIRQ masks every RX interrupt and wakes sleeping workers; Stop calls
// it right after closing the gate.
func (p *Port) stopIRQ() {
	p.irq.mu.Lock()
	defer p.irq.mu.Unlock()
	p.irq.stopping.Store(true)
	if p.irq.closed {
		return
	}
	p.regs.Write32(regEIMR, 0)
	if p.irq.wake != nil {
		_ = p.irq.wake.Signal()
	}
}

// closeIRQ waits (up to StopTimeout) for the workers in a wait to leave,
// then closes every descriptor; Close calls it before the device goes.
func (p *Port) closeIRQ() {
	p.irq.mu.Lock()
	p.irq.closed = true
	p.irq.stopping.Store(true)
	if p.irq.wake != nil {
		_ = p.irq.wake.Signal()
	}
	p.irq.mu.Unlock()
	deadline := time.Now().Add(p.cfg.StopTimeout)
	for p.irq.waiters.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
	p.irq.mu.Lock()
	defer p.irq.mu.Unlock()
	if p.irq.waiters.Load() > 0 {
		return // a waiter never left: leave its descriptors open rather than pull them from under it
	}
	for _, q := range p.rx {
		if q.line != nil {
			_ = q.line.Close()
			q.line = nil
		}
	}
	if p.irq.wake != nil {
		_ = p.irq.wake.Close()
		p.irq.wake = nil
	}
}

// ArmInterrupt clears the ring's pending receive events and enables its
// interrupt (driver.RxInterrupter). The first call opens the queue's
// handle on the device's interrupt.
func (q *rxQueue) ArmInterrupt() error {
	p := q.port
	s := &p.irq
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return p.errClosed()
	case s.stopping.Load():
		return fmt.Errorf("fec %s: rx%d: arm the interrupt: %w", p.name, q.id, driver.ErrStopped)
	}
	if q.line == nil {
		if p.dev.OpenIRQ == nil {
			return fmt.Errorf("fec %s: rx%d: the %s backend delivers no interrupt: %w (use uio: or platform: with uio_pdrv_genirq, or sim:)", p.name, q.id, p.dev.Backend, driver.ErrNoInterrupt)
		}
		if s.wake == nil {
			w, err := irqfd.NewEventfd()
			if err != nil {
				return fmt.Errorf("fec %s: rx%d: %w", p.name, q.id, err)
			}
			s.wake = w
		}
		line, err := p.dev.OpenIRQ(0)
		if err != nil {
			return fmt.Errorf("fec %s: rx%d: open the interrupt: %w", p.name, q.id, err)
		}
		q.line = line
	}
	p.regs.Write32(regEIR, eirRXFn[q.id]|eirRXBn[q.id]) // W1C: only events from now on count
	if _, err := q.line.Ack(); err != nil {
		return fmt.Errorf("fec %s: rx%d: %w", p.name, q.id, err)
	}
	p.regs.Write32(regEIMR, p.regs.Read32(regEIMR)|eirRXFn[q.id])
	if err := q.line.Unmask(); err != nil {
		p.regs.Write32(regEIMR, p.regs.Read32(regEIMR)&^eirRXFn[q.id])
		return fmt.Errorf("fec %s: rx%d: %w", p.name, q.id, err)
	}
	q.armed++
	return nil
}

// DisarmInterrupt masks the ring's interrupt and consumes a pending one
// (driver.RxInterrupter).
func (q *rxQueue) DisarmInterrupt() {
	p := q.port
	s := &p.irq
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || q.line == nil {
		return
	}
	if !s.stopping.Load() {
		p.regs.Write32(regEIMR, p.regs.Read32(regEIMR)&^eirRXFn[q.id])
	}
	if n, _ := q.line.Ack(); n > 0 {
		q.fired += n
	}
}

// InterruptFDs pins the queue's descriptors for one wait
// (driver.RxInterrupter).
func (q *rxQueue) InterruptFDs() (irq, wake int, ok bool) {
	s := &q.port.irq
	if q.pinned {
		return -1, -1, false // already pinned: one wait at a time
	}
	s.waiters.Add(1)
	if s.stopping.Load() || q.line == nil {
		s.waiters.Add(-1)
		return -1, -1, false
	}
	q.pinned = true
	return q.line.FD(), s.wake.FD(), true
}

// ReleaseInterruptFDs ends the wait InterruptFDs began.
func (q *rxQueue) ReleaseInterruptFDs() {
	if q.pinned {
		q.pinned = false
		q.port.irq.waiters.Add(-1)
	}
}

// interruptStats are a queue's interrupt counts, for tests: how often it
// armed and how many interrupts its handle saw.
func (q *rxQueue) interruptStats() (armed, fired uint64) {
	q.port.irq.mu.Lock()
	defer q.port.irq.mu.Unlock()
	return q.armed, q.fired
}

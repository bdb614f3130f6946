// Package rxirq is the bookkeeping both drivers' RX interrupts share: the
// descriptors a sleeping worker polls, who may arm, and the order in which
// Stop and Close take them away. The register work (which bits arm a
// ring) stays in each driver's irq.go.
//
// The rules: queues may arm only between Start and Stop (Port.Stopping);
// Stop signals the port's wake eventfd so a sleeping worker returns; a
// wait pins the queue's descriptors (Port.Pin) and Close closes them only
// once no wait holds them, so no poll(2) ever sees a closed, reused
// descriptor.
package rxirq

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/irqfd"
)

// Port is one port's interrupt state. Mu serialises the drivers' arm and
// disarm register work with Stop and Close.
type Port struct {
	Mu       sync.Mutex
	wake     *irqfd.Eventfd // signalled by Stop and Close
	stopping atomic.Bool    // from Init until Start and from Stop on
	waiters  atomic.Int32
	closed   bool
	opened   []*Queue // the queues Open gave a handle, for Close
}

// Queue is one RX queue's handle and counts; its goroutine's, closed by
// Port.Close.
type Queue struct {
	Line         driver.IRQ
	pinned       bool
	Armed, Fired uint64
}

// Init marks the port stopped (New, before Start).
func (p *Port) Init() { p.stopping.Store(true) }

// Start lets queues arm and drops a wake-up the last Stop left.
func (p *Port) Start() {
	p.Mu.Lock()
	if p.wake != nil {
		_, _ = p.wake.Ack()
	}
	p.stopping.Store(false)
	p.Mu.Unlock()
}

// Stop refuses arms from now on, runs mask (the driver's "every RX
// interrupt off", nil for none) unless the port is closed, and wakes
// sleeping workers.
func (p *Port) Stop(mask func()) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.stopping.Store(true)
	if p.closed {
		return
	}
	if mask != nil {
		mask()
	}
	if p.wake != nil {
		_ = p.wake.Signal()
	}
}

// Close wakes sleeping workers, waits up to timeout for every wait to
// leave, then closes the handles Open gave and the wake eventfd. A wait
// that never leaves keeps them open (closing them under a poll would be
// worse).
func (p *Port) Close(timeout time.Duration) {
	p.Mu.Lock()
	p.closed = true
	p.stopping.Store(true)
	if p.wake != nil {
		_ = p.wake.Signal()
	}
	p.Mu.Unlock()
	deadline := time.Now().Add(timeout)
	for p.waiters.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if p.waiters.Load() > 0 {
		return
	}
	for _, q := range p.opened {
		if q.Line != nil {
			_ = q.Line.Close()
			q.Line = nil
		}
	}
	p.opened = nil
	if p.wake != nil {
		_ = p.wake.Close()
		p.wake = nil
	}
}

// Closed reports whether Close ran; Stopping whether arms are refused.
// Both are for callers holding Mu.
func (p *Port) Closed() bool   { return p.closed }
func (p *Port) Stopping() bool { return p.stopping.Load() }

// Open gives q its handle on first use: open is the backend's
// Device.OpenIRQ for the queue's interrupt. Call with Mu held.
func (p *Port) Open(q *Queue, open func() (driver.IRQ, error)) error {
	if q.Line != nil {
		return nil
	}
	if p.wake == nil {
		w, err := irqfd.NewEventfd()
		if err != nil {
			return err
		}
		p.wake = w
	}
	line, err := open()
	if err != nil {
		return err
	}
	q.Line = line
	p.opened = append(p.opened, q)
	return nil
}

// Ack consumes what q's handle holds and counts it as fired.
func (q *Queue) Ack() error {
	n, err := q.Line.Ack()
	q.Fired += n
	if err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	return nil
}

// Pin pins q's descriptors for one wait (driver.RxInterrupter's
// InterruptFDs).
func (p *Port) Pin(q *Queue) (irq, wake int, ok bool) {
	if q.pinned {
		return -1, -1, false // one wait at a time
	}
	p.waiters.Add(1)
	if p.stopping.Load() || q.Line == nil {
		p.waiters.Add(-1)
		return -1, -1, false
	}
	q.pinned = true
	return q.Line.FD(), p.wake.FD(), true
}

// Unpin ends the wait Pin began.
func (p *Port) Unpin(q *Queue) {
	if q.pinned {
		q.pinned = false
		p.waiters.Add(-1)
	}
}

// Drain consumes what q's handle holds without counting it: an arm
// starts from nothing pending.
func (q *Queue) Drain() error {
	if _, err := q.Line.Ack(); err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	return nil
}

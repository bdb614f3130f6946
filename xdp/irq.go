package xdp

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
	"golang.org/x/sys/unix"
)

// An AF_XDP socket is its own RX interrupt: poll(2) reports it readable
// (POLLIN) while its RX ring holds a descriptor, and the kernel wakes a
// poller when it fills the ring. So a queue "arms" by doing nothing, and
// a worker sleeps in poll(2) on the socket beside the port's wake
// eventfd; the bookkeeping (who may wait, Stop waking them, Close closing
// nothing under a wait) is the one the other drivers share (rxirq).

// sockIRQ is a socket as a driver.IRQ. Close does not close the socket:
// the queue does, after the waits are over.
type sockIRQ struct{ fd int }

func (s sockIRQ) FD() int { return s.fd }

// Ack reports 1 when the RX ring holds a frame (the "interrupt" fired),
// without blocking.
func (s sockIRQ) Ack() (uint64, error) {
	fds := [1]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n > 0 && fds[0].Revents&unix.POLLIN != 0 {
			return 1, nil
		}
		return 0, nil
	}
}

func (sockIRQ) Unmask() error { return nil }
func (sockIRQ) Close() error  { return nil }

// ArmInterrupt lets the queue's worker sleep in poll(2) on the socket
// (driver.RxInterrupter). Nothing is enabled: the socket is readable
// whenever its RX ring holds a frame. A fill ring the kernel asks to be
// told about is woken first, so a zero-copy driver has buffers to receive
// into while the worker sleeps.
func (r *rxQueue) ArmInterrupt() error {
	q := (*queue)(r)
	s := &q.p.irq
	s.Mu.Lock()
	defer s.Mu.Unlock()
	switch {
	case s.Closed():
		return fmt.Errorf("rx%d: arm the interrupt: %w", q.idx, driver.ErrClosed)
	case s.Stopping():
		return fmt.Errorf("rx%d: arm the interrupt: %w", q.idx, driver.ErrStopped)
	}
	if err := s.Open(&q.irq, func() (driver.IRQ, error) { return sockIRQ{fd: q.fd}, nil }); err != nil {
		return fmt.Errorf("rx%d: %w", q.idx, err)
	}
	if q.fill.needWakeup() {
		q.wakeRxNow()
	}
	q.irq.Armed++
	return nil
}

// DisarmInterrupt counts a frame waiting on the socket as a fired
// interrupt (driver.RxInterrupter); there is nothing to mask.
func (r *rxQueue) DisarmInterrupt() {
	q := (*queue)(r)
	s := &q.p.irq
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Closed() || q.irq.Line == nil {
		return
	}
	_ = q.irq.Ack()
}

// InterruptFDs pins the socket and the port's wake eventfd for one wait
// (driver.RxInterrupter).
func (r *rxQueue) InterruptFDs() (irq, wake int, ok bool) { return r.p.irq.Pin(&r.irq) }

// ReleaseInterruptFDs ends the wait InterruptFDs began.
func (r *rxQueue) ReleaseInterruptFDs() { r.p.irq.Unpin(&r.irq) }

// interruptStats are a queue's arm and fired counts, for tests.
func (q *queue) interruptStats() (armed, fired uint64) {
	q.p.irq.Mu.Lock()
	defer q.p.irq.Mu.Unlock()
	return q.irq.Armed, q.irq.Fired
}

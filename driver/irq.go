package driver

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/internal/irqfd"
)

// IRQ is one interrupt of a device as a backend hands it to user space: a
// file descriptor that becomes readable when the interrupt fires. The
// same three calls serve an eventfd (VFIO MSI/MSI-X, the simulated
// devices) and a UIO device file, so a driver's interrupt code does not
// know which it has.
type IRQ interface {
	// FD is the descriptor to poll(2) for reading.
	FD() int
	// Ack consumes what is pending without blocking and returns how many
	// interrupts fired since the last Ack (0: none).
	Ack() (uint64, error)
	// Unmask re-enables the line where the kernel masks it when it fires
	// (UIO with uio_pdrv_genirq); a no-op for message-signalled ones.
	Unmask() error
	// Close releases the handle.
	Close() error
}

// ErrNoInterrupt is wrapped when a queue cannot sleep on an interrupt:
// its backend delivers none (the /dev/mem backend) or its driver does not
// offer one.
var ErrNoInterrupt = errors.New("no RX interrupt")

// RxInterrupter is an optional interface of an RxQueue (both gopmd
// drivers implement it: the FEC through its MAC's interrupt line, the
// ENETC through MSI-X): the queue's receive interrupt, for a worker that polls
// while busy and sleeps when idle (the kernel's NAPI, DPDK's Rx
// interrupt mode). Use it through RxWaiter, which does the protocol:
//
//  1. ArmInterrupt: pending events are cleared and the interrupt enabled,
//     so a frame the device completes from now on fires it;
//  2. RxBurst once more: a frame that arrived before the arm is in the
//     ring and would fire nothing, so it is found here (arm, then
//     re-check: no wake-up is lost);
//  3. if that found nothing, wait on the descriptor;
//  4. DisarmInterrupt, and poll again.
//
// The calls belong to the queue's goroutine, like RxBurst. Interrupts cost
// the device nothing while disarmed: a polling worker never arms.
type RxInterrupter interface {
	// ArmInterrupt clears the queue's pending receive events and enables
	// its interrupt. It fails with an error wrapping ErrNoInterrupt where
	// the device delivers none, ErrStopped or ErrClosed when the port is
	// not running.
	ArmInterrupt() error
	// DisarmInterrupt masks the queue's interrupt and consumes a pending
	// one.
	DisarmInterrupt()
	// InterruptFDs pins the queue's descriptors for one wait: irq becomes
	// readable when the armed interrupt fires, wake when the port stops or
	// closes. ok is false when the port is stopping or closed (do not
	// wait); otherwise ReleaseInterruptFDs must follow the wait.
	InterruptFDs() (irq, wake int, ok bool)
	// ReleaseInterruptFDs ends the wait InterruptFDs began.
	ReleaseInterruptFDs()
}

// RxWaiter puts a worker to sleep until one of its RX queues' interrupts
// fires. A worker serving several queues (of one port or of several)
// makes one RxWaiter over all of them. It is the worker's: no method is
// safe from another goroutine. Arm, Wait and Disarm do not allocate.
type RxWaiter struct {
	qs  []RxInterrupter
	fds []unix.PollFd
}

// NewRxWaiter makes a waiter over qs. It fails, naming the queue, when
// one does not implement RxInterrupter.
func NewRxWaiter(qs ...RxQueue) (*RxWaiter, error) {
	w := &RxWaiter{fds: make([]unix.PollFd, 0, 2*len(qs))}
	for i, q := range qs {
		ri, ok := q.(RxInterrupter)
		if !ok || q == nil {
			return nil, fmt.Errorf("RX queue %d of the waiter (%T): %w: its driver offers no interrupt; poll it instead", i, q, ErrNoInterrupt)
		}
		w.qs = append(w.qs, ri)
	}
	return w, nil
}

// Arm arms every queue's interrupt (step 1 of RxInterrupter's protocol).
// On an error the queues armed so far are disarmed again.
func (w *RxWaiter) Arm() error {
	for i, q := range w.qs {
		if err := q.ArmInterrupt(); err != nil {
			for _, p := range w.qs[:i] {
				p.DisarmInterrupt()
			}
			return err
		}
	}
	return nil
}

// Wait sleeps until an armed interrupt fires, a port of the queues stops
// or closes, or timeout passes (0 or negative: no bound). It reports
// whether an interrupt or a stop ended it; false means the timeout did.
// Call it after Arm and a re-check that found nothing.
func (w *RxWaiter) Wait(timeout time.Duration) (bool, error) {
	w.fds = w.fds[:0]
	pinned := 0
	defer func() {
		for _, q := range w.qs[:pinned] {
			q.ReleaseInterruptFDs()
		}
	}()
	for _, q := range w.qs {
		irq, wake, ok := q.InterruptFDs()
		if !ok {
			return true, nil // stopping: do not sleep
		}
		pinned++
		w.fds = append(w.fds, unix.PollFd{Fd: int32(irq)}, unix.PollFd{Fd: int32(wake)})
	}
	ms := -1
	if timeout > 0 {
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	return irqfd.Poll(w.fds, ms)
}

// Disarm disarms every queue's interrupt (step 4).
func (w *RxWaiter) Disarm() {
	for _, q := range w.qs {
		q.DisarmInterrupt()
	}
}

// ErrStopped is wrapped, with the port's name, by calls that need a
// started port (ArmInterrupt) on one that is stopped: Start it first.
var ErrStopped = errors.New("port is stopped; Start it first")

package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
)

// --rx-mode: how a worker waits for frames.
const (
	rxModePoll     = "poll"     // busy-poll: one core per worker at any load
	rxModeAdaptive = "adaptive" // poll while busy, sleep on RX interrupts when idle
)

// defaultRxIdle is --rx-idle's default: empty rounds of polls before an
// adaptive worker sleeps. A round of polls with nothing costs well under a
// microsecond, so this is some hundred microseconds of quiet, far below a
// frame gap worth sleeping through and far above the gaps inside a burst.
const defaultRxIdle = 256

// maxSleep bounds one sleep: a sleeping worker looks at the stop flag at
// least this often (l2fwd stops its workers before its ports, so no port
// Stop wakes them), at a cost of ten wake-ups a second.
const maxSleep = 100 * time.Millisecond

// checkRxMode validates --rx-mode and --rx-idle.
func checkRxMode(o *options) error {
	switch o.rxMode {
	case rxModePoll:
		if o.rxIdle != 0 {
			return &usageError{fmt.Sprintf("--rx-idle %d applies to --rx-mode adaptive only: add --rx-mode adaptive or drop --rx-idle", o.rxIdle)}
		}
	case rxModeAdaptive:
		if o.rxIdle == 0 {
			o.rxIdle = defaultRxIdle
		}
		if o.rxIdle < 1 || o.rxIdle > 1_000_000 {
			return &usageError{fmt.Sprintf("--rx-idle %d out of range: use 1 to 1000000 empty polls before a worker sleeps", o.rxIdle)}
		}
		if o.tap {
			return &usageError{"--rx-mode adaptive with --tap: a sleeping worker does not watch the TAP twins, so the kernel's frames would wait for traffic on the port; use --rx-mode poll with --tap"}
		}
	default:
		return &usageError{fmt.Sprintf("--rx-mode %q: use poll (busy-poll, one core per worker) or adaptive (poll while busy, sleep on the RX interrupt after --rx-idle empty polls)", o.rxMode)}
	}
	return nil
}

// parseRxIdle is --rx-idle's flag.Func: a positive count.
func parseRxIdle(o *options) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return errors.New("not a number of polls")
		}
		if n < 1 || n > 1_000_000 {
			return fmt.Errorf("%d out of range: use 1 to 1000000", n)
		}
		o.rxIdle = n
		return nil
	}
}

// checkAdaptive refuses --rx-mode adaptive on lanes whose frames would not
// wake a sleeping worker: a synchronous simulated device (its inputs move
// only when the worker polls it) or a queue without an RX interrupt. It
// runs on the control goroutine after the ports started, before any
// worker: it arms and disarms each queue once, which also proves the
// backend delivers the interrupt.
func (a *app) checkAdaptive() error {
	if a.o.rxMode != rxModeAdaptive {
		return nil
	}
	for _, l := range a.lanes {
		spec := a.specs[l.rxPort]
		if l.pump != nil {
			return fmt.Errorf("--rx-mode adaptive: port %d (%s) is a synchronous simulated device, whose inputs move only while a worker polls it, so nothing would wake a sleeping worker: add mode=engine to its spec", l.rxPort, spec)
		}
		w, err := driver.NewRxWaiter(l.rx)
		if err == nil {
			if err = w.Arm(); err == nil {
				w.Disarm()
			}
		}
		if err != nil {
			return fmt.Errorf("--rx-mode adaptive: port %d (%s) RX queue %d: %w (use --rx-mode poll)", l.rxPort, spec, l.rxQueue, err)
		}
	}
	return nil
}

// adaptive gives each worker its waiter.
func (a *app) adaptive(ws []*worker) error {
	if a.o.rxMode != rxModeAdaptive {
		return nil
	}
	for _, w := range ws {
		qs := make([]driver.RxQueue, len(w.lanes))
		for i, l := range w.lanes {
			qs[i] = l.rx
		}
		wt, err := driver.NewRxWaiter(qs...)
		if err != nil {
			return err
		}
		w.waiter, w.idle = wt, a.o.rxIdle
	}
	return nil
}

// sleep is one adaptive sleep: reclaim what the TX rings sent (a sleeping
// worker holds no buffer it need not), arm every lane's RX interrupt, poll
// each lane once more (a frame that came before the arm fires nothing),
// and only if that found nothing wait for an interrupt, at most maxSleep.
func (w *worker) sleep(burst []*driver.Packet) {
	for _, l := range w.lanes {
		if l.tx != nil {
			l.tx.Reclaim()
		}
	}
	if err := w.waiter.Arm(); err != nil {
		w.armFailed.Add(1) // a port stopping: poll on
		return
	}
	got := 0
	for _, l := range w.lanes {
		got += l.poll(burst)
	}
	if got == 0 {
		w.sleeps.Add(1)
		_, _ = w.waiter.Wait(maxSleep)
	}
	w.waiter.Disarm()
}

// threadCPU is the calling thread's CPU time (user + system) in
// nanoseconds, -1 if the kernel does not say.
func threadCPU() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// processCPU is the process's CPU time in nanoseconds, -1 if unknown.
func processCPU() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

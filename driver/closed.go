package driver

import "errors"

// ErrClosed is returned by every method of a port that Close has
// released: the register window and the DMA rings are
// gone, so the call does nothing. Test for it with errors.Is.
var ErrClosed = errors.New("port is closed; open it again")

// ConcurrentUse is the value a queue panics with when a second goroutine
// enters one of its bursts (RxBurst, TxBurst, Reclaim) while another is
// still inside: a queue belongs to one goroutine at a time, and two of them
// on one ring would hand the same buffer out twice. The panicking call
// changed nothing; the goroutine inside the burst finishes it normally.
type ConcurrentUse struct {
	Port  string // the port's spec
	Queue string // "rx 0", "tx 1"
	Call  string // the method that found the queue busy
}

// Error names the port, the queue and the call, and says how to share a
// queue safely.
func (e *ConcurrentUse) Error() string {
	return "gopmd: " + e.Port + " " + e.Queue + ": " + e.Call + " called while another goroutine is inside a burst on this queue; a queue belongs to one goroutine at a time (give each goroutine its own queue, or hand the queue over with a channel or a mutex)"
}

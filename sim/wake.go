package sim

import (
	"sync/atomic"
	"time"
)

// waker holds the function that wakes the engine pulling a source (the
// wire.Waker half every source of this package has): a source calls wake
// whenever a frame becomes available that an earlier Next could not
// return. Until a model sets it (a synchronous model pulls only when
// pumped), wake does nothing.
type waker struct{ fn atomic.Pointer[func()] }

// SetWake implements wire.Waker.
func (w *waker) SetWake(f func()) { w.fn.Store(&f) }

func (w *waker) wake() {
	if p := w.fn.Load(); p != nil {
		(*p)()
	}
}

// noClock is the Due of a source whose frames come by no clock.
func noClock() (time.Time, bool) { return time.Time{}, false }

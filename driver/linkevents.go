package driver

import (
	"sync"
	"time"
)

// LinkEvent is one change of a port's link state: up or down, speed or
// duplex.
type LinkEvent struct {
	Port string    // the port's spec (PortInfo.Name)
	Old  Link      // the state before the change
	New  Link      // the state the driver now follows
	Time time.Time // when the driver saw the change
}

// String formats the event as "sim:enetc0: link up 1000 Mb/s full duplex
// (was down)".
func (e LinkEvent) String() string {
	return e.Port + ": link " + e.New.String() + " (was " + e.Old.String() + ")"
}

// LinkEvents is the subscriber list behind Port.OnLinkChange, for drivers:
// the driver calls Note wherever it learns a new link state (under its own
// locks if it likes; Note only queues) and Flush once it holds none of
// them. Flush calls the subscribers, on one goroutine at a time and in the
// order the changes were noted. The zero value is ready to use.
type LinkEvents struct {
	mu         sync.Mutex
	subs       []linkSub
	next       uint64
	pending    []LinkEvent
	delivering bool
}

type linkSub struct {
	id uint64
	fn func(LinkEvent)
}

// Subscribe adds fn and returns the function that removes it (idempotent).
// After cancel returns, fn is not called for a change noted later; a call
// already under way on another goroutine may still finish.
func (e *LinkEvents) Subscribe(fn func(LinkEvent)) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	e.mu.Lock()
	e.next++
	id := e.next
	e.subs = append(e.subs, linkSub{id, fn})
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		for i, s := range e.subs {
			if s.id == id {
				e.subs = append(e.subs[:i:i], e.subs[i+1:]...)
				return
			}
		}
	}
}

// Note queues the change from old to new of port's link for the current
// subscribers; it does nothing when the state did not change or no one
// listens. It never calls a subscriber.
func (e *LinkEvents) Note(port string, old, new Link) {
	if old == new {
		return
	}
	e.mu.Lock()
	if len(e.subs) > 0 {
		e.pending = append(e.pending, LinkEvent{Port: port, Old: old, New: new, Time: time.Now()})
	}
	e.mu.Unlock()
}

// Flush delivers the queued changes to the subscribers. Call it with none
// of the driver's locks held: a subscriber may call back into the port
// (UpdateLink, Stats, Stop). If another goroutine is delivering already,
// Flush returns at once and that goroutine delivers the queued changes too,
// so a subscriber that causes a change sees it after it returns.
func (e *LinkEvents) Flush() {
	e.mu.Lock()
	if e.delivering {
		e.mu.Unlock()
		return
	}
	e.delivering = true
	for len(e.pending) > 0 {
		ev := e.pending[0]
		e.pending = e.pending[1:]
		subs := append([]linkSub(nil), e.subs...)
		e.mu.Unlock()
		for _, s := range subs {
			s.fn(ev)
		}
		e.mu.Lock()
	}
	e.pending = nil
	e.delivering = false
	e.mu.Unlock()
}

package rxirq

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/irqfd"
)

type eventIRQ struct{ *irqfd.Eventfd }

func newLine(t *testing.T) func() (driver.IRQ, error) {
	return func() (driver.IRQ, error) {
		e, err := irqfd.NewEventfd()
		return eventIRQ{e}, err
	}
}

func TestPinOnlyWhileStarted(t *testing.T) {
	var p Port
	var q Queue
	p.Init()
	if _, _, ok := p.Pin(&q); ok {
		t.Fatal("pinned with no handle on a stopped port")
	}
	p.Start()
	p.Mu.Lock()
	if err := p.Open(&q, newLine(t)); err != nil {
		t.Fatal(err)
	}
	p.Mu.Unlock()
	irq, wake, ok := p.Pin(&q)
	if !ok || irq < 0 || wake < 0 || irq == wake {
		t.Fatalf("Pin = %d, %d, %v", irq, wake, ok)
	}
	if _, _, ok := p.Pin(&q); ok {
		t.Fatal("pinned twice for one wait")
	}
	p.Unpin(&q)
	p.Unpin(&q) // a stray second call changes nothing
	p.Stop(nil)
	if _, _, ok := p.Pin(&q); ok {
		t.Fatal("pinned on a stopping port")
	}
	p.Close(time.Second)
	if q.Line != nil {
		t.Fatal("Close left the handle open")
	}
}

// Close waits for a pinned wait and closes nothing under it; Stop wakes it.
func TestCloseWaitsForPinnedWait(t *testing.T) {
	var p Port
	var q Queue
	p.Init()
	p.Start()
	p.Mu.Lock()
	p.Open(&q, newLine(t))
	p.Mu.Unlock()
	_, wake, ok := p.Pin(&q)
	if !ok {
		t.Fatal("no pin")
	}
	p.Stop(nil)
	woke, err := irqfd.Poll(pollFDs(wake), 5000)
	if err != nil || !woke {
		t.Fatalf("Stop did not wake the wait: %v %v", woke, err)
	}
	p.Close(10 * time.Millisecond) // the wait still holds the pin
	if q.Line == nil {
		t.Fatal("Close closed a handle a wait still holds")
	}
	p.Unpin(&q)
	p.Close(time.Second)
	if q.Line != nil {
		t.Fatal("second Close after the wait left did not close the handle")
	}
}

func pollFDs(fd int) []unix.PollFd { return []unix.PollFd{{Fd: int32(fd)}} }

// closeCounter is a handle that counts its Close calls.
type closeCounter struct {
	eventIRQ
	closes *int
}

func (c closeCounter) Close() error { *c.closes++; return c.eventIRQ.Close() }

// Close closes the handle of every queue Open gave one, once, and leaves a
// queue that never armed without one.
func TestCloseClosesEveryOpenedQueue(t *testing.T) {
	var p Port
	qs := make([]Queue, 3)
	closes := 0
	open := func() (driver.IRQ, error) {
		e, err := irqfd.NewEventfd()
		return closeCounter{eventIRQ{e}, &closes}, err
	}
	p.Init()
	p.Start()
	p.Mu.Lock()
	for _, i := range []int{0, 2, 0} { // queue 0 arms twice: one handle
		if err := p.Open(&qs[i], open); err != nil {
			t.Fatal(err)
		}
	}
	p.Mu.Unlock()
	p.Stop(nil)
	p.Close(time.Second)
	for i := range qs {
		if qs[i].Line != nil {
			t.Errorf("queue %d: Close left its handle open", i)
		}
	}
	if closes != 2 {
		t.Errorf("Close closed %d handles, want the 2 Open gave", closes)
	}
}

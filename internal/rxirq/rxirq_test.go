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
	p.Close(time.Second, []*Queue{&q})
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
	p.Close(10*time.Millisecond, []*Queue{&q}) // the wait still holds the pin
	if q.Line == nil {
		t.Fatal("Close closed a handle a wait still holds")
	}
	p.Unpin(&q)
	p.Close(time.Second, []*Queue{&q})
	if q.Line != nil {
		t.Fatal("second Close after the wait left did not close the handle")
	}
}

func pollFDs(fd int) []unix.PollFd { return []unix.PollFd{{Fd: int32(fd)}} }

package sim

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/internal/irqfd"
)

func readable(t *testing.T, fd int) bool {
	t.Helper()
	ok, err := irqfd.Poll([]unix.PollFd{{Fd: int32(fd)}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// The genirq stand-in: a rising level reaches every handle once, then the
// line stays masked (more edges, a level held high: nothing) until a
// handle unmasks it; unmasked while still high, it fires again at once.
func TestLevelIRQMasksUntilUnmasked(t *testing.T) {
	l := newLevelIRQ("fec9")
	a, err := l.open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, _ := l.open(0)
	defer b.Close()
	if _, err := l.open(1); err == nil {
		t.Fatal("opened line 1 of a one-line device")
	}
	l.set(true)
	if !readable(t, a.FD()) || !readable(t, b.FD()) {
		t.Fatal("a rising level did not reach both handles")
	}
	a.Ack()
	b.Ack()
	l.set(false)
	l.set(true) // masked by the controller since it fired
	if readable(t, a.FD()) {
		t.Fatal("fired again before anyone unmasked the line")
	}
	if err := a.Unmask(); err != nil {
		t.Fatal(err)
	}
	if !readable(t, a.FD()) || !readable(t, b.FD()) {
		t.Fatal("unmasked while high: did not fire again")
	}
	a.Ack()
	b.Ack()
	l.set(false)
	a.Unmask()
	if readable(t, a.FD()) {
		t.Fatal("unmasked while low: fired")
	}
}

// MSI-X: each message reaches only its entry's handles; there is no mask.
func TestMSIIRQPerEntry(t *testing.T) {
	m := newMSIIRQ("enetc9")
	if _, err := m.open(maxMSIX); err == nil {
		t.Fatal("opened an entry past the table")
	}
	two, _ := m.open(2) // the highest first: MSI-X enabled with entries 0..2
	one, _ := m.open(1)
	defer one.Close()
	defer two.Close()
	m.send(1)
	m.send(1)
	if n, _ := one.Ack(); n != 2 {
		t.Fatalf("entry 1 saw %d messages, want 2", n)
	}
	if readable(t, two.FD()) {
		t.Fatal("entry 2 saw entry 1's message")
	}
	two.Close()
	m.send(2) // no handle: dropped, as an unrouted vector
}

// MSI-X without dynamic allocation, as VFIO on the LS1028A: the first
// routed entry sizes the block; an entry past it cannot be added later,
// one within it can.
func TestMSIIRQNoDynamicMSIX(t *testing.T) {
	m := newMSIIRQ("enetc9")
	one, err := m.open(1)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if h, err := m.open(2); err == nil || !strings.Contains(err.Error(), "dynamic MSI-X") {
		if h != nil {
			h.Close()
		}
		t.Fatalf("entry 2 after entry 1: %v, want a refusal naming dynamic MSI-X", err)
	}
	zero, err := m.open(0)
	if err != nil {
		t.Fatalf("entry 0 within the block: %v", err)
	}
	zero.Close()
	if m.vectors != 2 || m.enables != 1 {
		t.Fatalf("MSI-X enabled %d times with %d entries, want once with 2", m.enables, m.vectors)
	}
}

package sim

import (
	"fmt"
	"sync"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/irqfd"
)

// levelIRQ is what stands behind a model's level interrupt output on a
// board whose kernel runs uio_pdrv_genirq: the interrupt controller
// delivers the line's rising level once to every open handle (each an
// eventfd, readable like /dev/uioN) and then holds the line masked until
// a handle unmasks it; a line still high when unmasked fires again at
// once. So the driver's code path is the one it takes on silicon: arm in
// the device's mask register, unmask the line, poll the descriptor.
type levelIRQ struct {
	name    string
	mu      sync.Mutex
	level   bool
	enabled bool
	handles map[*simIRQ]struct{}
	fired   uint64
}

func newLevelIRQ(name string) *levelIRQ {
	return &levelIRQ{name: name, enabled: true, handles: map[*simIRQ]struct{}{}}
}

// set is the model's line: called with every change of its level, from
// inside the model (it must not call back).
func (l *levelIRQ) set(level bool) {
	l.mu.Lock()
	l.level = level
	if level && l.enabled {
		l.fireLocked()
	}
	l.mu.Unlock()
}

func (l *levelIRQ) fireLocked() {
	l.enabled = false // the controller masks the line until it is unmasked
	l.fired++
	for h := range l.handles {
		_ = h.ev.Signal()
	}
}

// open is the backend's Device.OpenIRQ: one handle per waiter.
func (l *levelIRQ) open(i int) (driver.IRQ, error) {
	if i != 0 {
		return nil, fmt.Errorf("sim %s: no interrupt %d: the device has one line, 0", l.name, i)
	}
	ev, err := irqfd.NewEventfd()
	if err != nil {
		return nil, fmt.Errorf("sim %s: interrupt: %w", l.name, err)
	}
	h := &simIRQ{ev: ev, line: l}
	l.mu.Lock()
	l.handles[h] = struct{}{}
	l.mu.Unlock()
	return h, nil
}

// simIRQ is one handle of a levelIRQ.
type simIRQ struct {
	ev   *irqfd.Eventfd
	line *levelIRQ
}

func (h *simIRQ) FD() int              { return h.ev.FD() }
func (h *simIRQ) Ack() (uint64, error) { return h.ev.Ack() }

// Unmask re-enables the line, as a write of 1 to /dev/uioN does.
func (h *simIRQ) Unmask() error {
	l := h.line
	l.mu.Lock()
	l.enabled = true
	if l.level {
		l.fireLocked()
	}
	l.mu.Unlock()
	return nil
}

func (h *simIRQ) Close() error {
	h.line.mu.Lock()
	delete(h.line.handles, h)
	h.line.mu.Unlock()
	return h.ev.Close()
}

// msiIRQ stands behind a model's MSI-X messages as VFIO does: each
// message is an edge delivered to the eventfds of its table entry's open
// handles; nothing holds it masked (Unmask does nothing).
//
// Like VFIO on an interrupt controller without dynamic MSI-X (the
// LS1028A's GICv3 ITS), the first routing of entry v enables MSI-X with
// entries 0..v (vfio_msi_enable sizes the block with start+count), and an
// entry past them cannot be opened later: a driver must open its highest
// entry first, or all at once.
type msiIRQ struct {
	name    string
	mu      sync.Mutex
	handles map[int]map[*msiHandle]struct{}
	// vectors is the size of the enabled block (0: MSI-X not enabled
	// yet); enables counts the enables (one while the function is open).
	vectors, enables int
}

func newMSIIRQ(name string) *msiIRQ {
	return &msiIRQ{name: name, handles: map[int]map[*msiHandle]struct{}{}}
}

// send is the model's message sink (Device.SetMSI).
func (m *msiIRQ) send(vector int) {
	m.mu.Lock()
	for h := range m.handles[vector] {
		_ = h.ev.Signal()
	}
	m.mu.Unlock()
}

// maxMSIX is the MSI-X table size the simulated function offers.
const maxMSIX = 32

// open is the backend's Device.OpenIRQ: MSI-X entry i.
func (m *msiIRQ) open(i int) (driver.IRQ, error) {
	if i < 0 || i >= maxMSIX {
		return nil, fmt.Errorf("sim %s: no MSI-X entry %d (the function has %d)", m.name, i, maxMSIX)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.vectors == 0:
		m.vectors = i + 1
		m.enables++
	case i >= m.vectors:
		return nil, fmt.Errorf("sim %s: MSI-X entry %d: MSI-X is enabled with %d entries and, without dynamic MSI-X, no entry can be added (VFIO_DEVICE_SET_IRQS: EINVAL): open the highest entry first", m.name, i, m.vectors)
	}
	ev, err := irqfd.NewEventfd()
	if err != nil {
		return nil, fmt.Errorf("sim %s: interrupt: %w", m.name, err)
	}
	h := &msiHandle{ev: ev, m: m, vector: i}
	if m.handles[i] == nil {
		m.handles[i] = map[*msiHandle]struct{}{}
	}
	m.handles[i][h] = struct{}{}
	return h, nil
}

// msiHandle is one open MSI-X entry.
type msiHandle struct {
	ev     *irqfd.Eventfd
	m      *msiIRQ
	vector int
}

func (h *msiHandle) FD() int              { return h.ev.FD() }
func (h *msiHandle) Ack() (uint64, error) { return h.ev.Ack() }
func (h *msiHandle) Unmask() error        { return nil }

func (h *msiHandle) Close() error {
	h.m.mu.Lock()
	delete(h.m.handles[h.vector], h)
	h.m.mu.Unlock()
	return h.ev.Close()
}

package enetc

import (
	"fmt"
	"strconv"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/rxirq"
)

// RX interrupts (§2.1, §2.2, §4.6).
//
// The ENETC signals an RX ring's interrupt as an MSI-X message to the
// table entry SIMSIRRV(n) names (its writes carry SICAR1's attributes,
// which bring-up sets as Linux does); the backend routes entry v to a
// descriptor (VFIO_DEVICE_SET_IRQS with an eventfd; the simulated
// function the same). Ring n uses entry n+1, leaving entry 0 to the SI's
// own events, as Linux does. The first arm of any queue opens the entries
// of every RX queue, the highest first: VFIO enables MSI-X with entries
// 0..v at the first routing of entry v and, where the interrupt controller
// has no dynamic MSI-X (the LS1028A's GICv3 ITS), can add none past them
// later, so that first call must size the block for them all (Linux
// allocates its vectors at once too, pci_alloc_irq_vectors). RBIER stays 0 while the ring is polled. To
// sleep, a queue's goroutine arms: SIMSIRRV(n) = n+1, RBICR0 = ICEN with a
// threshold of one frame and RBICR1 = 0 (no timer), or what the spec
// options rx-coalesce-frames= and rx-coalesce-ticks= say, W1C the ring's bit in
// SIRXIDR, consume what the descriptor holds, set RBIER.RXTIE. A frame
// completed before the detect clear is in the ring, where the caller's
// re-check finds it; one completed after it sets the detect bit, which
// sends the message once RXTIE is set. Disarming clears RBIER. Arm and
// disarm take the ERR050089 read lock, as every control path does.

// RX ring interrupt fields (§2.2).
const (
	rbier_RXTIE      = 1 << 0
	rbicr0_ICEN      = 1 << 31
	rbicr0_ICPT_MAX  = 0x1FF // ICPT[8:0]: packet threshold
	rbicr1_TICKS_MAX = 1<<32 - 1
	// regSIMSIRRV is SIMSIRRV(n) at +4n: the MSI-X entry of RX ring n (§2.1).
	regSIMSIRRV = 0xB80
	// msixRingBase is the MSI-X entry of RX ring 0; entry 0 is the SI's.
	msixRingBase = 1
)

// irqState is the port's interrupt bookkeeping: the shared part
// (internal/rxirq) and the coalescing the spec options ask for: frames per
// interrupt (RBICR0.ICPT, default 1) and the timer in ENETC clock cycles
// (RBICR1, default 0: none).
type irqState struct {
	rxirq.Port
	coalFrames uint32
	coalTicks  uint32
	vectors    bool // every RX queue's MSI-X entry is open (openVectors)
}

// parseIRQOptions reads rx-coalesce-frames= and rx-coalesce-ticks=.
func (p *Port) parseIRQOptions(get func(string) (string, bool)) error {
	p.irq.coalFrames = 1
	if v, ok := get("rx-coalesce-frames"); ok {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n < 1 || n > rbicr0_ICPT_MAX {
			return driver.BadOption("rx-coalesce-frames", v, "not a frame threshold", "1 to 511 frames per RX interrupt (RBICR0.ICPT)")
		}
		if ring := p.cfg.RxRingSize; n > uint64(ring/2) {
			return driver.BadOption("rx-coalesce-frames", v, fmt.Sprintf("more than half the %d-slot RX ring: the ring would be (nearly) full before the interrupt fired, and frames arriving while the worker wakes would find no buffer", ring),
				fmt.Sprintf("1 to %d with rx-ring=%d (at most half the ring, as Linux's enetc keeps its threshold), or a larger rx-ring", min(ring/2, rbicr0_ICPT_MAX), ring))
		}
		p.irq.coalFrames = uint32(n)
	}
	if v, ok := get("rx-coalesce-ticks"); ok {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n < 1 || n > rbicr1_TICKS_MAX {
			return driver.BadOption("rx-coalesce-ticks", v, "not a timer threshold", "1 to 4294967295 ENETC clock cycles after the first frame (RBICR1; 400 per microsecond at the LS1028A's 400 MHz)")
		}
		p.irq.coalTicks = uint32(n)
	}
	return nil
}

// startIRQ lets queues arm; Start calls it once the rings run.
func (p *Port) startIRQ() { p.irq.Start() }

// stopIRQ wakes sleeping workers; Stop calls it after closing the gate
// (it clears RBIER itself).
func (p *Port) stopIRQ() { p.irq.Stop(nil) }

// closeIRQ waits (up to StopTimeout) for workers in a wait to leave, then
// closes every descriptor.
func (p *Port) closeIRQ() { p.irq.Close(p.cfg.StopTimeout) }

// ArmInterrupt clears the ring's interrupt detect and enables its
// interrupt (driver.RxInterrupter). The first call of any queue opens the
// MSI-X entries of every RX queue through the backend (openVectors).
func (q *rxQueue) ArmInterrupt() error {
	p := q.port
	s := &p.irq
	// The ERR050089 read lock before the interrupt lock, the order Stop
	// takes them in (p.lock, then stopIRQ): a waiting MDIO writer blocks
	// new readers, so the other order could deadlock against a Stop.
	p.chip.rw.RLock()
	defer p.chip.rw.RUnlock()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	switch {
	case s.Closed():
		return p.errClosed()
	case s.Stopping():
		return fmt.Errorf("rx%d: arm the interrupt: %w", q.idx, driver.ErrStopped)
	case p.dev.OpenIRQ == nil:
		return fmt.Errorf("rx%d: the %s backend delivers no interrupt: %w (use the pci backend through VFIO, or sim:)", q.idx, p.dev.Backend, driver.ErrNoInterrupt)
	}
	if err := p.openVectors(); err != nil {
		return err
	}
	vector := msixRingBase + q.idx
	r := p.regs
	r.Write32(regSIMSIRRV+4*uint32(q.idx), uint32(vector))
	r.Write32(rxRingReg(q.idx, regRBICR0), rbicr0_ICEN|s.coalFrames) // default one frame: no delay
	r.Write32(rxRingReg(q.idx, regRBICR1), s.coalTicks)
	r.Write32(regSIRXIDR, 1<<q.idx) // W1C: only frames from now on count
	if err := q.irq.Drain(); err != nil {
		return fmt.Errorf("rx%d: %w", q.idx, err)
	}
	r.Write32(rxRingReg(q.idx, regRBIER), rbier_RXTIE)
	q.irq.Armed++
	return nil
}

// openVectors opens the MSI-X entry of every RX queue, the highest first,
// so that the backend's first VFIO_DEVICE_SET_IRQS enables them all (see
// the top of this file). Caller holds p.irq.Mu.
func (p *Port) openVectors() error {
	s := &p.irq
	if s.vectors {
		return nil
	}
	for i := len(p.rx) - 1; i >= 0; i-- {
		vector := msixRingBase + i
		if err := s.Open(&p.rx[i].irq, func() (driver.IRQ, error) { return p.dev.OpenIRQ(vector) }); err != nil {
			return fmt.Errorf("rx%d: open MSI-X entry %d of entries 1 to %d (one per RX queue, all at the first arm): %w", i, vector, len(p.rx), err)
		}
	}
	s.vectors = true
	return nil
}

// MSIXVectors is how many MSI-X entries the port asks for at its first
// RX interrupt arm: entry 0 (the SI's) and one per RX queue.
func (p *Port) MSIXVectors() int { return msixRingBase + len(p.rx) }

// DisarmInterrupt disables the ring's interrupt and consumes a pending one
// (driver.RxInterrupter).
func (q *rxQueue) DisarmInterrupt() {
	p := q.port
	s := &p.irq
	p.chip.rw.RLock() // before the interrupt lock, as in ArmInterrupt
	defer p.chip.rw.RUnlock()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Closed() || q.irq.Line == nil {
		return
	}
	if !s.Stopping() {
		p.regs.Write32(rxRingReg(q.idx, regRBIER), 0)
	}
	_ = q.irq.Ack()
}

// InterruptFDs pins the queue's descriptors for one wait
// (driver.RxInterrupter).
func (q *rxQueue) InterruptFDs() (irq, wake int, ok bool) { return q.port.irq.Pin(&q.irq) }

// ReleaseInterruptFDs ends the wait InterruptFDs began.
func (q *rxQueue) ReleaseInterruptFDs() { q.port.irq.Unpin(&q.irq) }

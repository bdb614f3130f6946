package fec

import (
	"fmt"
	"strconv"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
	"github.com/gopmd/gopmd/internal/rxirq"
)

// RX interrupts (§2.1, §2.11, §8.3).
//
// The MAC raises its interrupt output while EIR & EIMR is not zero. Each
// RX BD asks for RXF/RXB with the INT bit of its enhanced descriptor
// (refill sets it; legacy BDs always raise them), and EIMR stays 0 while
// the port is polled, so the events cost nothing. To sleep, a queue's
// goroutine arms: W1C its ring's RXF and RXB in EIR, consume what its
// descriptor holds, set its RXF bit in EIMR and unmask the line (under
// uio_pdrv_genirq the kernel masks the line each time it fires; a write
// of 1 to /dev/uioN unmasks it). A frame completed before the EIR clear
// is in the ring, where the caller's re-check finds it; one completed
// after it sets RXF, which fires through EIMR. Disarming clears the EIMR
// bit. EIMR is shared by the rings: arm, disarm and Stop change it under
// the port's interrupt lock (internal/rxirq: who may arm, the wake-up at
// Stop, the descriptors' lifetime).
//
// Coalescing (RXICn: ICEN, ICCS = the ENET system clock, ICFT frames,
// ICTT in units of 64 clock cycles) is programmed at Start from the spec
// options rx-coalesce-frames= and rx-coalesce-ticks=; left out, it is
// off and every frame raises RXF.

// EIR/EIMR receive bits per ring (§2.1).
var (
	eirRXFn = [3]uint32{eir_RXF, eir_RXF1, eir_RXF2}
	eirRXBn = [3]uint32{eir_RXB, eir_RXB1, eir_RXB2}
)

// Interrupt lines (§1, §4.8). On parts with three rings and three MAC
// lines (i.MX7D, i.MX8M, i.MX93, i.MX8QM) ring n's events raise line intn
// and only that line; elsewhere every ring's events raise the one line.
// A queue opens the device's interrupt that is its ring's line: the
// index of "intn" in the node's interrupt-names, else the order the SoC's
// device tree lists them in (profile.go, ringIRQOrder: the i.MX8M and
// i.MX93 trees list int1, int2, int0). vfio-platform delivers every
// interrupt of the node; uio_pdrv_genirq only the first, and arming a ring
// whose line is another one is refused, naming the ring and the line.

// irqState is the port's interrupt bookkeeping: the shared part
// (internal/rxirq), each ring's line, and the coalescing the spec options
// ask for (frames 0: off).
type irqState struct {
	rxirq.Port
	coalFrames, coalTicks int
	// ringIRQ is the device interrupt (driver.Device.OpenIRQ's i) of each
	// ring's line, ringLine the line's name, lineFrom what said so.
	ringIRQ  [3]int
	ringLine [3]string
	lineFrom string
}

// setRingLines fills ringIRQ and ringLine from the device tree's
// interrupt-names, else the profile's order (New calls it).
func (p *Port) setRingLines() {
	order, split := p.prof.ringLines()
	s := &p.irq
	if !split {
		for q := range s.ringIRQ {
			s.ringIRQ[q], s.ringLine[q] = 0, "int0"
		}
		s.lineFrom = p.prof.compatible + " has one MAC interrupt line"
		return
	}
	s.ringIRQ = order
	s.lineFrom = "the order " + p.prof.compatible + " device trees list them in"
	for q := range s.ringLine {
		s.ringLine[q] = "int" + strconv.Itoa(q)
	}
	names := p.dev.Node.Strings("interrupt-names")
	idx := map[string]int{}
	for i, n := range names {
		idx[n] = i
	}
	if i0, ok := idx["int0"]; ok {
		s.lineFrom = "the device tree's interrupt-names"
		for q := range s.ringIRQ {
			if i, ok := idx["int"+strconv.Itoa(q)]; ok {
				s.ringIRQ[q] = i
			} else {
				s.ringIRQ[q], s.ringLine[q] = i0, "int0"
			}
		}
	}
}

// IRQLine is one RX ring's interrupt: the MAC line (int0, int1, int2),
// the device interrupt it is (index into the node's interrupts, the i of
// driver.Device.OpenIRQ) and what said so.
type IRQLine struct {
	Ring  int
	Line  string
	Index int
	From  string
}

// NodeIRQLines is IRQLines for a device not opened: every RX ring of the
// part whose compatible strings are compat (most specific first), from
// the node's interrupt-names or the SoC tree's order. ok is false when the
// driver knows none of the strings.
func NodeIRQLines(compat []string, node devtree.Node) (lines []IRQLine, ok bool) {
	prof, ok := lookupProfile(compat)
	if !ok {
		return nil, false
	}
	p := &Port{prof: prof, dev: &driver.Device{Node: node}}
	p.setRingLines()
	for q := 0; q < prof.maxQueues(); q++ {
		lines = append(lines, IRQLine{Ring: q, Line: p.irq.ringLine[q], Index: p.irq.ringIRQ[q], From: p.irq.lineFrom})
	}
	return lines, true
}

// IRQLines lists the interrupt line of each RX ring the port has.
func (p *Port) IRQLines() []IRQLine {
	out := make([]IRQLine, len(p.rx))
	for q := range out {
		out[q] = IRQLine{Ring: q, Line: p.irq.ringLine[q], Index: p.irq.ringIRQ[q], From: p.irq.lineFrom}
	}
	return out
}

// parseIRQOptions reads rx-coalesce-frames= and rx-coalesce-ticks=.
func (p *Port) parseIRQOptions(get func(string) (string, bool)) error {
	for _, k := range []string{"rx-coalesce-frames", "rx-coalesce-ticks"} {
		if v, ok := get(k); ok && !p.prof.has(qCoalesce) {
			return driver.BadOption(k, v, p.prof.compatible+" has no interrupt coalescing registers (RXICn)", "leave it out on this part")
		}
	}
	if v, ok := get("rx-coalesce-frames"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > ic_ICFT_MAX {
			return driver.BadOption("rx-coalesce-frames", v, "not a frame threshold", "1 to 255 frames per RX interrupt (RXICn.ICFT)")
		}
		if ring := p.cfg.RxRingSize; n > ring/2 {
			return driver.BadOption("rx-coalesce-frames", v, fmt.Sprintf("more than half the %d-slot RX ring: the ring would be (nearly) full before the interrupt fired, and frames arriving while the worker wakes would find no buffer", ring),
				fmt.Sprintf("1 to %d with rx-ring=%d (at most half the ring), or a larger rx-ring", min(ring/2, ic_ICFT_MAX), ring))
		}
		p.irq.coalFrames = n
	}
	if v, ok := get("rx-coalesce-ticks"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > ic_ICTT_MAX {
			return driver.BadOption("rx-coalesce-ticks", v, "not a timer threshold", "1 to 65535 units of 64 ENET system clock cycles (RXICn.ICTT)")
		}
		if p.irq.coalFrames == 0 {
			return driver.BadOption("rx-coalesce-ticks", v, "needs rx-coalesce-frames", "give rx-coalesce-frames=N (1-255) with it: the timer bounds how long N frames may take")
		}
		p.irq.coalTicks = n
	}
	return nil
}

// startIRQ programs coalescing and lets queues arm; Start calls it with
// ctl held, after the reset that cleared EIMR and RXICn.
func (p *Port) startIRQ() {
	if p.irq.coalFrames > 0 { // only on qCoalesce parts (parseIRQOptions)
		ic := uint32(ic_ICEN|ic_ICCS) | uint32(p.irq.coalFrames)<<ic_ICFT_SHIFT | uint32(p.irq.coalTicks)
		for i := range p.rx {
			p.regs.Write32(regRXIC0+4*uint32(i), ic)
		}
	}
	p.irq.Start()
}

// stopIRQ masks every RX interrupt and wakes sleeping workers; Stop calls
// it right after closing the gate.
func (p *Port) stopIRQ() {
	p.irq.Stop(func() { p.regs.Write32(regEIMR, 0) })
}

// closeIRQ waits (up to StopTimeout) for the workers in a wait to leave,
// then closes every descriptor; Close calls it before the device goes.
func (p *Port) closeIRQ() { p.irq.Close(p.cfg.StopTimeout) }

// ProbeIRQ reports whether the backend delivers RX ring ring's interrupt
// line: it opens the line's device interrupt and closes it again, and
// returns the error arming would give (nil: an adaptive worker can sleep
// on the ring). For tools (nicctl info); it does not arm anything.
func (p *Port) ProbeIRQ(ring int) error {
	s := &p.irq
	s.Mu.Lock()
	defer s.Mu.Unlock()
	switch {
	case s.Closed() || p.shut.Load():
		return p.errClosed()
	case ring < 0 || ring >= len(p.rx):
		return fmt.Errorf("no RX ring %d (the port has %d)", ring, len(p.rx))
	case p.dev.OpenIRQ == nil:
		return fmt.Errorf("rx%d: the %s backend delivers no interrupt: %w", ring, p.dev.Backend, driver.ErrNoInterrupt)
	}
	i := s.ringIRQ[ring]
	h, err := p.dev.OpenIRQ(i)
	if err != nil {
		return fmt.Errorf("rx%d: its receive interrupt is %s, interrupt %d of the device (%s), and the %s backend does not deliver it (%v): %w", ring, s.ringLine[ring], i, s.lineFrom, p.dev.Backend, err, driver.ErrNoInterrupt)
	}
	return h.Close()
}

// ArmInterrupt clears the ring's pending receive events and enables its
// interrupt (driver.RxInterrupter). The first call opens the queue's
// handle on the device's interrupt.
func (q *rxQueue) ArmInterrupt() error {
	p := q.port
	s := &p.irq
	s.Mu.Lock()
	defer s.Mu.Unlock()
	switch {
	case s.Closed():
		return p.errClosed()
	case s.Stopping():
		return fmt.Errorf("rx%d: arm the interrupt: %w", q.idx, driver.ErrStopped)
	case p.dev.OpenIRQ == nil:
		return fmt.Errorf("rx%d: the %s backend delivers no interrupt: %w (use platform: with vfio-platform or uio_pdrv_genirq, uio:, or sim:)", q.idx, p.dev.Backend, driver.ErrNoInterrupt)
	}
	i := s.ringIRQ[q.idx]
	if err := s.Open(&q.irq, func() (driver.IRQ, error) { return p.dev.OpenIRQ(i) }); err != nil {
		if i != 0 {
			return fmt.Errorf("rx%d: its receive interrupt is %s, interrupt %d of the device (%s), and the %s backend does not deliver it (%v): %w; bind the node to vfio-platform, which delivers every interrupt (uio_pdrv_genirq delivers only the first), or poll rx%d instead of sleeping on it",
				q.idx, s.ringLine[q.idx], i, s.lineFrom, p.dev.Backend, err, driver.ErrNoInterrupt, q.idx)
		}
		return fmt.Errorf("rx%d: open the interrupt: %w", q.idx, err)
	}
	p.regs.Write32(regEIR, eirRXFn[q.idx]|eirRXBn[q.idx]) // W1C: only events from now on count
	if err := q.irq.Drain(); err != nil {
		return fmt.Errorf("rx%d: %w", q.idx, err)
	}
	p.regs.Write32(regEIMR, p.regs.Read32(regEIMR)|eirRXFn[q.idx])
	if err := q.irq.Line.Unmask(); err != nil {
		p.regs.Write32(regEIMR, p.regs.Read32(regEIMR)&^eirRXFn[q.idx])
		return fmt.Errorf("rx%d: %w", q.idx, err)
	}
	q.irq.Armed++
	return nil
}

// DisarmInterrupt masks the ring's interrupt and consumes a pending one
// (driver.RxInterrupter).
func (q *rxQueue) DisarmInterrupt() {
	p := q.port
	s := &p.irq
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Closed() || q.irq.Line == nil {
		return
	}
	if !s.Stopping() {
		p.regs.Write32(regEIMR, p.regs.Read32(regEIMR)&^eirRXFn[q.idx])
	}
	_ = q.irq.Ack()
}

// InterruptFDs pins the queue's descriptors for one wait
// (driver.RxInterrupter).
func (q *rxQueue) InterruptFDs() (irq, wake int, ok bool) { return q.port.irq.Pin(&q.irq) }

// ReleaseInterruptFDs ends the wait InterruptFDs began.
func (q *rxQueue) ReleaseInterruptFDs() { q.port.irq.Unpin(&q.irq) }

// interruptStats are a queue's interrupt counts, for tests: how often it
// armed and how many interrupts its handle saw.
func (q *rxQueue) interruptStats() (armed, fired uint64) {
	q.port.irq.Mu.Lock()
	defer q.port.irq.Mu.Unlock()
	return q.irq.Armed, q.irq.Fired
}

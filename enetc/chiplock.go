package enetc

import (
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/gopmd/gopmd/internal/gate"
)

// ERR050089 spans the whole chip: an MDIO register access concurrent with
// any other register access of any ENETC function of the chip may be lost
// (reference §5.4; Linux takes one global rwlock for all of them). So the
// rule is kept across every port of the chip, not per port: every control
// path holds the read side of its chip's rw while it touches registers
// (Port.lock), each MDIO register access the write side; and the data path
// of every port of the chip is held off by the MDIO bit of its gate, which
// an MDIO register access on any of them sets for that access only.
//
// The unit is the register access, not the transaction, as in Linux, whose
// MDIO accessors take the erratum lock for writing around each register
// access (enetc_hw.h enetc_port_rd_mdio/enetc_port_wr_mdio) and let the data
// path run while a frame is on the MDIO wire. Holding the data path off for
// a whole transaction would cost far more: one link poll (up to 7 PHY and 3
// PCS reads, each a 25.6 µs MDIO frame at 2.5 MHz) is 0.2 ms or more, over
// 760 minimum-size frames at 2.5 Gb/s against a 512-BD ring.
//
// The chip is driver.Device.Chip. Every backend that reaches silicon leaves
// it empty, so every real ENETC function of the process shares one rule, as
// the functions of one LS1028A must; only the sim backend names simulated
// chips apart (chip=), whose models keep the same rule per chip.
type chip struct {
	name string
	rw   sync.RWMutex
	mu   sync.Mutex // guards ports
	// ports is every open port of the chip, whose gates an MDIO register
	// access closes. Copied on write: an access keeps the slice it closed
	// the gates of, to open the same ones.
	ports []*Port
	refs  int // ports from New to Close, under chips.mu
}

// chips are the chips of the open ports, by name.
var chips struct {
	mu sync.Mutex
	m  map[string]*chip
}

// chipOf returns the chip named name, counting one more port on it; the
// port gives it back with release.
func chipOf(name string) *chip {
	chips.mu.Lock()
	defer chips.mu.Unlock()
	c := chips.m[name]
	if c == nil {
		if chips.m == nil {
			chips.m = map[string]*chip{}
		}
		c = &chip{name: name}
		chips.m[name] = c
	}
	c.refs++
	return c
}

// release drops one port's hold on c; the last forgets it.
func (c *chip) release() {
	chips.mu.Lock()
	defer chips.mu.Unlock()
	if c.refs--; c.refs == 0 {
		delete(chips.m, c.name)
	}
}

// register adds p to the ports an MDIO register access on its chip holds off.
func (p *Port) register() {
	c := p.chip
	c.mu.Lock()
	c.ports = append(slices.Clip(c.ports), p)
	c.mu.Unlock()
}

// unregister removes p and gives its hold on the chip back (Close).
func (p *Port) unregister() {
	c := p.chip
	c.mu.Lock()
	c.ports = slices.DeleteFunc(slices.Clone(c.ports), func(x *Port) bool { return x == p })
	c.mu.Unlock()
	c.release()
}

// lock takes the port's control-path lock and the read side of its chip's
// ERR050089 lock: no MDIO register access on any port of the chip runs while
// the caller touches registers. Never nested.
func (p *Port) lock() {
	p.ctl.Lock()
	p.chip.rw.RLock()
}

func (p *Port) unlock() {
	p.chip.rw.RUnlock()
	p.ctl.Unlock()
	p.linkEv.Flush() // link changes seen under the lock, with no lock held
}

// mdioBegin starts one MDIO register access (caller holds p.lock): it
// trades the read side of the chip's ERR050089 lock for the write side, so
// no control path of any port of the chip touches a register, then closes
// the gate of every such port's data path and waits until none of their
// queues is inside a burst.
func (p *Port) mdioBegin() {
	c := p.chip
	c.rw.RUnlock()
	c.rw.Lock()
	c.mu.Lock()
	ports := c.ports
	for _, x := range ports {
		x.gate.Close(gate.MDIO) // bursts starting from now see the gate closed
	}
	if !slices.Contains(ports, p) {
		p.gate.Close(gate.MDIO) // not registered yet (New): its own gate too
		ports = append(slices.Clip(ports), p)
	}
	c.mu.Unlock()
	for _, x := range ports {
		x.waitIdle()
	}
	p.mdioPorts = ports
}

// waitIdle waits until no queue of p is inside a burst (its gate closed).
func (p *Port) waitIdle() { p.waitQueuesIdle(time.Time{}) }

// mdioEnd ends the access: it opens the gates again and returns to the
// read side.
func (p *Port) mdioEnd() {
	for _, x := range p.mdioPorts {
		x.gate.Open(gate.MDIO)
	}
	p.mdioPorts = nil
	p.chip.rw.Unlock()
	p.chip.rw.RLock()
}

// mdioRd reads the MDIO controller register at off as one ERR050089
// access (caller holds p.lock).
func (p *Port) mdioRd(off uint32) uint32 {
	p.mdioBegin()
	v := p.regs.Read32(off)
	p.mdioEnd()
	return v
}

// mdioWr writes the MDIO controller register at off as one ERR050089
// access (caller holds p.lock).
func (p *Port) mdioWr(off, v uint32) {
	p.mdioBegin()
	p.regs.Write32(off, v)
	p.mdioEnd()
}

// mdioGateWaitMax bounds how long a TX burst waits for an MDIO register
// access to end. An access normally closes the gate for well under a
// microsecond, but the thread running it can be descheduled by a loaded
// host for tens of milliseconds (measured: up to 80 ms with six runnable
// threads on two cores). Linux's data path waits for the erratum lock
// without any bound; this one gives up only when the gate stayed closed far
// longer than any access can take, which means the process is being stopped
// or starved: the burst then takes nothing (TxBurst returns 0) and
// drv_tx<n>_mdio_wait_timeouts counts it.
const mdioGateWaitMax = time.Second

// mdioSpin is how long a waiting burst spins on the gate before it also
// yields its processor at every check: the goroutine running the MDIO
// access may need the processor the burst's goroutine holds (GOMAXPROCS at
// or below the busy goroutines).
const mdioSpin = 5 * time.Microsecond

// waitMDIO is the TX calls' slow path (call: TxBurst, TxStamped, Reclaim,
// TxTimestamps, for a ConcurrentUse report), taken when the caller found
// the MDIO or the Hold bit of its gate set (g, read as it entered the
// burst; Reclaim and TxTimestamps wait for Hold only): like the
// Linux driver, whose data path waits for the ERR050089 lock, the burst
// waits for the MDIO register access (or the look at the rings, ClaimHeld)
// to end instead of refusing frames for it. It leaves the burst (its flag
// down) so the access can start, spins on the gate, enters the burst again
// and returns the gate value it then read, inside the burst. That value
// still has gate.MDIO or gate.Hold set only when the wait went past
// mdioGateWaitMax. The waits that met an MDIO access are counted per queue
// (Stats: drv_tx<n>_mdio_*).
//
//go:noinline
func (q *txQueue) waitMDIO(g uint32, call string) uint32 {
	const held = gate.MDIO | gate.Hold
	start := time.Now()
	timedOut := false
	mdio := g&gate.MDIO != 0 // an MDIO access was seen: the wait is counted
	for i := 1; ; i++ {
		q.burst.Leave() // let the MDIO access see this queue idle
		for v := q.gate.Load(); v&held != 0; v = q.gate.Load() {
			mdio = mdio || v&gate.MDIO != 0
			i++
			if i&63 != 0 {
				continue
			}
			el := time.Since(start)
			if el > mdioGateWaitMax {
				timedOut = true
				break
			}
			if el > mdioSpin {
				runtime.Gosched()
			}
		}
		var shared bool
		if g, shared = q.burst.Enter(q.gate); shared { // another goroutine entered while this one stood aside
			q.port.concurrentUse("tx", q.idx, call)
		}
		if g&held == 0 || timedOut {
			break
		}
	}
	if !mdio {
		return g // a Hold only: no MDIO wait to count
	}
	ns := uint64(time.Since(start))
	q.mdioWaits.Add(1)
	q.mdioWaitNs.Add(ns)
	if ns > q.mdioWaitMaxNs.Load() {
		q.mdioWaitMaxNs.Store(ns) // one writer: the queue's goroutine
	}
	if timedOut {
		q.mdioWaitTimeouts.Add(1)
	}
	return g
}

// Package gate is the stop protocol every gopmd driver's data path follows:
// one gate word per port, one "in a burst" flag per queue, and no lock.
//
// A burst (RxBurst, TxBurst, Reclaim) first raises its queue's flag, then
// reads the port's gate once (Flag.Enter). A control path that must keep
// bursts off the rings (Stop, an ENETC MDIO register access) first closes the
// gate, then waits until no flag is raised (WaitIdle). Go's atomics are
// sequentially consistent, so one side always sees the other: a burst that
// read the gate open has raised its flag before the closer looks, and the
// closer waits for it to leave; a burst that starts later reads the gate
// closed and returns 0 having touched neither ring nor register.
//
// The states, the same in every driver:
//   - Stopped: set from New until Start and again from the start of Stop:
//     every burst returns 0 (RX writes no doorbell, TX takes no frame);
//   - LinkDown: the link is down: RX runs, TX takes every frame, frees it
//     and counts it as link_down, as a NIC without carrier drops;
//   - MDIO: an MDIO register access that must not overlap other register
//     accesses runs (ENETC ERR050089; one access, not a whole transaction,
//     as Linux locks): RX bursts and Reclaim return 0; a TX burst leaves
//     (its flag down), waits for the bit to clear and enters again, so the
//     access costs no frame (bounded: enetc waitMDIO);
//   - Hold: another goroutine reads the port's TX rings (an ENETC port
//     naming the frames on them in a pool's leak report): TX bursts and
//     Reclaim wait it out as a TX burst does MDIO; RX runs.
//
// Cost per burst: a swap, a load and a store. The swap (Enter raising the
// flag) is an atomic read-modify-write of the queue's own flag word, which
// only its goroutine writes, so it is never contended; it is what lets Enter
// see a second goroutine in the same queue's burst. On arm64 it is a SWPAL
// where the core has the Armv8.1 LSE atomics, and an LDAXR/STLXR pair on an
// Armv8.0 core such as the LS1028A's Cortex-A72.
package gate

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Gate bits. A TX burst proceeds only while none of them is set (the gate
// reads 0): it drops on LinkDown and waits out MDIO and Hold. RX runs
// while none of Closed is set.
const (
	Stopped  uint32 = 1 << iota // the port is stopped or stopping
	LinkDown                    // the link is down: TX drops
	MDIO                        // an MDIO register access runs (ENETC ERR050089)
	Hold                        // another goroutine reads the TX rings: TX waits, RX runs

	// Closed are the bits that turn a burst away with 0 (a TX burst waits
	// out MDIO first).
	Closed = Stopped | MDIO
)

// Gate is a port's gate word: every queue reads it once per burst.
type Gate struct{ w atomic.Uint32 }

// Init sets the gate to Stopped, as a port is from New until Start.
func (g *Gate) Init() { g.w.Store(Stopped) }

// Load reads the gate word.
func (g *Gate) Load() uint32 { return g.w.Load() }

// Close sets bits; bursts that start from now see them.
func (g *Gate) Close(bits uint32) { g.w.Or(bits) }

// Open clears bits.
func (g *Gate) Open(bits uint32) { g.w.And(^bits) }

// Flag is a queue's "in a burst" word, alone on its cache line: only its
// queue's goroutine writes it, a closer reads it.
type Flag struct {
	_      [64]byte
	active atomic.Uint32
	_      [60]byte
}

// Enter announces a burst, then reads the gate: it returns the gate word,
// and shared = true when the flag was already raised, that is when another
// goroutine is inside a burst of the same queue (a misuse the driver
// reports with driver.ConcurrentUse, touching nothing). A caller that finds
// a bit it must not pass calls Leave and returns.
func (f *Flag) Enter(g *Gate) (word uint32, shared bool) {
	shared = f.active.Swap(1) != 0 // announce the burst before reading the gate
	return g.w.Load(), shared
}

// Leave ends the burst.
func (f *Flag) Leave() { f.active.Store(0) }

// Active reports whether the queue is inside a burst.
func (f *Flag) Active() bool { return f.active.Load() != 0 }

// WaitIdle waits until none of flags is raised, or until deadline if it
// is not zero, and reports whether they all came down. The gate must have
// been closed first.
func WaitIdle(flags []*Flag, deadline time.Time) bool {
	for {
		busy := false
		for _, f := range flags {
			busy = busy || f.Active()
		}
		if !busy {
			return true
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return false
		}
		runtime.Gosched() // a burst is short; let its goroutine finish it
	}
}

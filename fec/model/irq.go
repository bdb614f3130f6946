package model

import (
	"sync"
	"sync/atomic"
	"time"
)

// The interrupt lines (§1, §2.1, §2.11, §4.8).
//
// The MAC's interrupt output is a level: high while EIR & EIMR is not
// zero. On parts with three rings and three MAC lines (Profile.IRQLines
// 3: i.MX7D, i.MX8M, i.MX93, i.MX8QM) the output is split by ring: int1
// is high while ring 1's events (RXF1, RXB1, TXF1, TXB1) are pending and
// unmasked, int2 likewise for ring 2, int0 for every other event (ring 0
// and the MAC's own). The model reports every change of a line's level to
// the function SetIRQLine installs for it (SetIRQ: int0); what is behind a
// line (the interrupt controller that masks it when it fires, as Linux's
// uio_pdrv_genirq does, and the descriptor user space waits on) is the
// caller's, as on a board. Which of the device tree's interrupts is which
// line is the board's too (Profile.DTIRQLines).
//
// RX interrupt coalescing (RXICn, parts with "coalesce"): with ICEN set,
// ring n's RXF event is held back until ICFT frames completed since the
// last one, or until ICTT × 64 clock cycles passed since the first frame
// held back, whichever comes first; then EIR.RXFn is set once for all of
// them. RXB events are not coalesced. Where the reference is silent: a
// frame threshold of 0 counts as 1 (every frame), a timer threshold of 0
// means no timer (the frame count alone), and the clock (ICCS selects the
// ENET system clock or another; the model does not tell them apart) runs
// at Config.CoalesceClockHz, 125 MHz by default.

// Coalescing register fields (§2.11).
const (
	ic_ICEN       = 1 << 31
	ic_ICCS       = 1 << 30
	ic_ICFT_SHIFT = 20
	ic_ICFT_MASK  = 0xFF
	ic_ICTT_MASK  = 0xFFFF
	icTimerUnit   = 64 // clock cycles per ICTT unit
)

// defaultCoalesceClock is the model's coalescing clock when
// Config.CoalesceClockHz is 0.
const defaultCoalesceClock = 125_000_000

// irqLineEvents are the EIR bits each MAC line carries on a part with
// three lines (int1: ring 1, int2: ring 2); int0 carries the rest.
var irqLineEvents = [3]uint32{
	0,
	eir_RXF1 | eir_RXB1 | eir_TXF1 | eir_TXB1,
	eir_RXF2 | eir_RXB2 | eir_TXF2 | eir_TXB2,
}

// irqState is the lines and the coalescing counters.
type irqState struct {
	mu    sync.Mutex
	level atomic.Bool // any line high; written under mu, read without it by the fast path
	lines [3]bool     // each line's level (mu)
	fns   [3]func(level bool)
	clock int64 // Hz
	// Per RX ring: frames held back and the timer that releases them.
	held  [3]int
	timer [3]*time.Timer
	gen   [3]uint64 // bumped whenever held is released, so a late timer does nothing
}

// SetIRQ installs fn as the receiver of interrupt line int0 (on a part
// with one line, the MAC's only one): SetIRQLine(0, fn).
func (d *Device) SetIRQ(fn func(level bool)) { d.SetIRQLine(0, fn) }

// SetIRQLine installs fn as line n's receiver (0..IRQLines-1): fn(true)
// when the line's share of EIR & EIMR becomes non-zero, fn(false) when it
// becomes zero. It is called with the model's interrupt lock held, from
// whatever goroutine changed the level (a register write, the DMA engine,
// a coalescing timer): it must not call back into the model. nil removes
// it. If the level is high already, fn(true) is called at once. A line
// the part does not have never rises.
func (d *Device) SetIRQLine(n int, fn func(level bool)) {
	if n < 0 || n >= len(d.irq.fns) {
		return
	}
	d.irq.mu.Lock()
	defer d.irq.mu.Unlock()
	d.irq.fns[n] = fn
	if fn != nil && d.irq.lines[n] {
		fn(true)
	}
}

// IRQLines is how many MAC interrupt lines the part has: 3 where rings 1
// and 2 have their own (int1, int2), else 1.
func (d *Device) IRQLines() int { return d.prof.irqLines() }

// IRQLevel reports whether any interrupt line is high: EIR & EIMR != 0.
func (d *Device) IRQLevel() bool {
	d.irq.mu.Lock()
	defer d.irq.mu.Unlock()
	return d.irq.level.Load()
}

// IRQLineLevel reports line n's level.
func (d *Device) IRQLineLevel(n int) bool {
	d.irq.mu.Lock()
	defer d.irq.mu.Unlock()
	return n >= 0 && n < len(d.irq.lines) && d.irq.lines[n]
}

// updateIRQ recomputes the level after EIR or EIMR changed.
func (d *Device) updateIRQ() {
	if !d.irq.level.Load() && d.reg(regEIMR) == 0 {
		return // masked and low: the polling driver's case costs one load
	}
	d.irq.mu.Lock()
	d.updateIRQLocked()
	d.irq.mu.Unlock()
}

func (d *Device) updateIRQLocked() {
	pend := d.reg(regEIR) & d.reg(regEIMR)
	var lv [3]bool
	if d.prof.irqLines() == 3 {
		lv[1] = pend&irqLineEvents[1] != 0
		lv[2] = pend&irqLineEvents[2] != 0
		pend &^= irqLineEvents[1] | irqLineEvents[2]
	}
	lv[0] = pend != 0
	d.irq.level.Store(lv[0] || lv[1] || lv[2])
	for n, l := range lv {
		if l == d.irq.lines[n] {
			continue
		}
		d.irq.lines[n] = l
		if fn := d.irq.fns[n]; fn != nil {
			fn(l)
		}
	}
}

// coalesce takes the RXF events of rings with coalescing enabled out of
// ev, counts them, and puts back those whose frame threshold was reached.
func (d *Device) coalesce(ev uint32) uint32 {
	if ev&(eir_RXF|eir_RXF1|eir_RXF2) == 0 {
		return ev
	}
	for n := 0; n < d.nrings; n++ {
		bit := eirRXFBits[n]
		if ev&bit == 0 {
			continue
		}
		ic := d.rxic(n)
		if ic&ic_ICEN == 0 {
			continue
		}
		ev &^= bit
		d.irq.mu.Lock()
		d.irq.held[n]++
		ft := int(ic >> ic_ICFT_SHIFT & ic_ICFT_MASK)
		if ft == 0 {
			ft = 1
		}
		if d.irq.held[n] >= ft {
			d.releaseLocked(n)
			ev |= bit
		} else if d.irq.held[n] == 1 {
			if tt := ic & ic_ICTT_MASK; tt != 0 {
				d.startTimerLocked(n, tt)
			}
		}
		d.irq.mu.Unlock()
	}
	return ev
}

// rxic is ring n's coalescing register, 0 where the part has none.
func (d *Device) rxic(n int) uint32 {
	off := uint32(regRXIC0 + 4*n)
	if d.defs[off/4] == nil {
		return 0
	}
	return d.reg(off)
}

func (d *Device) startTimerLocked(n int, tt uint32) {
	clk := d.irq.clock
	if clk <= 0 {
		clk = defaultCoalesceClock
	}
	after := time.Duration(int64(tt) * icTimerUnit * int64(time.Second) / clk)
	gen := d.irq.gen[n]
	if d.irq.timer[n] != nil {
		d.irq.timer[n].Stop()
	}
	d.irq.timer[n] = time.AfterFunc(after, func() {
		d.irq.mu.Lock()
		defer d.irq.mu.Unlock()
		if d.irq.gen[n] != gen || d.irq.held[n] == 0 {
			return // released by the frame count, or reset, since
		}
		d.releaseLocked(n)
		d.regs[regEIR/4].Or(eirRXFBits[n])
		d.updateIRQLocked()
	})
}

// releaseLocked ends ring n's held batch: the counter restarts and a
// pending timer is void.
func (d *Device) releaseLocked(n int) {
	d.irq.held[n] = 0
	d.irq.gen[n]++
	if d.irq.timer[n] != nil {
		d.irq.timer[n].Stop()
		d.irq.timer[n] = nil
	}
}

// resetIRQ voids the coalescing state (ECR.RESET, Reset) and lowers the
// line if the registers' reset left it high.
func (d *Device) resetIRQ() {
	d.irq.mu.Lock()
	for n := range d.irq.held {
		d.releaseLocked(n)
	}
	d.updateIRQLocked()
	d.irq.mu.Unlock()
}

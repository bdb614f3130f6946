package model

import (
	"sync"
	"sync/atomic"
	"time"
)

// The interrupt line (§2.1, §2.11).
//
// The MAC's interrupt output is a level: high while EIR & EIMR is not
// zero. The model reports every change of that level to the function
// SetIRQ installs; what is behind the line (the interrupt controller that
// masks it when it fires, as Linux's uio_pdrv_genirq does, and the
// descriptor user space waits on) is the caller's, as on a board.
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

// irqState is the line and the coalescing counters.
type irqState struct {
	mu    sync.Mutex
	level atomic.Bool // written under mu; read without it by the fast path
	fn    func(level bool)
	clock int64 // Hz
	// Per RX ring: frames held back and the timer that releases them.
	held  [3]int
	timer [3]*time.Timer
	gen   [3]uint64 // bumped whenever held is released, so a late timer does nothing
}

// SetIRQ installs fn as the interrupt line's receiver: fn(true) when
// EIR & EIMR becomes non-zero, fn(false) when it becomes zero. It is
// called with the model's interrupt lock held, from whatever goroutine
// changed the level (a register write, the DMA engine, a coalescing
// timer): it must not call back into the model. nil removes it. If the
// level is high already, fn(true) is called at once.
func (d *Device) SetIRQ(fn func(level bool)) {
	d.irq.mu.Lock()
	defer d.irq.mu.Unlock()
	d.irq.fn = fn
	if fn != nil && d.irq.level.Load() {
		fn(true)
	}
}

// IRQLevel reports the interrupt line's level: EIR & EIMR != 0.
func (d *Device) IRQLevel() bool {
	d.irq.mu.Lock()
	defer d.irq.mu.Unlock()
	return d.irq.level.Load()
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
	lv := d.reg(regEIR)&d.reg(regEIMR) != 0
	if lv == d.irq.level.Load() {
		return
	}
	d.irq.level.Store(lv)
	if d.irq.fn != nil {
		d.irq.fn(lv)
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

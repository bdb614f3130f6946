package model

import (
	"fmt"
	"math/bits"
	"sync"
	"time"

	"github.com/gopmd/gopmd/internal/simtime"
)

// The LS1028A's 1588 timer is a PCI function of its own (1957:ee02 at
// 0000:00:00.4, docs/hardware-enetc.md §12) with the QorIQ timer's
// registers in BAR0 at the offsets Linux's enetc_ptp.h and ptp_qoriq.h give
// for the non-eTSEC layout (control block at 0x80).
const (
	TmrCTRL    = 0x80
	TmrTEVENT  = 0x84
	TmrTEMASK  = 0x88
	TmrMSIVEC  = 0x8c
	TmrSTAT    = 0x94
	TmrCNTH    = 0x98
	TmrCNTL    = 0x9c
	TmrADD     = 0xa0
	TmrACC     = 0xa4
	TmrPRSC    = 0xa8
	TmrECTRL   = 0xac
	TmrOFFH    = 0xb0
	TmrOFFL    = 0xb4
	TmrALARM1H = 0xb8
	TmrALARM1L = 0xbc
	TmrALARM2H = 0xc0
	TmrALARM2L = 0xc4
	TmrFIPER1  = 0xd0 // FIPER2 at 0xd4, FIPER3 at 0xd8
	TmrETTS1H  = 0xe0
	TmrETTS1L  = 0xe4
	TmrETTS2H  = 0xe8
	TmrETTS2L  = 0xec

	// TimerWindow is the model's BAR0 size: the registers end below 0x100;
	// no public source gives the BAR's length.
	TimerWindow = 0x1000
)

// TMR_CTRL and TMR_TEVENT bits (ptp_qoriq.h).
const (
	TmrCtrlTE      = 1 << 2  // timer enable: the counter runs
	TmrCtrlFRD     = 1 << 14 // FIPER realignment disable
	TmrCtrlFS      = 1 << 28 // FIPER start: the FIPERs start at alarm 1
	TmrCtrlTclkSh  = 16      // TCLK_PERIOD: ns added per nominal tick
	TmrCtrlTclkMsk = 0x3ff

	TmrEvPP1  = 1 << 7 // periodic pulse 1; PP2 = 1<<6, PP3 = 1<<5
	TmrEvALM1 = 1 << 16
	TmrEvALM2 = 1 << 17
)

// TimerConfig sets a timer model up.
type TimerConfig struct {
	// Timeline is the model time the timer's oscillator runs on; nil gives
	// a manual one (Advance moves it).
	Timeline *simtime.Timeline
	// Osc is the reference clock: NominalHz (default 400 MHz, the
	// LS1028A's timer reference clock as Linux's first enetc_ptp.c states)
	// with ErrorPPB frequency error.
	Osc simtime.Oscillator
}

// DefaultTimerHz is the LS1028A timer reference clock (§12.3).
const DefaultTimerHz = 400_000_000

// Pulse is one periodic-output pulse: on which FIPER, at which clock time
// (TMR_CNT + TMR_OFF) and at which model time.
type Pulse struct {
	FIPER     int    // 1..3
	Clock     uint64 // the timer's time at the pulse, ns
	ModelTime int64  // model time of the pulse, ns
}

// maxPulses bounds the pulse log: a test reads it, a long run overwrites.
const maxPulses = 4096

// Timer is a model of the QorIQ 1588 timer as the LS1028A's ENETC timer
// function presents it (§12). Every TE-enabled oscillator cycle adds
// TMR_ADD to the 32-bit accumulator TMR_ACC; each carry out of it is a
// nominal tick that adds TMR_CTRL[TCLK_PERIOD] ns to TMR_CNT. The time
// the timer's events compare against is TMR_CNT + TMR_OFF. The counter is
// brought up to date lazily, at each register access and at Advance, from
// the cycles the oscillator made in model time since the last update.
//
// It is a driver.Regs: Read32/Write32 are its BAR0.
type Timer struct {
	tl  *simtime.Timeline
	osc simtime.Oscillator

	mu      sync.Mutex
	cycles  uint64 // oscillator cycles accounted for
	ctrl    uint32
	tevent  uint32
	temask  uint32
	msivec  uint32
	add     uint32
	acc     uint32
	prsc    uint32
	ectrl   uint32
	cnt     uint64
	cntLoW  uint32 // TMR_CNT_L written, waiting for TMR_CNT_H
	cntHiR  uint32 // TMR_CNT_H latched by the last TMR_CNT_L read
	off     uint64
	offLoW  uint32
	alarm   [2]uint64
	alarmLo [2]uint32
	armed   [2]bool
	fiper   [3]uint32
	next    [3]uint64 // next pulse time of a running FIPER
	running [3]bool
	pulses  []Pulse
	err     error
}

// NewTimer returns a timer in its reset state (counter stopped, all
// registers 0).
func NewTimer(cfg TimerConfig) *Timer {
	t := &Timer{tl: cfg.Timeline, osc: cfg.Osc}
	if t.tl == nil {
		t.tl = simtime.NewManual()
	}
	if t.osc.NominalHz == 0 {
		t.osc.NominalHz = DefaultTimerHz
	}
	t.cycles = t.osc.Cycles(t.tl.Now())
	return t
}

// Timeline is the model time the timer runs on.
func (t *Timer) Timeline() *simtime.Timeline { return t.tl }

// Oscillator is the timer's reference clock.
func (t *Timer) Oscillator() simtime.Oscillator { return t.osc }

// Advance moves the timer's timeline forward by d of model time and
// brings the counter and its events up to date.
func (t *Timer) Advance(d time.Duration) {
	t.tl.Advance(d)
	t.mu.Lock()
	t.sync()
	t.mu.Unlock()
}

// Pulses returns the periodic-output pulses so far (oldest first) and
// forgets them.
func (t *Timer) Pulses() []Pulse {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sync()
	p := t.pulses
	t.pulses = nil
	return p
}

// Time is the timer's time now (TMR_CNT + TMR_OFF), brought up to date.
func (t *Timer) Time() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sync()
	return t.cnt + t.off
}

func (t *Timer) tclk() uint64 { return uint64(t.ctrl>>TmrCtrlTclkSh) & TmrCtrlTclkMsk }

// sync counts the oscillator cycles since the last update into the
// accumulator and counter, and fires the alarms and pulses the time
// passed. Callers hold mu.
func (t *Timer) sync() {
	now := t.osc.Cycles(t.tl.Now())
	if now <= t.cycles {
		return
	}
	n := now - t.cycles
	start, acc0 := t.cycles, t.acc
	t.cycles = now
	if t.ctrl&TmrCtrlTE == 0 || t.add == 0 {
		return
	}
	tclk := t.tclk()
	// acc + add*n, as a 96-bit sum: the carries are the nominal ticks.
	hi, lo := bits.Mul64(uint64(t.add), n)
	lo, c := bits.Add64(lo, uint64(t.acc), 0)
	hi += c
	ticks := hi<<32 | lo>>32
	t.acc = uint32(lo)
	old := t.cnt + t.off
	t.cnt += ticks * tclk
	t.events(old, t.cnt+t.off, start, acc0)
}

// tickTime is the model time of the tick at which the timer's time
// reaches at least target, given the time was old at oscillator cycle
// start with the accumulator then at accAtStart (TMR_ADD is constant
// over one update).
func (t *Timer) tickTime(old, target, start uint64, accAtStart uint32) int64 {
	tclk := t.tclk()
	if tclk == 0 || t.add == 0 || target <= old {
		return t.osc.TimeOf(start)
	}
	k := (target - old + tclk - 1) / tclk // ticks needed
	// the k-th carry happens at the first cycle m with acc+add*m >= k<<32.
	need := k<<32 - uint64(accAtStart)
	m := (need + uint64(t.add) - 1) / uint64(t.add)
	return t.osc.TimeOf(start + m)
}

// events fires alarm 1/2 and the FIPER pulses whose time lies in
// (old, now]; the update began at oscillator cycle start with the
// accumulator at acc. Callers hold mu.
func (t *Timer) events(old, now, start uint64, acc uint32) {
	for i := 0; i < 2; i++ {
		if t.armed[i] && t.alarm[i] <= now {
			t.armed[i] = false
			if i == 0 {
				t.tevent |= TmrEvALM1
				if t.ctrl&TmrCtrlFS != 0 {
					t.startFipers(t.alarm[0])
				}
			} else {
				t.tevent |= TmrEvALM2
			}
		}
	}
	for ch := 0; ch < 3; ch++ {
		if !t.running[ch] {
			continue
		}
		period := uint64(t.fiper[ch]) + t.tclk()
		for t.next[ch] <= now {
			at := t.next[ch]
			mt := t.tickTime(old, at, start, acc)
			t.tevent |= TmrEvPP1 >> ch
			if len(t.pulses) >= maxPulses {
				t.pulses = t.pulses[1:]
			}
			t.pulses = append(t.pulses, Pulse{FIPER: ch + 1, Clock: at, ModelTime: mt})
			t.next[ch] = at + period
		}
	}
}

// startFipers starts every FIPER with a period at the alarm: the first
// pulse one nominal tick after the alarm time, then one every FIPER +
// TCLK_PERIOD ns. That is what makes Linux's choices (alarm at a second
// minus TCLK_PERIOD, FIPER = period - TCLK_PERIOD) pulse on the second
// (§12.4).
func (t *Timer) startFipers(alarm uint64) {
	for ch := 0; ch < 3; ch++ {
		if t.fiper[ch] == 0 {
			t.running[ch] = false
			continue
		}
		t.running[ch] = true
		t.next[ch] = alarm + t.tclk()
	}
}

// Size is the window's length.
func (t *Timer) Size() int { return TimerWindow }

// Err is the first out-of-window or misaligned access.
func (t *Timer) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

func (t *Timer) bad(off uint32, w int) bool {
	if off%uint32(w) != 0 || uint64(off)+uint64(w) > TimerWindow {
		if t.err == nil {
			t.err = fmt.Errorf("enetc timer: %d-byte access at offset %#x outside the %#x-byte window or misaligned", w, off, TimerWindow)
		}
		return true
	}
	return false
}

// Read32 reads a register. Reading TMR_CNT_L latches TMR_CNT_H, so the
// pair read low first is one instant (ptp_qoriq reads it so).
func (t *Timer) Read32(off uint32) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bad(off, 4) {
		return ^uint32(0)
	}
	t.sync()
	switch off {
	case TmrCTRL:
		return t.ctrl
	case TmrTEVENT:
		return t.tevent
	case TmrTEMASK:
		return t.temask
	case TmrMSIVEC:
		return t.msivec
	case TmrCNTL:
		t.cntHiR = uint32(t.cnt >> 32)
		return uint32(t.cnt)
	case TmrCNTH:
		return t.cntHiR
	case TmrADD:
		return t.add
	case TmrACC:
		return t.acc
	case TmrPRSC:
		return t.prsc
	case TmrECTRL:
		return t.ectrl
	case TmrOFFH:
		return uint32(t.off >> 32)
	case TmrOFFL:
		return uint32(t.off)
	case TmrALARM1H, TmrALARM2H:
		return uint32(t.alarm[(off-TmrALARM1H)/8] >> 32)
	case TmrALARM1L, TmrALARM2L:
		return uint32(t.alarm[(off-TmrALARM1H)/8])
	case TmrFIPER1, TmrFIPER1 + 4, TmrFIPER1 + 8:
		return t.fiper[(off-TmrFIPER1)/4]
	}
	return 0
}

// Write32 writes a register. TMR_CNT, TMR_OFF and the alarms take effect
// when their high word is written, after the low word (the order
// ptp_qoriq writes them in); TMR_TEVENT is write-1-to-clear.
func (t *Timer) Write32(off uint32, v uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bad(off, 4) {
		return
	}
	t.sync()
	switch off {
	case TmrCTRL:
		t.ctrl = v
	case TmrTEVENT:
		t.tevent &^= v
	case TmrTEMASK:
		t.temask = v
	case TmrMSIVEC:
		t.msivec = v
	case TmrCNTL:
		t.cntLoW = v
	case TmrCNTH:
		t.cnt = uint64(v)<<32 | uint64(t.cntLoW)
		t.rearm()
	case TmrADD:
		t.add = v
	case TmrACC:
		t.acc = v
	case TmrPRSC:
		t.prsc = v
	case TmrECTRL:
		t.ectrl = v
	case TmrOFFL:
		t.offLoW = v
	case TmrOFFH:
		t.off = uint64(v)<<32 | uint64(t.offLoW)
		t.rearm()
	case TmrALARM1L, TmrALARM2L:
		t.alarmLo[(off-TmrALARM1H)/8] = v
	case TmrALARM1H, TmrALARM2H:
		i := (off - TmrALARM1H) / 8
		t.alarm[i] = uint64(v)<<32 | uint64(t.alarmLo[i])
		t.armed[i] = true
	case TmrFIPER1, TmrFIPER1 + 4, TmrFIPER1 + 8:
		ch := (off - TmrFIPER1) / 4
		t.fiper[ch] = v
		// A FIPER written waits for the next alarm 1 to start again.
		t.running[ch] = false
	}
}

// rearm stops the FIPERs after a time jump: they start again at the next
// alarm 1, which Linux writes right after every settime and adjtime.
func (t *Timer) rearm() {
	t.running = [3]bool{}
}

// Read64 reads two 32-bit registers, low word first.
func (t *Timer) Read64(off uint32) uint64 {
	lo := t.Read32(off)
	return uint64(t.Read32(off+4))<<32 | uint64(lo)
}

// AttachTimer makes t the chip's 1588 timer: the one its ports timestamp
// with. A chip has one; attaching a second is an error.
func (c *Chip) AttachTimer(t *Timer) error {
	if !c.timer.CompareAndSwap(nil, t) {
		return fmt.Errorf("the chip has a 1588 timer already")
	}
	return nil
}

// DetachTimer removes t as the chip's timer (if it is).
func (c *Chip) DetachTimer(t *Timer) { c.timer.CompareAndSwap(t, nil) }

// Timer is the chip's 1588 timer, or nil while none is attached.
func (c *Chip) Timer() *Timer { return c.timer.Load() }

package model

import (
	"sync"
	"time"

	"github.com/gopmd/gopmd/internal/simtime"
)

// The ENET 1588 timer (docs/hardware-fec.md §12): a free-running
// nanosecond counter that adds ATINC.INC on every cycle of its clock
// ("ptp" in the device tree) and ATINC.INC_CORR instead on every ATCOR-th
// cycle, wraps at ATPER, is read by setting ATCR.CAPTURE and then reading
// ATVR, and is written through ATVR. Four compare channels (TCSRn/TCCRn)
// flag, and pulse, when the counter reaches their compare value.
const (
	regATVR   = regATCR + 0x04
	regATOFF  = regATCR + 0x08
	regATPER  = regATCR + 0x0C
	regATCOR  = regATCR + 0x10
	regATINC  = regATCR + 0x14
	regATSTMP = regATCR + 0x18

	atcrEN      = 1 << 0
	atcrOFFEN   = 1 << 2
	atcrOFFRST  = 1 << 3
	atcrPEREN   = 1 << 4
	atcrPINPER  = 1 << 7
	atcrRESTART = 1 << 9
	atcrCAPTURE = 1 << 11
	atcrSLAVE   = 1 << 13

	atincINC      = 0x7f
	atincCORRSh   = 8
	tcsrTDRE      = 1 << 0
	tcsrTMODESh   = 2
	tcsrTMODEMask = 0xf << tcsrTMODESh
	tcsrTIE       = 1 << 6
	tcsrTF        = 1 << 7

	// tmodeCompareBit: TMODE values 01xx and 11xx are output compare
	// (0100 software only, 0101 toggle, 1110/1111 pulse low/high).
	tmodeCompareBit = 0x4

	// DefaultPTPClockHz is the timer clock a model runs on unless told
	// otherwise: 100 MHz, what the i.MX8MP's, i.MX8MN's and i.MX93's
	// device trees assign to their ENET_TIMER clock (§12.3).
	DefaultPTPClockHz = 100_000_000
)

// PTPPulse is one compare event of a timer channel.
type PTPPulse struct {
	Channel   int    // 0..3
	Counter   uint32 // the counter value compared (TCCR)
	Mode      uint32 // TMODE at the event
	ModelTime int64  // model time of the event, ns
}

// ptpChannel is one compare channel.
type ptpChannel struct {
	tcsr    uint32
	armed   bool
	compare uint32 // the compare value in effect
	pending bool   // a second TCCR value waits behind it
	next    uint32
}

// ptpTimer is the ENET's 1588 timer state. It has its own lock: the
// driver's clock reads it from any goroutine.
type ptpTimer struct {
	tl  *simtime.Timeline
	osc simtime.Oscillator

	mu      sync.Mutex
	cycles  uint64 // oscillator cycles accounted for
	corrCyc uint32 // cycles since the last correction cycle
	atcr    uint32
	atvr    uint32 // the value the last capture latched
	atoff   uint32
	atper   uint32
	atcor   uint32
	atinc   uint32
	cnt     uint32
	ch      [4]ptpChannel
	tgsr    uint32
	pulses  []PTPPulse
}

func (p *ptpTimer) init(tl *simtime.Timeline, osc simtime.Oscillator) {
	if tl == nil {
		tl = simtime.NewWall()
	}
	if osc.NominalHz == 0 {
		osc.NominalHz = DefaultPTPClockHz
	}
	p.tl, p.osc = tl, osc
	p.cycles = osc.Cycles(tl.Now())
}

// reset is ECR.RESET's effect on the timer: every register 0, the counter
// stopped.
func (p *ptpTimer) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sync()
	p.corrCyc, p.atcr, p.atvr, p.atoff, p.atper, p.atcor, p.atinc, p.cnt, p.tgsr = 0, 0, 0, 0, 0, 0, 0, 0, 0
	p.ch = [4]ptpChannel{}
}

// wrap is the counter's modulus: ATPER, or 2^32 while ATPER is 0.
func (p *ptpTimer) wrap() uint64 {
	if p.atper == 0 {
		return 1 << 32
	}
	return uint64(p.atper)
}

// sync counts the cycles since the last update into the counter and fires
// the compares the counter passed. Callers hold mu.
func (p *ptpTimer) sync() {
	now := p.osc.Cycles(p.tl.Now())
	if now <= p.cycles {
		return
	}
	n := now - p.cycles
	start := p.cycles
	p.cycles = now
	if p.atcr&atcrEN == 0 {
		return
	}
	inc := uint64(p.atinc & atincINC)
	corr := uint64(p.atinc>>atincCORRSh) & atincINC
	var k uint64 // correction cycles among the n
	if p.atcor != 0 {
		total := uint64(p.corrCyc) + n
		k = total / uint64(p.atcor)
		p.corrCyc = uint32(total % uint64(p.atcor))
	}
	delta := inc*(n-k) + corr*k
	if delta == 0 {
		return
	}
	old := uint64(p.cnt)
	w := p.wrap()
	p.cnt = uint32((old + delta%w) % w)
	for i := range p.ch {
		c := &p.ch[i]
		mode := (c.tcsr & tcsrTMODEMask) >> tcsrTMODESh
		if !c.armed || mode&tmodeCompareBit == 0 {
			continue
		}
		// Distance from the old counter to the compare value, forward.
		d := (uint64(c.compare) + w - old) % w
		if d == 0 || d > delta {
			continue
		}
		at := start + (d*n+delta-1)/delta
		c.tcsr |= tcsrTF
		p.tgsr |= 1 << i
		p.pulses = append(p.pulses, PTPPulse{Channel: i, Counter: c.compare, Mode: mode, ModelTime: p.osc.TimeOf(at)})
		if len(p.pulses) > maxPTPPulses {
			p.pulses = p.pulses[1:]
		}
		c.armed = c.pending
		c.compare, c.pending = c.next, false
	}
}

const maxPTPPulses = 4096

// stamp is the counter now: what the MAC writes into a BD's ts word for
// a frame crossing it at this model time (docs/hardware-fec.md §12.5).
// (inferred) the stamp is the counter itself, ATOFF and the compares
// playing no part: Linux turns it into time with the same timecounter it
// reads the counter through.
func (p *ptpTimer) stamp() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sync()
	return p.cnt
}

// read returns a timer register. Callers do not hold mu.
func (p *ptpTimer) read(off uint32) (uint32, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sync()
	switch off {
	case regATCR:
		return p.atcr, true
	case regATVR:
		return p.atvr, true
	case regATOFF:
		return p.atoff, true
	case regATPER:
		return p.atper, true
	case regATCOR:
		return p.atcor, true
	case regATINC:
		return p.atinc, true
	case regATSTMP:
		return 0, true
	case regTGSR:
		return p.tgsr, true
	}
	if off >= regTCSR0 && off < regTCSR0+32 {
		c := &p.ch[(off-regTCSR0)/8]
		if (off-regTCSR0)%8 == 0 {
			return c.tcsr, true
		}
		return c.compare, true
	}
	return 0, false
}

// write performs a timer register write; false if off is not the timer's.
func (p *ptpTimer) write(off, v uint32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sync()
	switch off {
	case regATCR:
		if v&atcrRESTART != 0 {
			p.cnt = 0 // RESTART and CAPTURE act once and read back 0
		}
		if v&atcrCAPTURE != 0 {
			p.atvr = p.cnt
		}
		p.atcr = v &^ (atcrRESTART | atcrCAPTURE)
	case regATVR:
		p.cnt = v
	case regATOFF:
		p.atoff = v
	case regATPER:
		p.atper = v
	case regATCOR:
		p.atcor = v
		p.corrCyc = 0
	case regATINC:
		p.atinc = v & (atincINC | atincINC<<atincCORRSh)
	case regTGSR:
		p.tgsr &^= v & 0xf
	default:
		if off < regTCSR0 || off >= regTCSR0+32 {
			return false
		}
		c := &p.ch[(off-regTCSR0)/8]
		if (off-regTCSR0)%8 == 0 {
			// TF is write-1-to-clear; the rest is read-write.
			tf := c.tcsr & tcsrTF &^ v
			c.tcsr = v&^tcsrTF | tf
			if v&tcsrTMODEMask == 0 {
				c.armed, c.pending = false, false
			}
			return true
		}
		// TCCR is double-buffered: a value written while one is armed
		// waits behind it and takes over when it fires (Linux writes the
		// first two compares of a pulse train back to back).
		if c.armed {
			c.next, c.pending = v, true
		} else {
			c.compare, c.armed = v, true
		}
	}
	return true
}

// PTPPulses returns the compare events of the 1588 timer's channels so
// far (oldest first) and forgets them.
func (d *Device) PTPPulses() []PTPPulse {
	d.ptp.mu.Lock()
	defer d.ptp.mu.Unlock()
	d.ptp.sync()
	p := d.ptp.pulses
	d.ptp.pulses = nil
	return p
}

// PTPCounter is the 1588 timer's counter now (what a capture would latch).
func (d *Device) PTPCounter() uint32 {
	d.ptp.mu.Lock()
	defer d.ptp.mu.Unlock()
	d.ptp.sync()
	return d.ptp.cnt
}

// AdvanceTime moves the model's timeline forward by dt and brings the
// 1588 timer up to date.
func (d *Device) AdvanceTime(dt time.Duration) {
	d.ptp.tl.Advance(dt)
	d.ptp.mu.Lock()
	d.ptp.sync()
	d.ptp.mu.Unlock()
}

// Timeline is the model time the 1588 timer's clock runs on.
func (d *Device) Timeline() *simtime.Timeline { return d.ptp.tl }

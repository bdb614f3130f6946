package fec

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// The ENET 1588 timer (docs/hardware-fec.md §12). The counter is read by
// setting ATCR.CAPTURE and reading ATVR, written through ATVR, adds
// ATINC.INC ns per cycle of the timer clock and ATINC.INC_CORR instead on
// every ATCOR-th cycle, and wraps at ATPER: 2^31 ns here, as Linux sets it,
// so the driver extends it to 64 bits in software (as Linux's timecounter
// does) and must read it at least once per wrap (2.1 s): a keeper
// goroutine does, every ptpKeepEvery, from the first Clock call to Close.
const (
	atcrEN      = 1 << 0
	atcrPEREN   = 1 << 4
	atcrPERRST  = 1 << 5 // with PEREN: Linux's FEC_T_CTRL_PERIOD_RST (0x30)
	atcrPINPER  = 1 << 7
	atcrCAPTURE = 1 << 11

	atincINCMask = 0x7f
	atincCORRSh  = 8

	tcsrTMODESh    = 2
	tcsrTF         = 1 << 7
	tmodeHighPulse = 0xf // output compare, a high pulse (Linux FEC_HIGH_PULSE)

	ptpChannels   = 4
	ptpCounterBit = 31                     // counter width: ATPER = 2^31
	ptpMask       = 1<<ptpCounterBit - 1   // counter mask
	ptpKeepEvery  = 200 * time.Millisecond // keeper period: well inside a wrap
	ptpMaxAdjPPB  = 100_000_000            // ±10%: the driver's own bound
	ptpMinPerOut  = 500 * time.Millisecond // two compares ahead outlast a keeper period
	ptpMaxPerOut  = time.Duration(1) << 30 // two compares ahead fit in one wrap
	ptpWindow     = (1 << ptpCounterBit) - int64(100*time.Millisecond)
	ptpMinAhead   = int64(time.Millisecond) // a compare written later than this is skipped
	ptpCaptureGap = time.Microsecond        // FEC_QUIRK_BUG_CAPTURE: ATVR valid 1 µs after CAPTURE
)

// ptpClockHz are the timer clock rates the device trees assign to the
// ENET's "ptp" clock (ENET_TIMER): 100 MHz on these parts (§12.3). Other
// parts take ptp-clock=HZ.
var ptpClockHz = map[string]uint64{
	"fsl,imx8mp-fec": 100_000_000,
	"fsl,imx8mn-fec": 100_000_000,
	"fsl,imx93-fec":  100_000_000,
}

// parsePTPOptions reads ptp-clock=HZ, the timer clock's rate.
func (p *Port) parsePTPOptions(get func(string) (string, bool)) error {
	v, ok := get("ptp-clock")
	if !ok {
		return nil
	}
	hz, err := strconv.ParseUint(v, 10, 64)
	if err != nil || hz == 0 || 1_000_000_000%hz != 0 || 1_000_000_000/hz > atincINCMask {
		return driver.BadOption("ptp-clock", v, "not a timer clock rate the counter can count whole nanoseconds of",
			"a rate in Hz that divides 1 GHz into at most 127 ns per cycle (ATINC.INC is 7 bits), such as 100000000, 125000000, 50000000 or 25000000")
	}
	p.ptpHz = hz
	return nil
}

// perOut is one compare channel's pulse train.
type perOut struct {
	period  int64   // ns; 0: off
	start   int64   // the train's phase origin (clock ns)
	next    int64   // the next pulse not yet written to TCCR
	written []int64 // pulses written to TCCR that have not happened (≤ 2)
	on      bool    // TCSR holds the pulse mode
	buf     [2]int64
}

// ptpClock is a port's 1588 timer as a driver.Clock.
type ptpClock struct {
	p   *Port
	hz  uint64
	inc uint32 // ns per timer clock cycle (ATINC.INC)

	mu      sync.Mutex
	closed  bool
	base    int64  // clock ns at the last read
	last    uint32 // the counter at the last read
	atinc   uint32 // ATINC and ATCOR as programmed (restored after a reset)
	atcor   uint32
	ppb     float64
	out     [ptpChannels]perOut
	pinper  bool
	saved   int64
	savedAt time.Time
	tc      stampBase // base and last for the timestamp paths, without mu
	stop    chan struct{}
	done    chan struct{}
}

// Clock returns the port's 1588 timer. The first call sets the timer up:
// ATINC to the ns per timer clock cycle (from ptp-clock= or the part's
// known rate), ATPER to 2^31, the counter to the host's CLOCK_REALTIME.
// The port owns the clock: Close on it does nothing, the port's Close
// ends it. A MAC reset (Start) keeps the time, to within the reset's
// duration, as Linux's restore does.
func (p *Port) Clock() (driver.Clock, error) {
	p.ptpMu.Lock()
	defer p.ptpMu.Unlock()
	if p.shut.Load() || p.ptpGone {
		return nil, p.errClosed()
	}
	if p.ptp != nil {
		return p.ptp, nil
	}
	if !p.prof.has(qBufDescEx) {
		return nil, fmt.Errorf("%w: %s has no 1588 timer", driver.ErrNoClock, p.prof.compatible)
	}
	hz := p.ptpHz
	if hz == 0 {
		for _, c := range p.dev.Compatible {
			if h, ok := ptpClockHz[c]; ok {
				hz = h
				break
			}
		}
	}
	if hz == 0 {
		return nil, fmt.Errorf("the rate of %s's 1588 timer clock is not known: give ptp-clock=HZ (the rate of the node's \"ptp\" clock, as /sys/kernel/debug/clk/<clock>/clk_rate shows it)", p.prof.compatible)
	}
	c := &ptpClock{p: p, hz: hz, inc: uint32(1_000_000_000 / hz), stop: make(chan struct{}), done: make(chan struct{})}
	c.atinc = c.inc | c.inc<<atincCORRSh
	c.mu.Lock()
	c.program(time.Now().UnixNano())
	c.mu.Unlock()
	if err := p.regs.Err(); err != nil {
		return nil, fmt.Errorf("1588 timer: %w", err)
	}
	p.ptp = c
	go c.keep()
	return c, nil
}

// program sets the timer up and sets it to ns: ATINC, ATCOR, ATPER, then
// ATCR.EN with the period reset (Linux's start_cyclecounter), then ATVR.
// Callers hold mu.
func (c *ptpClock) program(ns int64) {
	r := c.p.regs
	r.Write32(regATINC, c.atinc)
	r.Write32(regATCOR, c.atcor)
	r.Write32(regATPER, 1<<ptpCounterBit)
	atcr := uint32(atcrEN | atcrPEREN | atcrPERRST)
	if c.pinper {
		atcr |= atcrPINPER
	}
	r.Write32(regATCR, atcr)
	c.setCounter(ns)
}

// setCounter writes the counter and takes ns as the extended time there.
// Callers hold mu.
func (c *ptpClock) setCounter(ns int64) {
	raw := uint32(ns) & ptpMask
	c.p.regs.Write32(regATVR, raw)
	c.base, c.last = ns, raw
	c.tc.publish(c.base, c.last)
}

// capture latches the counter into ATVR and reads it.
func (c *ptpClock) capture() uint32 {
	r := c.p.regs
	r.Write32(regATCR, r.Read32(regATCR)|atcrCAPTURE)
	if c.p.prof.has(qENETMAC) {
		for t := time.Now(); time.Since(t) < ptpCaptureGap; {
		}
	}
	return r.Read32(regATVR) & ptpMask
}

// now extends the counter to the clock's time. Callers hold mu.
func (c *ptpClock) now() int64 {
	raw := c.capture()
	c.base += int64((raw - c.last) & ptpMask)
	c.last = raw
	c.tc.publish(c.base, c.last)
	return c.base
}

// raw is the counter value at clock time ns. Callers hold mu.
func (c *ptpClock) raw(ns int64) uint32 { return uint32(ns-c.base+int64(c.last)) & ptpMask }

func (c *ptpClock) check() error {
	if c.closed {
		return c.p.errClosed()
	}
	return nil
}

// Name is the port's name.
func (c *ptpClock) Name() string { return c.p.name }

// Now reads the clock.
func (c *ptpClock) Now() (driver.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(); err != nil {
		return 0, err
	}
	n := c.now()
	c.service(n)
	return driver.Time(n), nil
}

// Set writes the counter (ATVR) and takes t as the time there; the pulse
// trains keep their phase.
func (c *ptpClock) Set(t driver.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(); err != nil {
		return err
	}
	c.setCounter(int64(t))
	c.restartOutputs(int64(t))
	return nil
}

// Step moves the clock in software, as Linux's timecounter_adjtime: the
// counter runs on undisturbed; the pulse trains are rewritten for the new
// time.
func (c *ptpClock) Step(d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(); err != nil {
		return err
	}
	n := c.now()
	c.base += int64(d)
	c.tc.publish(c.base, c.last)
	c.restartOutputs(n + int64(d))
	return nil
}

// AdjFreq programs the correction: every ATCOR-th cycle adds INC ± k ns
// instead of INC, k the smallest step whose period still reaches the
// requested rate (the search Linux's fec_ptp_adjfine makes); 0 turns the
// correction off.
func (c *ptpClock) AdjFreq(ppb float64) error {
	if math.IsNaN(ppb) || math.Abs(ppb) > ptpMaxAdjPPB {
		return fmt.Errorf("frequency adjustment %g ppb beyond the timer's ±%d ppb", ppb, ptpMaxAdjPPB)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(); err != nil {
		return err
	}
	c.now() // account the time so far at the old rate
	inc := uint64(c.inc)
	a := math.Abs(ppb)
	atinc, atcor := uint32(inc|inc<<atincCORRSh), uint32(0)
	if a >= 0.5 {
		k, period := inc, uint64(1)
		for i := uint64(1); i <= inc; i++ {
			if float64(i)*1e9 >= a*float64(inc) {
				k, period = i, uint64(math.Round(float64(i)*1e9/(a*float64(inc))))
				break
			}
		}
		corr := inc + k
		if ppb < 0 {
			corr = inc - k
		}
		if period > math.MaxUint32 {
			period = 0
		}
		atinc, atcor = uint32(inc|corr<<atincCORRSh), uint32(period)
	}
	c.atinc, c.atcor, c.ppb = atinc, atcor, ppb
	c.p.regs.Write32(regATINC, atinc)
	c.p.regs.Write32(regATCOR, atcor)
	return nil
}

// Freq is the correction ATINC and ATCOR hold, in ppb.
func (c *ptpClock) Freq() (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(); err != nil {
		return 0, err
	}
	atinc := c.p.regs.Read32(regATINC)
	atcor := c.p.regs.Read32(regATCOR)
	inc := float64(atinc & atincINCMask)
	corr := float64((atinc >> atincCORRSh) & atincINCMask)
	if atcor == 0 || inc == 0 {
		return 0, nil
	}
	return (corr - inc) / (float64(atcor) * inc) * 1e9, nil
}

// MaxAdj is ±10%: the correction can go further, but coarsely.
func (c *ptpClock) MaxAdj() float64 { return ptpMaxAdjPPB }

// Close does nothing: the port owns its clock.
func (c *ptpClock) Close() error { return nil }

// PerOutChannels is 4: the timer's compare channels.
func (c *ptpClock) PerOutChannels() int { return ptpChannels }

// SetPerOut makes compare channel ch pulse (TMODE high pulse) at start and
// every period after. The hardware holds two compares at a time; the driver
// writes the next ones as those pass, at every clock call and from its
// keeper, so the period must be from 500 ms to 2^30 ns (about 1.07 s):
// one pulse per second (PPS) is what Linux offers on this timer. Start 0
// means the next whole second at least one second away.
func (c *ptpClock) SetPerOut(ch int, start driver.Time, period time.Duration) error {
	if ch < 0 || ch >= ptpChannels {
		return fmt.Errorf("no periodic output %d (the timer has compare channels 0-3)", ch)
	}
	if period != 0 && (period < ptpMinPerOut || period > ptpMaxPerOut || int64(period)%int64(c.inc) != 0) {
		return fmt.Errorf("periodic output %d: period %v is not a multiple of the %dns counter step from %v to %v", ch, period, c.inc, ptpMinPerOut, ptpMaxPerOut)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(); err != nil {
		return err
	}
	r := c.p.regs
	tcsr := uint32(regTCSR0 + 8*ch)
	r.Write32(tcsr, tcsrTF) // mode off, flag cleared
	o := &c.out[ch]
	*o = perOut{}
	o.written = o.buf[:0]
	if period == 0 {
		return r.Err()
	}
	n := c.now()
	s := int64(start)
	if s == 0 {
		s = (n/1e9 + 2) * 1e9
	} else if s <= n+ptpMinAhead {
		return fmt.Errorf("periodic output %d: start %v is not in the future", ch, start)
	}
	o.period, o.start, o.next = int64(period), s, s
	if !c.pinper {
		c.pinper = true
		r.Write32(regATCR, (r.Read32(regATCR)&^atcrCAPTURE)|atcrPINPER)
	}
	c.service(n)
	return r.Err()
}

// restartOutputs rewrites every pulse train after a jump of the clock to
// now: the compares written are void; the next pulse is the train's next
// one after now. Callers hold mu.
func (c *ptpClock) restartOutputs(now int64) {
	for ch := range c.out {
		o := &c.out[ch]
		if o.period == 0 {
			continue
		}
		c.p.regs.Write32(uint32(regTCSR0+8*ch), tcsrTF)
		o.written, o.on = o.buf[:0], false
		if now+ptpMinAhead >= o.start {
			k := (now+ptpMinAhead-o.start)/o.period + 1
			o.next = o.start + k*o.period
		} else {
			o.next = o.start
		}
	}
	c.service(now)
}

// service keeps each pulse train's next two compares written: it drops the
// ones that have passed (the hardware fired them and moved its second
// compare up), clears the channel's flag, and writes the next pulses that
// lie within the counter's window. Callers hold mu.
func (c *ptpClock) service(now int64) {
	r := c.p.regs
	for ch := range c.out {
		o := &c.out[ch]
		if o.period == 0 {
			continue
		}
		tcsr := uint32(regTCSR0 + 8*ch)
		if v := r.Read32(tcsr); v&tcsrTF != 0 {
			r.Write32(tcsr, v) // TF is write-1-to-clear; the mode stays
		}
		k := 0
		for _, w := range o.written {
			if w > now {
				o.written[k] = w
				k++
			}
		}
		o.written = o.written[:k]
		for len(o.written) < 2 && o.next-now < ptpWindow {
			if o.next <= now+ptpMinAhead {
				o.next += o.period // too late to write: this pulse is lost
				continue
			}
			r.Write32(tcsr+4, c.raw(o.next))
			if !o.on {
				// The first compare is in TCCR: now the mode (Linux's order).
				r.Write32(tcsr, tmodeHighPulse<<tcsrTMODESh)
				o.on = true
			}
			o.written = append(o.written, o.next)
			o.next += o.period
		}
	}
}

// keep reads the counter every ptpKeepEvery so no wrap goes unseen, and
// services the pulse trains, until the port closes.
func (c *ptpClock) keep() {
	defer close(c.done)
	t := time.NewTicker(ptpKeepEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.mu.Lock()
			if !c.closed {
				c.service(c.now())
			}
			c.mu.Unlock()
		}
	}
}

// save notes the time before a MAC reset wipes the timer. Callers hold
// the port's ctl.
func (c *ptpClock) save() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.saved, c.savedAt = c.now(), time.Now()
	}
}

// restore sets the timer up again after a MAC reset that wiped it, at
// the saved time plus the host time the reset took (Linux's
// fec_ptp_restore_state).
func (c *ptpClock) restore() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	r := c.p.regs
	if r.Read32(regATCR)&atcrEN != 0 && r.Read32(regATINC) == c.atinc {
		// The reset left the timer running (ECR = 0 on multi-queue parts):
		// its time is still right.
		c.service(c.now())
		return
	}
	n := c.saved + int64(time.Since(c.savedAt))
	c.program(n)
	c.restartOutputs(n)
}

// ptpSave and ptpRestore bracket a MAC reset; no-ops until Clock was
// called.
func (p *Port) ptpSave() {
	if c := p.clockIfOpen(); c != nil {
		c.save()
	}
}

func (p *Port) ptpRestore() {
	if c := p.clockIfOpen(); c != nil {
		c.restore()
	}
}

func (p *Port) clockIfOpen() *ptpClock {
	p.ptpMu.Lock()
	defer p.ptpMu.Unlock()
	return p.ptp
}

// ptpClose ends the clock before the port releases its registers; Clock
// refuses from here on, so no keeper starts on a closing port.
func (p *Port) ptpClose() {
	p.ptpMu.Lock()
	p.ptpGone = true
	c := p.ptp
	p.ptpMu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	close(c.stop)
	<-c.done
}

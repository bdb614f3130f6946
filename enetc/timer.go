package enetc

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"strconv"
	"sync"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
)

// The LS1028A's 1588 timer: PCI function 1957:ee02 (0000:00:00.4), the
// QorIQ timer's registers in BAR0 with the control block at 0x80
// (docs/hardware-enetc.md §12).
const (
	TimerDeviceID = 0xee02

	tmrCTRL    = 0x80
	tmrTEVENT  = 0x84
	tmrTEMASK  = 0x88
	tmrCNTH    = 0x98
	tmrCNTL    = 0x9c
	tmrADD     = 0xa0
	tmrPRSC    = 0xa8
	tmrOFFH    = 0xb0
	tmrOFFL    = 0xb4
	tmrALARM1H = 0xb8
	tmrALARM1L = 0xbc
	tmrFIPER1  = 0xd0 // FIPERn at tmrFIPER1 + 4(n-1)

	tmrCtrlCKSEL    = 0 // CKSEL field shift: 1 selects the platform reference clock
	tmrCtrlTE       = 1 << 2
	tmrCtrlFRD      = 1 << 14
	tmrCtrlTclkSh   = 16
	tmrCtrlTclkMask = 0x3ff
	tmrCtrlFS       = 1 << 28

	timerFIPERs = 3

	// defaultTimerRefHz is the timer's reference clock on the LS1028A as
	// Linux's first enetc_ptp.c states it (400 MHz, nominal 200 MHz,
	// TMR_ADD 0x80000000, §12.3); ref-clock= overrides it.
	defaultTimerRefHz = 400_000_000
	defaultTmrPrsc    = 2
	defaultCKSEL      = 1
)

// timerOptions are the spec options of the ENETC timer.
var timerOptions = []string{"ref-clock"}

func init() {
	driver.RegisterClockDriver(driver.ClockDriver{
		Name:    "enetc-timer",
		Options: timerOptions,
		Match: func(d *driver.Device) bool {
			return d.Bus == "pci" && d.VendorID == pciVendorFreescale && d.DeviceID == TimerDeviceID
		},
		New: func(d *driver.Device) (driver.Clock, error) { return NewTimer(d) },
	})
}

// Timer drives the ENETC 1588 timer function as a driver.Clock with three
// periodic outputs (FIPER1-3). Every method takes the timer's lock: a few
// register accesses, no allocation.
type Timer struct {
	name string
	dev  *driver.Device
	r    driver.Regs

	mu     sync.Mutex
	closed bool
	tclk   uint32 // ns per nominal tick (TMR_CTRL[TCLK_PERIOD])
	addNom uint32 // TMR_ADD at the nominal rate
	maxAdj float64
	ctrl   uint32
	fiper  [timerFIPERs]uint32 // FIPER values in effect (0: off)
	refHz  uint64
}

// timerSettings is what the timer is programmed with: from the device
// tree's fsl,* properties when the node has them, else computed from the
// reference clock as Linux's ptp_qoriq_auto_config does (§12.3).
type timerSettings struct {
	refHz  uint64
	tclk   uint32
	add    uint32
	prsc   uint32
	cksel  uint32
	maxAdj float64
}

// NewTimer brings the timer up: TMR_CTRL, TMR_ADD and TMR_PRSC as the
// settings give them, the FIPERs off. A timer already running with the
// same tick keeps its time (another process set it, and the hardware
// keeps counting across a Close); a stopped one starts at the host's
// CLOCK_REALTIME, as Linux's probe does.
func NewTimer(d *driver.Device) (*Timer, error) {
	if len(d.Regions) == 0 || d.Regions[0] == nil {
		return nil, errors.New("BAR0 is not mapped")
	}
	t := &Timer{name: d.Spec.Raw, dev: d, r: d.Regions[0]}
	s, err := t.settings()
	if err != nil {
		return nil, err
	}
	t.tclk, t.addNom, t.maxAdj, t.refHz = s.tclk, s.add, s.maxAdj, s.refHz
	r := t.r
	old := r.Read32(tmrCTRL)
	running := old&tmrCtrlTE != 0 && (old>>tmrCtrlTclkSh)&tmrCtrlTclkMask == s.tclk
	t.ctrl = s.tclk<<tmrCtrlTclkSh | s.cksel<<tmrCtrlCKSEL | tmrCtrlFRD | tmrCtrlFS
	if !running {
		r.Write32(tmrCTRL, t.ctrl)
	}
	r.Write32(tmrADD, s.add)
	r.Write32(tmrPRSC, s.prsc)
	for i := 0; i < timerFIPERs; i++ {
		r.Write32(tmrFIPER1+4*uint32(i), 0)
	}
	if !running {
		t.writeTime(hostNow())
	}
	r.Write32(tmrCTRL, t.ctrl|tmrCtrlTE)
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("start the timer: %w", err)
	}
	return t, nil
}

// hostNow is the host's CLOCK_REALTIME in ns.
func hostNow() uint64 { return uint64(time.Now().UnixNano()) }

func (t *Timer) settings() (timerSettings, error) {
	s := timerSettings{prsc: defaultTmrPrsc, cksel: defaultCKSEL}
	if v := t.dev.Spec.Options.Get("ref-clock"); v != "" {
		hz, err := strconv.ParseUint(v, 10, 64)
		if err != nil || hz <= 100_000_000 || hz > 1_000_000_000 {
			return s, driver.BadOption("ref-clock", v, "not a timer reference clock rate",
				"the rate in Hz of the clock the device tree gives the timer (clocks = <&clockgen ...>), above 100 MHz and at most 1 GHz; default 400000000")
		}
		return autoConfig(hz), nil
	}
	if node := t.dev.Node; node.Exists() {
		if ds, ok, err := dtSettings(node); err != nil {
			return s, fmt.Errorf("timer settings from the device tree: %w", err)
		} else if ok {
			return ds, nil
		}
	}
	return autoConfig(defaultTimerRefHz), nil
}

// autoConfig computes the settings from the reference clock rate as
// ptp_qoriq_auto_config does: the nominal rate is the largest divisor of
// 1000 MHz in whole 100 MHz steps below the reference, TCLK_PERIOD its
// period, TMR_ADD = ceil(2^32 * nominal / reference).
func autoConfig(refHz uint64) timerSettings {
	mhz := refHz / 1_000_000
	if r := mhz % 100; r != 0 {
		mhz += 100 - r
	}
	for {
		mhz -= 100
		if mhz == 0 || 1000%mhz == 0 {
			break
		}
	}
	if mhz == 0 {
		mhz = 100
	}
	nominal := mhz * 1_000_000
	hi, lo := bits.Mul64(1<<32, nominal)
	add, rem := bits.Div64(hi, lo, refHz)
	if rem != 0 {
		add++
	}
	return timerSettings{
		refHz:  refHz,
		tclk:   uint32(1_000_000_000 / nominal),
		add:    uint32(add),
		prsc:   defaultTmrPrsc,
		cksel:  defaultCKSEL,
		maxAdj: float64(1_000_000_000*(refHz-nominal)/nominal) - 1,
	}
}

// dtSettings reads the ptp_qoriq binding's fsl,tclk-period, fsl,tmr-add,
// fsl,tmr-prsc (and fsl,cksel, fsl,max-adj) from a device-tree node; ok is
// false when the node does not have the first two.
func dtSettings(node devtree.Node) (timerSettings, bool, error) {
	u32 := func(prop string) (uint32, bool, error) {
		v, err := node.U32(prop)
		if errors.Is(err, fs.ErrNotExist) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("device tree %w", err)
		}
		return v, true, nil
	}
	s := timerSettings{prsc: defaultTmrPrsc, cksel: defaultCKSEL, maxAdj: 512000}
	tclk, ok1, err := u32("fsl,tclk-period")
	if err != nil {
		return s, false, err
	}
	add, ok2, err := u32("fsl,tmr-add")
	if err != nil || !ok1 || !ok2 {
		return s, false, err
	}
	if tclk == 0 || tclk > tmrCtrlTclkMask || add == 0 {
		return s, false, fmt.Errorf("device tree %s: fsl,tclk-period %d or fsl,tmr-add %#x out of range", node, tclk, add)
	}
	s.tclk, s.add = tclk, add
	s.refHz = uint64(math.Round(float64(1_000_000_000/tclk) * float64(uint64(1)<<32) / float64(add)))
	if v, ok, err := u32("fsl,tmr-prsc"); err != nil {
		return s, false, err
	} else if ok {
		s.prsc = v
	}
	if v, ok, err := u32("fsl,cksel"); err != nil {
		return s, false, err
	} else if ok {
		s.cksel = v & 3
	}
	if v, ok, err := u32("fsl,max-adj"); err != nil {
		return s, false, err
	} else if ok {
		s.maxAdj = float64(v)
	}
	return s, true, nil
}

// errClosed is driver.ErrClosed, which the caller puts in the context of
// the timer.
func (t *Timer) errClosed() error { return driver.ErrClosed }

// Name is the spec the timer was opened with.
func (t *Timer) Name() string { return t.name }

// readTime is TMR_CNT + TMR_OFF, each read low word first (the low read
// latches the high word). Callers hold mu.
func (t *Timer) readTime() uint64 {
	cnt := uint64(t.r.Read32(tmrCNTL))
	cnt |= uint64(t.r.Read32(tmrCNTH)) << 32
	off := uint64(t.r.Read32(tmrOFFL))
	off |= uint64(t.r.Read32(tmrOFFH)) << 32
	return cnt + off
}

// writeTime sets the time: TMR_OFF to 0 and TMR_CNT to ns, low words first,
// as ptp_qoriq_settime does. Callers hold mu.
func (t *Timer) writeTime(ns uint64) {
	t.r.Write32(tmrOFFL, 0)
	t.r.Write32(tmrOFFH, 0)
	t.r.Write32(tmrCNTL, uint32(ns))
	t.r.Write32(tmrCNTH, uint32(ns>>32))
}

// Now reads the timer.
func (t *Timer) Now() (driver.Time, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, t.errClosed()
	}
	return driver.Time(t.readTime()), nil
}

// Set sets the timer, then restarts the periodic outputs at the next
// second (ptp_qoriq's set_fipers).
func (t *Timer) Set(v driver.Time) error {
	if v < 0 {
		return fmt.Errorf("time %v is before the epoch: the counter is unsigned", v)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.errClosed()
	}
	t.writeTime(uint64(v))
	t.setFipers(0)
	return nil
}

// Step moves the timer by d through TMR_OFF (the counter keeps running
// undisturbed), then restarts the periodic outputs at the next second, as
// ptp_qoriq_adjtime does.
func (t *Timer) Step(d time.Duration) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.errClosed()
	}
	off := uint64(t.r.Read32(tmrOFFL))
	off |= uint64(t.r.Read32(tmrOFFH)) << 32
	off += uint64(int64(d))
	t.r.Write32(tmrOFFL, uint32(off))
	t.r.Write32(tmrOFFH, uint32(off>>32))
	t.setFipers(0)
	return nil
}

// AdjFreq sets TMR_ADD to the nominal addend scaled by 1 + ppb/1e9,
// rounded to the nearest step (ptp_qoriq_adjfine).
func (t *Timer) AdjFreq(ppb float64) error {
	if math.IsNaN(ppb) || math.Abs(ppb) > t.maxAdj {
		return fmt.Errorf("frequency adjustment %g ppb beyond the timer's ±%g ppb", ppb, t.maxAdj)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.errClosed()
	}
	add := math.Round(float64(t.addNom) * (1 + ppb/1e9))
	if add < 1 || add > math.MaxUint32 {
		return fmt.Errorf("frequency adjustment %g ppb takes TMR_ADD out of its 32 bits", ppb)
	}
	t.r.Write32(tmrADD, uint32(add))
	return nil
}

// Freq is the adjustment TMR_ADD holds, in ppb.
func (t *Timer) Freq() (float64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, t.errClosed()
	}
	add := t.r.Read32(tmrADD)
	return (float64(add)/float64(t.addNom) - 1) * 1e9, nil
}

// MaxAdj is the largest adjustment AdjFreq takes, in ppb.
func (t *Timer) MaxAdj() float64 { return t.maxAdj }

// RefClockHz is the reference clock rate the timer was set up for.
func (t *Timer) RefClockHz() uint64 { return t.refHz }

// TickNS is the timer's resolution: TCLK_PERIOD ns.
func (t *Timer) TickNS() uint32 { return t.tclk }

// PerOutChannels is 3: FIPER1-3.
func (t *Timer) PerOutChannels() int { return timerFIPERs }

// SetPerOut makes FIPER ch+1 pulse every period. The FIPERs start
// together at alarm 1, so all channels share one phase: the first pulse
// is at start (or, start 0, at the next whole second at least half a
// second away) and each channel pulses every own period from there. The
// period must be a multiple of TCLK_PERIOD between two ticks and 2^32
// ns. A Set or Step realigns the channels to the next whole second.
func (t *Timer) SetPerOut(ch int, start driver.Time, period time.Duration) error {
	if ch < 0 || ch >= timerFIPERs {
		return fmt.Errorf("no periodic output %d (the timer has FIPER1-3: channels 0-2)", ch)
	}
	tclk := time.Duration(t.tclk)
	if period != 0 && (period%tclk != 0 || period < 2*tclk || period-tclk > math.MaxUint32) {
		return fmt.Errorf("periodic output %d: period %v is not a multiple of the %v tick between %v and %v",
			ch, period, tclk, 2*tclk, time.Duration(math.MaxUint32)+tclk)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.errClosed()
	}
	if start != 0 && uint64(start) <= t.readTime()+uint64(t.tclk) {
		return fmt.Errorf("periodic output %d: start %v is not in the future", ch, start)
	}
	if period == 0 {
		t.fiper[ch] = 0
	} else {
		t.fiper[ch] = uint32(period - tclk)
	}
	t.setFipers(uint64(start))
	return t.r.Err()
}

// setFipers arms alarm 1 one tick before the first pulse (start, or the
// next whole second at least half a second away) and writes the FIPERs;
// they start at the alarm (TMR_CTRL.FS). Callers hold mu.
func (t *Timer) setFipers(start uint64) {
	if start == 0 {
		start = (t.readTime() + 1_500_000_000) / 1_000_000_000 * 1_000_000_000
	}
	alarm := start - uint64(t.tclk)
	t.r.Write32(tmrALARM1L, uint32(alarm))
	t.r.Write32(tmrALARM1H, uint32(alarm>>32))
	for i, v := range t.fiper {
		t.r.Write32(tmrFIPER1+4*uint32(i), v)
	}
}

// Close releases the device; the timer keeps counting (the next open
// takes its time over). A second Close returns nil.
func (t *Timer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	t.r.Write32(tmrTEMASK, 0)
	if t.dev.Release != nil {
		return t.dev.Release()
	}
	return nil
}

// Clock returns the port's clock: the 1588 timer of its chip, which must
// be open (driver.OpenClock on the timer function, 0000:00:00.4 on the
// LS1028A). The port does not own it: its Close does nothing.
func (p *Port) Clock() (driver.Clock, error) {
	if p.shut.Load() {
		return nil, p.errClosed()
	}
	c, ok := driver.ChipClock(p.dev.Chip)
	if !ok {
		return nil, fmt.Errorf("%w: the chip's 1588 timer is not open; open it first (driver.OpenClock(\"pci:0000:00:00.4\"), or sim:enetc-timerN with this port's chip=)", driver.ErrNoClock)
	}
	return portClock{c}, nil
}

// portClock is a chip's clock lent to a port: Close does nothing.
type portClock struct{ driver.Clock }

func (portClock) Close() error { return nil }

// PerOutChannels is the chip clock's channel count.
func (c portClock) PerOutChannels() int {
	if p, ok := c.Clock.(driver.PeriodicOutput); ok {
		return p.PerOutChannels()
	}
	return 0
}

// SetPerOut passes the request to the chip's clock.
func (c portClock) SetPerOut(ch int, start driver.Time, period time.Duration) error {
	if p, ok := c.Clock.(driver.PeriodicOutput); ok {
		return p.SetPerOut(ch, start, period)
	}
	return errors.New("no periodic outputs")
}

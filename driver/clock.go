package driver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Time is a hardware clock's reading: nanoseconds since the clock's epoch
// (1970-01-01 00:00:00 on the clock's own timescale, TAI for a PTP clock
// that follows a grandmaster). A value, not a pointer: reading a clock
// allocates nothing.
type Time int64

// Sec is the whole seconds of t (rounded towards minus infinity).
func (t Time) Sec() int64 {
	s := int64(t) / 1e9
	if int64(t)%1e9 < 0 {
		s--
	}
	return s
}

// Nsec is the nanoseconds past Sec, in [0, 1e9).
func (t Time) Nsec() int64 { return int64(t) - t.Sec()*1e9 }

// Add is t moved by d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub is the duration t - u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// String formats t as seconds with nine decimals ("1764655200.000000123",
// "-1.250000000"), as phc_ctl prints a clock.
func (t Time) String() string {
	if t < 0 {
		return "-" + (-t).String() // a time before the epoch reads as ParseTime takes it
	}
	s, ns := t.Sec(), t.Nsec()
	return strconv.FormatInt(s, 10) + "." + fmt.Sprintf("%09d", ns)
}

// maxTimeSec is the largest whole second a Time holds.
const maxTimeSec int64 = (1<<63-1)/1_000_000_000 - 1

// ParseTime reads "SEC" or "SEC.FRACTION" (up to nine digits) as a Time.
func ParseTime(s string) (Time, error) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	whole, frac, hasFrac := strings.Cut(body, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || whole == "" || (hasFrac && (frac == "" || len(frac) > 9)) {
		return 0, fmt.Errorf("time %q: give seconds, optionally with up to nine decimals (such as 1764655200.5)", s)
	}
	var ns int64
	if hasFrac {
		n, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("time %q: the fraction is not decimal digits", s)
		}
		ns = n
	}
	if sec > maxTimeSec {
		return 0, fmt.Errorf("time %q: out of range (at most %d s)", s, maxTimeSec)
	}
	t := Time(sec*1e9 + ns)
	if neg {
		t = -t
	}
	return t, nil
}

// Clock is a hardware clock: the 1588 timer a NIC timestamps frames with
// and that Linux exposes as a PTP hardware clock (/dev/ptpN). Its
// operations are Linux's ptp_clock_info ones: Now is gettime, Set
// settime, Step adjtime, AdjFreq adjfine. A Clock is safe for use from
// several goroutines; each call is a few register accesses and allocates
// nothing.
//
// Get one with OpenClock (a clock that is a device of its own, as the
// LS1028A's ENETC timer at 0000:00:00.4) or ClockOf (the clock a port
// timestamps with).
type Clock interface {
	// Name is the spec the clock was opened with, or the port's name.
	Name() string
	// Now reads the clock.
	Now() (Time, error)
	// Set sets the clock to t.
	Set(t Time) error
	// Step moves the clock by d (positive: forward), as adjtime does.
	Step(d time.Duration) error
	// AdjFreq makes the clock run ppb parts per billion faster (negative:
	// slower) than its nominal rate, replacing any earlier adjustment, as
	// adjfine does. An adjustment beyond MaxAdj is an error and changes
	// nothing.
	AdjFreq(ppb float64) error
	// Freq is the adjustment in effect, in ppb, as the hardware holds it
	// (rounded to the hardware's resolution).
	Freq() (float64, error)
	// MaxAdj is the largest |ppb| AdjFreq takes.
	MaxAdj() float64
	// Close releases the clock (a clock from OpenClock) or does nothing
	// (a port's clock: the port owns it). The hardware keeps counting.
	Close() error
}

// PeriodicOutput is implemented by clocks with periodic-output channels
// (Linux PTP_CLK_REQ_PEROUT): the ENETC timer's FIPER1-3, the FEC timer's
// compare channels.
type PeriodicOutput interface {
	// PerOutChannels is how many channels the clock has.
	PerOutChannels() int
	// SetPerOut makes channel ch pulse every period from start on (clock
	// time); period 0 stops it. A start or period the hardware cannot
	// produce is an error naming the channel and what it takes.
	SetPerOut(ch int, start Time, period time.Duration) error
}

// ClockPort is implemented by ports that have a hardware clock; use
// ClockOf rather than asserting it.
type ClockPort interface {
	// Clock returns the port's clock; the port owns it (its Close does
	// nothing).
	Clock() (Clock, error)
}

// ErrNoClock is wrapped when a port has no hardware clock, or when the
// clock it timestamps with is a device that is not open.
var ErrNoClock = errors.New("no hardware clock")

// ClockOf returns the hardware clock port p timestamps with. The FEC's
// timer is part of the port; an ENETC port's clock is its chip's timer,
// a PCI function of its own that must be open (OpenClock) first.
func ClockOf(p Port) (Clock, error) {
	cp, ok := p.(ClockPort)
	if !ok {
		return nil, fmt.Errorf("%w: the %s driver offers none", ErrNoClock, p.Info().Driver)
	}
	return cp.Clock()
}

// ClockDriver claims devices that are clocks and opens them.
type ClockDriver struct {
	Name string
	// Options are the spec options the driver takes.
	Options []string
	Match   func(d *Device) bool
	// New brings the clock up; on error it leaves the device as it found
	// it and OpenClock releases it.
	New func(d *Device) (Clock, error)
}

var (
	clockMu      sync.Mutex
	clockDrivers []ClockDriver
	chipClocks   = map[string]Clock{}
)

// RegisterClockDriver makes a clock driver available to OpenClock.
func RegisterClockDriver(d ClockDriver) {
	clockMu.Lock()
	defer clockMu.Unlock()
	clockDrivers = append(clockDrivers, d)
}

// ClaimsClock reports whether a registered clock driver claims d, and its
// name.
func ClaimsClock(d *Device) (string, bool) {
	clockMu.Lock()
	drvs := append([]ClockDriver(nil), clockDrivers...)
	clockMu.Unlock()
	for _, dr := range drvs {
		if dr.Match(d) {
			return dr.Name, true
		}
	}
	return "", false
}

// OpenClock opens a clock that is a device of its own: the spec names it
// as a port's spec names a port ("pci:0000:00:00.4", "sim:enetc-timer0"),
// reached through the same backends. While it is open it is the clock of
// every port on its chip (Device.Chip): ClockOf finds it.
func OpenClock(spec string) (Clock, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	regMu.Lock()
	b, ok := backends[s.Scheme]
	regMu.Unlock()
	if !ok {
		return nil, &SpecError{Spec: spec, Reason: fmt.Sprintf("scheme %q is not linked into this program (import its backend package: pci for pci/uio/platform, sim for sim)", s.Scheme)}
	}
	backendOpts := b.Options
	if b.OptionsOf != nil {
		backendOpts = b.OptionsOf(s)
	}
	clockMu.Lock()
	drvs := append([]ClockDriver(nil), clockDrivers...)
	clockMu.Unlock()
	// Before the device is touched: options no device could take. Whether
	// it is a clock is known only once it is open; a port's options then
	// get ErrNoClock, not an option error, so a caller can open it as a
	// port instead.
	anyOpts := append([]string{}, genericOptions...)
	for _, d := range drvs {
		anyOpts = append(anyOpts, d.Options...)
	}
	regMu.Lock()
	for _, d := range drivers {
		anyOpts = append(anyOpts, d.Options...)
	}
	regMu.Unlock()
	if err := checkClockOptions(s, backendOpts, anyOpts); err != nil {
		return nil, err
	}
	cfg, err := applyOptions(s, Config{})
	if err != nil {
		return nil, err
	}
	dev, err := b.Open(s, cfg.Defaults())
	if err != nil {
		return nil, inSpec(spec, "", err)
	}
	dev.Spec = s
	release := func() {
		if dev.Release != nil {
			_ = dev.Release()
		}
	}
	for _, d := range drvs {
		if !d.Match(dev) {
			continue
		}
		if err := checkClockOptions(s, backendOpts, append([]string{"unsafe-noiommu"}, d.Options...)); err != nil {
			release()
			return nil, err
		}
		c, err := d.New(dev)
		if err != nil {
			release()
			return nil, inSpec(spec, d.Name, err)
		}
		clockMu.Lock()
		if _, taken := chipClocks[dev.Chip]; taken {
			clockMu.Unlock()
			_ = c.Close()
			return nil, fmt.Errorf("%s: the clock of this chip is open already: close it first", spec)
		}
		chipClocks[dev.Chip] = c
		clockMu.Unlock()
		return &chipClock{Clock: c, chip: dev.Chip}, nil
	}
	release()
	return nil, fmt.Errorf("%s: %w (PCI ID %04x:%04x, compatible %s): not a clock a linked driver knows (the ENETC timer is 1957:ee02)", spec, ErrNoClock, dev.VendorID, dev.DeviceID, strings.Join(dev.Compatible, ", "))
}

// chipClock unregisters an OpenClock clock from its chip at Close.
type chipClock struct {
	Clock
	chip string
	once sync.Once
}

func (c *chipClock) Close() error {
	var err error
	c.once.Do(func() {
		clockMu.Lock()
		delete(chipClocks, c.chip)
		clockMu.Unlock()
		err = c.Clock.Close()
	})
	return err
}

// PerOutChannels is the clock's channel count, 0 if it has none.
func (c *chipClock) PerOutChannels() int {
	if p, ok := c.Clock.(PeriodicOutput); ok {
		return p.PerOutChannels()
	}
	return 0
}

// SetPerOut passes the request to the clock, or says it has no channels.
func (c *chipClock) SetPerOut(ch int, start Time, period time.Duration) error {
	if p, ok := c.Clock.(PeriodicOutput); ok {
		return p.SetPerOut(ch, start, period)
	}
	return errors.New("no periodic outputs")
}

// ChipClock returns the open clock of the chip named chip (Device.Chip),
// and whether one is open. Drivers of ports whose clock is a device of
// its own (ENETC) use it.
func ChipClock(chip string) (Clock, bool) {
	clockMu.Lock()
	defer clockMu.Unlock()
	c, ok := chipClocks[chip]
	return c, ok
}

func checkClockOptions(s Spec, backendOpts, driverOpts []string) error {
	return refuseUnknown(s, "unknown option for a clock", backendOpts, driverOpts)
}

// PPBToScaledPPM converts parts per billion to Linux's adjfine unit,
// parts per million with a 16-bit binary fraction.
func PPBToScaledPPM(ppb float64) int64 { return int64(ppb * 65.536) }

// ScaledPPMToPPB converts Linux's adjfine unit to parts per billion.
func ScaledPPMToPPB(s int64) float64 { return float64(s) / 65.536 }

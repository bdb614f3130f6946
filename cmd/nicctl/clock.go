package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci"
)

func init() {
	register(&command{
		name: "clock", args: "DEV CMD [ARG] [CMD [ARG]...]", min: 2, max: -1,
		summary: "the 1588 hardware clock: get, set, adj, freq, cmp, caps (as phc_ctl)",
		run:     func(e *env, a []string) (any, error) { return clockCmd(e, a[0], a[1:]) },
	})
}

// clockStep is one phc_ctl-style command and what it did.
type clockStep struct {
	Cmd string `json:"cmd"`
	// Time is the clock's time after get or set, in ns.
	Time *int64 `json:"time_ns,omitempty"`
	// Adjust is adj's step in ns.
	Adjust *int64 `json:"adjust_ns,omitempty"`
	// FreqPPB is freq's value: the one asked for, or the one the hardware
	// holds (to its resolution).
	FreqPPB *float64 `json:"freq_ppb,omitempty"`
	// Set says whether freq set the frequency or read it.
	Set bool `json:"set,omitempty"`
	// OffsetNS is cmp's clock minus CLOCK_REALTIME.
	OffsetNS *int64 `json:"offset_ns,omitempty"`
	// Caps is caps' answer.
	Caps *clockCaps `json:"caps,omitempty"`
}

// clockCaps is what caps reports.
type clockCaps struct {
	MaxAdjPPB       float64 `json:"max_adj_ppb"`
	PeriodicOutputs int     `json:"periodic_outputs"`
}

type clockResult struct {
	Dev   string      `json:"dev"`
	Steps []clockStep `json:"steps"`
}

func (r *clockResult) text(w io.Writer) {
	for _, s := range r.Steps {
		switch {
		case s.Cmd == "get":
			fmt.Fprintf(w, "clock time is %s\n", driver.Time(*s.Time))
		case s.Cmd == "set":
			fmt.Fprintf(w, "set clock time to %s\n", driver.Time(*s.Time))
		case s.Cmd == "adj":
			fmt.Fprintf(w, "adjusted clock by %.9f seconds\n", float64(*s.Adjust)/1e9)
		case s.Cmd == "freq" && s.Set:
			fmt.Fprintf(w, "adjusted clock frequency offset to %.6fppb\n", *s.FreqPPB)
		case s.Cmd == "freq":
			fmt.Fprintf(w, "clock frequency offset is %.6fppb\n", *s.FreqPPB)
		case s.Cmd == "cmp":
			fmt.Fprintf(w, "offset from CLOCK_REALTIME is %dns\n", *s.OffsetNS)
		case s.Cmd == "caps":
			fmt.Fprintf(w, "capabilities:\n  %.0f maximum frequency adjustment (ppb)\n  %d programmable periodic signals\n", s.Caps.MaxAdjPPB, s.Caps.PeriodicOutputs)
		}
	}
}

// clockOp is one parsed command.
type clockOp struct {
	cmd    string
	hasArg bool
	t      driver.Time   // set
	d      time.Duration // adj
	ppb    float64       // freq
}

// parseClockOps reads phc_ctl's command language: get; set [SECONDS]
// (default: the system clock); adj SECONDS; freq [PPB] (without PPB: read
// it); cmp; caps.
func parseClockOps(args []string) ([]clockOp, error) {
	var ops []clockOp
	isNum := func(i int) bool {
		if i >= len(args) {
			return false
		}
		_, err := strconv.ParseFloat(args[i], 64)
		return err == nil
	}
	for i := 0; i < len(args); i++ {
		op := clockOp{cmd: args[i]}
		switch args[i] {
		case "get", "cmp", "caps":
		case "set":
			if isNum(i + 1) {
				i++
				t, err := driver.ParseTime(args[i])
				if err != nil {
					return nil, badInput("clock set: %v", err)
				}
				op.t, op.hasArg = t, true
			}
		case "adj":
			if !isNum(i + 1) {
				return nil, badInput("clock adj: give the step in seconds, such as 0.5 or -0.000001")
			}
			i++
			s, _ := strconv.ParseFloat(args[i], 64)
			if math.Abs(s) > 1e9 {
				return nil, badInput("clock adj %s: more than 1e9 seconds", args[i])
			}
			op.d = time.Duration(math.Round(s * 1e9))
		case "freq":
			if isNum(i + 1) {
				i++
				op.ppb, _ = strconv.ParseFloat(args[i], 64)
				op.hasArg = true
			}
		default:
			return nil, badInput("clock: unknown command %q (commands: get, set [SECONDS], adj SECONDS, freq [PPB], cmp, caps)", args[i])
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// openClock opens DEV's clock: a clock device of its own (the ENETC
// timer, pci:0000:00:00.4 or sim:enetc-timerN), or the clock of a port
// (a FEC, or an ENETC port while its chip's timer is open). close
// releases what was opened.
func openClock(e *env, dev string) (c driver.Clock, close func(), err error) {
	sp, err := parseDev(dev)
	if err != nil {
		return nil, nil, err
	}
	if e.sys.Root != "" && e.sys.Root != "/" && sp.Scheme != "sim" {
		return nil, nil, fmt.Errorf("%s: --root names an offline tree, where only sim devices can be driven (drop --root on the board)", dev)
	}
	c, err = driver.OpenClock(dev)
	if err == nil {
		return c, func() { c.Close() }, nil
	}
	var se *driver.SpecError
	if errors.As(err, &se) {
		return nil, nil, &usageError{err.Error()}
	}
	if !errors.Is(err, driver.ErrNoClock) {
		return nil, nil, err
	}
	p, _, perr := openPort(e, dev, driver.Config{})
	if perr != nil {
		return nil, nil, perr
	}
	c, err = driver.ClockOf(p)
	if err != nil {
		p.Close()
		return nil, nil, fmt.Errorf("%s: %w", dev, err)
	}
	return c, func() { p.Close() }, nil
}

func clockCmd(e *env, dev string, args []string) (any, error) {
	ops, err := parseClockOps(args)
	if err != nil {
		return nil, err
	}
	c, closeClock, err := openClock(e, dev)
	if err != nil {
		return nil, err
	}
	defer closeClock()
	r := &clockResult{Dev: dev}
	for _, op := range ops {
		s := clockStep{Cmd: op.cmd}
		if err := doClockOp(e, c, op, &s); err != nil {
			// The clock names the operation; the device is named here.
			err = fmt.Errorf("%s: %s: %w", dev, op.cmd, err)
			if len(r.Steps) == 0 {
				return nil, err
			}
			return r, err
		}
		r.Steps = append(r.Steps, s)
	}
	return r, nil
}

func doClockOp(e *env, c driver.Clock, op clockOp, s *clockStep) error {
	switch op.cmd {
	case "get":
		t, err := c.Now()
		if err != nil {
			return err
		}
		v := int64(t)
		s.Time = &v
	case "set":
		t := op.t
		if !op.hasArg {
			t = driver.Time(e.now().UnixNano())
		}
		if err := c.Set(t); err != nil {
			return err
		}
		v := int64(t)
		s.Time = &v
	case "adj":
		if err := c.Step(op.d); err != nil {
			return err
		}
		v := int64(op.d)
		s.Adjust = &v
	case "freq":
		if op.hasArg {
			if err := c.AdjFreq(op.ppb); err != nil {
				return err
			}
			s.Set, s.FreqPPB = true, &op.ppb
			return nil
		}
		f, err := c.Freq()
		if err != nil {
			return err
		}
		s.FreqPPB = &f
	case "cmp":
		off, err := clockOffset(e, c)
		if err != nil {
			return err
		}
		s.OffsetNS = &off
	case "caps":
		caps := &clockCaps{MaxAdjPPB: c.MaxAdj()}
		if po, ok := c.(driver.PeriodicOutput); ok {
			caps.PeriodicOutputs = po.PerOutChannels()
		}
		s.Caps = caps
	}
	return nil
}

// clockOffset is the clock minus CLOCK_REALTIME: of five readings
// bracketed by system-clock reads, the one with the shortest bracket,
// against the bracket's middle (as PTP_SYS_OFFSET is used).
func clockOffset(e *env, c driver.Clock) (int64, error) {
	best, bestWidth := int64(0), int64(math.MaxInt64)
	for i := 0; i < 5; i++ {
		t1 := e.now().UnixNano()
		p, err := c.Now()
		if err != nil {
			return 0, err
		}
		t2 := e.now().UnixNano()
		if w := t2 - t1; w < bestWidth {
			best, bestWidth = int64(p)-(t1+(t2-t1)/2), w
		}
	}
	return best, nil
}

// clockUsers says who still timestamps with a clock device that is about
// to leave the kernel: the LS1028A's timer function is the PTP clock of
// every ENETC function on its bus (Linux's PF driver finds it by PCI ID),
// so while one of them is bound to a kernel driver, taking the timer away
// breaks that port's hardware timestamps.
func clockUsers(e *env, d *pci.Device) []string {
	dev := &driver.Device{Bus: "pci", VendorID: d.VendorID, DeviceID: d.DeviceID, Revision: d.Revision}
	if _, ok := driver.ClaimsClock(dev); !ok {
		return nil
	}
	inv, err := e.sys.Inventory()
	if err != nil {
		return []string{"whether kernel ENETC ports still use this timer could not be checked: " + err.Error()}
	}
	var why []string
	for _, o := range inv {
		if o.Address.Domain != d.Address.Domain || o.Address.Bus != d.Address.Bus || o.Address == d.Address {
			continue
		}
		if k, ok := pciKinds[o.ID()]; !ok || !k.port {
			continue
		}
		switch o.Driver {
		case "", pci.DriverVFIO, pci.DriverUIO:
			continue
		}
		why = append(why, fmt.Sprintf("%s (%s, kernel driver %s) timestamps with this timer: it is the port's PTP clock; move the port to gopmd first", o.Address, o.ID(), o.Driver))
	}
	return why
}

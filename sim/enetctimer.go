package sim

import (
	"sync"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
)

// ENETCTimerDeviceID is the PCI device ID of the LS1028A's 1588 timer
// function (docs/hardware-enetc.md §12.1).
const ENETCTimerDeviceID = 0xee02

// enetcTimerOptions are the spec options of sim:enetc-timerN. ref-clock=
// is also the driver's: both read the one rate, as the board's device tree
// gives it to Linux.
var enetcTimerOptions = optionNames("enetc-timer")

var enetcTimers = newRegistry[model.Timer]("enetc-timer")

func init() {
	registerModel("enetc-timer", enetcTimerOptions, openENETCTimer)
	refreshBackend()
}

// ENETCTimerModel returns the model behind an open sim:enetc-timerN, or
// nil: tests reach it to advance model time and read its pulses.
func ENETCTimerModel(name string) *model.Timer {
	return enetcTimers.get(trimScheme(name))
}

// openENETCTimer builds sim:enetc-timerN: the 1588 timer function of the
// simulated LS1028A named chip= (the one the sim:enetcN ports with the same
// chip= are on; it becomes their chip's timer). ref-clock=HZ is its
// oscillator's nominal rate (default 400 MHz), freq-error=PPB how far off
// it runs, timeline=wall (default: model time follows the host's clock)
// or manual (model time moves only by the model's Advance: tests).
func openENETCTimer(name string, spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	o := spec.Options
	bad := func(key, problem, accepted string) error {
		return driver.OptionInSpec(spec.Raw, driver.BadOption(key, o.Get(key), problem, accepted))
	}
	chipName := o.Get("chip")
	if !chipNameRE.MatchString(chipName) {
		return nil, bad("chip", "not a chip name", "up to 32 letters, digits, '-' or '_' naming the simulated LS1028A whose timer this is; without chip= the one every sim:enetcN without chip= is on")
	}
	osc, tl, err := clockOptions(spec, "ref-clock", model.DefaultTimerHz, 100_000_001, 1_000_000_000)
	if err != nil {
		return nil, err
	}
	if err := enetcTimers.reserve(name); err != nil {
		return nil, err
	}
	chip := enetcChips.get(chipName)
	t := model.NewTimer(model.TimerConfig{Timeline: tl, Osc: osc})
	if err := chip.AttachTimer(t); err != nil {
		enetcChips.put(chipName)
		enetcTimers.forget(name)
		return nil, driver.OptionInSpec(spec.Raw, driver.BadOption("chip", chipName, "that simulated chip has an open timer already", "close it, or name another chip="))
	}
	enetcTimers.set(name, t)
	var once sync.Once
	release := func() error {
		once.Do(func() {
			chip.DetachTimer(t)
			enetcChips.put(chipName)
			enetcTimers.forget(name)
		})
		return t.Err()
	}
	return &driver.Device{
		Backend:  "sim",
		Bus:      "pci",
		VendorID: ENETCVendorID,
		DeviceID: ENETCTimerDeviceID,
		Revision: ENETCRevision,
		Regions:  []driver.Regs{t},
		Chip:     "sim/chip=" + chipName,
		Release:  release,
		Extra:    t,
	}, nil
}

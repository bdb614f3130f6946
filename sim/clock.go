package sim

import (
	"strconv"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/simtime"
)

// clockOptions reads a simulated 1588 timer's oscillator and timeline
// from a spec: rateKey=HZ (the nominal rate, in [minHz, maxHz]; default
// defHz), freq-error=PPB (how far off it runs) and timeline=wall|manual.
func clockOptions(spec driver.Spec, rateKey string, defHz, minHz, maxHz uint64) (simtime.Oscillator, *simtime.Timeline, error) {
	o := spec.Options
	bad := func(key, problem, accepted string) error {
		return driver.OptionInSpec(spec.Raw, driver.BadOption(key, o.Get(key), problem, accepted))
	}
	osc := simtime.Oscillator{NominalHz: defHz}
	if v := o.Get(rateKey); v != "" {
		hz, err := strconv.ParseUint(v, 10, 64)
		if err != nil || hz < minHz || hz > maxHz {
			return osc, nil, bad(rateKey, "out of range", "the timer clock's rate in Hz, from "+strconv.FormatUint(minHz, 10)+" to "+strconv.FormatUint(maxHz, 10))
		}
		osc.NominalHz = hz
	}
	if v := o.Get("freq-error"); v != "" {
		ppb, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ppb < -1_000_000 || ppb > 1_000_000 {
			return osc, nil, bad("freq-error", "out of range", "the timer clock's frequency error in ppb, from -1000000 to 1000000")
		}
		osc.ErrorPPB = ppb
	}
	switch o.Get("timeline") {
	case "", "wall":
		return osc, simtime.NewWall(), nil
	case "manual":
		return osc, simtime.NewManual(), nil
	}
	return osc, nil, bad("timeline", "unknown timeline", "wall (model time follows the host's clock) or manual (it moves only when a test advances it)")
}

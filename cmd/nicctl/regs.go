package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gopmd/gopmd/driver"
)

func init() {
	var block string
	register(&command{
		name: "regs", args: "DEV", min: 1, max: 1,
		summary: "named register dump with decoded bit fields (read-only; VFIO resets the function it opens)",
		flags: func(fs *flag.FlagSet) func() error {
			fs.StringVar(&block, "block", "", "only registers of block `NAME` (ENETC: si, cbdr, si-stats, tx-ring, rx-ring, port, mac, mac-stats, global; FEC: mac, mib, gasket, ptp)")
			return nil
		},
		run: func(e *env, a []string) (any, error) { return regsCmd(e, a[0], block) },
	})
}

// regsResult is a register dump. Its JSON form is the array of registers
// (driver.RegValue's).
type regsResult struct {
	dev, driver, how string
	regs             []driver.RegValue
}

func (r *regsResult) MarshalJSON() ([]byte, error) { return marshalJSON(r.regs) }

func (r *regsResult) text(w io.Writer) {
	fmt.Fprintf(w, "%s: %s registers, %s\n", r.dev, r.driver, r.how)
	width := 0
	for _, g := range r.regs {
		width = max(width, len(g.Name))
	}
	blk := ""
	for _, g := range r.regs {
		if g.Block != blk {
			blk = g.Block
			fmt.Fprintf(w, "[%s]\n", blk)
		}
		var fs []string
		for _, f := range g.Fields {
			if f.Hi == f.Lo {
				fs = append(fs, fmt.Sprintf("%s=%d", f.Name, f.Of(g.Value)))
			} else {
				fs = append(fs, fmt.Sprintf("%s=%#x", f.Name, f.Of(g.Value)))
			}
		}
		line := fmt.Sprintf("  0x%05x  %-*s  0x%08x  %s", g.Offset, width, g.Name, g.Value, strings.Join(fs, " "))
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

func regsCmd(e *env, dev, block string) (any, error) {
	sp, err := parseDev(dev)
	if err != nil {
		return nil, err
	}
	r := &regsResult{dev: dev}
	if sp.Scheme == "sim" {
		// A model has no state before a driver brings it up: dump the port
		// as the driver leaves it after Start.
		p, _, err := openPort(e, dev, driver.Config{})
		if err != nil {
			return nil, err
		}
		defer p.Close()
		if err := p.Start(); err != nil {
			return nil, fmt.Errorf("%s: start: %w", dev, err)
		}
		view, err := simDevice(sp)
		if err != nil {
			return nil, err
		}
		r.how = "as the driver left them after bring-up"
		if r.driver, r.regs, err = rawRegs(view); err != nil {
			return nil, fmt.Errorf("%s: %w", dev, err)
		}
	} else {
		d, err := openRaw(e, sp)
		if err != nil {
			return nil, err
		}
		defer d.Release()
		r.how = "read through " + d.Backend + " without a driver"
		var rerr error
		r.driver, r.regs, rerr = rawRegs(d)
		if rerr != nil {
			return nil, fmt.Errorf("%s: %w", dev, rerr)
		}
	}
	if block != "" {
		var keep []driver.RegValue
		seen := map[string]bool{}
		for _, g := range r.regs {
			seen[g.Block] = true
			if strings.EqualFold(g.Block, block) { // "SI" and "si" alike
				keep = append(keep, g)
			}
		}
		if len(keep) == 0 {
			var names []string
			for b := range seen {
				names = append(names, b)
			}
			sort.Strings(names)
			return nil, badInput("no block %q in %s's registers (blocks: %s)", block, dev, strings.Join(names, ", "))
		}
		r.regs = keep
	}
	return r, nil
}

// simDevice describes an open model the way a backend describes hardware,
// so its registers are read by the same code: every ring of the SI, not
// only the ones the driver set up.
func simDevice(sp driver.Spec) (*driver.Device, error) {
	m, err := simModelOf(sp)
	if err != nil {
		return nil, err
	}
	return &m.dev, nil
}

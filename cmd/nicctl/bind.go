package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci"
)

// forceRebindHelp is --force on bind and unbind.
const forceRebindHelp = "detach the device even if no gopmd driver claims it or the host uses it (an interface up, with addresses or routes; a mounted filesystem or swap on it)"

func init() {
	register(&command{
		name: "bind", args: "DEV vfio-pci|uio_pci_generic|kernel", min: 2, max: 2,
		summary:   "hand a device to a user-space driver or back to the kernel, showing before and after",
		forceHelp: forceRebindHelp, dryRun: true,
		run: func(e *env, a []string) (any, error) { return bindCmd(e, a[0], a[1]) },
	})
	register(&command{
		name: "unbind", args: "DEV", min: 1, max: 1,
		summary:   "detach a device from its driver, showing before and after",
		forceHelp: forceRebindHelp, dryRun: true,
		run: func(e *env, a []string) (any, error) { return unbindCmd(e, a[0]) },
	})
}

// bindState is what sysfs says about a device's binding.
type bindState struct {
	Driver     string `json:"driver"`
	Override   string `json:"driver_override"`
	IOMMUGroup string `json:"iommu_group,omitempty"`
}

// bindResult is the before and after of bind or unbind.
type bindResult struct {
	Device  string    `json:"device"`
	Action  string    `json:"action"`
	Before  bindState `json:"before"`
	After   bindState `json:"after"`
	Changed bool      `json:"changed"`
	Note    string    `json:"note,omitempty"`
	// DryRun: nothing was written; Writes are the sysfs writes the
	// command would make.
	DryRun bool        `json:"dry_run,omitempty"`
	Writes []pci.Write `json:"writes,omitempty"`
	// Forced are the refusals --force overrode.
	Forced []string `json:"forced,omitempty"`
}

func (r *bindResult) text(w io.Writer) {
	show := func(s bindState) string {
		d := s.Driver
		if d == "" {
			d = "(none)"
		}
		out := "driver " + d
		if s.Override != "" {
			out += ", driver_override " + s.Override
		}
		if s.IOMMUGroup != "" {
			out += ", IOMMU group " + s.IOMMUGroup
		}
		return out
	}
	for _, f := range r.Forced {
		fmt.Fprintf(w, "%s: --force: going ahead although %s\n", r.Device, f)
	}
	if r.DryRun {
		fmt.Fprintf(w, "%s: %s (dry run: nothing written)\n  now: %s\n", r.Device, r.Action, show(r.Before))
		if len(r.Writes) == 0 {
			fmt.Fprintf(w, "  no sysfs write needed\n")
		}
		for _, wr := range r.Writes {
			fmt.Fprintf(w, "  would run: %s\n", wr)
		}
		if r.Note != "" {
			fmt.Fprintf(w, "  note: %s\n", r.Note)
		}
		return
	}
	fmt.Fprintf(w, "%s: %s\n  before: %s\n  after:  %s\n", r.Device, r.Action, show(r.Before), show(r.After))
	if !r.Changed {
		fmt.Fprintf(w, "  nothing changed\n")
	}
	if r.Note != "" {
		fmt.Fprintf(w, "  note: %s\n", r.Note)
	}
}

// sysWrite writes a sysfs attribute through s: the directory must lie
// under /sys and the attribute is opened without following a link (see
// pci.Sys.WriteAttr); in a dry run it is only recorded. It is what
// env.sysWrite does when nil.
func sysWrite(s pci.Sys, path, value string) error { return s.WriteAttr(path, value) }

// writeAttr writes a sysfs attribute (through e.sysWrite if set) and
// names the fix in its error.
func writeAttr(e *env, path, value, what string) error {
	write := e.sysWrite
	if write == nil {
		write = sysWrite
	}
	err := write(e.sys, path, value)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pci.ErrOutsideSysfs):
		return fmt.Errorf("%s: refusing to write %s: %w (sysfs was tampered with, or the name is no sysfs name)", what, path, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: cannot write %s: permission denied (run nicctl as root)", what, path)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %s does not exist (is the driver's module loaded?)", what, path)
	default:
		return fmt.Errorf("%s: write %s: %w", what, path, err)
	}
}

// target is a bindable device: a PCI function or a platform device.
type target struct {
	name     string // address or node name
	platform bool
}

func (t target) dir(e *env) string {
	if t.platform {
		return e.sys.Path("/sys/bus/platform/devices/" + t.name)
	}
	return e.sys.Path("/sys/bus/pci/devices/" + t.name)
}

func (t target) bus(e *env) string {
	if t.platform {
		return e.sys.Path("/sys/bus/platform")
	}
	return e.sys.Path("/sys/bus/pci")
}

// bindTarget turns DEV into something bind and unbind can work on.
func bindTarget(dev string) (target, error) {
	sp, err := parseDev(dev)
	if err != nil {
		return target{}, err
	}
	switch sp.Scheme {
	case "pci":
		return target{name: sp.Name}, nil
	case "platform":
		return target{name: sp.Name, platform: true}, nil
	case "sim":
		return target{}, badInput("%s is a device model: it needs no binding (bind takes a PCI address or platform:NODE)", dev)
	default:
		return target{}, badInput("%s is a UIO device, already bound; bind its parent device instead (nicctl list shows it)", dev)
	}
}

// parseDev parses DEV; a malformed spec is bad input.
func parseDev(dev string) (driver.Spec, error) {
	sp, err := driver.ParseSpec(dev)
	if err != nil {
		return sp, &usageError{err.Error()}
	}
	if sp.Scheme == "pci" {
		if _, err := pci.ParseAddress(sp.Name); err != nil {
			return sp, &usageError{err.Error()}
		}
	}
	return sp, nil
}

// state reads a device's binding; a missing device is an error naming the fix.
func (t target) state(e *env) (bindState, error) {
	if t.platform {
		pd, err := e.sys.Platform(t.name)
		if err != nil {
			return bindState{}, err
		}
		return bindState{Driver: pd.Driver, Override: pd.Override, IOMMUGroup: pd.IOMMUGroup}, nil
	}
	a, err := pci.ParseAddress(t.name)
	if err != nil {
		return bindState{}, &usageError{err.Error()}
	}
	d, err := e.sys.Device(a)
	if err != nil {
		return bindState{}, err
	}
	return bindState{Driver: d.Driver, Override: d.Override, IOMMUGroup: d.IOMMUGroup}, nil
}

var pciUserDrivers = []string{pci.DriverVFIO, pci.DriverUIO, "kernel"}
var platformUserDrivers = []string{pci.DriverVFIOPlatform, "uio_pdrv_genirq", "kernel"}

func bindCmd(e *env, dev, drv string) (any, error) {
	t, err := bindTarget(dev)
	if err != nil {
		return nil, err
	}
	allowed := pciUserDrivers
	if t.platform {
		allowed = platformUserDrivers
	}
	ok := false
	for _, a := range allowed {
		ok = ok || a == drv
	}
	if !ok {
		return nil, badInput("unknown driver %q for %s: use one of %s", drv, dev, strings.Join(allowed, ", "))
	}
	before, err := t.state(e)
	if err != nil {
		return nil, err
	}
	r := &bindResult{Device: t.name, Action: "bind to " + drv, Before: before}
	if drv != "kernel" && before.Driver != drv {
		// Giving a device back to the kernel never detaches a kernel
		// driver; handing it to a user-space driver does.
		if r.Forced, err = t.refuse(e, "bind "+dev+" "+drv); err != nil {
			return nil, err
		}
	}
	if e.dryRun {
		return t.dryRun(e, r, func() error {
			switch {
			case drv == "kernel":
				return t.toKernel(e, before)
			case t.platform:
				return e.sys.BindPlatform(t.name, drv)
			default:
				a, _ := pci.ParseAddress(t.name)
				_, err := e.sys.Bind(a, drv)
				return err
			}
		})
	}
	var opErr error
	switch {
	case drv == "kernel":
		opErr = t.toKernel(e, before)
	case t.platform:
		opErr = e.sys.BindPlatform(t.name, drv)
	default:
		a, _ := pci.ParseAddress(t.name)
		_, opErr = e.sys.Bind(a, drv)
	}
	after, err := t.state(e)
	if err != nil {
		return nil, errors.Join(opErr, err)
	}
	r.After = after
	r.Changed = after != before
	if drv == "kernel" && opErr == nil && after.Driver == "" {
		opErr = fmt.Errorf("%s: no kernel driver took it after probing: load one (e.g. modprobe fsl-enetc or modprobe fec) and run nicctl bind %s kernel again", t.name, dev)
	}
	if opErr != nil {
		return nil, opErr
	}
	return r, nil
}

// toKernel gives a device back to whatever kernel driver claims it:
// driver_override is cleared, a user-space driver is unbound, and the
// kernel probes again.
func (t target) toKernel(e *env, before bindState) error {
	dir := t.dir(e)
	if before.Override != "" {
		if err := writeAttr(e, dir+"/driver_override", "\n", t.name+": clear driver_override"); err != nil {
			return err
		}
	}
	user := before.Driver == pci.DriverVFIO || before.Driver == pci.DriverUIO ||
		before.Driver == pci.DriverVFIOPlatform || before.Driver == "uio_pdrv_genirq"
	if before.Driver != "" && !user {
		return nil // a kernel driver has it already
	}
	if before.Driver != "" {
		if err := writeAttr(e, dir+"/driver/unbind", t.name, t.name+": unbind from "+before.Driver); err != nil {
			return err
		}
	}
	return writeAttr(e, t.bus(e)+"/drivers_probe", t.name, t.name+": probe")
}

func unbindCmd(e *env, dev string) (any, error) {
	t, err := bindTarget(dev)
	if err != nil {
		return nil, err
	}
	before, err := t.state(e)
	if err != nil {
		return nil, err
	}
	r := &bindResult{Device: t.name, Action: "unbind", Before: before, After: before}
	if before.Driver == "" {
		r.Note = "no driver was bound"
		return r, nil
	}
	if r.Forced, err = t.refuse(e, "unbind "+dev); err != nil {
		return nil, err
	}
	dir := t.dir(e)
	if _, err := os.Stat(dir + "/driver/unbind"); errors.Is(err, fs.ErrNotExist) && t.platform {
		return nil, fmt.Errorf("%s: %s has no sysfs unbind (suppress_bind_attrs): unload it (rmmod %s; its other devices come back with modprobe %s) or keep it off in the device tree (docs/hardware.md)",
			t.name, before.Driver, before.Driver, before.Driver)
	}
	if e.dryRun {
		return t.dryRun(e, r, func() error {
			return writeAttr(e, dir+"/driver/unbind", t.name, t.name+": unbind from "+before.Driver)
		})
	}
	opErr := writeAttr(e, dir+"/driver/unbind", t.name, t.name+": unbind from "+before.Driver)
	after, err := t.state(e)
	if err != nil {
		return nil, errors.Join(opErr, err)
	}
	r.After = after
	r.Changed = after != before
	if after.Override != "" {
		r.Note = "driver_override is " + after.Override + ": the next probe binds that driver (nicctl bind " + dev + " kernel clears it)"
	}
	if opErr != nil {
		return nil, opErr
	}
	return r, nil
}

// dryRun runs op with every sysfs write recorded instead of made and
// returns the plan.
func (t target) dryRun(e *env, r *bindResult, op func() error) (*bindResult, error) {
	var plan []pci.Write
	e.sys.Plan = &plan
	err := op()
	e.sys.Plan = nil
	if err != nil {
		return nil, err
	}
	r.DryRun, r.Writes, r.After = true, plan, r.Before
	return r, nil
}

// refusalError is a bind or unbind nicctl will not do without --force.
type refusalError struct {
	dev, cmd string
	why      []string
}

// maxReasons bounds the reasons a refusal lists (a busy interface can
// carry dozens of routes).
const maxReasons = 6

func (e *refusalError) Error() string {
	why := e.why
	more := ""
	if len(why) > maxReasons {
		more = fmt.Sprintf("; and %d more", len(why)-maxReasons)
		why = why[:maxReasons]
	}
	return fmt.Sprintf("%s: refusing to %s: %s%s; nothing was written (leave the device to the host, or add --force if you are sure; --dry-run shows the writes)",
		e.dev, e.cmd, strings.Join(why, "; "), more)
}

// refuse says why detaching the device could hurt the host: no gopmd
// driver claims it (so gopmd could not use it anyway), or the host uses it
// (an interface up, with addresses or routes; a mounted filesystem or swap
// on a disk below it). With --force the reasons are returned to be shown;
// without, they are a *refusalError and nothing is written.
func (t target) refuse(e *env, cmd string) ([]string, error) {
	var why []string
	bus := "pci"
	if t.platform {
		bus = "platform"
		pd, err := e.sys.Platform(t.name)
		if err != nil {
			return nil, err
		}
		if _, ok := driver.Claims(&driver.Device{Bus: "platform", Compatible: pd.Compatible}); !ok {
			c := strings.Join(pd.Compatible, ", ")
			if c == "" {
				c = "none"
			}
			why = append(why, fmt.Sprintf("no gopmd driver (%s) claims it (compatible %s)", strings.Join(driver.DriverNames(), ", "), c))
		}
	} else {
		a, _ := pci.ParseAddress(t.name)
		d, err := e.sys.Device(a)
		if err != nil {
			return nil, err
		}
		if _, ok := driver.Claims(&driver.Device{Bus: "pci", VendorID: d.VendorID, DeviceID: d.DeviceID, Revision: d.Revision}); !ok {
			why = append(why, fmt.Sprintf("no gopmd driver (%s) claims it (PCI ID %s, class %06x)", strings.Join(driver.DriverNames(), ", "), d.ID(), d.Class))
		}
		if strings.HasPrefix(cmd, "bind ") {
			why = append(why, clockUsers(e, d)...)
		}
	}
	uses, err := e.sys.InUse(bus, t.name)
	if err != nil {
		if !e.force {
			return nil, fmt.Errorf("%s: refusing to %s: %w; nothing was written", t.name, cmd, err)
		}
		why = append(why, "whether the host uses it could not be checked: "+err.Error())
	}
	for _, u := range uses {
		why = append(why, u.What)
	}
	if len(why) == 0 {
		return nil, nil
	}
	if e.force {
		return why, nil
	}
	return nil, &refusalError{dev: t.name, cmd: cmd, why: why}
}

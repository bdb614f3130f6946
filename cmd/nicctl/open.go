package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/internal/safefile"
	"github.com/gopmd/gopmd/pci"
)

// What a bring-up tool needs beyond driver.Port is an optional interface:
// clause-22 MDIO is driver.PHYAccess, the rest are methods of the drivers'
// concrete Ports that nicctl names here. A type assertion reaches each, so
// a driver that lacks one is reported, not a crash.

// mdio22 is clause-22 MDIO on the port's bus (ENETC PF, FEC).
type mdio22 = driver.PHYAccess

// mdio45 is clause-45 MDIO (ENETC PF).
type mdio45 interface {
	MDIORead45(phy, devad, reg int) (uint16, error)
	MDIOWrite45(phy, devad, reg int, v uint16) error
}

// linkUpdater reads the PHY now instead of returning the last state.
type linkUpdater interface{ UpdateLink() driver.Link }

// phyAddress returns the MDIO address of the port's PHY, -1 when it runs
// as a fixed link, and false when the driver does not say.
func phyAddress(p driver.Port) (int, bool) {
	if q, ok := p.(driver.PHYAccess); ok {
		return q.PHYAddr(), true
	}
	return -1, false
}

// rawRegs reads a device's registers without a driver: every register of
// the map the claiming driver offers (driver.RegisterMapOf), read once,
// never written. MDIO data registers (a read may start a transaction) are
// not in those maps.
func rawRegs(d *driver.Device) (string, []driver.RegValue, error) {
	if len(d.Regions) == 0 || d.Regions[0] == nil {
		return "", nil, errors.New("the device has no register window 0")
	}
	name, descs, err := driver.RegisterMapOf(d)
	if err != nil {
		return "", nil, fmt.Errorf("no register map for this device (%s): %w", identity(d), err)
	}
	w := d.Regions[0]
	out := make([]driver.RegValue, 0, len(descs))
	for _, r := range descs {
		out = append(out, driver.RegValue{RegDesc: r, Value: w.Read32(r.Offset)})
	}
	return name, out, w.Err()
}

// identity describes what a backend found.
func identity(d *driver.Device) string {
	if d.Bus == "pci" {
		return fmt.Sprintf("PCI %04x:%04x rev %d", d.VendorID, d.DeviceID, d.Revision)
	}
	if len(d.Compatible) > 0 {
		return "compatible " + strings.Join(d.Compatible, ", ")
	}
	return d.Bus + " device"
}

// openRaw reaches a hardware device through its backend (VFIO, UIO,
// /dev/mem) under the --root tree, without a driver, to read registers.
// Nothing is programmed and no DMA memory is handed to the device, so VFIO
// and UIO maps need no opt-in. A /dev/mem window does: /dev/mem reaches
// all of physical memory, so it takes --unsafe-noiommu (or the spec's
// unsafe-noiommu=1) as every other /dev/mem path does. Opening a function
// through VFIO resets it; stderr says so before it happens.
func openRaw(e *env, sp driver.Spec) (*driver.Device, error) {
	optIn := e.unsafeNoIOMMU
	if v := sp.Options.Get("unsafe-noiommu"); sp.Options.Has("unsafe-noiommu") && (v == "" || v == "1" || v == "true") {
		optIn = true
	}
	cfg := driver.Config{UnsafeNoIOMMU: true}
	switch sp.Scheme {
	case "pci":
		if a, err := pci.ParseAddress(sp.Name); err == nil {
			if d, err := e.sys.Device(a); err == nil && d.Driver == pci.DriverVFIO {
				// Opening resets the function: refuse first what no
				// driver could decode, so nothing is reset for nothing.
				probe := &driver.Device{Bus: "pci", VendorID: d.VendorID, DeviceID: d.DeviceID, Revision: d.Revision}
				if _, ok := driver.Claims(probe); !ok {
					return nil, fmt.Errorf("%s: no register map for this device (PCI %s rev %d): no gopmd driver claims it (drivers: %s); not opened, so not reset", sp.Name, d.ID(), d.Revision, strings.Join(driver.DriverNames(), ", "))
				}
				fmt.Fprintf(e.stderr, "nicctl: note: opening %s through VFIO resets the function (the kernel resets it when the device is opened): the registers shown are those after the reset; for a port l2fwd is running, read GET /regs on its --metrics address instead\n", sp.Name)
			}
		}
		return e.sys.OpenPCI(sp, cfg)
	case "platform":
		// Only a node no driver holds and without a UIO device is reached
		// through /dev/mem (see pci.Sys.OpenPlatform).
		if pd, err := e.sys.Platform(sp.Name); err == nil && len(pd.UIO) == 0 && pd.Driver == "" && !optIn {
			return nil, badInput("%s: no driver holds the node and it has no UIO device, so reading its registers maps /dev/mem, which reaches all of physical memory: add --unsafe-noiommu (or ?unsafe-noiommu=1) to allow that", sp.Raw)
		}
		return e.sys.OpenPlatform(sp, cfg)
	case "uio":
		return e.sys.OpenUIOBackend(sp, cfg)
	}
	return nil, fmt.Errorf("%s: not a hardware device", sp.Raw)
}

// withOption returns spec with key=value added (replacing a value given).
func withOption(sp driver.Spec, key, value string) string {
	o := url.Values{}
	for k, v := range sp.Options {
		o[k] = v
	}
	o.Set(key, value)
	body, _, _ := strings.Cut(sp.Raw, "?")
	return body + "?" + encodeOptions(o)
}

// encodeOptions is url.Values.Encode keeping ':' and '/' readable, as
// specs are written by hand ("peer=sim:enetc1", "uio:/dev/uio0").
func encodeOptions(o url.Values) string {
	return strings.NewReplacer("%3A", ":", "%2F", "/").Replace(o.Encode())
}

// openPort opens DEV through its driver (bring-up, not started). Under
// --root only sim devices can be driven: the tree is not a machine.
func openPort(e *env, dev string, cfg driver.Config) (driver.Port, driver.Spec, error) {
	sp, err := parseDev(dev)
	if err != nil {
		return nil, sp, err
	}
	if e.sys.Root != "" && e.sys.Root != "/" && sp.Scheme != "sim" {
		return nil, sp, fmt.Errorf("%s: --root names an offline tree, where only sim devices can be driven (drop --root on the board)", dev)
	}
	if e.unsafeNoIOMMU {
		cfg.UnsafeNoIOMMU = true
	}
	p, err := driver.OpenConfig(dev, cfg)
	if errors.Is(err, enetc.ErrSwitchCPUPort) && e.force {
		// --force: take a function the device tree makes a switch's
		// CPU port (the LS1028A-RDB's PF2) anyway.
		fmt.Fprintf(e.stderr, "%s: --force: opening it with switch-cpu-port=take although %s\n", dev, oneLine(err.Error()))
		sep := "?"
		if strings.Contains(dev, "?") {
			sep = "&"
		}
		p, err = driver.OpenConfig(dev+sep+"switch-cpu-port=take", cfg)
	}
	if err != nil {
		var se *driver.SpecError
		var fe *safefile.Error
		if errors.As(err, &se) || errors.As(err, &fe) {
			return nil, sp, &usageError{err.Error()} // a bad spec or output path
		}
		return nil, sp, err
	}
	return p, sp, nil
}

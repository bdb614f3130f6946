package pci

import (
	"fmt"
	"strings"
)

// Drivers a device can be handed to for user-space access.
const (
	DriverVFIO         = "vfio-pci"
	DriverUIO          = "uio_pci_generic"
	DriverVFIOPlatform = "vfio-platform"
)

// groupFriendly lists drivers that keep an IOMMU group viable for VFIO
// besides vfio-pci itself: pci-stub claims a device for no one, and
// pcieport drives bridges, which VFIO allows.
var groupFriendly = map[string]bool{"": true, "vfio-pci": true, "pci-stub": true, "pcieport": true}

// Binding records what Bind changed, so Restore can undo it.
type Binding struct {
	sys      Sys
	Address  Address
	Driver   string // the driver bound now
	Original string // the driver bound before, "" if none
	override string // driver_override before
	changed  bool
}

// CheckGroup refuses a device whose IOMMU group holds other devices still
// bound to kernel drivers: VFIO would call the group not viable. The error
// names those devices and their drivers, and matches both ErrGroupBusy and
// ErrNotViable.
func (s Sys) CheckGroup(a Address) error {
	d, err := s.Device(a)
	if err != nil {
		return err
	}
	if d.IOMMUGroup == "" {
		return &DeviceError{Device: a.String(), Op: "IOMMU group", Err: ErrNoIOMMU,
			Fix: "enable the IOMMU (intel_iommu=on, amd_iommu=on, an SMMU in the device tree) or, accepting no DMA isolation, use unsafe-noiommu with VFIO no-IOMMU mode or uio_pci_generic"}
	}
	return s.checkGroupMembers(d)
}

// checkGroupMembers is CheckGroup for a device known to have a group.
func (s Sys) checkGroupMembers(d *Device) error {
	a := d.Address
	members, err := s.GroupMembers(d.IOMMUGroup)
	if err != nil {
		return &DeviceError{Device: a.String(), Op: "read IOMMU group " + d.IOMMUGroup, Err: err, Fix: fixOpen(err)}
	}
	var busy []string
	for _, m := range members {
		if m == a {
			continue
		}
		md, err := s.Device(m)
		if err != nil {
			return err
		}
		if !groupFriendly[md.Driver] {
			busy = append(busy, fmt.Sprintf("%s (%s, driver %s)", m, md.ID(), md.Driver))
		}
	}
	if len(busy) > 0 {
		return &DeviceError{Device: a.String(), Op: "IOMMU group " + d.IOMMUGroup, Err: groupBusyError{},
			Fix: "the group also holds " + strings.Join(busy, ", ") + ": bind those to vfio-pci as well (or unbind them), or move the device to a slot with its own group"}
	}
	return nil
}

// groupBusyError is a group with devices on kernel drivers: busy, and so
// not viable for VFIO. It reads as ErrGroupBusy and matches both.
type groupBusyError struct{}

// Error reads as ErrGroupBusy.
func (groupBusyError) Error() string { return ErrGroupBusy.Error() }

// Is matches ErrGroupBusy and ErrNotViable.
func (groupBusyError) Is(target error) bool { return target == ErrGroupBusy || target == ErrNotViable }

// Bind hands a PCI function to drv (DriverVFIO or DriverUIO): it writes
// drv to driver_override, unbinds the current driver and asks the kernel
// to probe again. For vfio-pci the IOMMU group is checked first. Restore
// undoes it. Binding a device that is already on drv changes nothing.
func (s Sys) Bind(a Address, drv string) (*Binding, error) {
	d, err := s.Device(a)
	if err != nil {
		return nil, err
	}
	b := &Binding{sys: s, Address: a, Driver: drv, Original: d.Driver, override: d.Override}
	if d.Driver == drv {
		return b, nil
	}
	if drv == DriverVFIO {
		if err := s.CheckGroup(a); err != nil {
			return nil, err
		}
	}
	dir := s.pciDev(a)
	if err := s.writeAttr(dir+"/driver_override", drv, a.String()+" set driver_override"); err != nil {
		return nil, err
	}
	b.changed = true
	if d.Driver != "" {
		if err := s.writeAttr(dir+"/driver/unbind", a.String(), a.String()+" unbind from "+d.Driver); err != nil {
			_ = b.Restore()
			return nil, err
		}
	}
	if err := s.writeAttr(s.Path("/sys/bus/pci/drivers_probe"), a.String(), a.String()+" probe"); err != nil {
		_ = b.Restore()
		return nil, err
	}
	if s.Plan != nil {
		return b, nil // a dry run: the kernel did not probe
	}
	if now := linkBase(dir + "/driver"); now != drv {
		_ = b.Restore()
		return nil, &DeviceError{Device: a.String(), Op: "bind to " + drv, Err: fmt.Errorf("%w: driver is %q after probing", ErrWrongDriver, now),
			Fix: "load the driver first: modprobe " + drv}
	}
	return b, nil
}

// Restore gives the device back to the driver it had before Bind (or leaves
// it unbound if it had none) and puts driver_override back.
func (b *Binding) Restore() error {
	if b == nil || !b.changed {
		return nil
	}
	s, a := b.sys, b.Address
	dir := s.pciDev(a)
	ov := b.override
	if ov == "" {
		ov = "\n" // an empty write clears driver_override
	}
	if err := s.writeAttr(dir+"/driver_override", ov, a.String()+" restore driver_override"); err != nil {
		return err
	}
	if cur := linkBase(dir + "/driver"); cur != "" && cur != b.Original {
		if err := s.writeAttr(dir+"/driver/unbind", a.String(), a.String()+" unbind from "+cur); err != nil {
			return err
		}
	}
	if b.Original != "" && linkBase(dir+"/driver") != b.Original {
		if err := s.writeAttr(s.Path("/sys/bus/pci/drivers_probe"), a.String(), a.String()+" probe"); err != nil {
			return err
		}
		if now := linkBase(dir + "/driver"); now != b.Original {
			return &DeviceError{Device: a.String(), Op: "restore driver " + b.Original, Err: fmt.Errorf("%w: driver is %q", ErrWrongDriver, now),
				Fix: "bind it by hand: echo " + a.String() + " > /sys/bus/pci/drivers/" + b.Original + "/bind"}
		}
	}
	b.changed = false
	return nil
}

// BindPlatform hands a platform device to drv (vfio-platform,
// uio_pdrv_genirq) through driver_override. A driver without sysfs unbind
// (fec sets suppress_bind_attrs) cannot be detached here: the error says to
// unload and reload that driver, after which drv takes the device.
func (s Sys) BindPlatform(name, drv string) error {
	pd, err := s.Platform(name)
	if err != nil {
		return err
	}
	if pd.Driver == drv {
		return nil
	}
	dir := s.Path("/sys/bus/platform/devices/" + name)
	if err := s.writeAttr(dir+"/driver_override", drv, name+" set driver_override"); err != nil {
		return err
	}
	if pd.Driver != "" {
		if pd.NoUnbind {
			return &DeviceError{Device: name, Op: "unbind from " + pd.Driver, Err: ErrWrongDriver,
				Fix: fmt.Sprintf("driver_override is now %s, but %s has no sysfs unbind (suppress_bind_attrs): rmmod %s; modprobe %s (its other devices come back), then echo %s > /sys/bus/platform/drivers_probe", drv, pd.Driver, pd.Driver, pd.Driver, name)}
		}
		if err := s.writeAttr(dir+"/driver/unbind", name, name+" unbind from "+pd.Driver); err != nil {
			return err
		}
	}
	if err := s.writeAttr(s.Path("/sys/bus/platform/drivers_probe"), name, name+" probe"); err != nil {
		return err
	}
	if s.Plan != nil {
		return nil
	}
	if now := linkBase(dir + "/driver"); now != drv {
		return &DeviceError{Device: name, Op: "bind to " + drv, Err: fmt.Errorf("%w: driver is %q after probing", ErrWrongDriver, now),
			Fix: "load it first (modprobe " + drv + "; vfio-platform without a reset module needs reset_required=0; uio_pdrv_genirq needs of_id=generic-uio and a generic-uio node)"}
	}
	return nil
}

// userDrivers are the drivers that hand a device to user space.
var userDrivers = map[string]bool{DriverVFIO: true, DriverUIO: true, DriverVFIOPlatform: true, "uio_pdrv_genirq": true}

// Unbind detaches a PCI function from whatever driver holds it (nothing
// happens when none does). driver_override is left as it is, so the next
// probe binds the driver it names; ToKernel clears it.
func (s Sys) Unbind(a Address) error {
	d, err := s.Device(a)
	if err != nil {
		return err
	}
	if d.Driver == "" {
		return nil
	}
	return s.writeAttr(s.pciDev(a)+"/driver/unbind", a.String(), a.String()+" unbind from "+d.Driver)
}

// ToKernel gives a PCI function back to the kernel: it clears
// driver_override, unbinds a user-space driver (vfio-pci, uio_pci_generic)
// and asks the kernel to probe, and returns the driver that took the
// device. A device already on a kernel driver keeps it. When no driver
// takes it the error wraps ErrWrongDriver and says to load one.
func (s Sys) ToKernel(a Address) (string, error) {
	d, err := s.Device(a)
	if err != nil {
		return "", err
	}
	dir := s.pciDev(a)
	if d.Override != "" {
		if err := s.writeAttr(dir+"/driver_override", "\n", a.String()+" clear driver_override"); err != nil {
			return d.Driver, err
		}
	}
	if d.Driver != "" && !userDrivers[d.Driver] {
		return d.Driver, nil
	}
	if d.Driver != "" {
		if err := s.writeAttr(dir+"/driver/unbind", a.String(), a.String()+" unbind from "+d.Driver); err != nil {
			return d.Driver, err
		}
	}
	if err := s.writeAttr(s.Path("/sys/bus/pci/drivers_probe"), a.String(), a.String()+" probe"); err != nil {
		return "", err
	}
	now := linkBase(dir + "/driver")
	if s.Plan != nil {
		return "", nil
	}
	if now == "" {
		return "", &DeviceError{Device: a.String(), Op: "give back to the kernel", Err: fmt.Errorf("%w: no kernel driver took it after probing", ErrWrongDriver),
			Fix: "load its driver (e.g. modprobe fsl-enetc) and probe again: echo " + a.String() + " > /sys/bus/pci/drivers_probe"}
	}
	return now, nil
}

// UnbindPlatform detaches a platform device from its driver (nothing
// happens when none holds it). A driver without sysfs unbind (fec) is an
// error wrapping ErrWrongDriver that says how to free the device instead.
func (s Sys) UnbindPlatform(name string) error {
	pd, err := s.Platform(name)
	if err != nil {
		return err
	}
	if pd.Driver == "" {
		return nil
	}
	if pd.NoUnbind {
		return &DeviceError{Device: name, Op: "unbind from " + pd.Driver, Err: fmt.Errorf("%w: %s has no sysfs unbind (suppress_bind_attrs)", ErrWrongDriver, pd.Driver),
			Fix: fmt.Sprintf("write a driver name to /sys/bus/platform/devices/%s/driver_override, then rmmod %s; modprobe %s (its other devices come back, this one stays free)", name, pd.Driver, pd.Driver)}
	}
	dir := s.Path("/sys/bus/platform/devices/" + name)
	return s.writeAttr(dir+"/driver/unbind", name, name+" unbind from "+pd.Driver)
}

// PlatformToKernel is ToKernel for a platform device: driver_override
// cleared, a user-space driver (vfio-platform, uio_pdrv_genirq) unbound,
// the kernel asked to probe; it returns the driver that took the device.
func (s Sys) PlatformToKernel(name string) (string, error) {
	pd, err := s.Platform(name)
	if err != nil {
		return "", err
	}
	dir := s.Path("/sys/bus/platform/devices/" + name)
	if pd.Override != "" {
		if err := s.writeAttr(dir+"/driver_override", "\n", name+" clear driver_override"); err != nil {
			return pd.Driver, err
		}
	}
	if pd.Driver != "" && !userDrivers[pd.Driver] {
		return pd.Driver, nil
	}
	if pd.Driver != "" {
		if err := s.UnbindPlatform(name); err != nil {
			return pd.Driver, err
		}
	}
	if err := s.writeAttr(s.Path("/sys/bus/platform/drivers_probe"), name, name+" probe"); err != nil {
		return "", err
	}
	now := linkBase(dir + "/driver")
	if s.Plan != nil {
		return "", nil
	}
	if now == "" {
		return "", &DeviceError{Device: name, Op: "give back to the kernel", Err: fmt.Errorf("%w: no kernel driver took it after probing", ErrWrongDriver),
			Fix: "load its driver (e.g. modprobe fec) and probe again: echo " + name + " > /sys/bus/platform/drivers_probe"}
	}
	return now, nil
}

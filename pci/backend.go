package pci

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/irqfd"
)

// The backends registered here make these spec schemes openable:
//
//	pci:0000:01:00.0        VFIO (type1 container/group, or iommufd + cdev);
//	                        with ?unsafe-noiommu=1 also VFIO no-IOMMU groups
//	                        or uio_pci_generic with sysfs resourceN maps
//	uio:/dev/uio0           a UIO device's memory maps (needs unsafe-noiommu)
//	platform:2188000.ethernet  a device-tree node: its UIO device if one is
//	                        bound, vfio-platform if bound to it, else (only
//	                        with unsafe-noiommu, and only once no driver holds
//	                        the node) a /dev/mem window of its reg ranges
//
// Options: iommu=auto|type1|iommufd (pci), dma-carveout=ADDR+SIZE (DMA memory
// from a physical range mapped through /dev/mem, e.g. memory kept from the
// kernel with mem=), dma-map=M (DMA memory from UIO map M), reg=ADDR+SIZE
// (platform: the register window when the device tree cannot be read),
// vf-token=UUID (pci, vfio-pci only: an SR-IOV PF sets it as its VFs'
// token, a VF of a PF on vfio-pci opens with it; see VFToken).
// Without an IOMMU and without a carve-out, DMA memory is located with
// /proc/self/pagemap: buffers that fit one 4 KiB page work, rings need
// huge pages or a carve-out.
func init() {
	driver.RegisterBackend(driver.Backend{Scheme: "pci", Options: []string{"iommu", "dma-carveout", "vf-token"},
		Open: func(s driver.Spec, c driver.Config) (*driver.Device, error) { return Host.OpenPCI(s, c) }})
	driver.RegisterBackend(driver.Backend{Scheme: "uio", Options: []string{"dma-carveout", "dma-map"},
		Open: func(s driver.Spec, c driver.Config) (*driver.Device, error) { return Host.OpenUIOBackend(s, c) }})
	driver.RegisterBackend(driver.Backend{Scheme: "platform", Options: []string{"dma-carveout", "dma-map", "reg"},
		Open: func(s driver.Spec, c driver.Config) (*driver.Device, error) { return Host.OpenPlatform(s, c) }})
}

// ErrNeedsOptIn is wrapped when a device could only be reached without
// IOMMU protection and the user did not ask for that.
var ErrNeedsOptIn = errors.New("device access without an IOMMU needs explicit opt-in")

func optInError(dev, how string) error {
	return &DeviceError{Device: dev, Op: how, Err: ErrNeedsOptIn,
		Fix: "the device could then DMA anywhere in memory; if that is acceptable (bring-up, a board without an IOMMU) add ?unsafe-noiommu=1 to the spec or pass --unsafe-noiommu"}
}

// release runs fns in order and joins their errors.
type releaser []func() error

func (r *releaser) add(f func() error) { *r = append(*r, f) }

func (r releaser) run() error {
	var errs []error
	for i := len(r) - 1; i >= 0; i-- {
		errs = append(errs, r[i]())
	}
	return errors.Join(errs...)
}

// noIOMMUMapper picks DMA memory for a device without an IOMMU: a physical
// carve-out given with dma-carveout, a UIO map given with dma-map, or
// pagemap.
func (s Sys) noIOMMUMapper(dev string, opts map[string][]string, u *UIODevice, rel *releaser) (dma.Mapper, error) {
	get := func(k string) string {
		if v := opts[k]; len(v) > 0 {
			return v[len(v)-1]
		}
		return ""
	}
	if v := get("dma-carveout"); v != "" {
		r, err := ParsePhysRange(v)
		if err != nil {
			return nil, &DeviceError{Device: dev, Op: "open", Err: driver.BadOption("dma-carveout", v, err.Error(), "ADDR+SIZE of reserved physical memory, e.g. 0x9f000000+16M")}
		}
		mem, unmap, err := s.MapPhys("dma-carveout", r.Addr, r.Size)
		if err != nil {
			return nil, err
		}
		rel.add(unmap)
		return NewCarveout(r, mem), nil
	}
	if v := get("dma-map"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || u == nil || m < 0 || m >= len(u.Info.Maps) {
			n := 0
			if u != nil {
				n = len(u.Info.Maps)
			}
			accepted := "a UIO device's map number; dma-map applies to UIO devices only"
			if n > 0 {
				accepted = fmt.Sprintf("0 to %d (the device's UIO maps)", n-1)
			}
			return nil, &DeviceError{Device: dev, Op: "open", Err: driver.BadOption("dma-map", v, "no such UIO map", accepted)}
		}
		um := u.Info.Maps[m]
		mem := u.mapped[m][um.Offset : um.Offset+um.Size]
		return NewCarveout(PhysRange{Addr: um.Addr + um.Offset, Size: um.Size}, mem), nil
	}
	return &dma.Pagemap{Path: s.Path("/proc/self/pagemap")}, nil
}

func windowsAsRegs(ws []*Window) []driver.Regs {
	out := make([]driver.Regs, len(ws))
	for i, w := range ws {
		out[i] = w
	}
	return out
}

// OpenUIOBackend opens "uio:/dev/uioN" (or "uio:uioN"): every UIO memory
// map becomes a register window, in map order. It needs unsafe-noiommu.
func (s Sys) OpenUIOBackend(spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	if !cfg.UnsafeNoIOMMU {
		return nil, optInError(spec.Name, "UIO")
	}
	return s.openUIODevice(spec.Name, spec, cfg)
}

func (s Sys) openUIODevice(name string, spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	u, err := s.OpenUIO(name)
	if err != nil {
		return nil, err
	}
	var rel releaser
	rel.add(u.Close)
	m, err := s.noIOMMUMapper(u.Info.Dev, spec.Options, u, &rel)
	if err != nil {
		_ = rel.run()
		return nil, err
	}
	d := &driver.Device{Backend: "uio", Bus: u.Info.ParentBus, Regions: windowsAsRegs(u.Windows), Mapper: m, Extra: u}
	uioPath := s.Path(u.Info.Dev)
	d.OpenIRQ = func(i int) (driver.IRQ, error) {
		if i != 0 {
			return nil, &DeviceError{Device: u.Info.Dev, Op: fmt.Sprintf("open interrupt %d", i), Err: errors.New("a UIO device has one interrupt, 0")}
		}
		h, err := irqfd.OpenUIO(uioPath)
		if err != nil {
			return nil, &DeviceError{Device: u.Info.Dev, Op: "open its interrupt", Err: err, Fix: "the UIO driver must have an interrupt (uio_pdrv_genirq with the node's interrupts property)"}
		}
		return h, nil
	}
	base := s.Path("/sys/class/uio/" + strings.TrimPrefix(u.Info.Dev, "/dev/") + "/device")
	switch u.Info.ParentBus {
	case "pci":
		fillPCIIdentity(d, base)
	default:
		d.Bus = "platform"
		if pd, err := s.Platform(u.Info.Parent); err == nil {
			d.Compatible = pd.Compatible
			d.NonCoherent = !pd.DMACoherent
			d.Node = pd.Node
		}
	}
	d.Release = rel.run
	return d, nil
}

func fillPCIIdentity(d *driver.Device, dir string) {
	if v, err := readHex(dir + "/vendor"); err == nil {
		d.VendorID = uint16(v)
	}
	if v, err := readHex(dir + "/device"); err == nil {
		d.DeviceID = uint16(v)
	}
	if v, err := readHex(dir + "/revision"); err == nil {
		d.Revision = uint8(v)
	}
}

// OpenPlatform opens "platform:NODE": through its UIO device when one is
// bound, through vfio-platform when bound to it, else (unsafe-noiommu only)
// through /dev/mem windows of its reg ranges once no driver holds it. Its
// errors name the node once.
func (s Sys) OpenPlatform(spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	pd, err := s.Platform(spec.Name)
	if err != nil {
		return nil, err
	}
	d, err := s.openPlatform(pd, spec, cfg)
	return d, forDevice(pd.Name, err)
}

func (s Sys) openPlatform(pd *PlatformDevice, spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	var (
		d   *driver.Device
		err error
	)
	switch {
	case len(pd.UIO) > 0:
		if !cfg.UnsafeNoIOMMU {
			return nil, optInError(pd.Name, "UIO device "+pd.UIO[0])
		}
		d, err = s.openUIODevice(pd.UIO[0], spec, cfg)
	case pd.Driver == "vfio-platform":
		d, err = s.openVFIOPlatform(pd, spec, cfg)
	case pd.Driver != "":
		if _, ok := driver.Claims(&driver.Device{Bus: "platform", Compatible: pd.Compatible}); !ok {
			return nil, &DeviceError{Device: pd.Name, Op: "open", Err: fmt.Errorf("%w: the kernel's %s driver owns it, and no gopmd driver claims compatible %q", ErrWrongDriver, pd.Driver, pd.Compatible),
				Fix: "gopmd drives NXP ENETC and FEC/ENET ports only; leave this device to " + pd.Driver}
		}
		return nil, &DeviceError{Device: pd.Name, Op: "open", Err: fmt.Errorf("%w: %s", ErrWrongDriver, pd.Driver), Fix: platformFreeHint(pd)}
	default:
		if !cfg.UnsafeNoIOMMU {
			return nil, optInError(pd.Name, "/dev/mem window (no driver bound)")
		}
		d, err = s.openDevmem(pd, spec)
	}
	if err != nil {
		return nil, err
	}
	d.Bus = "platform"
	d.Compatible = pd.Compatible
	d.NonCoherent = !pd.DMACoherent
	d.Node = pd.Node
	return d, nil
}

func platformFreeHint(pd *PlatformDevice) string {
	h := fmt.Sprintf("bind it to uio_pdrv_genirq (node compatible \"generic-uio\", module option of_id=generic-uio) or vfio-platform, or free it for /dev/mem: echo gopmd > /sys/bus/platform/devices/%s/driver_override, then ", pd.Name)
	if pd.NoUnbind {
		return h + fmt.Sprintf("%s has no sysfs unbind (suppress_bind_attrs): rmmod %s and modprobe %s again (its other devices come back, this one stays free)", pd.Driver, pd.Driver, pd.Driver)
	}
	return h + fmt.Sprintf("echo %s > /sys/bus/platform/drivers/%s/unbind", pd.Name, pd.Driver)
}

func (s Sys) openDevmem(pd *PlatformDevice, spec driver.Spec) (*driver.Device, error) {
	regs := pd.Reg
	if v := spec.Options.Get("reg"); v != "" {
		r, err := ParsePhysRange(v)
		if err != nil {
			return nil, &DeviceError{Device: pd.Name, Op: "open", Err: driver.BadOption("reg", v, err.Error(), "ADDR+SIZE of the register window, e.g. 0x2188000+0x4000")}
		}
		regs = []PhysRange{r}
	}
	if len(regs) == 0 {
		return nil, &DeviceError{Device: pd.Name, Op: "/dev/mem window", Err: errors.New("no reg range known"),
			Fix: "the device-tree node has no reg; give it with ?reg=ADDR+SIZE"}
	}
	var rel releaser
	d := &driver.Device{Backend: "devmem"}
	for i, r := range regs {
		mem, unmap, err := s.MapPhys(fmt.Sprintf("reg%d", i), r.Addr, r.Size)
		if err != nil {
			_ = rel.run()
			return nil, err
		}
		rel.add(unmap)
		d.Regions = append(d.Regions, NewWindow(fmt.Sprintf("%s reg%d (%s)", pd.Name, i, r), mem))
	}
	m, err := s.noIOMMUMapper(pd.Name, spec.Options, nil, &rel)
	if err != nil {
		_ = rel.run()
		return nil, err
	}
	d.Mapper = m
	d.Release = rel.run
	return d, nil
}

// fileExists reports whether p exists.
func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

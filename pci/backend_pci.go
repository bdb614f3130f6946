package pci

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci/internal/vfio"
)

// Access is how a PCI function is reached.
type Access string

// The ways OpenPCI reaches a device.
const (
	AccessType1   Access = "vfio-type1"   // VFIO container/group with an IOMMU
	AccessIOMMUFD Access = "iommufd"      // VFIO cdev bound to iommufd
	AccessNoIOMMU Access = "vfio-noiommu" // VFIO no-IOMMU group (unsafe)
	AccessUIO     Access = "uio"          // uio_pci_generic + sysfs resourceN (unsafe)
)

// accessFacts are what decides the access path for a PCI function.
type accessFacts struct {
	driver      string
	group       string
	groupNode   bool // /dev/vfio/<group>
	noIOMMUNode bool // /dev/vfio/noiommu-<group>
	iommufd     bool // /dev/iommu
	cdev        bool // sysfs vfio-dev/vfioN
	// claimed: a registered gopmd driver takes the device's PCI ID (id),
	// so binding it to vfio-pci is worth suggesting.
	claimed bool
	id      string
}

func (s Sys) pciFacts(a Address, d *Device) accessFacts {
	f := accessFacts{driver: d.Driver, group: d.IOMMUGroup, iommufd: fileExists(s.Path("/dev/iommu")), id: d.ID()}
	_, f.claimed = driver.Claims(&driver.Device{Bus: "pci", VendorID: d.VendorID, DeviceID: d.DeviceID, Revision: d.Revision})
	if f.group != "" {
		f.groupNode = fileExists(s.Path("/dev/vfio/" + f.group))
		f.noIOMMUNode = fileExists(s.Path("/dev/vfio/noiommu-" + f.group))
	}
	_, err := cdevOf(s, s.pciDev(a))
	f.cdev = err == nil
	return f
}

// chooseAccess picks the access path from the facts, the iommu option
// (auto, type1, iommufd) and the unsafe-noiommu opt-in.
func chooseAccess(dev string, f accessFacts, opt string, unsafe bool) (Access, error) {
	if opt != "" && opt != "auto" && opt != "type1" && opt != "iommufd" {
		return "", &DeviceError{Device: dev, Op: "open", Err: driver.BadOption("iommu", opt, "unknown IOMMU interface", "auto, type1 or iommufd")}
	}
	switch f.driver {
	case DriverUIO:
		if opt == "type1" || opt == "iommufd" {
			return "", &DeviceError{Device: dev, Op: "iommu=" + opt, Err: ErrWrongDriver, Fix: "the device is on uio_pci_generic, which has no IOMMU: bind it to vfio-pci"}
		}
		if !unsafe {
			return "", optInError(dev, "uio_pci_generic")
		}
		return AccessUIO, nil
	case DriverVFIO:
	case "":
		if !f.claimed {
			return "", &DeviceError{Device: dev, Op: "open", Err: fmt.Errorf("%w: no driver bound, and no gopmd driver claims PCI ID %s", ErrWrongDriver, f.id),
				Fix: "gopmd drives NXP ENETC and FEC/ENET ports only, and this is not one; nicctl list shows the ones it can drive"}
		}
		return "", &DeviceError{Device: dev, Op: "open", Err: fmt.Errorf("%w: no driver bound", ErrWrongDriver),
			Fix: "bind it first: nicctl bind " + dev + " vfio-pci (or: echo vfio-pci > /sys/bus/pci/devices/" + dev + "/driver_override; echo " + dev + " > /sys/bus/pci/drivers_probe)"}
	default:
		if !f.claimed {
			return "", &DeviceError{Device: dev, Op: "open", Err: fmt.Errorf("%w: the kernel's %s driver owns it, and no gopmd driver claims PCI ID %s", ErrWrongDriver, f.driver, f.id),
				Fix: "gopmd drives NXP ENETC and FEC/ENET ports only; leave this device to " + f.driver + " (nicctl list shows the ones gopmd can drive)"}
		}
		return "", &DeviceError{Device: dev, Op: "open", Err: fmt.Errorf("%w: %s", ErrWrongDriver, f.driver),
			Fix: "the kernel's " + f.driver + " driver owns it; hand it over with nicctl bind " + dev + " vfio-pci (gopmd never rebinds on its own)"}
	}
	canFD := f.iommufd && f.cdev
	switch {
	case opt == "iommufd" && !canFD:
		return "", &DeviceError{Device: dev, Op: "iommu=iommufd", Err: errors.New("no iommufd or no VFIO cdev for the device"),
			Fix: "needs /dev/iommu (CONFIG_IOMMUFD, Linux 6.2+) and /dev/vfio/devices/vfioN (CONFIG_VFIO_DEVICE_CDEV, 6.6+); use iommu=type1"}
	case opt == "iommufd" || (opt != "type1" && canFD):
		return AccessIOMMUFD, nil
	case f.group != "" && f.groupNode:
		return AccessType1, nil
	case f.noIOMMUNode:
		if !unsafe {
			return "", optInError(dev, "VFIO no-IOMMU group noiommu-"+f.group)
		}
		return AccessNoIOMMU, nil
	case f.group == "":
		return "", &DeviceError{Device: dev, Op: "open", Err: ErrNoIOMMU,
			Fix: "enable the IOMMU (intel_iommu=on, an SMMU) or, with unsafe-noiommu, enable VFIO no-IOMMU mode (echo 1 > /sys/module/vfio/parameters/enable_unsafe_noiommu_mode) or use uio_pci_generic"}
	default:
		return "", &DeviceError{Device: dev, Op: "open", Err: fmt.Errorf("no /dev/vfio/%s", f.group), Fix: "is devtmpfs mounted and vfio-pci loaded?"}
	}
}

// Process-wide containers: every device opened through a Sys shares one
// type1 container (or one iommufd IOAS), so DMA memory mapped once is
// reachable by all of them at the same IOVA.
var shared struct {
	sync.Mutex
	containers map[string]*refCounted[*Container]
	iommufds   map[string]*refCounted[*IOMMUFD]
}

type refCounted[T any] struct {
	v    T
	refs int
}

func (s Sys) sharedContainer(noIOMMU bool) (*Container, func() error, error) {
	shared.Lock()
	defer shared.Unlock()
	key := s.Root + "|" + strconv.FormatBool(noIOMMU)
	if shared.containers == nil {
		shared.containers = map[string]*refCounted[*Container]{}
	}
	rc := shared.containers[key]
	if rc == nil {
		c, err := s.OpenContainer(noIOMMU)
		if err != nil {
			return nil, nil, err
		}
		rc = &refCounted[*Container]{v: c}
		shared.containers[key] = rc
	}
	rc.refs++
	return rc.v, func() error {
		shared.Lock()
		defer shared.Unlock()
		if rc.refs--; rc.refs == 0 {
			delete(shared.containers, key)
			return rc.v.Close()
		}
		return nil
	}, nil
}

func (s Sys) sharedIOMMUFD() (*IOMMUFD, func() error, error) {
	shared.Lock()
	defer shared.Unlock()
	if shared.iommufds == nil {
		shared.iommufds = map[string]*refCounted[*IOMMUFD]{}
	}
	rc := shared.iommufds[s.Root]
	if rc == nil {
		f, err := s.OpenIOMMUFD()
		if err != nil {
			return nil, nil, err
		}
		rc = &refCounted[*IOMMUFD]{v: f}
		shared.iommufds[s.Root] = rc
	}
	rc.refs++
	return rc.v, func() error {
		shared.Lock()
		defer shared.Unlock()
		if rc.refs--; rc.refs == 0 {
			delete(shared.iommufds, s.Root)
			return rc.v.Close()
		}
		return nil
	}, nil
}

// OpenVFIO opens a PCI function bound to vfio-pci through the access path
// chooseAccess picks, maps its memory BARs and enables bus mastering. It is
// what the "pci" backend does, for programs that want the VFIO handles.
func (s Sys) OpenVFIO(a Address, acc Access) (*VFIODevice, dma.Mapper, func() error, error) {
	return s.OpenVFIOToken(a, acc, nil)
}

// OpenVFIOToken is OpenVFIO with a VF token (nil: none): a VF passes it
// when opened; an SR-IOV PF passes it and then sets it as its VFs' token.
func (s Sys) OpenVFIOToken(a Address, acc Access, tok *VFToken) (*VFIODevice, dma.Mapper, func() error, error) {
	d, err := s.Device(a)
	if err != nil {
		return nil, nil, nil, err
	}
	var (
		vd     *VFIODevice
		mapper dma.Mapper
		drop   func() error
	)
	switch acc {
	case AccessIOMMUFD:
		f, rel, err := s.sharedIOMMUFD()
		if err != nil {
			return nil, nil, nil, err
		}
		if vd, err = f.OpenCdevToken(s, s.pciDev(a), a.String(), tok); err != nil {
			rel()
			return nil, nil, nil, err
		}
		mapper, drop = f, rel
	case AccessType1, AccessNoIOMMU:
		c, rel, err := s.sharedContainer(acc == AccessNoIOMMU)
		if err != nil {
			return nil, nil, nil, err
		}
		g, err := c.Group(d.IOMMUGroup)
		if err == nil {
			vd, err = g.OpenDeviceToken(a.String(), tok)
		}
		if err != nil {
			rel()
			return nil, nil, nil, err
		}
		mapper, drop = c, rel
	default:
		return nil, nil, nil, &DeviceError{Device: a.String(), Op: "open VFIO", Err: fmt.Errorf("access %q is not VFIO", acc)}
	}
	if tok != nil && s.sriovRoleOf(a).pf {
		if err := vd.SetVFToken(*tok); err != nil {
			return nil, nil, nil, errors.Join(err, vd.Close(), drop())
		}
	}
	return vd, mapper, func() error { return errors.Join(vd.Close(), drop()) }, nil
}

// OpenPCI opens "pci:ADDR" for the pci backend. Its errors name the
// device once.
func (s Sys) OpenPCI(spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	a, err := ParseAddress(spec.Name)
	if err != nil {
		return nil, err
	}
	dev, err := s.openPCI(a, spec, cfg)
	return dev, forDevice(a.String(), err)
}

func (s Sys) openPCI(a Address, spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	d, err := s.Device(a)
	if err != nil {
		return nil, err
	}
	acc, err := chooseAccess(a.String(), s.pciFacts(a, d), spec.Options.Get("iommu"), cfg.UnsafeNoIOMMU)
	if err != nil {
		return nil, err
	}
	tok, err := vfTokenOption(a.String(), s.sriovRoleOf(a), spec.Options, acc)
	if err != nil {
		return nil, err
	}
	if acc == AccessType1 || acc == AccessIOMMUFD {
		// The kernel would only say "not viable" (type1) or EBUSY
		// (iommufd); sysfs says which devices are in the way.
		if err := s.checkGroupMembers(d); err != nil {
			return nil, err
		}
	}
	dev := &driver.Device{Bus: "pci", VendorID: d.VendorID, DeviceID: d.DeviceID, Revision: d.Revision, Regions: make([]driver.Regs, 6)}
	dev.Node = s.ofNode(a)
	var rel releaser
	fail := func(err error) (*driver.Device, error) { _ = rel.run(); return nil, err }
	if acc == AccessUIO {
		dev.Backend = "uio"
		for _, b := range d.BARs {
			if b.Size == 0 || !b.IsMem() {
				continue
			}
			w, unmap, err := s.mapResource(a, b)
			if err != nil {
				return fail(err)
			}
			rel.add(unmap)
			dev.Regions[b.Index] = w
		}
		if err := s.uioBusMaster(a); err != nil {
			return fail(err)
		}
		m, err := s.noIOMMUMapper(a.String(), spec.Options, nil, &rel)
		if err != nil {
			return fail(err)
		}
		dev.Mapper = m
		dev.Release = rel.run
		return dev, nil
	}
	vd, mapper, closeVD, err := s.OpenVFIOToken(a, acc, tok)
	if err != nil {
		return nil, err
	}
	rel.add(closeVD)
	dev.Backend = "vfio"
	dev.Extra = vd
	dev.OpenIRQ = vd.openIRQFunc()
	for i := 0; i < 6 && i < int(vd.Info.NumRegions); i++ {
		r, err := vd.Region(i)
		if err != nil || r.Size == 0 || !r.Mappable() {
			continue
		}
		w, err := vd.MapRegion(i, fmt.Sprintf("BAR%d", i))
		if err != nil {
			return fail(err)
		}
		dev.Regions[i] = w
	}
	if _, _, err := vd.EnableBusMaster(); err != nil {
		return fail(err)
	}
	if acc == AccessNoIOMMU {
		if mapper, err = s.noIOMMUMapper(a.String(), spec.Options, nil, &rel); err != nil {
			return fail(err)
		}
	}
	dev.Mapper = mapper
	if vd.Info.Flags&vfio.DeviceFlagsReset != 0 {
		dev.Reset = vd.Reset
	}
	dev.Release = rel.run
	return dev, nil
}

// mapResource mmaps BAR b through sysfs resourceN (uio_pci_generic path).
func (s Sys) mapResource(a Address, b BAR) (*Window, func() error, error) {
	p := fmt.Sprintf("%s/resource%d", s.pciDev(a), b.Index)
	f, err := s.openAttr(p, unix.O_RDWR|unix.O_SYNC)
	if err != nil {
		return nil, nil, &DeviceError{Device: a.String(), Op: fmt.Sprintf("open its sysfs resource%d", b.Index), Err: bareErr(err), Fix: fixOpen(err)}
	}
	defer f.Close()
	mem, err := unix.Mmap(int(f.Fd()), 0, int(b.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, &DeviceError{Device: a.String(), Op: fmt.Sprintf("mmap its sysfs resource%d (%#x bytes)", b.Index, b.Size), Err: err}
	}
	return NewWindow(fmt.Sprintf("%s BAR%d", a, b.Index), mem), func() error { return unix.Munmap(mem) }, nil
}

// uioBusMaster sets Memory Space and Bus Master Enable through the sysfs
// config file.
func (s Sys) uioBusMaster(a Address) error {
	p := s.pciDev(a) + "/config"
	f, err := s.openAttr(p, unix.O_RDWR)
	if err != nil {
		return &DeviceError{Device: a.String(), Op: "open its sysfs config", Err: bareErr(err), Fix: fixOpen(err)}
	}
	defer f.Close()
	var b [2]byte
	if _, err := f.ReadAt(b[:], 4); err != nil {
		return &DeviceError{Device: a.String(), Op: "read command register", Err: err}
	}
	binary.LittleEndian.PutUint16(b[:], binary.LittleEndian.Uint16(b[:])|cmdMemory|cmdBusMaster)
	if _, err := f.WriteAt(b[:], 4); err != nil {
		return &DeviceError{Device: a.String(), Op: "enable bus mastering", Err: err}
	}
	return nil
}

// openVFIOPlatform opens a platform device bound to vfio-platform: its
// regions (the node's reg ranges in order) become the register windows.
func (s Sys) openVFIOPlatform(pd *PlatformDevice, spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	noIOMMU := false
	switch {
	case pd.IOMMUGroup == "":
		return nil, &DeviceError{Device: pd.Name, Op: "vfio-platform", Err: ErrNoIOMMU, Fix: "the node has no iommus property; use UIO or, with unsafe-noiommu, /dev/mem"}
	case fileExists(s.Path("/dev/vfio/" + pd.IOMMUGroup)):
	case fileExists(s.Path("/dev/vfio/noiommu-" + pd.IOMMUGroup)):
		if !cfg.UnsafeNoIOMMU {
			return nil, optInError(pd.Name, "VFIO no-IOMMU group noiommu-"+pd.IOMMUGroup)
		}
		noIOMMU = true
	default:
		return nil, &DeviceError{Device: pd.Name, Op: "vfio-platform", Err: fmt.Errorf("no /dev/vfio/%s", pd.IOMMUGroup)}
	}
	c, drop, err := s.sharedContainer(noIOMMU)
	if err != nil {
		return nil, err
	}
	var rel releaser
	rel.add(drop)
	fail := func(err error) (*driver.Device, error) { _ = rel.run(); return nil, err }
	g, err := c.Group(pd.IOMMUGroup)
	if err != nil {
		return fail(err)
	}
	vd, err := g.OpenDevice(pd.Name)
	if err != nil {
		return fail(err)
	}
	rel.add(vd.Close)
	dev := &driver.Device{Backend: "vfio", Extra: vd, Mapper: c}
	for i := 0; i < int(vd.Info.NumRegions); i++ {
		w, err := vd.MapRegion(i, fmt.Sprintf("region%d", i))
		if err != nil {
			return fail(err)
		}
		dev.Regions = append(dev.Regions, w)
	}
	if noIOMMU {
		if dev.Mapper, err = s.noIOMMUMapper(pd.Name, spec.Options, nil, &rel); err != nil {
			return fail(err)
		}
	}
	if vd.Info.Flags&vfio.DeviceFlagsReset != 0 {
		dev.Reset = vd.Reset
	}
	dev.OpenIRQ = vd.openPlatformIRQFunc() // every interrupt of the node
	dev.Release = rel.run
	return dev, nil
}

// forDevice makes an open error name the device being opened exactly once:
// a DeviceError about dev passes as it is; any other error (one about a
// shared node such as /dev/vfio/vfio, /dev/iommu or a group, or about a
// range of /dev/mem) is wrapped in one that names dev.
func forDevice(dev string, err error) error {
	var de *DeviceError
	if err == nil || errors.As(err, &de) && de.Device == dev {
		return err
	}
	return &DeviceError{Device: dev, Err: err}
}

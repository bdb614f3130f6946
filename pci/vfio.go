package pci

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/pci/internal/vfio"
)

// Container is a VFIO type1 container (/dev/vfio/vfio): one IOMMU address
// space shared by the groups attached to it. It is the dma.Mapper of every
// device in those groups, so a buffer mapped once is reachable by all of
// them at the same IOVA.
type Container struct {
	sys   Sys
	fd    int
	mu    sync.Mutex
	typ   int // IOMMU type once set
	grps  map[string]*Group
	space *iovaSpace
	// PageSizes is the IOMMU page-size bitmap (bit n = 2^n bytes).
	PageSizes uint64
	// Ranges are the usable IOVA ranges (inclusive) the IOMMU reports.
	Ranges []vfio.IOVARange
	// DMALimit is the highest IOVA handed out (a device's DMA mask). Set
	// it before the first Map; the default allows 48-bit addresses.
	DMALimit uint64
	maps     map[uint64]uint64
}

func ioctlPtr[T any](fd int, req uintptr, p *T, name string) (int, error) {
	r, err := vfio.Ioctl(fd, req, unsafe.Pointer(p), name)
	runtime.KeepAlive(p)
	return r, err
}

// OpenContainer opens /dev/vfio/vfio and checks the API version and that
// the type1 IOMMU (or, with noIOMMU, the no-IOMMU driver) is offered.
func (s Sys) OpenContainer(noIOMMU bool) (*Container, error) {
	path := s.Path("/dev/vfio/vfio")
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		fix := fixOpen(err)
		if errors.Is(err, fs.ErrNotExist) {
			fix = "no VFIO: modprobe vfio-pci (it creates /dev/vfio/vfio)"
		}
		return nil, &DeviceError{Device: path, Op: "open VFIO container", Err: err, Fix: fix}
	}
	c := &Container{sys: s, fd: fd, grps: map[string]*Group{}, DMALimit: 1<<48 - 1, maps: map[uint64]uint64{}}
	v, err := vfio.IoctlInt(fd, vfio.GetAPIVersion, 0, "VFIO_GET_API_VERSION")
	if err != nil || v != vfio.APIVersion {
		unix.Close(fd)
		return nil, &DeviceError{Device: path, Op: "API version", Err: fmt.Errorf("got %d (%v), want %d", v, err, vfio.APIVersion), Fix: "this kernel's VFIO is not the one gopmd knows"}
	}
	want := []int{vfio.Type1v2IOMMU, vfio.Type1IOMMU}
	if noIOMMU {
		want = []int{vfio.NoIOMMUIOMMU}
	}
	for _, t := range want {
		if ok, _ := vfio.IoctlInt(fd, vfio.CheckExtension, uintptr(t), "VFIO_CHECK_EXTENSION"); ok > 0 {
			c.typ = -t // chosen, set once a group is attached
			break
		}
	}
	if c.typ == 0 {
		unix.Close(fd)
		fix := "load vfio_iommu_type1 (modprobe vfio_iommu_type1) and enable the IOMMU"
		if noIOMMU {
			fix = "the kernel has no VFIO no-IOMMU mode (CONFIG_VFIO_NOIOMMU) or it is off: echo 1 > /sys/module/vfio/parameters/enable_unsafe_noiommu_mode, or use uio_pci_generic"
		}
		return nil, &DeviceError{Device: path, Op: "IOMMU type", Err: ErrNoIOMMU, Fix: fix}
	}
	return c, nil
}

// NoIOMMU reports whether the container runs without an IOMMU (bus
// addresses are physical; Map is refused).
func (c *Container) NoIOMMU() bool { return c.typ == vfio.NoIOMMUIOMMU || c.typ == -vfio.NoIOMMUIOMMU }

// Group is a VFIO group (/dev/vfio/N or /dev/vfio/noiommu-N) attached to a
// container.
type Group struct {
	c  *Container
	fd int
	// ID is the IOMMU group number as sysfs names it.
	ID string
}

// Group attaches IOMMU group id to the container (once; later calls return
// the same Group). The group must be viable: every device in it bound to
// vfio or to no driver. The first group sets the IOMMU type and reads the
// IOMMU's page sizes and usable IOVA ranges.
func (c *Container) Group(id string) (*Group, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.grps[id]; g != nil {
		return g, nil
	}
	name := id
	if c.NoIOMMU() {
		name = "noiommu-" + id
	}
	path := c.sys.Path("/dev/vfio/" + name)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		fix := "bind the group's devices to vfio-pci; " + fixOpen(err)
		if errors.Is(err, unix.EBUSY) {
			fix = "another process holds the group"
		}
		return nil, &DeviceError{Device: path, Op: "open VFIO group", Err: err, Fix: fix}
	}
	st := vfio.GroupStatus{Argsz: uint32(unsafe.Sizeof(vfio.GroupStatus{}))}
	if _, err := ioctlPtr(fd, vfio.GroupGetStatus, &st, "VFIO_GROUP_GET_STATUS"); err != nil {
		unix.Close(fd)
		return nil, &DeviceError{Device: path, Op: "group status", Err: err}
	}
	if st.Flags&vfio.GroupFlagsViable == 0 {
		unix.Close(fd)
		return nil, &DeviceError{Device: path, Op: "group " + id, Err: ErrNotViable,
			Fix: "every device in /sys/kernel/iommu_groups/" + id + "/devices must be bound to vfio-pci or unbound"}
	}
	cfd := int32(c.fd)
	if _, err := ioctlPtr(fd, vfio.GroupSetContainer, &cfd, "VFIO_GROUP_SET_CONTAINER"); err != nil {
		unix.Close(fd)
		return nil, &DeviceError{Device: path, Op: "attach to container", Err: err}
	}
	if c.typ < 0 {
		if _, err := vfio.IoctlInt(c.fd, vfio.SetIOMMU, uintptr(-c.typ), "VFIO_SET_IOMMU"); err != nil {
			unix.Close(fd)
			fix := ""
			if c.NoIOMMU() {
				fix = "no-IOMMU mode needs CAP_SYS_RAWIO"
			}
			return nil, &DeviceError{Device: path, Op: fmt.Sprintf("set IOMMU type %d", -c.typ), Err: err, Fix: fix}
		}
		c.typ = -c.typ
		if !c.NoIOMMU() {
			if err := c.readInfo(); err != nil {
				unix.Close(fd)
				return nil, &DeviceError{Device: path, Op: "IOMMU info", Err: err}
			}
		}
	} else if !c.NoIOMMU() {
		// Another group's reserved regions (an MSI window, a bridge's
		// apertures) may narrow the usable IOVA ranges.
		if err := c.readInfo(); err != nil {
			unix.Close(fd)
			return nil, &DeviceError{Device: path, Op: "IOMMU info", Err: err}
		}
	}
	g := &Group{c: c, fd: fd, ID: id}
	c.grps[id] = g
	return g, nil
}

// readInfo runs VFIO_IOMMU_GET_INFO: page sizes and the IOVA-range
// capability, growing the buffer when the kernel asks for more.
func (c *Container) readInfo() error {
	size := uint32(unsafe.Sizeof(vfio.IOMMUType1Info{}))
	for try := 0; try < 4; try++ {
		buf := make([]byte, size)
		hdr := (*vfio.IOMMUType1Info)(unsafe.Pointer(&buf[0]))
		hdr.Argsz = size
		if _, err := vfio.Ioctl(c.fd, vfio.IOMMUGetInfo, unsafe.Pointer(&buf[0]), "VFIO_IOMMU_GET_INFO"); err != nil {
			return err
		}
		if hdr.Argsz > size {
			size = hdr.Argsz
			continue
		}
		pg, ranges, err := parseIOMMUInfo(buf)
		if err != nil {
			return err
		}
		c.PageSizes, c.Ranges = pg, ranges
		var rs []iovaRange
		for _, r := range ranges {
			rs = append(rs, iovaRange{r.Start, r.End})
		}
		if len(rs) == 0 { // kernels before 5.4 report no ranges
			rs = []iovaRange{{0, 1<<48 - 1}}
		}
		if c.space == nil {
			c.space = newIOVASpace(rs, 1<<64-1)
		} else {
			c.space.restrict(rs)
		}
		return nil
	}
	return errors.New("VFIO_IOMMU_GET_INFO kept growing")
}

// parseIOMMUInfo decodes a vfio_iommu_type1_info buffer with its
// capability chain.
func parseIOMMUInfo(buf []byte) (uint64, []vfio.IOVARange, error) {
	hdr := (*vfio.IOMMUType1Info)(unsafe.Pointer(&buf[0]))
	var ranges []vfio.IOVARange
	if hdr.Flags&vfio.IOMMUInfoCaps == 0 || hdr.CapOffset == 0 {
		return hdr.IOVAPgsizes, nil, nil
	}
	err := walkCaps(buf, hdr.CapOffset, func(id uint16, cap []byte) error {
		if id != vfio.IOMMUType1InfoCapIOVARange {
			return nil
		}
		if len(cap) < 16 {
			return errors.New("IOVA range capability truncated")
		}
		n := binary.NativeEndian.Uint32(cap[8:])
		if uint64(len(cap)) < 16+16*uint64(n) {
			return fmt.Errorf("IOVA range capability: %d ranges do not fit %d bytes", n, len(cap))
		}
		for i := uint32(0); i < n; i++ {
			o := 16 + 16*i
			ranges = append(ranges, vfio.IOVARange{Start: binary.NativeEndian.Uint64(cap[o:]), End: binary.NativeEndian.Uint64(cap[o+8:])})
		}
		return nil
	})
	return hdr.IOVAPgsizes, ranges, err
}

// walkCaps follows a VFIO capability chain starting at offset off; each
// capability is passed from its header to the end of the buffer.
func walkCaps(buf []byte, off uint32, fn func(id uint16, cap []byte) error) error {
	for seen := 0; off != 0; seen++ {
		if seen > 64 || uint64(off)+8 > uint64(len(buf)) {
			return fmt.Errorf("capability chain: offset %#x outside %d-byte info", off, len(buf))
		}
		id := binary.NativeEndian.Uint16(buf[off:])
		next := binary.NativeEndian.Uint32(buf[off+4:])
		if err := fn(id, buf[off:]); err != nil {
			return err
		}
		off = next
	}
	return nil
}

// Name implements dma.Mapper.
func (c *Container) Name() string { return "vfio-type1" }

// NeedsLocked implements dma.Mapper: VFIO pins the pages it maps.
func (c *Container) NeedsLocked() bool { return false }

// Domain identifies the container's IOMMU address space for
// dma.SameDomain: every device opened into this container reaches a buffer
// mapped once at the same IOVA.
func (c *Container) Domain() any { return c }

// Map implements dma.Mapper: it picks an IOVA inside the IOMMU's allowed
// ranges and below DMALimit, aligned to the largest IOMMU page size the
// region fills, and maps mem there readable and writable.
func (c *Container) Map(mem []byte, attr dma.Attr) (dma.Mapping, error) {
	if c.NoIOMMU() || c.space == nil {
		return dma.Mapping{}, fmt.Errorf("vfio: region %q: the container has no IOMMU (no-IOMMU mode or no group attached): use physical addresses (pagemap or a carve-out)", attr.Name)
	}
	n := uint64(len(mem))
	va := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
	if n == 0 || n%dma.PageSize != 0 || va%dma.PageSize != 0 {
		return dma.Mapping{}, fmt.Errorf("vfio: region %q at %#x of %d bytes: must be whole pages", attr.Name, va, n)
	}
	c.mu.Lock()
	c.space.limit = c.DMALimit
	c.mu.Unlock()
	iova, err := c.space.alloc(n, alignFor(n, c.PageSizes))
	if err != nil {
		return dma.Mapping{}, fmt.Errorf("vfio: region %q: %w", attr.Name, err)
	}
	m := vfio.DMAMap{Argsz: uint32(unsafe.Sizeof(vfio.DMAMap{})), Flags: vfio.DMAMapFlagRead | vfio.DMAMapFlagWrite, Vaddr: va, IOVA: iova, Size: n}
	if _, err := ioctlPtr(c.fd, vfio.IOMMUMapDMA, &m, "VFIO_IOMMU_MAP_DMA"); err != nil {
		c.space.release(iova)
		fix := ""
		if errors.Is(err, unix.ENOMEM) {
			fix = " (the locked-memory limit is too low: ulimit -l unlimited, or vfio_iommu_type1.dma_entry_limit is reached)"
		}
		return dma.Mapping{}, fmt.Errorf("vfio: map region %q (%d bytes at %#x) to IOVA %#x: %w%s", attr.Name, n, va, iova, err, fix)
	}
	c.mu.Lock()
	c.maps[iova] = n
	c.mu.Unlock()
	return dma.Mapping{IOVA: iova}, nil
}

// Unmap implements dma.Mapper.
func (c *Container) Unmap(mem []byte, m dma.Mapping) error {
	c.mu.Lock()
	n, ok := c.maps[m.IOVA]
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("vfio: unmap IOVA %#x: not mapped by this container", m.IOVA)
	}
	u := vfio.DMAUnmap{Argsz: uint32(unsafe.Sizeof(vfio.DMAUnmap{})), IOVA: m.IOVA, Size: n}
	if _, err := ioctlPtr(c.fd, vfio.IOMMUUnmapDMA, &u, "VFIO_IOMMU_UNMAP_DMA"); err != nil {
		return fmt.Errorf("vfio: unmap IOVA %#x+%#x: %w", m.IOVA, n, err)
	}
	c.mu.Lock()
	delete(c.maps, m.IOVA)
	c.mu.Unlock()
	c.space.release(m.IOVA)
	return nil
}

// Close detaches every group and closes the container; mappings go with it.
func (c *Container) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for id, g := range c.grps {
		errs = append(errs, unix.Close(g.fd))
		delete(c.grps, id)
	}
	errs = append(errs, unix.Close(c.fd))
	return errors.Join(errs...)
}

// OpenDevice gets a device fd from the group (VFIO_GROUP_GET_DEVICE_FD)
// by name: a PCI address or a platform device name.
func (g *Group) OpenDevice(name string) (*VFIODevice, error) {
	b := append([]byte(name), 0)
	fd, err := vfio.Ioctl(g.fd, vfio.GroupGetDeviceFD, unsafe.Pointer(&b[0]), "VFIO_GROUP_GET_DEVICE_FD")
	runtime.KeepAlive(b)
	if err != nil {
		fix := "is the device bound to vfio-pci / vfio-platform, and in group " + g.ID + "?"
		if errors.Is(err, unix.EBUSY) {
			fix = "the device is already open (another gopmd program, or a VM using it through VFIO): close that first"
		}
		return nil, &DeviceError{Device: name, Op: "get device from VFIO group " + g.ID, Err: err, Fix: fix}
	}
	return newVFIODevice(name, fd)
}

// VFIODevice is an open VFIO device fd (from a group or a cdev).
type VFIODevice struct {
	// Name is the PCI address or platform device name it was opened by.
	Name string
	fd   int
	// Info is what VFIO_DEVICE_GET_INFO reported: flags (reset, bus),
	// number of regions and of interrupt indexes.
	Info    vfio.DeviceInfo
	mapped  [][]byte
	eventfd []int
}

func newVFIODevice(name string, fd int) (*VFIODevice, error) {
	d := &VFIODevice{Name: name, fd: fd}
	d.Info.Argsz = uint32(unsafe.Sizeof(d.Info))
	if _, err := ioctlPtr(fd, vfio.DeviceGetInfo, &d.Info, "VFIO_DEVICE_GET_INFO"); err != nil {
		unix.Close(fd)
		return nil, &DeviceError{Device: name, Op: "device info", Err: err}
	}
	return d, nil
}

// FD is the device file descriptor.
func (d *VFIODevice) FD() int { return d.fd }

// Region describes one device region.
type Region struct {
	Index  int
	Size   uint64
	Offset uint64 // file offset on the device fd
	Flags  uint32
	// Sparse lists the parts that may be mmapped when not the whole
	// region may (an MSI-X table inside a BAR is left out); nil means the
	// whole region if MMAP is set.
	Sparse []vfio.RegionSparseMmapArea
}

// Mappable reports whether (part of) the region can be mmapped.
func (r Region) Mappable() bool { return r.Flags&vfio.RegionInfoFlagMmap != 0 }

// Region reads region index i (VFIO_DEVICE_GET_REGION_INFO with its
// capability chain).
func (d *VFIODevice) Region(i int) (Region, error) {
	size := uint32(unsafe.Sizeof(vfio.RegionInfo{}))
	for try := 0; try < 4; try++ {
		buf := make([]byte, size)
		ri := (*vfio.RegionInfo)(unsafe.Pointer(&buf[0]))
		ri.Argsz, ri.Index = size, uint32(i)
		if _, err := vfio.Ioctl(d.fd, vfio.DeviceGetRegionInfo, unsafe.Pointer(&buf[0]), "VFIO_DEVICE_GET_REGION_INFO"); err != nil {
			return Region{}, &DeviceError{Device: d.Name, Op: fmt.Sprintf("region %d info", i), Err: err}
		}
		if ri.Argsz > size {
			size = ri.Argsz
			continue
		}
		return parseRegionInfo(buf)
	}
	return Region{}, &DeviceError{Device: d.Name, Op: fmt.Sprintf("region %d info", i), Err: errors.New("capability buffer kept growing")}
}

func parseRegionInfo(buf []byte) (Region, error) {
	ri := (*vfio.RegionInfo)(unsafe.Pointer(&buf[0]))
	r := Region{Index: int(ri.Index), Size: ri.Size, Offset: ri.Offset, Flags: ri.Flags}
	if ri.Flags&vfio.RegionInfoFlagCaps == 0 || ri.CapOffset == 0 {
		return r, nil
	}
	err := walkCaps(buf, ri.CapOffset, func(id uint16, cap []byte) error {
		if id != vfio.RegionInfoCapSparseMmap {
			return nil
		}
		if len(cap) < 16 {
			return errors.New("sparse-mmap capability truncated")
		}
		n := binary.NativeEndian.Uint32(cap[8:])
		if uint64(len(cap)) < 16+16*uint64(n) {
			return fmt.Errorf("sparse-mmap capability: %d areas do not fit %d bytes", n, len(cap))
		}
		r.Sparse = []vfio.RegionSparseMmapArea{}
		for k := uint32(0); k < n; k++ {
			o := 16 + 16*k
			a := vfio.RegionSparseMmapArea{Offset: binary.NativeEndian.Uint64(cap[o:]), Size: binary.NativeEndian.Uint64(cap[o+8:])}
			if a.Offset+a.Size > r.Size || a.Offset+a.Size < a.Offset {
				return fmt.Errorf("sparse-mmap area %#x+%#x outside the %#x-byte region", a.Offset, a.Size, r.Size)
			}
			r.Sparse = append(r.Sparse, a)
		}
		return nil
	})
	return r, err
}

// MapRegion mmaps region i as a register window. A region with sparse
// areas is reserved whole (inaccessible) and only its areas are mapped
// in; accesses to the holes (an MSI-X table) go through pread/pwrite on
// the device fd, which is how the kernel wants them made.
func (d *VFIODevice) MapRegion(i int, what string) (*Window, error) {
	r, err := d.Region(i)
	if err != nil {
		return nil, err
	}
	if r.Size == 0 {
		return nil, &DeviceError{Device: d.Name, Op: what, Err: errors.New("region not implemented (size 0)")}
	}
	if !r.Mappable() {
		return nil, &DeviceError{Device: d.Name, Op: what, Err: fmt.Errorf("region %d (flags %#x) cannot be mmapped", i, r.Flags), Fix: "I/O-port BARs and some regions are reachable only by read/write"}
	}
	prot := unix.PROT_READ | unix.PROT_WRITE
	if r.Sparse == nil {
		mem, err := unix.Mmap(d.fd, int64(r.Offset), int(r.Size), prot, unix.MAP_SHARED)
		if err != nil {
			return nil, &DeviceError{Device: d.Name, Op: fmt.Sprintf("mmap %s (%#x bytes)", what, r.Size), Err: err}
		}
		d.mapped = append(d.mapped, mem)
		return NewWindow(d.Name+" "+what, mem), nil
	}
	// Reserve the whole region, then map each area over it.
	whole, err := unix.Mmap(-1, 0, int(r.Size), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, &DeviceError{Device: d.Name, Op: "reserve " + what, Err: err}
	}
	d.mapped = append(d.mapped, whole)
	for _, a := range r.Sparse {
		if a.Size == 0 {
			continue
		}
		_, e := unix.MmapPtr(d.fd, int64(r.Offset+a.Offset), unsafe.Add(unsafe.Pointer(&whole[0]), a.Offset), uintptr(a.Size), prot, unix.MAP_SHARED|unix.MAP_FIXED)
		if e != nil {
			return nil, &DeviceError{Device: d.Name, Op: fmt.Sprintf("mmap %s area %#x+%#x", what, a.Offset, a.Size), Err: e}
		}
	}
	w := NewWindow(d.Name+" "+what, whole)
	w.io = &regionIO{fd: d.fd, off: r.Offset, areas: r.Sparse}
	return w, nil
}

// ConfigRead reads n bytes of PCI config space at off.
func (d *VFIODevice) ConfigRead(off int64, b []byte) error {
	r, err := d.Region(vfio.PCIConfigRegionIndex)
	if err != nil {
		return err
	}
	if _, err := unix.Pread(d.fd, b, int64(r.Offset)+off); err != nil {
		return &DeviceError{Device: d.Name, Op: fmt.Sprintf("read config space at %#x", off), Err: err}
	}
	return nil
}

// ConfigWrite writes b to PCI config space at off.
func (d *VFIODevice) ConfigWrite(off int64, b []byte) error {
	r, err := d.Region(vfio.PCIConfigRegionIndex)
	if err != nil {
		return err
	}
	if _, err := unix.Pwrite(d.fd, b, int64(r.Offset)+off); err != nil {
		return &DeviceError{Device: d.Name, Op: fmt.Sprintf("write config space at %#x", off), Err: err}
	}
	return nil
}

// PCI command register bits.
const (
	cmdMemory    = 1 << 1
	cmdBusMaster = 1 << 2
)

// EnableBusMaster sets Memory Space and Bus Master Enable in the command
// register. vfio-pci leaves Bus Master off on every open (and restores the
// register on close): without it the device's DMA goes nowhere. It
// returns the command register before and after.
func (d *VFIODevice) EnableBusMaster() (before, after uint16, err error) {
	var b [2]byte
	if err := d.ConfigRead(4, b[:]); err != nil {
		return 0, 0, err
	}
	before = binary.LittleEndian.Uint16(b[:])
	binary.LittleEndian.PutUint16(b[:], before|cmdMemory|cmdBusMaster)
	if err := d.ConfigWrite(4, b[:]); err != nil {
		return before, 0, err
	}
	if err := d.ConfigRead(4, b[:]); err != nil {
		return before, 0, err
	}
	after = binary.LittleEndian.Uint16(b[:])
	if after&cmdBusMaster == 0 {
		return before, after, &DeviceError{Device: d.Name, Op: "enable bus mastering", Err: fmt.Errorf("command register reads %#04x", after)}
	}
	return before, after, nil
}

// Reset resets the device (VFIO_DEVICE_RESET; a function-level reset for
// PCI). It fails when the device offers no reset.
func (d *VFIODevice) Reset() error {
	if d.Info.Flags&vfio.DeviceFlagsReset == 0 {
		return &DeviceError{Device: d.Name, Op: "reset", Err: errors.New("the device offers no reset through VFIO")}
	}
	if _, err := vfio.IoctlInt(d.fd, vfio.DeviceReset, 0, "VFIO_DEVICE_RESET"); err != nil {
		return &DeviceError{Device: d.Name, Op: "reset", Err: err}
	}
	return nil
}

// IRQInfo reads interrupt index i (PCI: 0 INTx, 1 MSI, 2 MSI-X).
func (d *VFIODevice) IRQInfo(i int) (vfio.IRQInfo, error) {
	info := vfio.IRQInfo{Argsz: uint32(unsafe.Sizeof(vfio.IRQInfo{})), Index: uint32(i)}
	if _, err := ioctlPtr(d.fd, vfio.DeviceGetIRQInfo, &info, "VFIO_DEVICE_GET_IRQ_INFO"); err != nil {
		return info, &DeviceError{Device: d.Name, Op: fmt.Sprintf("IRQ index %d info", i), Err: err}
	}
	return info, nil
}

// irqSetBuf builds a vfio_irq_set with count eventfds (-1 unassigns).
func irqSetBuf(index, start uint32, fds []int32, flags uint32) []byte {
	hs := int(unsafe.Sizeof(vfio.IRQSet{}))
	buf := make([]byte, hs+4*len(fds))
	h := (*vfio.IRQSet)(unsafe.Pointer(&buf[0]))
	*h = vfio.IRQSet{Argsz: uint32(len(buf)), Flags: flags, Index: index, Start: start, Count: uint32(len(fds))}
	for i, fd := range fds {
		binary.NativeEndian.PutUint32(buf[hs+4*i:], uint32(fd))
	}
	return buf
}

// EnableIRQs creates n eventfds and routes vectors start..start+n-1 of
// interrupt index (MSI or MSI-X) to them. Read 8 bytes from an eventfd to
// wait for (and count) its interrupts.
func (d *VFIODevice) EnableIRQs(index, start, n int) ([]int, error) {
	fds := make([]int32, n)
	var out []int
	for i := range fds {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			for _, f := range out {
				unix.Close(f)
			}
			return nil, &DeviceError{Device: d.Name, Op: "eventfd", Err: err}
		}
		fds[i] = int32(fd)
		out = append(out, fd)
	}
	buf := irqSetBuf(uint32(index), uint32(start), fds, vfio.IRQSetDataEventfd|vfio.IRQSetActionTrigger)
	if _, err := vfio.Ioctl(d.fd, vfio.DeviceSetIRQs, unsafe.Pointer(&buf[0]), "VFIO_DEVICE_SET_IRQS"); err != nil {
		for _, f := range out {
			unix.Close(f)
		}
		return nil, &DeviceError{Device: d.Name, Op: fmt.Sprintf("route IRQ index %d vectors %d..%d to eventfds", index, start, start+n-1), Err: err}
	}
	d.eventfd = append(d.eventfd, out...)
	return out, nil
}

// DisableIRQs turns off every vector of interrupt index.
func (d *VFIODevice) DisableIRQs(index int) error {
	buf := irqSetBuf(uint32(index), 0, nil, vfio.IRQSetDataNone|vfio.IRQSetActionTrigger)
	if _, err := vfio.Ioctl(d.fd, vfio.DeviceSetIRQs, unsafe.Pointer(&buf[0]), "VFIO_DEVICE_SET_IRQS"); err != nil {
		return &DeviceError{Device: d.Name, Op: fmt.Sprintf("disable IRQ index %d", index), Err: err}
	}
	return nil
}

// Close unmaps the regions, closes the eventfds and the device fd.
func (d *VFIODevice) Close() error {
	var errs []error
	for _, m := range d.mapped {
		errs = append(errs, unix.Munmap(m))
	}
	d.mapped = nil
	for _, f := range d.eventfd {
		errs = append(errs, unix.Close(f))
	}
	d.eventfd = nil
	if d.fd >= 0 {
		errs = append(errs, unix.Close(d.fd))
		d.fd = -1
	}
	return errors.Join(errs...)
}

// regionIO reaches the parts of a sparse region that are not mmapped
// through pread/pwrite on the device fd.
type regionIO struct {
	fd    int
	off   uint64
	areas []vfio.RegionSparseMmapArea
}

func (r *regionIO) mapped(off uint64, n int) bool {
	for _, a := range r.areas {
		if off >= a.Offset && off+uint64(n) <= a.Offset+a.Size {
			return true
		}
	}
	return false
}

func (r *regionIO) read(off uint64, b []byte) bool {
	_, err := unix.Pread(r.fd, b, int64(r.off+off))
	return err == nil
}

func (r *regionIO) write(off uint64, b []byte) bool {
	_, err := unix.Pwrite(r.fd, b, int64(r.off+off))
	return err == nil
}

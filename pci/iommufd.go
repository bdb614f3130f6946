package pci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/pci/internal/vfio"
)

// IOMMUFD is an iommufd context (/dev/iommu) with one I/O address space
// (IOAS). Devices opened through their VFIO cdev attach to the IOAS; it is
// their dma.Mapper. Linux 6.2 has iommufd, 6.6 the VFIO device cdev.
type IOMMUFD struct {
	fd    int
	IOAS  uint32
	mu    sync.Mutex
	space *iovaSpace
	maps  map[uint64]uint64
	// DMALimit is the highest IOVA handed out (a device's DMA mask).
	DMALimit uint64
	// Ranges are the usable IOVA ranges of the IOAS (inclusive), read
	// after the first device attached.
	Ranges []vfio.IOMMUIOVARange
}

// OpenIOMMUFD opens /dev/iommu and allocates an IOAS.
func (s Sys) OpenIOMMUFD() (*IOMMUFD, error) {
	path := s.Path("/dev/iommu")
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &DeviceError{Device: path, Op: "open iommufd", Err: err, Fix: "the kernel needs CONFIG_IOMMUFD (Linux 6.2+); " + fixOpen(err)}
	}
	a := vfio.IOASAlloc{Size: uint32(unsafe.Sizeof(vfio.IOASAlloc{}))}
	if _, err := ioctlPtr(fd, vfio.IOMMUIOASAlloc, &a, "IOMMU_IOAS_ALLOC"); err != nil {
		unix.Close(fd)
		return nil, &DeviceError{Device: path, Op: "allocate IOAS", Err: err}
	}
	return &IOMMUFD{fd: fd, IOAS: a.OutIOASID, maps: map[uint64]uint64{}, DMALimit: 1<<48 - 1}, nil
}

// readRanges asks the IOAS for its allowed IOVA ranges, growing the array
// on EMSGSIZE.
func (f *IOMMUFD) readRanges() error {
	n := uint32(8)
	for try := 0; try < 6; try++ {
		rs := make([]vfio.IOMMUIOVARange, n)
		q := vfio.IOASIOVARanges{Size: uint32(unsafe.Sizeof(vfio.IOASIOVARanges{})), IOASID: f.IOAS, NumIOVAs: n,
			AllowedIOVAs: uint64(uintptr(unsafe.Pointer(&rs[0])))}
		_, err := ioctlPtr(f.fd, vfio.IOMMUIOASIOVARanges, &q, "IOMMU_IOAS_IOVA_RANGES")
		if errors.Is(err, unix.EMSGSIZE) {
			n = q.NumIOVAs
			continue
		}
		if err != nil {
			return err
		}
		f.Ranges = rs[:q.NumIOVAs]
		var sp []iovaRange
		for _, r := range f.Ranges {
			sp = append(sp, iovaRange{r.Start, r.Last})
		}
		if f.space == nil {
			f.space = newIOVASpace(sp, 1<<64-1)
		} else {
			f.space.restrict(sp)
		}
		return nil
	}
	return errors.New("IOMMU_IOAS_IOVA_RANGES kept growing")
}

// OpenCdev opens a device's VFIO cdev (/dev/vfio/devices/vfioN, found
// through sysfs vfio-dev), binds it to this iommufd and attaches it to the
// IOAS.
func (f *IOMMUFD) OpenCdev(s Sys, devDir, name string) (*VFIODevice, error) {
	return f.OpenCdevToken(s, devDir, name, nil)
}

// OpenCdevToken is OpenCdev passing a VF token (nil: none) to the bind, for
// an SR-IOV PF on vfio-pci or one of its VFs.
func (f *IOMMUFD) OpenCdevToken(s Sys, devDir, name string, tok *VFToken) (*VFIODevice, error) {
	cdev, err := cdevOf(s, devDir)
	if err != nil {
		return nil, &DeviceError{Device: name, Op: "VFIO cdev", Err: err, Fix: "the kernel needs CONFIG_VFIO_DEVICE_CDEV (Linux 6.6+) and the device bound to vfio-pci"}
	}
	path := s.Path("/dev/vfio/devices/" + cdev)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &DeviceError{Device: name, Op: "open " + path, Err: bareErr(err), Fix: fixOpen(err)}
	}
	if err := s.bindIOMMUFD(fd, f.fd, name, tok); err != nil {
		unix.Close(fd)
		return nil, err
	}
	at := vfio.DeviceAttachIOMMUFDPTArg{Argsz: uint32(unsafe.Sizeof(vfio.DeviceAttachIOMMUFDPTArg{})), PTID: f.IOAS}
	if _, err := ioctlPtr(fd, vfio.DeviceAttachIOMMUFDPT, &at, "VFIO_DEVICE_ATTACH_IOMMUFD_PT"); err != nil {
		unix.Close(fd)
		return nil, &DeviceError{Device: name, Op: "attach to IOAS", Err: err}
	}
	// Every attached device's reserved regions narrow the IOAS's ranges.
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.readRanges(); err != nil {
		unix.Close(fd)
		return nil, &DeviceError{Device: name, Op: "IOAS ranges", Err: err}
	}
	return newVFIODevice(name, fd)
}

// cdevOf finds the vfioN cdev name under a device's sysfs vfio-dev.
func cdevOf(s Sys, devDir string) (string, error) {
	ents, err := os.ReadDir(filepath.Join(devDir, "vfio-dev"))
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if len(e.Name()) > 4 && e.Name()[:4] == "vfio" {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("no vfioN in %s/vfio-dev", devDir)
}

// Name implements dma.Mapper.
func (f *IOMMUFD) Name() string { return "iommufd" }

// NeedsLocked implements dma.Mapper: iommufd pins what it maps.
func (f *IOMMUFD) NeedsLocked() bool { return false }

// Domain identifies the IOAS for dma.SameDomain: every device attached to
// it reaches a buffer mapped once at the same IOVA.
func (f *IOMMUFD) Domain() any { return f }

// Map implements dma.Mapper with IOMMU_IOAS_MAP at an IOVA chosen inside
// the IOAS's allowed ranges (FIXED_IOVA), readable and writable.
func (f *IOMMUFD) Map(mem []byte, attr dma.Attr) (dma.Mapping, error) {
	f.mu.Lock()
	sp := f.space
	if sp != nil {
		sp.limit = f.DMALimit
	}
	f.mu.Unlock()
	if sp == nil {
		return dma.Mapping{}, fmt.Errorf("iommufd: region %q: no device attached to the IOAS yet", attr.Name)
	}
	n := uint64(len(mem))
	va := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
	if n == 0 || n%dma.PageSize != 0 || va%dma.PageSize != 0 {
		return dma.Mapping{}, fmt.Errorf("iommufd: region %q at %#x of %d bytes: must be whole pages", attr.Name, va, n)
	}
	iova, err := sp.alloc(n, alignFor(n, 1<<12|1<<21|1<<30))
	if err != nil {
		return dma.Mapping{}, fmt.Errorf("iommufd: region %q: %w", attr.Name, err)
	}
	m := vfio.IOASMap{Size: uint32(unsafe.Sizeof(vfio.IOASMap{})), Flags: vfio.IOASMapFixedIOVA | vfio.IOASMapReadable | vfio.IOASMapWriteable,
		IOASID: f.IOAS, UserVA: va, Length: n, IOVA: iova}
	if _, err := ioctlPtr(f.fd, vfio.IOMMUIOASMap, &m, "IOMMU_IOAS_MAP"); err != nil {
		sp.release(iova)
		return dma.Mapping{}, fmt.Errorf("iommufd: map region %q (%d bytes) at IOVA %#x: %w", attr.Name, n, iova, err)
	}
	f.mu.Lock()
	f.maps[iova] = n
	f.mu.Unlock()
	return dma.Mapping{IOVA: iova}, nil
}

// Unmap implements dma.Mapper.
func (f *IOMMUFD) Unmap(mem []byte, m dma.Mapping) error {
	f.mu.Lock()
	n, ok := f.maps[m.IOVA]
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("iommufd: unmap IOVA %#x: not mapped here", m.IOVA)
	}
	u := vfio.IOASUnmap{Size: uint32(unsafe.Sizeof(vfio.IOASUnmap{})), IOASID: f.IOAS, IOVA: m.IOVA, Length: n}
	if _, err := ioctlPtr(f.fd, vfio.IOMMUIOASUnmap, &u, "IOMMU_IOAS_UNMAP"); err != nil {
		return fmt.Errorf("iommufd: unmap IOVA %#x+%#x: %w", m.IOVA, n, err)
	}
	f.mu.Lock()
	delete(f.maps, m.IOVA)
	f.mu.Unlock()
	f.space.release(m.IOVA)
	return nil
}

// Close destroys the IOAS and closes /dev/iommu.
func (f *IOMMUFD) Close() error {
	d := vfio.IOMMUDestroyArg{Size: uint32(unsafe.Sizeof(vfio.IOMMUDestroyArg{})), ID: f.IOAS}
	_, err := ioctlPtr(f.fd, vfio.IOMMUDestroy, &d, "IOMMU_DESTROY")
	return errors.Join(err, unix.Close(f.fd))
}

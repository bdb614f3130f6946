// Package vfio holds the kernel ABI of VFIO (linux/vfio.h) and iommufd
// (linux/iommufd.h): one Go type per kernel struct, ioctl numbers and flag
// values, and a thin ioctl wrapper. Sizes and offsets are pinned by tests
// against the values computed from the Linux 6.1 headers.
package vfio

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioctl numbers: _IO(';', 100+n) for VFIO, _IO(';', 0x80+n) for iommufd.
// They carry no size or direction bits; each struct starts with its size.
const (
	GetAPIVersion         = 0x3B64
	CheckExtension        = 0x3B65
	SetIOMMU              = 0x3B66
	GroupGetStatus        = 0x3B67
	GroupSetContainer     = 0x3B68
	GroupUnsetContainer   = 0x3B69
	GroupGetDeviceFD      = 0x3B6A
	DeviceGetInfo         = 0x3B6B
	DeviceGetRegionInfo   = 0x3B6C
	DeviceGetIRQInfo      = 0x3B6D
	DeviceSetIRQs         = 0x3B6E
	DeviceReset           = 0x3B6F
	IOMMUGetInfo          = 0x3B70
	IOMMUMapDMA           = 0x3B71
	IOMMUUnmapDMA         = 0x3B72
	DeviceFeature         = 0x3B75
	DeviceBindIOMMUFD     = 0x3B76
	DeviceAttachIOMMUFDPT = 0x3B77
	DeviceDetachIOMMUFDPT = 0x3B78

	IOMMUDestroy        = 0x3B80
	IOMMUIOASAlloc      = 0x3B81
	IOMMUIOASAllowIOVAs = 0x3B82
	IOMMUIOASCopy       = 0x3B83
	IOMMUIOASIOVARanges = 0x3B84
	IOMMUIOASMap        = 0x3B85
	IOMMUIOASUnmap      = 0x3B86
	IOMMUOption         = 0x3B87
	IOMMUVFIOIOAS       = 0x3B88
)

// API version and IOMMU types (CHECK_EXTENSION / SET_IOMMU arguments).
const (
	APIVersion   = 0
	Type1IOMMU   = 1
	Type1v2IOMMU = 3
	NoIOMMUIOMMU = 8
)

// Flags.
const (
	GroupFlagsViable       = 1
	GroupFlagsContainerSet = 2

	DeviceFlagsReset    = 1
	DeviceFlagsPCI      = 2
	DeviceFlagsPlatform = 4
	DeviceFlagsAMBA     = 8
	DeviceFlagsCaps     = 0x80

	RegionInfoFlagRead  = 1
	RegionInfoFlagWrite = 2
	RegionInfoFlagMmap  = 4
	RegionInfoFlagCaps  = 8

	RegionInfoCapSparseMmap   = 1
	RegionInfoCapType         = 2
	RegionInfoCapMSIXMappable = 3

	PCIBAR0RegionIndex   = 0
	PCIROMRegionIndex    = 6
	PCIConfigRegionIndex = 7

	IRQInfoEventfd    = 1
	IRQInfoMaskable   = 2
	IRQInfoAutomasked = 4
	IRQInfoNoResize   = 8

	PCIINTxIRQIndex = 0
	PCIMSIIRQIndex  = 1
	PCIMSIXIRQIndex = 2
	PCIErrIRQIndex  = 3
	PCIReqIRQIndex  = 4

	IRQSetDataNone      = 1
	IRQSetDataBool      = 2
	IRQSetDataEventfd   = 4
	IRQSetActionMask    = 8
	IRQSetActionUnmask  = 0x10
	IRQSetActionTrigger = 0x20

	IOMMUInfoPgsizes = 1
	IOMMUInfoCaps    = 2

	IOMMUType1InfoCapIOVARange = 1
	IOMMUType1InfoCapMigration = 2
	IOMMUType1InfoDMAAvail     = 3

	DMAMapFlagRead  = 1
	DMAMapFlagWrite = 2

	DMAUnmapFlagAll = 2

	IOASMapFixedIOVA = 1
	IOASMapWriteable = 2
	IOASMapReadable  = 4
)

// GroupStatus is struct vfio_group_status.
type GroupStatus struct {
	Argsz uint32
	Flags uint32
}

// DeviceInfo is struct vfio_device_info.
type DeviceInfo struct {
	Argsz      uint32
	Flags      uint32
	NumRegions uint32
	NumIRQs    uint32
	CapOffset  uint32
}

// RegionInfo is struct vfio_region_info.
type RegionInfo struct {
	Argsz     uint32
	Flags     uint32
	Index     uint32
	CapOffset uint32
	Size      uint64
	Offset    uint64
}

// InfoCapHeader is struct vfio_info_cap_header; Next is an offset from the
// start of the info struct, 0 ending the chain.
type InfoCapHeader struct {
	ID      uint16
	Version uint16
	Next    uint32
}

// RegionSparseMmapArea is struct vfio_region_sparse_mmap_area.
type RegionSparseMmapArea struct {
	Offset uint64
	Size   uint64
}

// RegionInfoCapSparseMmapHdr is struct vfio_region_info_cap_sparse_mmap
// without its trailing areas array (which starts at byte 16).
type RegionInfoCapSparseMmapHdr struct {
	Header   InfoCapHeader
	NrAreas  uint32
	Reserved uint32
}

// IRQInfo is struct vfio_irq_info.
type IRQInfo struct {
	Argsz uint32
	Flags uint32
	Index uint32
	Count uint32
}

// IRQSet is struct vfio_irq_set without its trailing data (at byte 20).
type IRQSet struct {
	Argsz uint32
	Flags uint32
	Index uint32
	Start uint32
	Count uint32
}

// IOMMUType1Info is struct vfio_iommu_type1_info.
type IOMMUType1Info struct {
	Argsz       uint32
	Flags       uint32
	IOVAPgsizes uint64
	CapOffset   uint32
	Pad         uint32
}

// IOVARange is struct vfio_iova_range (inclusive End).
type IOVARange struct {
	Start uint64
	End   uint64
}

// IOMMUType1InfoCapIOVARangeHdr is struct vfio_iommu_type1_info_cap_iova_range
// without its trailing ranges (at byte 16).
type IOMMUType1InfoCapIOVARangeHdr struct {
	Header   InfoCapHeader
	NrIOVAs  uint32
	Reserved uint32
}

// DMAMap is struct vfio_iommu_type1_dma_map.
type DMAMap struct {
	Argsz uint32
	Flags uint32
	Vaddr uint64
	IOVA  uint64
	Size  uint64
}

// DMAUnmap is struct vfio_iommu_type1_dma_unmap.
type DMAUnmap struct {
	Argsz uint32
	Flags uint32
	IOVA  uint64
	Size  uint64
}

// DeviceBindIOMMUFDArg is struct vfio_device_bind_iommufd.
type DeviceBindIOMMUFDArg struct {
	Argsz    uint32
	Flags    uint32
	IOMMUFD  int32
	OutDevID uint32
}

// DeviceAttachIOMMUFDPTArg is struct vfio_device_attach_iommufd_pt.
type DeviceAttachIOMMUFDPTArg struct {
	Argsz uint32
	Flags uint32
	PTID  uint32
}

// DeviceDetachIOMMUFDPTArg is struct vfio_device_detach_iommufd_pt.
type DeviceDetachIOMMUFDPTArg struct {
	Argsz uint32
	Flags uint32
}

// IOMMUDestroyArg is struct iommu_destroy.
type IOMMUDestroyArg struct {
	Size uint32
	ID   uint32
}

// IOASAlloc is struct iommu_ioas_alloc.
type IOASAlloc struct {
	Size      uint32
	Flags     uint32
	OutIOASID uint32
}

// IOASMap is struct iommu_ioas_map.
type IOASMap struct {
	Size     uint32
	Flags    uint32
	IOASID   uint32
	Reserved uint32
	UserVA   uint64
	Length   uint64
	IOVA     uint64
}

// IOASUnmap is struct iommu_ioas_unmap.
type IOASUnmap struct {
	Size   uint32
	IOASID uint32
	IOVA   uint64
	Length uint64
}

// IOASIOVARanges is struct iommu_ioas_iova_ranges; AllowedIOVAs points to
// NumIOVAs IOMMUIOVARange entries.
type IOASIOVARanges struct {
	Size             uint32
	IOASID           uint32
	NumIOVAs         uint32
	Reserved         uint32
	AllowedIOVAs     uint64
	OutIOVAAlignment uint64
}

// IOMMUIOVARange is struct iommu_iova_range (inclusive Last).
type IOMMUIOVARange struct {
	Start uint64
	Last  uint64
}

// Ioctl issues request req on fd with a pointer argument and returns the
// kernel's non-negative result. name names the call in the error.
func Ioctl(fd int, req uintptr, arg unsafe.Pointer, name string) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if e != 0 {
		return -1, fmt.Errorf("%s: %w", name, e)
	}
	return int(r), nil
}

// IoctlInt issues request req on fd with an integer argument.
func IoctlInt(fd int, req uintptr, arg uintptr, name string) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, arg)
	if e != 0 {
		return -1, fmt.Errorf("%s: %w", name, e)
	}
	return int(r), nil
}

// VFIO_DEVICE_FEATURE flags and the VF token (linux/vfio.h). The feature
// index sits in the low 16 bits of the flags; the VF token is feature 0,
// set (never read back) with a 16-byte UUID as the data.
const (
	DeviceFeatureMask       = 0xffff
	DeviceFeatureGet        = 1 << 16
	DeviceFeatureSet        = 1 << 17
	DeviceFeatureProbe      = 1 << 18
	DeviceFeaturePCIVFToken = 0

	// DeviceBindFlagToken says DeviceBindIOMMUFDTokenArg.TokenUUIDPtr
	// points to a VF token; kernels before the flag refuse any flag
	// with EINVAL.
	DeviceBindFlagToken = 1
)

// DeviceFeatureHdr is struct vfio_device_feature without its trailing
// data (which starts at byte 8).
type DeviceFeatureHdr struct {
	Argsz uint32
	Flags uint32
}

// DeviceBindIOMMUFDTokenArg is struct vfio_device_bind_iommufd as kernels
// with DeviceBindFlagToken define it: DeviceBindIOMMUFDArg followed by the
// address of a 16-byte VF token.
type DeviceBindIOMMUFDTokenArg struct {
	Argsz        uint32
	Flags        uint32
	IOMMUFD      int32
	OutDevID     uint32
	TokenUUIDPtr uint64
}

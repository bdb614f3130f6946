package vfio

import (
	"reflect"
	"testing"
)

// Values as gcc computes them from the kernel's UAPI headers
// include/uapi/linux/vfio.h and iommufd.h (linux-libc-dev 6.1; iommufd and
// the device cdev structs from the same two headers).
func TestIoctlNumbers(t *testing.T) {
	// _IO(';', n) = ';'<<8 | n
	io := func(n int) int { return ';'<<8 | n }
	cases := []struct {
		name string
		got  int
		want int
	}{
		{"VFIO_GET_API_VERSION", GetAPIVersion, io(100)},
		{"VFIO_CHECK_EXTENSION", CheckExtension, 0x3B65},
		{"VFIO_SET_IOMMU", SetIOMMU, 0x3B66},
		{"VFIO_GROUP_GET_STATUS", GroupGetStatus, 0x3B67},
		{"VFIO_GROUP_SET_CONTAINER", GroupSetContainer, 0x3B68},
		{"VFIO_GROUP_UNSET_CONTAINER", GroupUnsetContainer, 0x3B69},
		{"VFIO_GROUP_GET_DEVICE_FD", GroupGetDeviceFD, 0x3B6A},
		{"VFIO_DEVICE_GET_INFO", DeviceGetInfo, 0x3B6B},
		{"VFIO_DEVICE_GET_REGION_INFO", DeviceGetRegionInfo, 0x3B6C},
		{"VFIO_DEVICE_GET_IRQ_INFO", DeviceGetIRQInfo, 0x3B6D},
		{"VFIO_DEVICE_SET_IRQS", DeviceSetIRQs, 0x3B6E},
		{"VFIO_DEVICE_RESET", DeviceReset, 0x3B6F},
		{"VFIO_IOMMU_GET_INFO", IOMMUGetInfo, 0x3B70},
		{"VFIO_IOMMU_MAP_DMA", IOMMUMapDMA, 0x3B71},
		{"VFIO_IOMMU_UNMAP_DMA", IOMMUUnmapDMA, 0x3B72},
		{"VFIO_DEVICE_FEATURE", DeviceFeature, io(100 + 17)},
		{"VFIO_DEVICE_BIND_IOMMUFD", DeviceBindIOMMUFD, 0x3B76},
		{"VFIO_DEVICE_ATTACH_IOMMUFD_PT", DeviceAttachIOMMUFDPT, 0x3B77},
		{"VFIO_DEVICE_DETACH_IOMMUFD_PT", DeviceDetachIOMMUFDPT, 0x3B78},
		{"IOMMU_DESTROY", IOMMUDestroy, io(0x80)},
		{"IOMMU_IOAS_ALLOC", IOMMUIOASAlloc, 0x3B81},
		{"IOMMU_IOAS_ALLOW_IOVAS", IOMMUIOASAllowIOVAs, 0x3B82},
		{"IOMMU_IOAS_COPY", IOMMUIOASCopy, 0x3B83},
		{"IOMMU_IOAS_IOVA_RANGES", IOMMUIOASIOVARanges, 0x3B84},
		{"IOMMU_IOAS_MAP", IOMMUIOASMap, 0x3B85},
		{"IOMMU_IOAS_UNMAP", IOMMUIOASUnmap, 0x3B86},
		{"IOMMU_OPTION", IOMMUOption, 0x3B87},
		{"IOMMU_VFIO_IOAS", IOMMUVFIOIOAS, 0x3B88},
		{"VFIO_TYPE1_IOMMU", Type1IOMMU, 1},
		{"VFIO_TYPE1v2_IOMMU", Type1v2IOMMU, 3},
		{"VFIO_NOIOMMU_IOMMU", NoIOMMUIOMMU, 8},
		{"VFIO_API_VERSION", APIVersion, 0},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

// Every flag, capability id and index the package defines, as the kernel
// headers (include/uapi/linux/vfio.h, iommufd.h) give them.
func TestFlagValues(t *testing.T) {
	cases := []struct {
		name      string
		got, want int
	}{
		{"VFIO_GROUP_FLAGS_VIABLE", GroupFlagsViable, 1},
		{"VFIO_GROUP_FLAGS_CONTAINER_SET", GroupFlagsContainerSet, 2},
		{"VFIO_DEVICE_FLAGS_RESET", DeviceFlagsReset, 1},
		{"VFIO_DEVICE_FLAGS_PCI", DeviceFlagsPCI, 2},
		{"VFIO_DEVICE_FLAGS_PLATFORM", DeviceFlagsPlatform, 4},
		{"VFIO_DEVICE_FLAGS_AMBA", DeviceFlagsAMBA, 8},
		{"VFIO_DEVICE_FLAGS_CAPS", DeviceFlagsCaps, 0x80},
		{"VFIO_REGION_INFO_FLAG_READ", RegionInfoFlagRead, 1},
		{"VFIO_REGION_INFO_FLAG_WRITE", RegionInfoFlagWrite, 2},
		{"VFIO_REGION_INFO_FLAG_MMAP", RegionInfoFlagMmap, 4},
		{"VFIO_REGION_INFO_FLAG_CAPS", RegionInfoFlagCaps, 8},
		{"VFIO_REGION_INFO_CAP_SPARSE_MMAP", RegionInfoCapSparseMmap, 1},
		{"VFIO_REGION_INFO_CAP_TYPE", RegionInfoCapType, 2},
		{"VFIO_REGION_INFO_CAP_MSIX_MAPPABLE", RegionInfoCapMSIXMappable, 3},
		{"VFIO_PCI_BAR0_REGION_INDEX", PCIBAR0RegionIndex, 0},
		{"VFIO_PCI_ROM_REGION_INDEX", PCIROMRegionIndex, 6},
		{"VFIO_PCI_CONFIG_REGION_INDEX", PCIConfigRegionIndex, 7},
		{"VFIO_IRQ_INFO_EVENTFD", IRQInfoEventfd, 1},
		{"VFIO_IRQ_INFO_MASKABLE", IRQInfoMaskable, 2},
		{"VFIO_IRQ_INFO_AUTOMASKED", IRQInfoAutomasked, 4},
		{"VFIO_IRQ_INFO_NORESIZE", IRQInfoNoResize, 8},
		{"VFIO_PCI_INTX_IRQ_INDEX", PCIINTxIRQIndex, 0},
		{"VFIO_PCI_MSI_IRQ_INDEX", PCIMSIIRQIndex, 1},
		{"VFIO_PCI_MSIX_IRQ_INDEX", PCIMSIXIRQIndex, 2},
		{"VFIO_PCI_ERR_IRQ_INDEX", PCIErrIRQIndex, 3},
		{"VFIO_PCI_REQ_IRQ_INDEX", PCIReqIRQIndex, 4},
		{"VFIO_IRQ_SET_DATA_NONE", IRQSetDataNone, 1},
		{"VFIO_IRQ_SET_DATA_BOOL", IRQSetDataBool, 2},
		{"VFIO_IRQ_SET_DATA_EVENTFD", IRQSetDataEventfd, 4},
		{"VFIO_IRQ_SET_ACTION_MASK", IRQSetActionMask, 8},
		{"VFIO_IRQ_SET_ACTION_UNMASK", IRQSetActionUnmask, 0x10},
		{"VFIO_IRQ_SET_ACTION_TRIGGER", IRQSetActionTrigger, 0x20},
		{"VFIO_IOMMU_INFO_PGSIZES", IOMMUInfoPgsizes, 1},
		{"VFIO_IOMMU_INFO_CAPS", IOMMUInfoCaps, 2},
		{"VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE", IOMMUType1InfoCapIOVARange, 1},
		{"VFIO_IOMMU_TYPE1_INFO_CAP_MIGRATION", IOMMUType1InfoCapMigration, 2},
		{"VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL", IOMMUType1InfoDMAAvail, 3},
		{"VFIO_DMA_MAP_FLAG_READ", DMAMapFlagRead, 1},
		{"VFIO_DMA_MAP_FLAG_WRITE", DMAMapFlagWrite, 2},
		{"VFIO_DMA_UNMAP_FLAG_ALL", DMAUnmapFlagAll, 2},
		{"IOMMU_IOAS_MAP_FIXED_IOVA", IOASMapFixedIOVA, 1},
		{"IOMMU_IOAS_MAP_WRITEABLE", IOASMapWriteable, 2},
		{"IOMMU_IOAS_MAP_READABLE", IOASMapReadable, 4},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

// field is one pinned member: name, offset, size.
type field struct {
	name      string
	off, size uintptr
}

func TestStructLayouts(t *testing.T) {
	cases := []struct {
		kernel string
		v      any
		size   uintptr
		fields []field
	}{
		{"vfio_group_status", GroupStatus{}, 8, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}}},
		{"vfio_device_info", DeviceInfo{}, 20, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"NumRegions", 8, 4}, {"NumIRQs", 12, 4}, {"CapOffset", 16, 4}}},
		{"vfio_region_info", RegionInfo{}, 32, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"Index", 8, 4}, {"CapOffset", 12, 4}, {"Size", 16, 8}, {"Offset", 24, 8}}},
		{"vfio_info_cap_header", InfoCapHeader{}, 8, []field{{"ID", 0, 2}, {"Version", 2, 2}, {"Next", 4, 4}}},
		{"vfio_region_info_cap_sparse_mmap", RegionInfoCapSparseMmapHdr{}, 16, []field{{"Header", 0, 8}, {"NrAreas", 8, 4}, {"Reserved", 12, 4}}},
		{"vfio_region_sparse_mmap_area", RegionSparseMmapArea{}, 16, []field{{"Offset", 0, 8}, {"Size", 8, 8}}},
		{"vfio_irq_info", IRQInfo{}, 16, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"Index", 8, 4}, {"Count", 12, 4}}},
		{"vfio_irq_set", IRQSet{}, 20, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"Index", 8, 4}, {"Start", 12, 4}, {"Count", 16, 4}}},
		{"vfio_iommu_type1_info", IOMMUType1Info{}, 24, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"IOVAPgsizes", 8, 8}, {"CapOffset", 16, 4}, {"Pad", 20, 4}}},
		{"vfio_iommu_type1_info_cap_iova_range", IOMMUType1InfoCapIOVARangeHdr{}, 16, []field{{"Header", 0, 8}, {"NrIOVAs", 8, 4}, {"Reserved", 12, 4}}},
		{"vfio_iova_range", IOVARange{}, 16, []field{{"Start", 0, 8}, {"End", 8, 8}}},
		{"vfio_iommu_type1_dma_map", DMAMap{}, 32, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"Vaddr", 8, 8}, {"IOVA", 16, 8}, {"Size", 24, 8}}},
		{"vfio_iommu_type1_dma_unmap", DMAUnmap{}, 24, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"IOVA", 8, 8}, {"Size", 16, 8}}},
		{"vfio_device_bind_iommufd", DeviceBindIOMMUFDArg{}, 16, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"IOMMUFD", 8, 4}, {"OutDevID", 12, 4}}},
		{"vfio_device_attach_iommufd_pt", DeviceAttachIOMMUFDPTArg{}, 12, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"PTID", 8, 4}}},
		{"vfio_device_detach_iommufd_pt", DeviceDetachIOMMUFDPTArg{}, 8, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}}},
		{"iommu_destroy", IOMMUDestroyArg{}, 8, []field{{"Size", 0, 4}, {"ID", 4, 4}}},
		{"iommu_ioas_alloc", IOASAlloc{}, 12, []field{{"Size", 0, 4}, {"Flags", 4, 4}, {"OutIOASID", 8, 4}}},
		{"iommu_ioas_map", IOASMap{}, 40, []field{{"Size", 0, 4}, {"Flags", 4, 4}, {"IOASID", 8, 4}, {"Reserved", 12, 4}, {"UserVA", 16, 8}, {"Length", 24, 8}, {"IOVA", 32, 8}}},
		{"iommu_ioas_unmap", IOASUnmap{}, 24, []field{{"Size", 0, 4}, {"IOASID", 4, 4}, {"IOVA", 8, 8}, {"Length", 16, 8}}},
		{"iommu_ioas_iova_ranges", IOASIOVARanges{}, 32, []field{{"Size", 0, 4}, {"IOASID", 4, 4}, {"NumIOVAs", 8, 4}, {"Reserved", 12, 4}, {"AllowedIOVAs", 16, 8}, {"OutIOVAAlignment", 24, 8}}},
		{"iommu_iova_range", IOMMUIOVARange{}, 16, []field{{"Start", 0, 8}, {"Last", 8, 8}}},
	}
	for _, c := range cases {
		typ := reflect.TypeOf(c.v)
		if typ.Size() != c.size {
			t.Errorf("%s (%s): size %d, want %d", c.kernel, typ.Name(), typ.Size(), c.size)
		}
		for _, f := range c.fields {
			sf, ok := typ.FieldByName(f.name)
			if !ok {
				t.Errorf("%s: no field %s", c.kernel, f.name)
				continue
			}
			if sf.Offset != f.off || sf.Type.Size() != f.size {
				t.Errorf("%s.%s: offset %d size %d, want %d:%d", c.kernel, f.name, sf.Offset, sf.Type.Size(), f.off, f.size)
			}
		}
	}
}

// The VF token's part of include/uapi/linux/vfio.h: VFIO_DEVICE_FEATURE's
// flags, VFIO_DEVICE_FEATURE_PCI_VF_TOKEN (feature 0; MIGRATION is 1) and
// the token fields of vfio_device_bind_iommufd.
func TestVFTokenABI(t *testing.T) {
	flags := []struct {
		name      string
		got, want int
	}{
		{"VFIO_DEVICE_FEATURE_MASK", DeviceFeatureMask, 0xffff},
		{"VFIO_DEVICE_FEATURE_GET", DeviceFeatureGet, 0x10000},
		{"VFIO_DEVICE_FEATURE_SET", DeviceFeatureSet, 0x20000},
		{"VFIO_DEVICE_FEATURE_PROBE", DeviceFeatureProbe, 0x40000},
		{"VFIO_DEVICE_FEATURE_PCI_VF_TOKEN", DeviceFeaturePCIVFToken, 0},
		{"VFIO_DEVICE_BIND_FLAG_TOKEN", DeviceBindFlagToken, 1},
		{"VFIO_DEVICE_FEATURE", DeviceFeature, ';'<<8 | (100 + 17)},
		{"VFIO_DEVICE_BIND_IOMMUFD", DeviceBindIOMMUFD, ';'<<8 | (100 + 18)},
	}
	for _, c := range flags {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
	layouts := []struct {
		kernel string
		v      any
		size   uintptr
		fields []field
	}{
		{"vfio_device_feature", DeviceFeatureHdr{}, 8, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}}},
		{"vfio_device_bind_iommufd (with token_uuid_ptr)", DeviceBindIOMMUFDTokenArg{}, 24,
			[]field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"IOMMUFD", 8, 4}, {"OutDevID", 12, 4}, {"TokenUUIDPtr", 16, 8}}},
	}
	for _, c := range layouts {
		typ := reflect.TypeOf(c.v)
		if typ.Size() != c.size {
			t.Errorf("%s (%s): size %d, want %d", c.kernel, typ.Name(), typ.Size(), c.size)
		}
		for _, f := range c.fields {
			sf, ok := typ.FieldByName(f.name)
			if !ok {
				t.Errorf("%s: no field %s", c.kernel, f.name)
				continue
			}
			if sf.Offset != f.off || sf.Type.Size() != f.size {
				t.Errorf("%s.%s: offset %d size %d, want %d:%d", c.kernel, f.name, sf.Offset, sf.Type.Size(), f.off, f.size)
			}
		}
	}
}

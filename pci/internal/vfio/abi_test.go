package vfio

import (
	"reflect"
	"testing"
)

// Values from anchors.md §4.2 (gcc on linux-libc-dev 6.1 headers; iommufd
// and the device cdev structs from include/uapi/linux/iommufd.h and vfio.h).
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
		{"VFIO_PCI_CONFIG_REGION_INDEX", PCIConfigRegionIndex, 7},
		{"VFIO_PCI_MSIX_IRQ_INDEX", PCIMSIXIRQIndex, 2},
		{"VFIO_IRQ_SET_DATA_EVENTFD|ACTION_TRIGGER", IRQSetDataEventfd | IRQSetActionTrigger, 0x24},
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
		{"vfio_iommu_type1_info", IOMMUType1Info{}, 24, []field{{"Argsz", 0, 4}, {"Flags", 4, 4}, {"IOVAPgsizes", 8, 8}, {"CapOffset", 16, 4}}},
		{"vfio_iommu_type1_info_cap_iova_range", IOMMUType1InfoCapIOVARangeHdr{}, 16, []field{{"Header", 0, 8}, {"NrIOVAs", 8, 4}}},
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

// Package pci reaches real devices for gopmd: PCI functions through VFIO
// (type1 container/group, or iommufd with the VFIO device cdev),
// device-tree nodes through vfio-platform, and, only when the user opts in
// with unsafe-noiommu, through VFIO no-IOMMU groups, uio_pci_generic, UIO
// memory maps and /dev/mem windows of device-tree nodes. Importing it
// registers the "pci", "uio" and "platform" spec schemes with
// driver.RegisterBackend, which driver.Open looks up.
//
// What a backend returns is a driver.Device: its Regions (each a *Window:
// one aligned access per register read or write, bounds-checked), a
// dma.Mapper for DMA memory, OpenIRQ for its interrupts, Reset and Release.
//
// # SR-IOV under vfio-pci: the VF token
//
// vfio-pci opens a VF of a PF bound to it only for a caller that names the
// PF's VF token, a UUID the PF's user sets. Give the same vf-token=UUID to
// the PF's spec and to its VFs' (pci:0000:00:00.0?vf-token=UUID): the PF
// sets it (VFIODevice.SetVFToken), a VF passes it (Group.OpenDeviceToken,
// IOMMUFD.OpenCdevToken). Refusals wrap ErrVFToken; see VFToken.
//
// # Platform devices (i.MX FEC) through UIO or /dev/mem
//
// On a board without an IOMMU the FEC is reached one of two ways:
//
//	platform:2188000.ethernet?unsafe-noiommu=1
//	    With uio_pdrv_genirq bound to the node (compatible "generic-uio",
//	    module option of_id=generic-uio) the UIO maps become the windows
//	    and the interrupt is Device.OpenIRQ(0) (Device.Extra is the
//	    *UIODevice). With no driver bound, the node's reg ranges (translated through the
//	    parent buses' ranges) are mapped from /dev/mem. The fec driver
//	    cannot be unbound through sysfs: write a name to the device's
//	    driver_override, rmmod fec, modprobe fec (Sys.BindPlatform does the
//	    first and its error says the rest).
//	uio:/dev/uio0?unsafe-noiommu=1
//	    The same UIO device named directly.
//
// DMA memory then comes from dma.Alloc(dev.Mapper, ...): by default the
// mapper is a dma.Pagemap (physical addresses of mlocked pages, root only;
// buffers that fit a 4 KiB page work, rings need contiguity and fail
// clearly without it). Add dma-carveout=ADDR+SIZE (a range kept from the
// kernel with mem= or reserved-memory, e.g. dma-carveout=0x1c000000+64M)
// and the mapper is a *Carveout: dma.Alloc hands out pieces of that range,
// mapped uncached through /dev/mem, whose bus address is their physical
// one. dma-map=M uses UIO map M as the carve-out instead.
//
// All sysfs, /dev and /proc paths go through a Sys with a root prefix;
// Host is the running system, tests use fake trees.
package pci

// Package dma provides memory that a NIC can reach by DMA: a Region is a block
// of bytes the CPU sees together with the I/O virtual address (IOVA) the device
// uses for it. A Mapper makes memory reachable from a device: VFIO (type1 or
// iommufd) on hardware with an IOMMU, physical addresses from
// /proc/self/pagemap without one, or the simulated IOMMU (SimIOMMU) that device
// models read and write through.
//
// The package also carries the memory barriers a driver places between
// descriptor stores and a doorbell, and the cache maintenance that
// non-coherent SoCs need (SyncForDevice / SyncForCPU).
package dma

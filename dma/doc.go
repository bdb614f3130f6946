// Package dma provides memory that a NIC can reach by DMA: a Region is a block
// of bytes the CPU sees together with the I/O virtual address (IOVA) the device
// uses for it. A Mapper makes memory reachable from a device: VFIO (type1 or
// iommufd) on hardware with an IOMMU, or physical addresses from
// /proc/self/pagemap without one. A mapper that takes part in cache
// maintenance implements Syncer (and SpanSyncer for batches), and a Region
// hands it every sync through that interface; no mapper has a path of its
// own. The simulated IOMMU that device models read and write through lives
// in package sim/simdma and plugs in that way: nothing in this package
// knows it.
//
// The package also carries the memory barriers a driver places between
// descriptor stores and a doorbell, and the cache maintenance that
// non-coherent SoCs need (SyncForDevice / SyncForCPU).
package dma

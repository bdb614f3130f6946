// Package simdma is the simulated devices' bus: a software IOMMU (IOMMU)
// through which drivers map memory as they would through VFIO and device
// models reach it by IOVA only, refusing and recording every access outside
// a live mapping as a Fault.
//
// In non-coherent mode the IOMMU also plays the CPU's data cache: a cached
// region gets a device-side copy, and bytes move between the two copies
// only when the driver syncs (dma.Region's SyncForDevice, SyncForCPU and
// their batched forms), whole cache lines at a time. It takes part in
// those syncs as any mapper does, through dma.Syncer and dma.SpanSyncer:
// package dma knows nothing of it.
//
// A View is a cached translation for one stream of device accesses (a
// model's TX descriptors, its RX buffers); StoreLE32 and LoadLE32 publish
// and read a descriptor's status word atomically in place.
//
// Drivers never import this package: the simulator (package sim), the
// device models and tests do.
package simdma

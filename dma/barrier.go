package dma

// Memory barriers for device I/O. On ARM each is a tiny assembly function
// with the DMB/DSB: a call into assembly is opaque to the Go compiler, so no
// load or store is moved across it, and the instruction orders the accesses
// for the device. On amd64 the read and write barriers are an inlined
// atomic load (compiler-only), the doorbell barrier an SFENCE in assembly.
//
//	WriteBarrier   stores to DMA memory before a later store (arm64 DMB OSHST)
//	ReadBarrier    a device-written status before the fields it guards (DMB OSHLD)
//	DoorbellBarrier all earlier stores before an MMIO doorbell write (DSB ST)
//
// On amd64 stores are not reordered with other stores nor loads with other
// loads, and MMIO is uncached, so the functions only need to stop the compiler.

// DoorbellBarrier makes every earlier store visible to the device before the
// next MMIO write: call it once per burst, before the producer-index write.
func DoorbellBarrier() { doorbellBarrier() }

// CacheMaintenance reports whether this platform can clean and invalidate
// data cache lines from user space. Where it cannot (32-bit ARM), DMA memory
// on a non-coherent SoC must be mapped uncached.
const CacheMaintenance = cacheMaintenance

func doorbellBarrier()

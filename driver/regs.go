package driver

// Regs is a register window: a device's MMIO region (a PCI BAR, a platform
// device's reg range) or a device model standing in for it. Offsets are
// bytes from the start of the window.
//
// Implementations perform each access as exactly one aligned load or store of
// that width (never merged, split or reordered by the compiler) and never use
// atomic read-modify-write on device memory. An offset outside the window
// is not performed: reads return all ones, as a bus error does, and the
// first such access is kept for Err.
//
// A driver calls dma.DoorbellBarrier before a doorbell write that publishes
// descriptors written to DMA memory.
type Regs interface {
	Read32(off uint32) uint32
	Write32(off uint32, v uint32)
	// Read64 reads a 64-bit register (statistics counters) where the device
	// allows 64-bit accesses.
	Read64(off uint32) uint64
	// Size is the window's length in bytes.
	Size() int
	// Err reports the first out-of-window access, naming offset and size.
	Err() error
}

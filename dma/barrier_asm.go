//go:build !amd64

package dma

// WriteBarrier orders earlier stores to DMA memory before later stores.
func WriteBarrier() { writeBarrier() }

// LoadsInOrder is true where loads are never reordered with other loads
// (x86-64), so ReadBarrier emits no instruction; on ARM a load may pass an
// earlier one, and ReadBarrier is a DMB.
const LoadsInOrder = false

// ReadBarrier orders an earlier load (a descriptor's status word) before later
// loads (the descriptor's other fields and the frame data). It is the
// assembly function itself, not a Go wrapper around one: a call site is one
// call, with no inline mark (a NOP) before it.
func ReadBarrier()

func writeBarrier()

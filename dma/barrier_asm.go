//go:build !amd64

package dma

// WriteBarrier orders earlier stores to DMA memory before later stores.
func WriteBarrier() { writeBarrier() }

// ReadBarrier orders an earlier load (a descriptor's status word) before later
// loads (the descriptor's other fields and the frame data).
func ReadBarrier() { readBarrier() }

func writeBarrier()
func readBarrier()

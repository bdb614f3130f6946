package dma

import "sync/atomic"

// fence is never written: loading it is how the amd64 barriers stop the
// compiler.
var fence atomic.Uint32

// On x86-64 stores are not reordered with other stores, nor loads with
// other loads (TSO), so ordering DMA memory needs no instruction, only a
// compiler barrier. An atomic load is one: the compiler moves no memory
// access across it, yet it inlines to a single MOV, where a call into
// assembly would force the caller to spill its registers.

func writeBarrier() { fence.Load() }

func readBarrier() { fence.Load() }

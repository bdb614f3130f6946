package dma

import "sync/atomic"

// fence is never written: loading it is how the amd64 barriers stop the
// compiler.
var fence uint32

// On x86-64 stores are not reordered with other stores, nor loads with
// other loads (TSO), so ordering DMA memory needs no instruction, only a
// compiler barrier. An atomic load is one: the compiler moves no memory
// access across it, yet it inlines to a single MOV, where a call into
// assembly would force the caller to spill its registers. The load is
// written in the exported functions themselves: one level of inlining, so
// no position marker of a further level costs an instruction.

// WriteBarrier orders earlier stores to DMA memory before later stores.
func WriteBarrier() { atomic.LoadUint32(&fence) }

// LoadsInOrder is true where loads are never reordered with other loads
// (x86-64), so ReadBarrier emits no instruction: a receive loop may then
// check each descriptor's status where it reads the descriptor, where
// elsewhere it first finds the run of ready descriptors and pays for one
// ReadBarrier before reading them.
const LoadsInOrder = true

// ReadBarrier orders an earlier load (a descriptor's status word) before later
// loads (the descriptor's other fields and the frame data).
func ReadBarrier() { atomic.LoadUint32(&fence) }

package fec

import (
	"unsafe"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/pool"
)

// The package's pointer arithmetic, in one place.

// words32 views the first n 32-bit words of mem (descriptor memory, which
// the ring allocation aligns past 4 bytes) as a slice, so that each word is
// loaded and stored whole.
func words32(mem []byte, n int) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(&mem[0])), n)
}

// bufOffset is where pkt's buffer starts in region r (pointer arithmetic on
// the CPU view: no per-packet look-up).
func bufOffset(r *dma.Region, pkt *pool.Packet) int {
	b := r.Bytes()
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(pkt.Buf()))) - uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

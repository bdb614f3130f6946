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
	return bufFrom(regionBase(r), pkt)
}

// regionBase is the address of region r's first byte in the CPU's view:
// with bufFrom, a buffer's offset in r is one subtraction.
func regionBase(r *dma.Region) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(r.Bytes())))
}

// bufFrom is where pkt's buffer starts counted from the address base (in
// the CPU's view): with base a regionBase, its offset in the region.
func bufFrom(base uintptr, pkt *pool.Packet) int {
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(pkt.Buf()))) - base)
}

// bdWord0 is BD b's word 0 (status and length), the first word of either
// format.
func bdWord0[B bdLeg | bdEnh](b *B) *uint32 { return (*uint32)(unsafe.Pointer(b)) }

// rxESC is BD b's esc word, written by the MAC with the status, or 0 for a
// legacy BD, which has none. The size of B is a constant in each of the
// two instances of a generic loop, so the test costs nothing at run time.
func rxESC[B bdLeg | bdEnh](b *B) uint32 {
	if unsafe.Sizeof(*b) == bdEnhancedSize {
		return (*bdEnh)(unsafe.Pointer(b)).esc // plain: see bdRing
	}
	return 0
}

// txSetBD writes a TX BD's words other than word 0: the buffer address,
// and on an enhanced BD esc and a clear BDU.
func txSetBD[B bdLeg | bdEnh](b *B, addr, esc uint32) {
	if unsafe.Sizeof(*b) == bdEnhancedSize {
		e := (*bdEnh)(unsafe.Pointer(b))
		e.addr, e.esc, e.bdu = addr, esc, 0
		return
	}
	(*bdLeg)(unsafe.Pointer(b)).addr = addr
}

// rxSetBD writes an RX BD's words other than word 0: the buffer address,
// and on an enhanced BD esc (INT: RXF/RXB on completion, masked by EIMR
// unless armed, irq.go), prot and BDU clear.
func rxSetBD[B bdLeg | bdEnh](b *B, addr uint32) {
	if unsafe.Sizeof(*b) == bdEnhancedSize {
		e := (*bdEnh)(unsafe.Pointer(b))
		e.addr, e.esc, e.prot, e.bdu = addr, rxbd_INT, 0, 0
		return
	}
	(*bdLeg)(unsafe.Pointer(b)).addr = addr
}

// txESC is the esc word of a TX BD the MAC is done with (R clear), or 0
// for a legacy BD, which has none. The caller has ordered the load of word
// 0 that saw R clear before this one (txDoneWalk's read barrier on ARM).
func txESC[B bdLeg | bdEnh](b *B) uint32 {
	if unsafe.Sizeof(*b) == bdEnhancedSize {
		return (*bdEnh)(unsafe.Pointer(b)).esc // plain: written before R cleared
	}
	return 0
}

// Word 0 leads both formats (bdWord0): an index other than 0 into a
// one-element array does not compile.
var (
	_ = [1]struct{}{}[unsafe.Offsetof(bdEnh{}.sc)]
	_ = [1]struct{}{}[unsafe.Offsetof(bdLeg{}.sc)]
)

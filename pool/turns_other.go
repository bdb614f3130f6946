//go:build !amd64

package pool

import "unsafe"

// turn is how many buffers takeTurns takes a turn: eight here, where
// there are registers for eight differences (arm64 has 31), so the loop's
// control and the address test are paid once for eight. On 32-bit arm the
// eight spill (some 14 instructions a buffer against 12.5 for four); its
// SoCs' Ethernet (the i.MX FEC) is on non-coherent memory, whose frees
// take cleanRun, not this loop.
const turn = 8

// takeTurns is recycleRun's loop, a leaf of its own so that the loop has
// the registers to itself: it takes the buffers at pkts (turns of them, a
// multiple of turn) into the cache entries at dst, a turn at a time, while
// all of a turn lie in the header array at h0 (base and span: its address
// range). It returns how many it took and whether each was out and single
// before (else recycleRest undoes the turns).
//
// Each turn is two steps, as in the amd64 form (turns_amd64.go, which says
// why each exists). This is the form for load-store machines (arm64, the
// silicon's own ISA, and arm): an addition to memory is a load, an add and
// a store there, so each state word is taken into a register once, its
// old value ORed into seen and the sum stored back (take), four
// instructions a buffer, where reading the word back after the store
// would be a fifth. Each load follows the store of the buffer before it,
// which the compiler keeps in order (the words may alias, and Go
// evaluates the calls of an expression left to right): a buffer given
// twice in the turn reads the stHome its first taking stored.
func takeTurns(pkts, dst, h0 unsafe.Pointer, base, span uintptr, turns int) (int, bool) {
	// The state words are reached from the first one's address plus the
	// differences: one register-offset load and store each, no address
	// to add and no copy of a pointer to keep.
	st := unsafe.Pointer(&(*Packet)(h0).state)
	var seen uint32
	i := 0
	for ; i < turns; i += 8 {
		q := (*[8]*Packet)(unsafe.Add(pkts, i*int(unsafe.Sizeof((*Packet)(nil)))))
		d0, d1 := uintptr(unsafe.Pointer(q[0]))-base, uintptr(unsafe.Pointer(q[1]))-base
		d2, d3 := uintptr(unsafe.Pointer(q[2]))-base, uintptr(unsafe.Pointer(q[3]))-base
		d4, d5 := uintptr(unsafe.Pointer(q[4]))-base, uintptr(unsafe.Pointer(q[5]))-base
		d6, d7 := uintptr(unsafe.Pointer(q[6]))-base, uintptr(unsafe.Pointer(q[7]))-base
		if d0|d1|d2|d3|d4|d5|d6|d7 >= span { // span is a power of two (headerReach)
			break
		}
		seen |= take(unsafe.Add(st, d0)) | take(unsafe.Add(st, d1)) | take(unsafe.Add(st, d2)) | take(unsafe.Add(st, d3)) |
			take(unsafe.Add(st, d4)) | take(unsafe.Add(st, d5)) | take(unsafe.Add(st, d6)) | take(unsafe.Add(st, d7))
		o := (*[8]uint32)(unsafe.Add(dst, i*4))
		o[0], o[1], o[2], o[3] = uint32(d0), uint32(d1), uint32(d2), uint32(d3)
		o[4], o[5], o[6], o[7] = uint32(d4), uint32(d5), uint32(d6), uint32(d7)
	}
	return i, uint8(seen) == 0
}

// take marks home the buffer whose state word is at w and returns the
// word as it was.
func take(w unsafe.Pointer) uint32 {
	s := *(*uint32)(w)
	*(*uint32)(w) = s + toHome
	return s
}

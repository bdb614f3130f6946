//go:build !amd64

package pool

import "unsafe"

// takeTurns is recycleRun's loop, a leaf of its own so that the loop has
// the registers to itself: it takes the buffers at pkts (turns of them, a
// multiple of four) into the cache entries at dst, four at a time, while
// all four lie in the header array at h0 (base and span: its address
// range). It returns how many it took and whether each was out and single
// before (else recycleRest undoes the turns).
//
// Each turn is two steps, as in the amd64 form (turns_amd64.go, which says
// why each exists). This is the form for load-store machines (arm64, the
// silicon's own ISA, and arm): an addition to memory is a load, an add and
// a store there, so each state word is taken into a register once, its
// old value ORed into seen and the sum stored back, four instructions a
// buffer, where reading the word back after the store would be a fifth.
// Each load follows the store of the buffer before it, which the compiler
// keeps in order (the words may alias): a buffer given twice in the turn
// reads the stHome its first taking stored.
func takeTurns(pkts, dst, h0 unsafe.Pointer, base, span uintptr, turns int) (int, bool) {
	// The state words are reached from the first one's address plus the
	// differences: one register-offset load and store each, no address
	// to add and no copy of a pointer to keep.
	st := unsafe.Pointer(&(*Packet)(h0).state)
	var seen uint32
	i := 0
	for ; i < turns; i += 4 {
		q := (*[4]*Packet)(unsafe.Add(pkts, i*int(unsafe.Sizeof((*Packet)(nil)))))
		da, db := uintptr(unsafe.Pointer(q[0]))-base, uintptr(unsafe.Pointer(q[1]))-base
		dc, de := uintptr(unsafe.Pointer(q[2]))-base, uintptr(unsafe.Pointer(q[3]))-base
		if da|db|dc|de >= span { // span is a power of two (headerReach)
			break
		}
		a, b := (*uint32)(unsafe.Add(st, da)), (*uint32)(unsafe.Add(st, db))
		c, e := (*uint32)(unsafe.Add(st, dc)), (*uint32)(unsafe.Add(st, de))
		sa := *a
		*a = sa + toHome
		sb := *b
		*b = sb + toHome
		sc := *c
		*c = sc + toHome
		se := *e
		*e = se + toHome
		o := (*[4]uint32)(unsafe.Add(dst, i*4))
		o[0], o[1], o[2], o[3] = uint32(da), uint32(db), uint32(dc), uint32(de)
		seen |= sa | sb | sc | se
	}
	return i, uint8(seen) == 0
}

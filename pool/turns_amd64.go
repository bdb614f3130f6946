package pool

import "unsafe"

// turn is how many buffers takeTurns takes a turn: eight, so the loop's
// control and the address test are paid once for eight.
const turn = 8

// takeTurns is recycleRun's loop, a leaf of its own so that the loop has
// the registers to itself: it takes the buffers at pkts (turns of them, a
// multiple of turn) into the cache entries at dst, eight at a time, while
// all eight lie in the header array at h0 (base and span: its address
// range). It returns how many it took and whether each was out and single
// before (else recycleRest undoes the turns).
//
// Each turn is two steps. First the eight addresses: a header of this pool
// lies in its header array, where no foreign, forged or nil pointer does
// (one subtraction each, the difference being the cache entry, and one
// compare of the eight differences' OR: the span is a power of two, so the
// OR is below it exactly when all eight are), and nothing is written
// before all eight are proven ours: another pool's header is its owner's.
// Then each is taken unchecked: one addition marks it home and steps its
// generation, and its state word is read back into seen. A buffer that
// was out and single reads stHome in its flags then; one already home (a
// double free, or a buffer given twice in the run) or chained reads
// stChained there (stHome+stHome, stChained+stHome). One test of seen
// after the turns finds any such buffer, and recycleRest undoes the turns
// and takes the run again one checked buffer at a time. So a correct run
// pays one compare per buffer and no branch on its state.
//
// This is the amd64 form (turns_other.go has the form for the other
// architectures): the headers are reached from their entries (h0 plus the
// difference), so the pointers need no registers and each access is one
// instruction, the addition a memory operand's; the read-backs come after
// all eight additions, which the compiler cannot tell apart (the headers
// may alias), so each is a load it folds into the OR: two instructions a
// buffer for the state, against three for a test, its branch and the
// addition. The eight differences, pkts, dst, h0, base and the index take
// the 13 registers the compiler allocates (the OR spills one difference
// for the turn), so seen, turns and span are reached through pointers: a
// local whose address is taken stays in memory, and each use is an
// operand of the OR or compare that uses it (no instruction of its own),
// where in registers they would push more differences out of the
// registers every turn. The turns index the runs through unsafe.Add:
// reslicing costs more instructions than a turn saves.
func takeTurns(pkts, dst, h0 unsafe.Pointer, base, span uintptr, turns int) (int, bool) {
	var seen uint32
	sp, tp, np := &seen, &turns, &span
	i := 0
	for ; i < *tp; i += 8 {
		q := (*[8]*Packet)(unsafe.Add(pkts, i*int(unsafe.Sizeof((*Packet)(nil)))))
		d0, d1 := uintptr(unsafe.Pointer(q[0]))-base, uintptr(unsafe.Pointer(q[1]))-base
		d2, d3 := uintptr(unsafe.Pointer(q[2]))-base, uintptr(unsafe.Pointer(q[3]))-base
		d4, d5 := uintptr(unsafe.Pointer(q[4]))-base, uintptr(unsafe.Pointer(q[5]))-base
		d6, d7 := uintptr(unsafe.Pointer(q[6]))-base, uintptr(unsafe.Pointer(q[7]))-base
		if d0|d1|d2|d3|d4|d5|d6|d7 >= *np { // span is a power of two (headerReach)
			break
		}
		*stateAt(h0, d0) += toHome
		*stateAt(h0, d1) += toHome
		*stateAt(h0, d2) += toHome
		*stateAt(h0, d3) += toHome
		*stateAt(h0, d4) += toHome
		*stateAt(h0, d5) += toHome
		*stateAt(h0, d6) += toHome
		*stateAt(h0, d7) += toHome
		o := (*[8]uint32)(unsafe.Add(dst, i*4))
		o[0], o[1], o[2], o[3] = uint32(d0), uint32(d1), uint32(d2), uint32(d3)
		o[4], o[5], o[6], o[7] = uint32(d4), uint32(d5), uint32(d6), uint32(d7)
		*sp |= *stateAt(h0, d0) | *stateAt(h0, d1) | *stateAt(h0, d2) | *stateAt(h0, d3) |
			*stateAt(h0, d4) | *stateAt(h0, d5) | *stateAt(h0, d6) | *stateAt(h0, d7)
	}
	return i, seen&stChained == 0
}

// stateAt is the state word of the header d bytes past h0.
func stateAt(h0 unsafe.Pointer, d uintptr) *uint32 { return &(*Packet)(unsafe.Add(h0, d)).state }

package pool

import "unsafe"

// turn is how many buffers takeTurns takes a turn: four, as many
// differences as the loop's registers hold beside its own values.
const turn = 4

// takeTurns is recycleRun's loop, a leaf of its own so that the loop has
// the registers to itself: it takes the buffers at pkts (turns of them, a
// multiple of turn) into the cache entries at dst, four at a time, while
// all four lie in the header array at h0 (base and span: its address
// range). It returns how many it took and whether each was out and single
// before (else recycleRest undoes the turns).
//
// Each turn is two steps. First the four addresses: a header of this pool
// lies in its header array, where no foreign, forged or nil pointer does
// (one subtraction each, the difference being the cache entry, and one
// compare of the four differences' OR: the span is a power of two, so the
// OR is below it exactly when all four are), and nothing is written before
// all four are proven ours: another pool's header is its owner's. Then each is taken unchecked: one addition
// marks it home and steps its generation, and its state word is read back
// into seen. A buffer that was out and single reads stHome in its flags
// then; one already home (a double free, or a buffer given twice in the
// run) or chained reads stChained there (stHome+stHome, stChained+stHome).
// One test of seen after the turns finds any such buffer, and recycleRest
// undoes the turns and takes the run again one checked buffer at a time.
// So a correct run pays one compare per buffer and no branch on its state.
//
// This is the amd64 form (turns_other.go has the form for the other
// architectures): the headers are reached from their entries (h0 plus the
// difference), so the pointers need no registers and each access is one
// instruction, the addition a memory operand's; the read-backs come after
// all four additions, which the compiler cannot tell apart (the headers
// may alias), so each is a load it folds into the OR: two instructions a
// buffer for the state, against three for a test, its branch and the
// addition. The turns index the runs through unsafe.Add: reslicing costs
// more instructions than a turn saves.
func takeTurns(pkts, dst, h0 unsafe.Pointer, base, span uintptr, turns int) (int, bool) {
	var seen uint32
	i := 0
	for ; i < turns; i += 4 {
		q := (*[4]*Packet)(unsafe.Add(pkts, i*int(unsafe.Sizeof((*Packet)(nil)))))
		da, db := uintptr(unsafe.Pointer(q[0]))-base, uintptr(unsafe.Pointer(q[1]))-base
		dc, de := uintptr(unsafe.Pointer(q[2]))-base, uintptr(unsafe.Pointer(q[3]))-base
		if da|db|dc|de >= span { // span is a power of two (headerReach)
			break
		}
		a, b := (*Packet)(unsafe.Add(h0, da)), (*Packet)(unsafe.Add(h0, db))
		c, e := (*Packet)(unsafe.Add(h0, dc)), (*Packet)(unsafe.Add(h0, de))
		a.state += toHome
		b.state += toHome
		c.state += toHome
		e.state += toHome
		o := (*[4]uint32)(unsafe.Add(dst, i*4))
		o[0], o[1], o[2], o[3] = uint32(da), uint32(db), uint32(dc), uint32(de)
		seen |= a.state | b.state | c.state | e.state
	}
	return i, seen&stChained == 0
}

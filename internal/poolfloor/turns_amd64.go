package poolfloor

import "unsafe"

// takeTurns is the pool's amd64 loop (pool/turns_amd64.go) over this
// layout: it takes turns*8 headers while all eight of a turn lie in the
// header array, and says whether each was out.
func takeTurns(pkts, dst, h0 unsafe.Pointer, base, span uintptr, turns int) (int, bool) {
	var seen uint32
	sp, tp, np := &seen, &turns, &span
	i := 0
	for ; i < *tp; i += 8 {
		q := (*[8]*Header)(unsafe.Add(pkts, i*int(unsafe.Sizeof((*Header)(nil)))))
		d0, d1 := uintptr(unsafe.Pointer(q[0]))-base, uintptr(unsafe.Pointer(q[1]))-base
		d2, d3 := uintptr(unsafe.Pointer(q[2]))-base, uintptr(unsafe.Pointer(q[3]))-base
		d4, d5 := uintptr(unsafe.Pointer(q[4]))-base, uintptr(unsafe.Pointer(q[5]))-base
		d6, d7 := uintptr(unsafe.Pointer(q[6]))-base, uintptr(unsafe.Pointer(q[7]))-base
		if d0|d1|d2|d3|d4|d5|d6|d7 >= *np {
			break
		}
		*stateAt(h0, d0) += stHome
		*stateAt(h0, d1) += stHome
		*stateAt(h0, d2) += stHome
		*stateAt(h0, d3) += stHome
		*stateAt(h0, d4) += stHome
		*stateAt(h0, d5) += stHome
		*stateAt(h0, d6) += stHome
		*stateAt(h0, d7) += stHome
		o := (*[8]uint32)(unsafe.Add(dst, i*4))
		o[0], o[1], o[2], o[3] = uint32(d0), uint32(d1), uint32(d2), uint32(d3)
		o[4], o[5], o[6], o[7] = uint32(d4), uint32(d5), uint32(d6), uint32(d7)
		*sp |= *stateAt(h0, d0) | *stateAt(h0, d1) | *stateAt(h0, d2) | *stateAt(h0, d3) |
			*stateAt(h0, d4) | *stateAt(h0, d5) | *stateAt(h0, d6) | *stateAt(h0, d7)
	}
	return i, seen&stChained == 0
}

func stateAt(h0 unsafe.Pointer, d uintptr) *uint32 { return &(*Header)(unsafe.Add(h0, d)).state }

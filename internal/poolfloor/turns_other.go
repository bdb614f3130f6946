//go:build !amd64

package poolfloor

import "unsafe"

// takeTurns is the pool's loop for load-store machines
// (pool/turns_other.go) over this layout: each state word loaded once,
// its old value ORed into seen and the sum stored back.
func takeTurns(pkts, dst, h0 unsafe.Pointer, base, span uintptr, turns int) (int, bool) {
	st := unsafe.Pointer(&(*Header)(h0).state)
	var seen uint32
	i := 0
	for ; i < turns; i += 8 {
		q := (*[8]*Header)(unsafe.Add(pkts, i*int(unsafe.Sizeof((*Header)(nil)))))
		d0, d1 := uintptr(unsafe.Pointer(q[0]))-base, uintptr(unsafe.Pointer(q[1]))-base
		d2, d3 := uintptr(unsafe.Pointer(q[2]))-base, uintptr(unsafe.Pointer(q[3]))-base
		d4, d5 := uintptr(unsafe.Pointer(q[4]))-base, uintptr(unsafe.Pointer(q[5]))-base
		d6, d7 := uintptr(unsafe.Pointer(q[6]))-base, uintptr(unsafe.Pointer(q[7]))-base
		if d0|d1|d2|d3|d4|d5|d6|d7 >= span {
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
	*(*uint32)(w) = s + stHome
	return s
}

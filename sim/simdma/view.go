package simdma

import (
	"sync/atomic"
	"unsafe"
)

// Device-side fast paths of the IOMMU for device models that touch the
// same few mappings frame after frame (a BD ring, a buffer pool).
//
// A View remembers the mapping its last access hit and tries it first.
// Every access is still a translation by IOVA through the IOMMU's table: the
// remembered mapping is re-validated on each call (it must still be mapped,
// and the whole access must lie inside it), and anything else goes through
// the table, recording a Fault as IOMMU.Slice does. What the view saves
// is the search and the shared hint store of IOMMU.Slice: the state is
// the view's own, so a model keeps one view per stream of accesses (its TX
// BDs, its TX data, its RX BDs, its RX buffers) and they never evict each
// other. A view belongs to one goroutine at a time (the one that delivers or
// transmits), like the model state it lives in.

// View is a cached translation for one stream of device accesses
// through a IOMMU. The zero value is not usable: see View.
type View struct {
	s *IOMMU
	e *mapping // the mapping the last successful access hit (nil: none yet)
}

// View returns a view through s with nothing remembered yet.
func (s *IOMMU) View() View { return View{s: s} }

// Slice is IOMMU.Slice through the view: the device's bytes of
// [iova, iova+n) for a read or a write, or nil after recording a fault.
// The slice aliases the mapped memory: keep it only while the mapping lives
// (a device model keeps it for one burst at most).
func (v *View) Slice(iova uint64, n int, write bool) []byte {
	// Same bounds as mapping.span: the offset inside the mapping (an iova
	// below it wraps to a huge offset) and the access not running past its
	// end (a negative n converts to a huge length). Small enough to inline.
	if e := v.e; e != nil && !e.dead.Load() {
		if off, size := iova-e.iova, uint64(len(e.dev)); off < size && uint64(n) <= size-off {
			return e.dev[off:][:n:n]
		}
	}
	return v.slow(iova, n, write)
}

// slow searches the table, remembers the mapping it hit and records a fault
// when there is none.
func (v *View) slow(iova uint64, n int, write bool) []byte {
	if e, b := v.s.find(iova, n); b != nil {
		v.e = e
		return b
	}
	v.s.fault(iova, n, write)
	return nil
}

// Forget drops the remembered mapping (the next access searches the table).
func (v *View) Forget() { v.e = nil }

// StoreLE32 atomically stores v as the little-endian word at the start of
// b, which a View or IOMMU returned for a write: how a model publishes
// a descriptor's status word after the descriptor's other fields, without a
// second translation of an address it already translated. b must be 4-byte
// aligned (IOVAs and host addresses of a mapping share their alignment up
// to the page size); a misaligned or short b is refused with false.
func StoreLE32(b []byte, v uint32) bool {
	if len(b) < 4 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))&3 != 0 {
		return false
	}
	atomic.StoreUint32((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), v)
	return true
}

// LoadLE32 atomically loads the little-endian word at the start of b (see
// StoreLE32): how a model reads a status word the driver publishes last.
func LoadLE32(b []byte) (uint32, bool) {
	if len(b) < 4 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))&3 != 0 {
		return 0, false
	}
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(unsafe.SliceData(b)))), true
}

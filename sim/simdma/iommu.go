package simdma

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
)

// IOMMU is a software IOMMU for device models: a translation table from
// IOVAs to host memory. Drivers map memory through it like through VFIO;
// models reach that memory only by IOVA through its device-side methods.
// An access to an unmapped or out-of-range IOVA is refused and recorded as a
// Fault carrying the address: never a panic, never a stray write.
//
// In non-coherent mode it also plays the CPU's data cache: a cached
// (not Uncached) region gets a separate device-side copy, and bytes move
// between the two only on SyncForDevice (CPU to device, a clean) and
// SyncForCPU (device to CPU, an invalidate), whole cache lines at a time. A
// driver that forgets a sync call then reads or sends stale bytes, as it
// would on a non-coherent SoC.
type IOMMU struct {
	*space

	// Faults are recorded per handle: each device that shares the address
	// space (Share) keeps its own log.
	hint   atomic.Pointer[mapping] // the mapping this handle hit last
	fmu    sync.Mutex
	faults []Fault
	nfault atomic.Uint64
}

// space is an address space: the translation table several devices may
// share, as the NICs of one VFIO container do.
type space struct {
	noncoh bool
	mu     sync.Mutex // serialises Map/Unmap
	table  atomic.Pointer[[]*mapping]
}

type mapping struct {
	dead atomic.Bool // set on Unmap, so a cached look-up hint is not used after it
	iova uint64
	cpu  []byte
	dev  []byte // == cpu unless cached memory in non-coherent mode
	name string
}

// Fault is a refused device access.
type Fault struct {
	IOVA  uint64
	Len   int
	Write bool
}

// String describes the fault: read or write, its length and its IOVA.
func (f Fault) String() string {
	dir := "read"
	if f.Write {
		dir = "write"
	}
	return fmt.Sprintf("DMA %s of %d bytes at IOVA %#x: not mapped", dir, f.Len, f.IOVA)
}

// maxRecordedFaults bounds the fault log; FaultCount keeps counting.
const maxRecordedFaults = 256

// iovaBase is where the simulated IOMMU starts handing out addresses: far
// from typical user-space virtual addresses, so a driver that passes a
// pointer instead of an IOVA faults.
const iovaBase = 0x4000_0000

// guard is the unmapped gap left after each mapping, so an overrun
// faults instead of landing in the next region.
const guard = 64 << 10

// NewIOMMU returns an empty simulated IOMMU. nonCoherent selects the
// non-coherent cache model described on IOMMU.
func NewIOMMU(nonCoherent bool) *IOMMU {
	sp := &space{noncoh: nonCoherent}
	sp.table.Store(&[]*mapping{})
	return &IOMMU{space: sp}
}

// Share returns a handle on the same address space with its own fault log:
// what a second device attached to the same IOMMU domain sees. Memory mapped
// through either handle is reachable through both.
func (s *IOMMU) Share() *IOMMU { return &IOMMU{space: s.space} }

// Name implements Mapper.
func (s *IOMMU) Name() string { return "sim-iommu" }

// NeedsLocked implements Mapper: simulated devices do not need pinned memory.
func (s *IOMMU) NeedsLocked() bool { return false }

// NonCoherent reports whether the cache model is on.
func (s *IOMMU) NonCoherent() bool { return s.noncoh }

// Map implements Mapper.
func (s *IOMMU) Map(mem []byte, attr dma.Attr) (dma.Mapping, error) {
	if len(mem) == 0 {
		return dma.Mapping{}, fmt.Errorf("sim-iommu: map %q: empty memory", attr.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.insert(s.place(len(mem)), mem, attr)
}

// MapAt maps caller-owned memory at a caller-chosen IOVA: how a harness
// presents memory it did not get from Map (another process's shared
// memory, a buffer laid out by a test) to a model at the bus address the
// driver under test will use. iova must be a multiple of PageSize, as an
// IOMMU maps whole pages, and [iova, iova+len(mem)) must neither wrap
// past the top of the address space nor overlap a live mapping. mem stays
// the caller's: Unmap with the returned Mapping removes the translation
// and leaves mem alone. Later Map calls place their regions around it.
func (s *IOMMU) MapAt(iova uint64, mem []byte, attr dma.Attr) (dma.Mapping, error) {
	if len(mem) == 0 {
		return dma.Mapping{}, fmt.Errorf("sim-iommu: map %q at IOVA %#x: empty memory", attr.Name, iova)
	}
	if iova%dma.PageSize != 0 {
		return dma.Mapping{}, fmt.Errorf("sim-iommu: map %q at IOVA %#x: not a multiple of the %d-byte IOMMU page; round the IOVA down to %#x", attr.Name, iova, dma.PageSize, iova&^(dma.PageSize-1))
	}
	end := iova + uint64(len(mem))
	if end < iova {
		return dma.Mapping{}, fmt.Errorf("sim-iommu: map %q at IOVA %#x: %d bytes wrap past the top of the address space", attr.Name, iova, len(mem))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range *s.table.Load() {
		if iova < e.iova+uint64(len(e.cpu)) && e.iova < end {
			return dma.Mapping{}, fmt.Errorf("sim-iommu: map %q at IOVA %#x..%#x: overlaps %q at %#x..%#x; pick an IOVA outside it or unmap it first",
				attr.Name, iova, end-1, e.name, e.iova, e.iova+uint64(len(e.cpu))-1)
		}
	}
	return s.insert(iova, mem, attr)
}

// insert adds the mapping of mem at iova. Caller holds mu.
func (s *space) insert(iova uint64, mem []byte, attr dma.Attr) (dma.Mapping, error) {
	e := &mapping{iova: iova, cpu: mem, dev: mem, name: attr.Name}
	if s.noncoh && !attr.Uncached {
		// The device-side copy is mmapped like the CPU side, outside the Go
		// heap: both are DMA memory, whose ordering the descriptor status
		// words carry, not Go synchronisation the race detector could see.
		dev, err := unix.Mmap(-1, 0, len(mem), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return dma.Mapping{}, fmt.Errorf("sim-iommu: map %q: device-side copy of %d bytes: %w", attr.Name, len(mem), err)
		}
		e.dev = dev
		copy(e.dev, mem) // memory starts out clean
	}
	old := *s.table.Load()
	t := make([]*mapping, len(old), len(old)+1)
	copy(t, old)
	t = append(t, e)
	s.table.Store(&t)
	return dma.Mapping{IOVA: e.iova}, nil
}

// place picks the lowest IOVA at or above the base where n bytes and the
// guard gap after them fit between live mappings: freed ranges are reused,
// as an IOMMU's allocator does, so a long-lived process (and devices with
// 32-bit descriptor addresses) never run out. Caller holds mu.
func (s *space) place(n int) uint64 {
	span := func(size int) uint64 { return uint64(roundUp(size, guard)) + guard }
	live := append([]*mapping(nil), *s.table.Load()...)
	sort.Slice(live, func(i, j int) bool { return live[i].iova < live[j].iova })
	at := uint64(iovaBase)
	for _, e := range live {
		if at+span(n) <= e.iova {
			break
		}
		if end := e.iova + span(len(e.cpu)); end > at {
			at = end
		}
	}
	return at
}

// Unmap implements Mapper.
func (s *IOMMU) Unmap(mem []byte, m dma.Mapping) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.table.Load()
	for i, e := range old {
		if e.iova == m.IOVA {
			e.dead.Store(true)
			t := make([]*mapping, 0, len(old)-1)
			t = append(t, old[:i]...)
			t = append(t, old[i+1:]...)
			s.table.Store(&t)
			if &e.dev[0] != &e.cpu[0] {
				// Like the CPU side, the copy goes away with the mapping: a
				// device must be stopped before its memory is unmapped.
				if err := unix.Munmap(e.dev); err != nil {
					return fmt.Errorf("sim-iommu: unmap %q: device-side copy: %w", e.name, err)
				}
			}
			return nil
		}
	}
	return fmt.Errorf("sim-iommu: unmap IOVA %#x: not mapped", m.IOVA)
}

// Mappings is the number of live mappings.
func (s *IOMMU) Mappings() int { return len(*s.table.Load()) }

// lookup finds the device-side bytes of [iova, iova+n). It does not record.
// The mapping hit last is tried first: a device touches a few regions (its
// rings, its pools) over and over.
func (s *IOMMU) lookup(iova uint64, n int) []byte {
	if n < 0 {
		return nil
	}
	if e := s.hint.Load(); e != nil && !e.dead.Load() {
		if b, ok := e.span(iova, n); ok {
			return b
		}
	}
	e, b := s.find(iova, n)
	if b != nil {
		s.hint.Store(e)
	}
	return b
}

// find searches the table for the mapping holding [iova, iova+n): the
// mapping and the bytes, or nil bytes when no mapping holds the whole access.
func (s *space) find(iova uint64, n int) (*mapping, []byte) {
	if n < 0 {
		return nil, nil
	}
	for _, e := range *s.table.Load() {
		if b, ok := e.span(iova, n); ok {
			return e, b // b is nil when the access runs past the mapping's end
		}
	}
	return nil, nil
}

// span is [iova, iova+n) inside e: ok with the bytes when iova falls in e
// (nil bytes when the access runs past its end), not ok otherwise.
func (e *mapping) span(iova uint64, n int) ([]byte, bool) {
	if iova < e.iova || iova-e.iova >= uint64(len(e.dev)) {
		return nil, false
	}
	off := iova - e.iova
	if uint64(n) > uint64(len(e.dev))-off {
		return nil, true // runs past the end of the mapping
	}
	return e.dev[off : off+uint64(n) : off+uint64(n)], true
}

func (s *IOMMU) fault(iova uint64, n int, write bool) {
	s.nfault.Add(1)
	s.fmu.Lock()
	if len(s.faults) < maxRecordedFaults {
		s.faults = append(s.faults, Fault{IOVA: iova, Len: n, Write: write})
	}
	s.fmu.Unlock()
}

// Slice returns the device's view of [iova, iova+n) for a read (write=false)
// or a write (write=true), or nil after recording a fault. The slice aliases
// the mapped memory: keep it only while the mapping lives.
func (s *IOMMU) Slice(iova uint64, n int, write bool) []byte {
	b := s.lookup(iova, n)
	if b == nil {
		s.fault(iova, n, write)
	}
	return b
}

// Read copies len(dst) bytes at iova into dst; false means a recorded fault.
func (s *IOMMU) Read(iova uint64, dst []byte) bool {
	b := s.Slice(iova, len(dst), false)
	if b == nil {
		return false
	}
	copy(dst, b)
	return true
}

// Write copies src to iova; false means a recorded fault and nothing written.
func (s *IOMMU) Write(iova uint64, src []byte) bool {
	b := s.Slice(iova, len(src), true)
	if b == nil {
		return false
	}
	copy(b, src)
	return true
}

// Load32 atomically loads the little-endian word at iova (4-byte aligned):
// how a model reads a status word the driver publishes last.
func (s *IOMMU) Load32(iova uint64) (uint32, bool) {
	if iova&3 != 0 {
		s.fault(iova, 4, false)
		return 0, false
	}
	b := s.Slice(iova, 4, false)
	if b == nil {
		return 0, false
	}
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&b[0]))), true
}

// Store32 atomically stores a little-endian word at iova (4-byte aligned):
// how a model publishes a descriptor's status after its other fields.
func (s *IOMMU) Store32(iova uint64, v uint32) bool {
	if iova&3 != 0 {
		s.fault(iova, 4, true)
		return false
	}
	b := s.Slice(iova, 4, true)
	if b == nil {
		return false
	}
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&b[0])), v)
	return true
}

// Faults returns the recorded faults (the first 256).
func (s *IOMMU) Faults() []Fault {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	return append([]Fault(nil), s.faults...)
}

// FaultCount is the number of refused accesses so far.
func (s *IOMMU) FaultCount() uint64 { return s.nfault.Load() }

// SyncForDevice implements Syncer: in non-coherent mode the CPU's bytes of
// the touched cache lines are written to the device's copy (a clean).
func (s *IOMMU) SyncForDevice(mem []byte, m dma.Mapping, off, n int) {
	if !s.noncoh {
		return
	}
	if e, ok := s.entry(m.IOVA, mem); ok && &e.dev[0] != &e.cpu[0] {
		lo, hi := lineSpan(off, n, len(e.cpu))
		copy(e.dev[lo:hi], e.cpu[lo:hi])
	}
}

// SyncForCPU implements Syncer: in non-coherent mode the device's bytes of
// the touched cache lines replace the CPU's (an invalidate).
func (s *IOMMU) SyncForCPU(mem []byte, m dma.Mapping, off, n int) {
	if !s.noncoh {
		return
	}
	if e, ok := s.entry(m.IOVA, mem); ok && &e.dev[0] != &e.cpu[0] {
		lo, hi := lineSpan(off, n, len(e.cpu))
		copy(e.cpu[lo:hi], e.dev[lo:hi])
	}
}

// SyncSpansForDevice implements dma.SpanSyncer: SyncForDevice for every
// span inside the mapping, with one look-up of the mapping.
func (s *IOMMU) SyncSpansForDevice(mem []byte, m dma.Mapping, spans []dma.Span) {
	if !s.noncoh || len(spans) == 0 {
		return
	}
	if e, ok := s.entry(m.IOVA, mem); ok && &e.dev[0] != &e.cpu[0] {
		copySpans(e.dev, e.cpu, spans)
	}
}

// SyncSpansForCPU implements dma.SpanSyncer: SyncForCPU for every span
// inside the mapping, with one look-up of the mapping.
func (s *IOMMU) SyncSpansForCPU(mem []byte, m dma.Mapping, spans []dma.Span) {
	if !s.noncoh || len(spans) == 0 {
		return
	}
	if e, ok := s.entry(m.IOVA, mem); ok && &e.dev[0] != &e.cpu[0] {
		copySpans(e.cpu, e.dev, spans)
	}
}

// entry is the live mapping at iova whose CPU side is mem: a sync for a
// mapping that is gone (a closed region's, whose IOVA may since map other
// memory) finds none.
func (s *IOMMU) entry(iova uint64, mem []byte) (*mapping, bool) {
	if len(mem) == 0 {
		return nil, false
	}
	for _, e := range *s.table.Load() {
		if e.iova == iova {
			return e, &e.cpu[0] == &mem[0]
		}
	}
	return nil, false
}

// cacheLine is one cache line as a value: a copy of one is a few wide
// loads and stores inline (on amd64 four 16-byte pairs, on arm64 pairs of
// registers), where a copy of a [CacheLine]byte array may call memmove, as
// the compiler cannot rule out that the two overlap.
type cacheLine struct{ w [dma.CacheLine / 8]uint64 }

// copySpans copies each span, widened to whole cache lines (as lineSpan
// widens it, inside the mapping), from src to dst: a clean (CPU copy to
// device copy) or an invalidate (device copy to CPU copy) of the span's
// lines, every byte of each, line by line as a cache walks them.
//
// A span not inside the mapping (a negative offset, an empty or negative
// length, bytes past the end) is dropped, as dma.SpanSyncer asks.
//
// The common case, a span inside the mapping whose lines are all whole
// (the mapping's size is whole lines, or the span ends before its last,
// partial one), costs two unsigned tests of the span's start and end and
// a 64-byte move per line, with no call into memmove; the first span not
// of that kind and those after it take the general loop.
func copySpans(dst, src []byte, spans []dma.Span) {
	size := uint(min(len(dst), len(src)))
	whole := size &^ (dma.CacheLine - 1) // bytes of the mapping in whole lines
	d, s := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
	if len(spans) == 0 {
		return
	}
	// The spans are walked by pointer, up to the last and never past it:
	// no index to scale per span.
	sp, last := &spans[0], &spans[len(spans)-1]
	for {
		off := uint(sp.Off)
		end := off + uint(sp.Len)
		// off < end <= whole (unsigned) holds exactly when 0 <= Off,
		// 0 < Len and Off+Len <= whole: a negative Off is a huge off, and
		// a negative Len, or one that wraps, makes end <= off.
		if off >= end || end > whole {
			break // the general loop takes it and the rest
		}
		// rem counts the bytes from the line being copied to the span's
		// end: the next line's address is formed only when rem says it
		// is the span's, so inside the mapping. A frame's span is one or
		// two lines: the first is copied without a test.
		off &^= dma.CacheLine - 1
		rem := end - off
		dl, sl := unsafe.Add(d, off), unsafe.Add(s, off)
		*(*cacheLine)(dl) = *(*cacheLine)(sl)
		if rem > dma.CacheLine {
			for {
				dl, sl = unsafe.Add(dl, dma.CacheLine), unsafe.Add(sl, dma.CacheLine)
				*(*cacheLine)(dl) = *(*cacheLine)(sl)
				if rem <= 2*dma.CacheLine {
					break
				}
				rem -= dma.CacheLine
			}
		}
		if sp == last {
			return
		}
		sp = (*dma.Span)(unsafe.Add(unsafe.Pointer(sp), unsafe.Sizeof(dma.Span{})))
	}
	// The general loop, from the span the first one stopped at.
	p := unsafe.Pointer(unsafe.SliceData(spans))
	n := uintptr(len(spans)) * unsafe.Sizeof(dma.Span{})
	at := uintptr(unsafe.Pointer(sp)) - uintptr(p)
	dst, src = unsafe.Slice((*byte)(d), size), unsafe.Slice((*byte)(s), size)
	for ; at < n; at += unsafe.Sizeof(dma.Span{}) {
		sp := *(*dma.Span)(unsafe.Add(p, at))
		off, end := uint(sp.Off), uint(sp.Off)+uint(sp.Len)
		if off >= end || end > size {
			continue // not inside the mapping: dropped
		}
		lo := off &^ (dma.CacheLine - 1)
		hi := min((end+dma.CacheLine-1)&^(dma.CacheLine-1), size)
		// lo <= hi <= size: every whole line below hi is inside both.
		for ; lo+dma.CacheLine <= hi; lo += dma.CacheLine {
			*(*cacheLine)(unsafe.Add(d, lo)) = *(*cacheLine)(unsafe.Add(s, lo))
		}
		if lo != hi {
			copy(dst[lo:hi], src[lo:hi]) // the mapping's last, partial line
		}
	}
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// lineSpan widens [off, off+n) to whole cache lines inside [0, size).
func lineSpan(off, n, size int) (int, int) {
	lo := off &^ (dma.CacheLine - 1)
	hi := roundUp(off+n, dma.CacheLine)
	if hi > size {
		hi = size
	}
	return lo, hi
}

// Domain identifies the address space: handles from Share have the same one.
func (s *IOMMU) Domain() any { return s.space }

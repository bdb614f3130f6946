package dma

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"golang.org/x/sys/unix"
)

// Hugepages says whether Alloc uses 2 MiB huge pages.
type Hugepages int

const (
	// HugeAuto uses huge pages when the kernel has some free and falls
	// back to mlocked 4 KiB pages with a logged warning otherwise.
	HugeAuto Hugepages = iota
	// HugeRequire fails when no huge pages can be had.
	HugeRequire
	// HugeNever uses 4 KiB pages.
	HugeNever
)

// Options configure Alloc.
type Options struct {
	Attr
	Hugepages Hugepages
	// NonCoherent marks memory whose device accesses do not snoop the CPU
	// caches (i.MX FEC): SyncForDevice cleans and SyncForCPU invalidates
	// the touched cache lines. Ignored for Uncached regions.
	NonCoherent bool
}

// Region is DMA memory: bytes the CPU sees plus the bus addresses the device
// uses. A Region is mapped once and stays mapped until Close.
type Region struct {
	mem        []byte
	mapping    Mapping
	mapper     Mapper
	syncer     Syncer
	spanSyncer SpanSyncer // syncer's batch form, or nil
	name       string
	huge       bool
	noncoh     bool
	release    func([]byte) error
	closeOnce  sync.Once
	closeError error
}

var hugeWarnOnce sync.Once

// Warn reports a condition that degrades but does not stop DMA memory
// allocation (no huge pages), once per process. It logs at level WARN
// through log/slog's default logger (slog.SetDefault routes it into the
// program's own log; without one it is a line on standard error); a
// program may also replace it (to silence it) before opening devices.
var Warn = func(msg string) { slog.Warn("gopmd: " + msg) }

// Alloc allocates size bytes of DMA memory (rounded up to the page size) and
// maps it through m. Memory comes from 2 MiB huge pages when the kernel has
// them (MAP_HUGETLB), else from 4 KiB pages locked with mlock when the mapper
// needs pinned memory.
func Alloc(m Mapper, size int, o Options) (*Region, error) {
	if m == nil {
		return nil, fmt.Errorf("dma: alloc %q: no mapper given", o.Name)
	}
	if size <= 0 {
		return nil, fmt.Errorf("dma: alloc %q: size %d must be positive", o.Name, size)
	}
	if a, ok := m.(Allocator); ok {
		return a.AllocRegion(size, o)
	}
	var (
		mem  []byte
		huge bool
		err  error
	)
	if o.Hugepages != HugeNever {
		hsize := roundUp(size, HugePageSize)
		mem, err = unix.Mmap(-1, 0, hsize, unix.PROT_READ|unix.PROT_WRITE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_HUGETLB|unix.MAP_POPULATE)
		if err == nil {
			huge = true
		} else if o.Hugepages == HugeRequire {
			return nil, fmt.Errorf("dma: alloc %q: %d bytes of 2 MiB huge pages: %w (reserve some: echo 64 > /proc/sys/vm/nr_hugepages)", o.Name, hsize, err)
		} else {
			hugeWarnOnce.Do(func() {
				Warn(fmt.Sprintf("dma: no 2 MiB huge pages (%v); using 4 KiB pages (reserve huge pages with: echo 64 > /proc/sys/vm/nr_hugepages)", err))
			})
		}
	}
	if mem == nil {
		mem, err = unix.Mmap(-1, 0, roundUp(size, PageSize), unix.PROT_READ|unix.PROT_WRITE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
		if err != nil {
			return nil, fmt.Errorf("dma: alloc %q: mmap %d bytes: %w", o.Name, size, err)
		}
	}
	if m.NeedsLocked() {
		if err := unix.Mlock(mem); err != nil {
			_ = unix.Munmap(mem)
			return nil, fmt.Errorf("dma: alloc %q: mlock %d bytes: %w (raise the locked-memory limit: ulimit -l unlimited)", o.Name, len(mem), err)
		}
	}
	r, err := NewRegion(mem, m, o, unix.Munmap)
	if err != nil {
		_ = unix.Munmap(mem)
		return nil, fmt.Errorf("dma: alloc %q: %w", o.Name, err)
	}
	r.huge = huge
	return r, nil
}

// NewRegion maps memory obtained elsewhere (a UIO map, a /dev/mem carve-out,
// a hugetlbfs file) through m. release, if not nil, is called with mem after
// Close has unmapped it.
func NewRegion(mem []byte, m Mapper, o Options, release func([]byte) error) (*Region, error) {
	if len(mem) == 0 {
		return nil, errors.New("dma: empty memory")
	}
	mp, err := m.Map(mem, o.Attr)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes through %s: %w", len(mem), m.Name(), err)
	}
	if o.Contiguous && mp.Pages != nil {
		_ = m.Unmap(mem, mp)
		return nil, fmt.Errorf("%s region %q of %d bytes: %w", m.Name(), o.Name, len(mem), ErrNotContiguous)
	}
	r := &Region{mem: mem, mapping: mp, mapper: m, name: o.Name, release: release,
		noncoh: o.NonCoherent && !o.Uncached}
	if s, ok := m.(Syncer); ok && !o.Uncached {
		// A syncer that reports coherent operation has nothing to do: skip
		// the call on every free.
		if nc, ok := m.(interface{ NonCoherent() bool }); !ok || nc.NonCoherent() {
			r.syncer = s
			r.spanSyncer, _ = s.(SpanSyncer)
		}
	}
	return r, nil
}

// Bytes is the CPU's view of the region.
func (r *Region) Bytes() []byte { return r.mem }

// Len is the region's size in bytes.
func (r *Region) Len() int { return len(r.mem) }

// Name is the name given at allocation.
func (r *Region) Name() string { return r.name }

// Huge reports whether the region lives in 2 MiB huge pages.
func (r *Region) Huge() bool { return r.huge }

// Contiguous reports whether the whole region is one run of bus addresses.
func (r *Region) Contiguous() bool { return r.mapping.Pages == nil }

// Mapper is the mapper the region was mapped through.
func (r *Region) Mapper() Mapper { return r.mapper }

// IOVA is the bus address of byte 0.
func (r *Region) IOVA() uint64 { return r.IOVAAt(0) }

// IOVAAt is the bus address of byte off. It costs one table look-up for
// scattered memory and nothing otherwise; call it at setup, not per packet.
func (r *Region) IOVAAt(off int) uint64 {
	if r.mapping.Pages == nil {
		return r.mapping.IOVA + uint64(off)
	}
	return r.mapping.Pages[off/PageSize] + uint64(off%PageSize)
}

// NeedsSync reports whether SyncForDevice / SyncForCPU do anything for this
// region; callers on a hot path may skip computing ranges when it is false.
func (r *Region) NeedsSync() bool { return r.noncoh || r.syncer != nil }

// ContiguousRange reports whether bytes [off, off+n) are one run of bus
// addresses, i.e. can be handed to the device as one buffer.
func (r *Region) ContiguousRange(off, n int) bool {
	if off < 0 || n <= 0 || off+n > len(r.mem) {
		return false
	}
	if r.mapping.Pages == nil {
		return true
	}
	return r.IOVAAt(off+n-1) == r.IOVAAt(off)+uint64(n-1)
}

// SyncForDevice makes the CPU's writes to [off, off+n) visible to the
// device: a no-op on coherent memory, a cache clean on non-coherent memory.
func (r *Region) SyncForDevice(off, n int) {
	if !r.noncoh && r.syncer == nil {
		return
	}
	if off < 0 || n <= 0 || off+n > len(r.mem) {
		return
	}
	if r.noncoh {
		cacheClean(r.mem[off : off+n])
	}
	if r.syncer != nil {
		r.syncer.SyncForDevice(r.mem, r.mapping, off, n)
	}
}

// SyncForCPU makes the device's writes to [off, off+n) visible to the CPU:
// a no-op on coherent memory, a cache invalidate on non-coherent memory.
func (r *Region) SyncForCPU(off, n int) {
	if !r.noncoh && r.syncer == nil {
		return
	}
	if off < 0 || n <= 0 || off+n > len(r.mem) {
		return
	}
	if r.syncer != nil {
		r.syncer.SyncForCPU(r.mem, r.mapping, off, n)
	}
	if r.noncoh {
		cacheInvalidate(r.mem[off : off+n])
	}
}

// SyncSpansForDevice is SyncForDevice for many ranges at once, as a burst
// has them: one call into the cache maintenance, whose one loop checks
// each range and cleans its lines, one DSB on arm64 after every line of
// every range is cleaned (where SyncForDevice pays one per range), and one
// call into the mapper. A range outside the region, or empty, is skipped,
// as SyncForDevice skips it. Call it before the descriptors that hand the
// bytes over are published.
func (r *Region) SyncSpansForDevice(spans []Span) {
	if r.noncoh && cacheMaintenance {
		cacheCleanSpans(r.mem, spans) // only the lines inside the region
	}
	switch {
	case r.spanSyncer != nil:
		r.spanSyncer.SyncSpansForDevice(r.mem, r.mapping, spans)
	case r.syncer != nil:
		for _, s := range spans {
			if r.holds(s) {
				r.syncer.SyncForDevice(r.mem, r.mapping, s.Off, s.Len)
			}
		}
	}
}

// SyncSpansForCPU is SyncForCPU for many ranges at once (see
// SyncSpansForDevice): call it before the CPU reads any of the bytes.
func (r *Region) SyncSpansForCPU(spans []Span) {
	switch {
	case r.spanSyncer != nil:
		r.spanSyncer.SyncSpansForCPU(r.mem, r.mapping, spans)
	case r.syncer != nil:
		for _, s := range spans {
			if r.holds(s) {
				r.syncer.SyncForCPU(r.mem, r.mapping, s.Off, s.Len)
			}
		}
	}
	if r.noncoh && cacheMaintenance {
		cacheInvalidateSpans(r.mem, spans) // only the lines inside the region
	}
}

// holds reports whether s is a range SyncForDevice would sync: not empty,
// inside the region.
func (r *Region) holds(s Span) bool {
	return s.Off >= 0 && s.Len > 0 && s.Off+s.Len <= len(r.mem)
}

// Close unmaps the region from its mapper and releases the memory. The
// device must be stopped first: memory it may still write is never freed
// behind its back. Close is idempotent.
func (r *Region) Close() error {
	r.closeOnce.Do(func() {
		if err := r.mapper.Unmap(r.mem, r.mapping); err != nil {
			r.closeError = fmt.Errorf("dma: unmap %q from %s: %w", r.name, r.mapper.Name(), err)
			return // keep the memory: the device may still reach it
		}
		if r.release != nil {
			if err := r.release(r.mem); err != nil {
				r.closeError = fmt.Errorf("dma: release %q: %w", r.name, err)
			}
		}
		r.mem = nil
	})
	return r.closeError
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

package dma

import (
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
)

// PageSize is the granule in which memory is mapped and in which a
// non-contiguous mapping records bus addresses.
const PageSize = 4096

// HugePageSize is the size of the huge pages Alloc asks the kernel for.
const HugePageSize = 2 << 20

// CacheLine is the cache-line size assumed for cache maintenance and buffer
// alignment (64 bytes on every target: Cortex-A53/A55/A72, Cortex-A7/A9, x86).
const CacheLine = 64

// Attr describes how a region will be used by the device.
type Attr struct {
	// Uncached asks for memory that the CPU and the device see identically
	// without cache maintenance: descriptor rings on non-coherent SoCs.
	Uncached bool
	// Contiguous requires the whole region to be one run of bus addresses
	// (descriptor rings). Without it a mapper may return per-page addresses.
	Contiguous bool
	// Name names the region in errors and fault reports.
	Name string
}

// Mapping is what a Mapper returns for a mapped region.
type Mapping struct {
	// IOVA is the bus address of byte 0. When Pages is nil the region is
	// contiguous and byte i is at IOVA+i.
	IOVA uint64
	// Pages, when not nil, holds the bus address of every PageSize page of
	// the region (physically scattered memory without an IOMMU).
	Pages []uint64
}

// Mapper makes host memory reachable by a device.
type Mapper interface {
	// Map makes mem reachable by the device and returns its bus addresses.
	// mem must stay valid (and pinned) until Unmap.
	Map(mem []byte, attr Attr) (Mapping, error)
	// Unmap removes a mapping made by Map; m is the value Map returned.
	Unmap(mem []byte, m Mapping) error
	// Name says what kind of mapper this is ("vfio-type1", "iommufd",
	// "pagemap", "sim-iommu") for messages.
	Name() string
	// NeedsLocked reports whether memory must be mlocked before Map (its
	// bus address would otherwise change under the device).
	NeedsLocked() bool
}

// Syncer is implemented by mappers that take part in cache maintenance: a
// Region calls it after cleaning (SyncForDevice) and before invalidating
// (SyncForCPU) the CPU's cache lines, with the region's memory and
// mapping and a range inside the region; never for an Uncached region,
// nor when the mapper also has a NonCoherent method that returns false.
// (The simulated IOMMU, sim/simdma, is one: in non-coherent mode it keeps
// a device-side copy of cached memory and exchanges bytes with the CPU's
// view only on these calls.)
type Syncer interface {
	SyncForDevice(mem []byte, m Mapping, off, n int)
	SyncForCPU(mem []byte, m Mapping, off, n int)
}

// SpanSyncer is a Syncer that also takes many ranges in one call
// (Region.SyncSpansForDevice, SyncSpansForCPU); a Syncer without it gets
// one call per range, only for the ranges inside the region. The spans are
// the caller's, checked by the Region only where it walks them for its own
// cache maintenance: a SpanSyncer skips any span that is empty or not
// inside mem (a negative offset or length, bytes past its end), as
// SyncForDevice skips such a range, in the one pass it makes over them. A
// mapper that embeds a SpanSyncer and changes SyncForDevice or SyncForCPU
// must wrap these two as well: the Region prefers them.
type SpanSyncer interface {
	SyncSpansForDevice(mem []byte, m Mapping, spans []Span)
	SyncSpansForCPU(mem []byte, m Mapping, spans []Span)
}

// A Span is a byte range of a Region: Len bytes from offset Off.
type Span struct{ Off, Len int }

// ErrNotContiguous is returned when a region that must be one run of bus
// addresses is not.
var ErrNotContiguous = errors.New("memory is not physically contiguous")

// SameDomain reports whether memory mapped through a is reachable at the
// same bus addresses by a device that maps through b: the same mapper, or
// two handles on one address space (mappers with a Domain method that
// returns the same value, such as the simulated IOMMU's handles from Share).
func SameDomain(a, b Mapper) bool {
	if a == b {
		return true
	}
	da, ok1 := a.(interface{ Domain() any })
	db, ok2 := b.(interface{ Domain() any })
	return ok1 && ok2 && da.Domain() == db.Domain()
}

// domainIDs numbers the DMA domains seen so far (see DomainID).
var (
	domainIDs  sync.Map // domain key -> uint32
	domainNext atomic.Uint32
)

// DomainID is a small number naming m's DMA domain: two mappers get the same
// number exactly when SameDomain says they share an address space. It is for
// hot paths, where comparing two numbers replaces SameDomain's interface
// conversions: a pool records its region's domain once, and a TX queue
// compares it with its device's per packet. 0 is no mapper.
func DomainID(m Mapper) uint32 {
	if m == nil {
		return 0
	}
	var key any = m
	if d, ok := m.(interface{ Domain() any }); ok {
		key = d.Domain()
	}
	if key == nil || !reflect.TypeOf(key).Comparable() {
		return domainNext.Add(1) // cannot be looked up: a domain of its own
	}
	if id, ok := domainIDs.Load(key); ok {
		return id.(uint32)
	}
	id, _ := domainIDs.LoadOrStore(key, domainNext.Add(1))
	return id.(uint32)
}

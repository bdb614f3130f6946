// Package pool is gopmd's page pool: fixed-size DMA buffers carved from a
// Region mapped once, recycled on free instead of released, as the Linux
// page_pool does.
//
// A Pool belongs to one owner goroutine (the RX queue that refills from it).
// The owner allocates from a private LIFO cache with no atomics, and returns
// buffers straight into it (Recycle, FreeBulkDirect: the kernel's
// page_pool_recycle_direct); buffers freed from any other goroutine land in
// a shared lock-free ring, from which the owner refills its cache in bulk.
// Every header lives in its pool's header array and carries a generation
// that is odd while the buffer is out, so a free of a foreign, forged or
// already-free buffer is refused and counted instead of corrupting a pool.
//
// By default each buffer is its own recycling unit: the region is mapped
// once, so a 2 KiB buffer costs no more memory whole than as half a page.
// Config.PerPage splits pages into pieces with a shared count instead.
package pool

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gopmd/gopmd/dma"
)

// Defaults. The cache holds more than a TX reclaim frees at once (half of a
// 512-entry ring) so direct returns do not spill to the ring; the kernel's
// page_pool holds 128.
const (
	DefaultCacheSize = 512
	DefaultRefill    = 64
	DefaultBufSize   = 2048
	DefaultHeadroom  = 128
)

// Ring entries carry a unit index and the low bits of its generation.
const (
	idxBits  = 22
	idxMask  = 1<<idxBits - 1
	genMask  = 1<<(32-idxBits) - 1
	MaxUnits = 1 << idxBits
)

// Config sizes a pool.
type Config struct {
	// Name names the pool in errors, stats and leak reports.
	Name string
	// Count is the number of buffers.
	Count int
	// BufSize is the size of one buffer, headroom included (default 2048).
	// It must be a multiple of the 64-byte cache line.
	BufSize int
	// Headroom is where the data of a fresh buffer starts (default 128).
	Headroom int
	// PerPage > 1 splits each recycling unit (a page of PerPage*BufSize
	// bytes) into PerPage buffers with a shared reference count: the unit
	// returns to the pool when its last piece does (ENETC's half-page reuse
	// is PerPage 2 with BufSize 2048).
	PerPage int
	// Offset is where in the region the pool's buffers start (default 0).
	Offset int
	// CacheSize and Refill size the owner's alloc cache (512 and 64). The
	// cache never holds more than the pool's units.
	CacheSize, Refill int
}

// Pool is a page pool. See the package documentation.
type Pool struct {
	// The fast paths' fields come first, where an instruction reaches them
	// with a one-byte displacement.

	// cache is the LIFO of free whole buffers (Alloc's fast path; empty for
	// split pages), each as its header's byte offset from hdr0: what the
	// ownership proof's subtraction yields, stored with no pointer (so no
	// write barrier) and turned back into the header with one addition.
	// Owner only.
	cache []uint32
	hdr0  unsafe.Pointer // &hdrs[0]

	// The headers' address range: a pointer in it is one of this pool's
	// headers (only this pool hands them out), so the fast paths prove
	// ownership with one subtraction and compare. fastSpan is the span when
	// the recycle fast path applies (simple), else 0; syncSpan the span when
	// the bulk recycles' syncing fast path applies (whole buffers on
	// non-coherent memory), else 0.
	hdrBase, hdrSpan, fastSpan, syncSpan uintptr

	freshHead uint64   // a fresh header's metaHead (data at the headroom, one segment) as a word: see reset
	o         counters // the owner's counters: no atomics
	runs      int      // bulk runs (split pages: units) taken since the last publish

	name     string
	region   *dma.Region
	hdrs     []Packet
	units    int
	perPage  int
	bufSize  int
	headroom int
	refill   int
	offset   int // of the first buffer in the region
	needSync bool
	simple   bool // whole buffers on coherent memory: the fast paths apply
	// reach is the region's DMA domain (dma.DomainID) shifted left by one,
	// with bit 0 set when every buffer lies below 4 GiB in bus addresses:
	// what a TX queue compares with its device's, once per packet.
	reach uint32

	// Owner-only state: no atomics.
	ucache  []*Packet // split pages: LIFO of free units (their first piece)
	spare   []uint32  // free units drained past the cache's size (InFlight, Close)
	scratch []uint32
	cur     int32 // split pages: unit being carved, or -1
	curNext int   // split pages: next piece of cur
	closed  bool

	refs []atomic.Int32 // split pages: pieces of each unit still out
	ring *ring

	// Counters updated from any goroutine.
	sharedRing, sharedRingFull, sharedDouble atomic.Uint64
	pub                                      [numCounters]atomic.Uint64

	ownersMu sync.Mutex
	owners   []string
}

type counters [numCounters]uint64

const (
	cAllocFast = iota // derived in publish: pops of the cache that were not refills
	cAllocSlow
	cAllocEmpty
	cAllocRefill
	cRecycleCached
	cRecycleCacheFull
	cRefusedForeign
	cRefusedDouble
	cRefillIn // units put into the cache from the ring or the spare list
	numCounters
)

// Stats are the pool's counters, in the kernel page_pool's terms.
type Stats struct {
	// AllocFast: allocations served from the owner's cache.
	AllocFast uint64
	// AllocSlow: allocations that had to refill the cache from the ring.
	AllocSlow uint64
	// AllocEmpty: allocations that found neither cache nor ring with a buffer.
	AllocEmpty uint64
	// AllocRefill: bulk refills of the cache from the ring.
	AllocRefill uint64
	// RecycleCached: owner frees put straight into the cache.
	RecycleCached uint64
	// RecycleCacheFull: owner frees that found the cache full (went to the ring).
	RecycleCacheFull uint64
	// RecycleRing: frees through the shared ring (other goroutines).
	RecycleRing uint64
	// RecycleRingFull: frees that found the ring full (only after double frees).
	RecycleRingFull uint64
	// RefusedForeign: buffers of another pool handed to this pool's owner path.
	RefusedForeign uint64
	// RefusedDouble: frees of a buffer that was already free.
	RefusedDouble uint64
}

// New carves a pool out of region r. The region stays the caller's: the
// pool never unmaps it.
func New(r *dma.Region, cfg Config) (*Pool, error) {
	if cfg.BufSize == 0 {
		cfg.BufSize = DefaultBufSize
	}
	if cfg.Headroom == 0 {
		cfg.Headroom = DefaultHeadroom
	}
	if cfg.PerPage == 0 {
		cfg.PerPage = 1
	}
	// Defaulted cache sizes shrink to a small pool; given ones are checked.
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
		if cfg.PerPage > 0 && cfg.Count > 0 {
			cfg.CacheSize = max(1, min(cfg.CacheSize, cfg.Count/cfg.PerPage))
		}
	}
	if cfg.Refill == 0 {
		cfg.Refill = min(DefaultRefill, cfg.CacheSize)
	}
	name := cfg.Name
	if name == "" {
		name = r.Name()
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("pool %q: %s", name, fmt.Sprintf(format, a...))
	}
	switch {
	case cfg.Count <= 0:
		return nil, bad("buffer count %d must be positive", cfg.Count)
	case cfg.BufSize%dma.CacheLine != 0 || cfg.BufSize <= 0:
		return nil, bad("buffer size %d must be a positive multiple of %d", cfg.BufSize, dma.CacheLine)
	case cfg.Headroom < 0 || cfg.Headroom >= cfg.BufSize:
		return nil, bad("headroom %d must be in [0, buffer size %d)", cfg.Headroom, cfg.BufSize)
	case cfg.PerPage < 1 || cfg.Count%cfg.PerPage != 0:
		return nil, bad("buffer count %d must be a multiple of the %d buffers per page", cfg.Count, cfg.PerPage)
	case cfg.Count/cfg.PerPage > MaxUnits:
		return nil, bad("%d pages exceed the limit of %d", cfg.Count/cfg.PerPage, MaxUnits)
	case cfg.Refill < 1 || cfg.Refill > cfg.CacheSize:
		return nil, bad("refill %d must be in [1, cache size %d]", cfg.Refill, cfg.CacheSize)
	case cfg.Offset < 0 || cfg.Offset%dma.CacheLine != 0:
		return nil, bad("offset %d must be a non-negative multiple of %d", cfg.Offset, dma.CacheLine)
	}
	need := cfg.Offset + cfg.Count*cfg.BufSize
	if need > r.Len() {
		return nil, bad("%d buffers of %d bytes at offset %d need %d bytes; region %q has %d", cfg.Count, cfg.BufSize, cfg.Offset, need, r.Name(), r.Len())
	}
	units := cfg.Count / cfg.PerPage
	p := &Pool{
		name: name, region: r, hdrs: make([]Packet, cfg.Count), units: units,
		perPage: cfg.PerPage, bufSize: cfg.BufSize, headroom: cfg.Headroom, refill: cfg.Refill,
		offset: cfg.Offset, spare: make([]uint32, 0, units), needSync: r.NeedsSync(),
		scratch: make([]uint32, cfg.Refill),
		cur:     -1, ring: newRing(2 * units), owners: []string{"pool " + name},
		reach: dma.DomainID(r.Mapper())<<1 | 1, // bit 0 cleared below if a buffer lies above 4 GiB
	}
	if cfg.PerPage > 1 {
		p.refs = make([]atomic.Int32, units)
		p.ucache = make([]*Packet, 0, cfg.CacheSize)
	} else {
		p.cache = make([]uint32, 0, cfg.CacheSize)
	}
	p.freshHead = headWord(metaHead{off: int32(cfg.Headroom), NSegs: 1})
	p.simple = cfg.PerPage == 1 && !p.needSync
	p.hdr0 = unsafe.Pointer(&p.hdrs[0])
	p.hdrBase = uintptr(p.hdr0)
	p.hdrSpan = uintptr(len(p.hdrs)) * unsafe.Sizeof(p.hdrs[0])
	if p.simple {
		p.fastSpan = p.hdrSpan
	}
	if cfg.PerPage == 1 && p.needSync {
		p.syncSpan = p.hdrSpan
	}
	mem := r.Bytes()
	for i := range p.hdrs {
		off := cfg.Offset + i*cfg.BufSize
		if !r.ContiguousRange(off, cfg.BufSize) {
			return nil, bad("buffer %d at region offset %d crosses a break in bus addresses; use contiguous memory or a buffer size that divides the page size", i, off)
		}
		h := &p.hdrs[i]
		h.buf = mem[off : off+cfg.BufSize : off+cfg.BufSize]
		h.iova = r.IOVAAt(off)
		if h.iova+uint64(cfg.BufSize) > 1<<32 {
			p.reach &^= 1 // beyond what a 32-bit descriptor address names
		}
		h.pool = p
		h.idx = uint32(i)
		h.off = int32(cfg.Headroom)
		h.state = 1 << genShift // every unit starts in the ring: "out, returning", generation 1
	}
	for i := range p.hdrs {
		p.hdrs[i].reach = p.reach
	}
	entries := make([]uint32, units)
	for u := range entries {
		entries[u] = uint32(u) | 1<<idxBits // gen 1
	}
	p.ring.push(entries)
	return p, nil
}

// Name is the pool's name.
func (p *Pool) Name() string { return p.name }

// Count is the number of buffers.
func (p *Pool) Count() int { return len(p.hdrs) }

// BufSize is the size of one buffer.
func (p *Pool) BufSize() int { return p.bufSize }

// Headroom is the data offset of a fresh buffer.
func (p *Pool) Headroom() int { return p.headroom }

// PerPage is the number of buffers per recycling unit.
func (p *Pool) PerPage() int { return p.perPage }

// Domain is the DMA domain (dma.DomainID) of the pool's region: a device
// whose mapper has another domain cannot reach the buffers.
func (p *Pool) Domain() uint32 { return p.reach >> 1 }

// Region is the DMA region the buffers live in.
func (p *Pool) Region() *dma.Region { return p.region }

// Owner registers a holder name for leak reports and returns its id for
// Packet.SetOwner. Call it at setup.
func (p *Pool) Owner(name string) uint16 {
	p.ownersMu.Lock()
	defer p.ownersMu.Unlock()
	for i, n := range p.owners {
		if n == name {
			return uint16(i)
		}
	}
	p.owners = append(p.owners, name)
	return uint16(len(p.owners) - 1)
}

// owns reports whether pk is one of p's headers (nil is not).
func (p *Pool) owns(pk *Packet) bool {
	return uintptr(unsafe.Pointer(pk))-p.hdrBase < p.hdrSpan
}

// reset readies a header for a new holder: data at the headroom, no bytes,
// one segment, every other field zero.
func (p *Pool) reset(h *Packet) { h.resetMeta(p.freshHead) }

// The cache's entries are header offsets below 4 GiB: a whole-buffer pool
// has at most MaxUnits headers.
const _ = uint32(MaxUnits * unsafe.Sizeof(Packet{}))

// hdrAt is the header at byte offset off from hdr0 (a cache entry).
func (p *Pool) hdrAt(off uint32) *Packet { return (*Packet)(unsafe.Add(p.hdr0, off)) }

// offOf is h's cache entry: its byte offset from hdr0.
func (p *Pool) offOf(h *Packet) uint32 { return uint32(uintptr(unsafe.Pointer(h)) - p.hdrBase) }

// cached is how many free units the owner's cache holds (cache or ucache).
func (p *Pool) cached() int { return len(p.cache) + len(p.ucache) }

// cacheRoom is how many more units the owner's cache takes.
func (p *Pool) cacheRoom() int {
	if p.perPage > 1 {
		return cap(p.ucache) - len(p.ucache)
	}
	return cap(p.cache) - len(p.cache)
}

// cacheUnit puts hu, a free unit's first header, into the owner's cache,
// which has room. Owner only.
func (p *Pool) cacheUnit(hu *Packet) {
	if p.perPage > 1 {
		p.ucache = append(p.ucache, hu)
		return
	}
	p.cache = append(p.cache, p.offOf(hu))
}

// takeUnit pops a unit (its first header) from the split pages' unit cache,
// refilling from the ring when empty. Owner only.
func (p *Pool) takeUnit() (*Packet, bool) {
	if n := len(p.ucache); n > 0 {
		h := p.ucache[n-1]
		p.ucache = p.ucache[:n-1]
		if p.runs++; p.runs >= publishRuns { // as takeRun: counts reach Stats without refills
			p.publish()
		}
		return h, true // a fast pop: counted by derivation in publish
	}
	if p.refillCache() == 0 {
		p.o[cAllocEmpty]++
		return nil, false
	}
	p.o[cAllocSlow]++
	n := len(p.ucache)
	h := p.ucache[n-1]
	p.ucache = p.ucache[:n-1]
	return h, true
}

// refillCache moves up to Refill returned units from the spare list or the
// ring into the unit cache, refusing stale duplicates (double frees). Owner
// only.
func (p *Pool) refillCache() int {
	room := min(p.cacheRoom(), p.refill)
	p.o[cAllocRefill]++
	if n := len(p.spare); n > 0 {
		k := min(n, room)
		p.o[cRefillIn] += uint64(k)
		for _, u := range p.spare[n-k:] {
			p.cacheUnit(&p.hdrs[int(u)*p.perPage])
		}
		p.spare = p.spare[:n-k]
		p.publish()
		return p.cached()
	}
	got := p.ring.pop(p.scratch[:room])
	entries := p.scratch[:got]
	if p.perPage > 1 {
		for _, e := range entries {
			if h, ok := p.accept(e); ok {
				p.ucache = append(p.ucache, h)
				p.o[cRefillIn]++
			}
		}
		p.publish()
		return len(p.ucache)
	}
	// accept, for whole buffers, with the pool's fields in locals.
	cache, hdrs := p.cache, p.hdrs
	refused := 0
	for _, e := range entries {
		if u := e & idxMask; int(u) < len(hdrs) {
			h := &hdrs[u]
			if g := h.state; uint8(g) == 0 && sameGen(e, g) {
				h.state = g + toHome
				cache = append(cache, u*uint32(unsafe.Sizeof(*h))) // never grows: room was counted
				continue
			}
		}
		refused++ // a double free, or an entry no push makes
	}
	p.o[cRefusedDouble] += uint64(refused)
	p.o[cRefillIn] += uint64(len(cache) - len(p.cache))
	p.cache = cache
	p.publish()
	return len(p.cache)
}

// accept checks a ring entry against its unit's generation: a unit that is
// already free, or an entry from an earlier allocation (a stale duplicate),
// is a double free and is refused. It returns the unit's first header, now
// free. Owner only.
func (p *Pool) accept(e uint32) (*Packet, bool) {
	u := e & idxMask
	if int(u) >= p.units {
		p.o[cRefusedDouble]++ // cannot come from a push; counted, never used
		return nil, false
	}
	h := &p.hdrs[int(u)*p.perPage]
	if !h.single() || !sameGen(e, h.state) {
		p.o[cRefusedDouble]++
		return nil, false
	}
	h.state += toHome
	return h, true
}

// Alloc takes one buffer, or nil when the pool is empty. Owner only.
func (p *Pool) Alloc() *Packet { return p.pop((*Pool).allocSlow) }

// pop is Alloc's fast path: pop the owner's LIFO cache; no shared state
// touched. Split pages keep this cache empty and take the slow path. The
// slow path comes in as a parameter because a call of a parameter is the
// call Go's inliner charges least for: so Alloc inlines into its callers,
// and there the call is a direct one again.
func (p *Pool) pop(slow func(*Pool) *Packet) *Packet {
	n := len(p.cache) - 1
	if n < 0 {
		return slow(p)
	}
	// hdrAt spelled out: a call of it costs the inliner more than Alloc's
	// budget has left.
	h := (*Packet)(unsafe.Add(p.hdr0, p.cache[n]))
	p.cache = p.cache[:n]
	h.state += toOut
	h.resetMeta(p.freshHead)
	return h
}

func (p *Pool) allocSlow() *Packet {
	if p.perPage > 1 {
		return p.allocPiece()
	}
	// The cache is empty (pop's fast path takes any it holds).
	if p.refillCache() == 0 {
		p.o[cAllocEmpty]++
		return nil
	}
	p.o[cAllocSlow]++
	n := len(p.cache) - 1
	h := p.hdrAt(p.cache[n])
	p.cache = p.cache[:n]
	h.state += toOut
	p.reset(h)
	return h
}

// AllocBulk fills out with buffers and returns how many it got. Owner only.
// Whole buffers come off the top of the cache in one run (a driver's RX
// refill), the run in cache order.
func (p *Pool) AllocBulk(out []*Packet) int {
	if p.perPage > 1 {
		for i := range out {
			h := p.allocPiece()
			if h == nil {
				return i
			}
			out[i] = h
		}
		return len(out)
	}
	n := 0
	for n < len(out) {
		src := p.takeRun(len(out) - n)
		if src == nil {
			break
		}
		dst := out[n : n+len(src)]
		head, base := p.freshHead, p.hdr0
		for i, o := range src {
			h := (*Packet)(unsafe.Add(base, o))
			h.state += toOut
			// resetMeta, written out: a call here leaves a position
			// marker (a NOP) in the loop.
			h.metaTail = metaTail{}
			*(*uint64)(unsafe.Pointer(&h.metaHead)) = head
			dst[i] = h
		}
		n += len(src)
	}
	return n
}

// takeRun takes up to want buffers off the top of the owner's cache,
// refilling it from the shared ring when it is empty, and returns them
// (still marked home: the caller marks them out), or nil when the pool has
// none. The returned slice aliases the cache's backing array past its new
// length, so the caller copies it out before the cache grows again.
func (p *Pool) takeRun(want int) []uint32 {
	c := len(p.cache)
	if c == 0 {
		if p.refillCache() == 0 {
			p.o[cAllocEmpty]++
			return nil
		}
		p.o[cAllocSlow]++ // this refill served the allocation of one buffer slowly
		c = len(p.cache)
	}
	// Publish every publishRuns runs: a loop whose frees keep the cache
	// full never refills, and its counters would never reach Stats.
	if p.runs++; p.runs >= publishRuns {
		p.publish()
	}
	k := min(c, want)
	src := p.cache[c-k : c]
	p.cache = p.cache[:c-k]
	return src
}

// AllocBulkRaw is AllocBulk for a driver's RX refill, without the reset:
// each buffer is marked out and given to owner (as SetOwner does), its data
// window and metadata left as the last holder left them. The device is to
// write at BufIOVA plus the headroom; the receive path must set every field
// (SetRx, SetSegment) before a buffer leaves the ring, which makes the
// reset AllocBulk does a second write of every field. Owner only.
func (p *Pool) AllocBulkRaw(out []*Packet, owner uint16) int {
	if p.perPage > 1 {
		for i := range out {
			h := p.allocPiece()
			if h == nil {
				return i
			}
			h.owner = owner
			out[i] = h
		}
		return len(out)
	}
	n := 0
	for n < len(out) {
		src := p.takeRun(len(out) - n)
		if src == nil {
			break
		}
		dst := out[n : n+len(src)]
		base := p.hdr0
		for i, o := range src {
			h := (*Packet)(unsafe.Add(base, o))
			h.state += toOut
			h.owner = owner
			dst[i] = h
		}
		n += len(src)
	}
	return n
}

func (p *Pool) allocPiece() *Packet {
	if p.cur < 0 || p.curNext == p.perPage {
		hu, ok := p.takeUnit()
		if !ok {
			return nil
		}
		hu.state += toOut
		u := hu.idx / uint32(p.perPage)
		// The count is set once for the whole unit (one atomic per unit,
		// not per piece); pieces never handed out are subtracted at Close.
		p.refs[u].Store(int32(p.perPage))
		p.cur, p.curNext = int32(u), 0
	}
	h := &p.hdrs[int(p.cur)*p.perPage+p.curNext]
	p.curNext++
	h.pstate.Store(uint32(stateOut))
	p.reset(h)
	return h
}

// dirtySync makes the bytes the CPU may have written visible to the device
// before the buffer is handed out again: the data window, widened to the
// headroom start if data was prepended, and no more. The check inlines; the
// work does not.
func (p *Pool) dirtySync(h *Packet) {
	if p.needSync {
		p.syncDirty(h)
	}
}

func (p *Pool) syncDirty(h *Packet) {
	lo := int(h.off)
	if lo > p.headroom {
		lo = p.headroom
	}
	hi := int(h.off + h.len)
	if hi > lo {
		p.region.SyncForDevice(p.offset+int(h.idx)*p.bufSize+lo, hi-lo)
	}
}

// Recycle returns a buffer straight into the owner's cache: the XDP_DROP
// path. Owner only; use Packet.Free from other goroutines. Chained segments
// are recycled too. A buffer of another pool is refused and counted
// (RefusedForeign), a header of no pool too (ForgedFrees), a buffer already
// free too (RefusedDouble).
func (p *Pool) Recycle(pk *Packet) { p.push(pk, (*Pool).recycleSlow) }

// push is Recycle's fast path: a single, out buffer whose header lies in
// this pool's header array (which proves it is this pool's), whole and on
// coherent memory (fastSpan is 0 otherwise), and room in the cache. The
// slow path is a parameter for the inliner, as pop's.
func (p *Pool) push(pk *Packet, slow func(*Pool, *Packet)) {
	if d := uintptr(unsafe.Pointer(pk)) - p.hdrBase; d < p.fastSpan && len(p.cache) < cap(p.cache) && pk.single() {
		// Appended in place (to p.cache itself, not a copy), the append
		// stores the length alone, and before the store through pk, which
		// could alias p's fields as far as the compiler knows. It never
		// grows: room was checked.
		p.cache = append(p.cache, uint32(d))
		pk.state += toHome
		p.o[cRecycleCached]++
		return
	}
	slow(p, pk)
}

func (p *Pool) recycleSlow(pk *Packet) {
	for pk != nil {
		next := pk.next
		if !p.owns(pk) {
			if pk.pool == nil || !pk.pool.owns(pk) {
				forgedFrees.Add(1)
			} else {
				p.o[cRefusedForeign]++
			}
			return
		}
		pk.unchain()
		p.recycleOne(pk)
		pk = next
	}
}

func (p *Pool) recycleOne(h *Packet) {
	if p.perPage > 1 {
		if !h.pstate.CompareAndSwap(uint32(stateOut), uint32(stateFree)) {
			p.o[cRefusedDouble]++
			return
		}
		p.dirtySync(h)
		u := h.idx / uint32(p.perPage)
		if p.refs[u].Add(-1) == 0 {
			p.unitHome(&p.hdrs[int(u)*p.perPage])
		}
		return
	}
	if !h.out() {
		p.o[cRefusedDouble]++
		return
	}
	p.dirtySync(h)
	p.unitHome(h)
}

// unitHome puts a unit whose buffers are all back (hu, its first header)
// into the unit cache, or into the ring when the cache is full. Owner only.
func (p *Pool) unitHome(hu *Packet) {
	if p.cacheRoom() > 0 {
		hu.state += toHome
		p.cacheUnit(hu)
		p.o[cRecycleCached]++
		return
	}
	p.o[cRecycleCacheFull]++
	p.pushRing(hu.idx/uint32(p.perPage), hu.state)
}

// RecycleBulk is Recycle for many buffers. Owner only.
func (p *Pool) RecycleBulk(pkts []*Packet) {
	for len(pkts) > 0 {
		k := p.recycleRun(pkts)
		if k == len(pkts) {
			return
		}
		p.recycleSlow(pkts[k]) // the one the fast path refused
		pkts = pkts[k+1:]
	}
}

// recycleRun is the bulk fast path: it puts pkts into the cache, from the
// first, while each is a single, out buffer of this pool, whole and on
// coherent memory (as Recycle's fast path checks), and the cache has room.
// It returns how many it took. The room is counted once, so the cache and
// the packets are one run indexed alike; the pool's fields live in locals,
// as stores through a header could alias them as far as the compiler knows.
// Owner only.
func (p *Pool) recycleRun(pkts []*Packet) int {
	if p.syncSpan != 0 {
		return p.recycleRunSync(pkts)
	}
	c := p.cache
	n := len(c)
	if room := cap(c) - n; len(pkts) > room {
		pkts = pkts[:room]
	}
	dst := c[n : n+len(pkts)]
	base, span := p.hdrBase, p.fastSpan
	for i, pk := range pkts {
		d := uintptr(unsafe.Pointer(pk)) - base
		if d >= span || !pk.single() {
			p.cache = p.cache[:n+i] // the length alone
			p.o[cRecycleCached] += uint64(i)
			return i
		}
		pk.state += toHome
		dst[i] = uint32(d)
	}
	p.cache = p.cache[:n+len(pkts)]
	p.o[cRecycleCached] += uint64(len(pkts))
	return len(pkts)
}

// pushRing puts unit u, whose first header's state word is st, into the
// ring.
func (p *Pool) pushRing(u, st uint32) { p.pushEntry(entry(u, st)) }

func (p *Pool) pushEntry(e0 uint32) {
	e := [1]uint32{e0}
	if p.ring.push(e[:]) {
		p.sharedRing.Add(1)
	} else {
		p.sharedRingFull.Add(1)
	}
}

// freeShared is the any-goroutine free of one buffer (no chain).
func (p *Pool) freeShared(h *Packet) {
	if p.perPage > 1 {
		if !h.pstate.CompareAndSwap(uint32(stateOut), uint32(stateFree)) {
			p.sharedDouble.Add(1)
			return
		}
		p.dirtySync(h)
		u := h.idx / uint32(p.perPage)
		if p.refs[u].Add(-1) == 0 {
			p.pushRing(u, p.hdrs[int(u)*p.perPage].state)
		}
		return
	}
	p.dirtySync(h)
	p.pushRing(h.idx, h.state)
}

// freeBatch is how many ring entries FreeBulk gathers per pool before one
// push (one reservation and one counter update per batch).
const freeBatch = 32

// FreeBulk returns many buffers (and their chained segments) to their pools
// from any goroutine. Consecutive buffers of one pool go to its ring in one
// reservation, as the kernel's xdp_return_frame_bulk does. A header of no
// pool is refused and counted (ForgedFrees).
func FreeBulk(pkts []*Packet) { freeBulk(nil, pkts) }

// FreeBulkDirect is FreeBulk for the goroutine that owns p (the kernel's
// page_pool_put_page with allow_direct): buffers of p go straight back into
// p's cache, with no atomic operation, as Recycle does; buffers of other
// pools go to their pools' rings as with FreeBulk. A driver's TX reclaim
// calls it when the goroutine reclaiming TX is the one that owns the RX
// queue's pool (a forwarder worker serving both): call it only from p's
// owner goroutine, never concurrently with p's Alloc or Recycle.
func (p *Pool) FreeBulkDirect(pkts []*Packet) {
	// The fast path, as RecycleBulk's: a run of p's own single whole
	// buffers on coherent memory. The first buffer that is not (another
	// pool's, a chain, a double free, a full cache) sends the rest through
	// the general path.
	if k := p.recycleRun(pkts); k < len(pkts) {
		freeBulk(p, pkts[k:])
	}
}

// recycleRunSync is recycleRun for whole buffers on non-coherent memory:
// each buffer's dirty span is synced for the device first, as recycleOne
// does, unless it is empty (MarkClean: the TX path synced it). The runs of
// clean buffers go through cleanRun, whose loop makes no call (a call in
// it made the compiler keep the loop's values on the stack); a dirty
// buffer is synced and taken here, between two runs.
func (p *Pool) recycleRunSync(pkts []*Packet) int {
	n := 0
	for {
		n += p.cleanRun(pkts[n:])
		if n == len(pkts) {
			return n
		}
		// cleanRun stopped at pk: one the fast path does not take (another
		// pool's, a chain, a double free), a full cache, or a dirty span.
		pk := pkts[n]
		d := uintptr(unsafe.Pointer(pk)) - p.hdrBase
		if d >= p.syncSpan || !pk.single() || len(p.cache) == cap(p.cache) {
			return n
		}
		p.syncDirty(pk)
		pk.state += toHome
		p.cache = append(p.cache, uint32(d))
		p.o[cRecycleCached]++
		n++
	}
}

// cleanRun is recycleRun for whole buffers on non-coherent memory whose
// dirty span is empty: it stops at the first buffer with bytes to sync.
func (p *Pool) cleanRun(pkts []*Packet) int {
	c := p.cache
	n := len(c)
	if room := cap(c) - n; len(pkts) > room {
		pkts = pkts[:room]
	}
	dst := c[n : n+len(pkts)]
	base, span, headroom := p.hdrBase, p.syncSpan, int32(p.headroom)
	for i, pk := range pkts {
		d := uintptr(unsafe.Pointer(pk)) - base
		// The dirty span (see syncDirty) is empty when no byte is in the
		// data window and the window does not start past the headroom.
		if d >= span || !pk.single() || pk.len != 0 || pk.off > headroom {
			p.cache = p.cache[:n+i] // the length alone: the loop keeps no slice pointer
			p.o[cRecycleCached] += uint64(i)
			return i
		}
		pk.state += toHome
		dst[i] = uint32(d)
	}
	p.cache = p.cache[:n+len(pkts)]
	p.o[cRecycleCached] += uint64(len(pkts))
	return len(pkts)
}

// FreeSlots frees the buffers a TX ring's slots hold: every non-nil entry
// (nil ones, a chained frame's other BDs, are skipped) goes back to its
// pool. It returns how many buffers it freed. The slots are left as they
// are, not cleared: the ring owns them again, and must write a slot (a
// buffer, or nil) before it reads it again. Buffers of own go straight into own's cache, as FreeBulkDirect
// does, and the same rule applies: own must be the calling goroutine's pool
// (nil for none: every buffer goes through its pool's shared ring, as with
// FreeBulk). Chains, and frees the pools refuse, take the general path.
func FreeSlots(own *Pool, slots []*Packet) int {
	if own == nil {
		return freeSlotsSlow(nil, slots)
	}
	freed := 0
	for len(slots) > 0 {
		k := own.recycleRun(slots) // the fast path, in place; a nil slot stops it
		freed += k
		if k == len(slots) {
			break
		}
		if slots[k] != nil {
			freeBulk(own, slots[k:k+1]) // one the fast path refused: the general path
			freed++
		}
		slots = slots[k+1:]
	}
	return freed
}

// freeSlotsSlow is FreeSlots through freeBulk, a batch at a time.
func freeSlotsSlow(own *Pool, slots []*Packet) int {
	var batch [freeBatch]*Packet
	n, freed := 0, 0
	for _, pk := range slots {
		if pk == nil {
			continue
		}
		batch[n] = pk
		n++
		if n == len(batch) {
			freeBulk(own, batch[:n])
			freed += n
			n = 0
		}
	}
	if n > 0 {
		freeBulk(own, batch[:n])
		freed += n
	}
	return freed
}

// freeBulk frees pkts; those of own (nil for none) go to its cache.
func freeBulk(own *Pool, pkts []*Packet) {
	var (
		batch [freeBatch]uint32
		n     int
		cur   *Pool
	)
	for _, pk := range pkts {
		if own != nil {
			// The owner's fast path, as in Recycle.
			cache := own.cache
			c := len(cache)
			if d := uintptr(unsafe.Pointer(pk)) - own.hdrBase; d < own.fastSpan && c < cap(cache) && pk.single() {
				pk.state += toHome
				cache = cache[:c+1]
				cache[c] = uint32(d)
				own.cache = cache
				own.o[cRecycleCached]++
				continue
			}
		}
		// The common shared case: a single whole buffer of the pool of the
		// batch being gathered, on coherent memory.
		if cur != nil && n < freeBatch && pk != nil && pk.next == nil && uintptr(unsafe.Pointer(pk))-cur.hdrBase < cur.fastSpan {
			batch[n] = entry(pk.idx, pk.state)
			n++
			continue
		}
		for pk != nil {
			next := pk.next
			if own != nil && own.owns(pk) {
				pk.unchain()
				own.recycleOne(pk)
				pk = next
				continue
			}
			pl := pk.pool
			if pl == nil || !pl.owns(pk) {
				forgedFrees.Add(1)
				break
			}
			if next != nil { // a buffer already free has none: nothing is written to it
				pk.unchain()
			}
			if pl.perPage > 1 {
				pl.freeShared(pk)
			} else {
				if pl != cur || n == freeBatch {
					if n > 0 {
						cur.pushBatch(batch[:n])
					}
					n, cur = 0, pl
				}
				pl.dirtySync(pk)
				batch[n] = entry(pk.idx, pk.state)
				n++
			}
			pk = next
		}
	}
	if n > 0 {
		cur.pushBatch(batch[:n])
	}
}

// pushBatch puts ring entries of p's buffers into its ring in one
// reservation, or one by one if the ring has no room for them all.
func (p *Pool) pushBatch(entries []uint32) {
	if p.ring.push(entries) {
		p.sharedRing.Add(uint64(len(entries)))
		return
	}
	for _, e := range entries {
		p.pushEntry(e)
	}
}

// publish copies the owner's counters where other goroutines can read them.
func (p *Pool) publish() {
	// Every unit that entered the cache either is still there or left it
	// through an allocation; those that left right after a refill were slow.
	p.o[cAllocFast] = p.o[cRecycleCached] + p.o[cRefillIn] - uint64(p.cached()) - p.o[cAllocSlow]
	p.runs = 0
	for i := range p.o {
		p.pub[i].Store(p.o[i])
	}
}

// publishRuns is how many bulk allocations (AllocBulk, AllocBulkRaw: one
// per RX refill) or split-page units the owner takes between two
// publications of its counters: about every 64 bursts, so a scrape sees a
// busy pool's counts at most 64 bursts old, at the cost of one increment
// per burst.
const publishRuns = 64

// Publish makes the owner's latest counts visible to Stats readers on other
// goroutines (they are published on every cache refill and every
// publishRuns bulk allocations anyway). Owner only.
func (p *Pool) Publish() { p.publish() }

// Stats returns the counters. Read from the owner goroutine they are exact;
// from another goroutine, the owner-side counts are as of the last refill,
// the last of every publishRuns (64) bulk allocations, or Publish.
func (p *Pool) Stats() Stats {
	var c counters
	for i := range c {
		c[i] = p.pub[i].Load()
	}
	return Stats{
		AllocFast: c[cAllocFast], AllocSlow: c[cAllocSlow], AllocEmpty: c[cAllocEmpty],
		AllocRefill: c[cAllocRefill], RecycleCached: c[cRecycleCached],
		RecycleCacheFull: c[cRecycleCacheFull], RecycleRing: p.sharedRing.Load(),
		RecycleRingFull: p.sharedRingFull.Load(), RefusedForeign: c[cRefusedForeign],
		RefusedDouble: c[cRefusedDouble] + p.sharedDouble.Load(),
	}
}

// OwnerStats is Stats with the owner's counts exact. Owner only.
func (p *Pool) OwnerStats() Stats { p.publish(); return p.Stats() }

// Available is how many buffers the owner could allocate now without
// waiting (cache plus ring). Owner only.
func (p *Pool) Available() int {
	return (p.cached() + len(p.spare) + p.ring.len()) * p.perPage
}

// InFlight drains returned buffers and counts the ones still held outside
// the pool (by device rings or the application). Owner only; O(buffers).
func (p *Pool) InFlight() int {
	n, _ := p.outstanding()
	return n
}

// outstanding drains the ring into the cache bookkeeping and counts the
// buffers that are out, by last owner.
func (p *Pool) outstanding() (int, map[uint16]int) {
	p.drainAll()
	// After the drain every unit at home is in the cache or the spare list:
	// the units out are the others, found without reading the state word of
	// a header that is out (its holder may be chaining it as this runs).
	home := make([]bool, p.units)
	for _, off := range p.cache {
		home[p.hdrAt(off).idx] = true
	}
	for _, h := range p.ucache {
		home[h.idx/uint32(p.perPage)] = true
	}
	for _, u := range p.spare {
		home[u] = true
	}
	by := map[uint16]int{}
	n := 0
	for u := 0; u < p.units; u++ {
		hu := &p.hdrs[u*p.perPage]
		if home[u] {
			continue
		}
		if p.perPage == 1 {
			n++
			by[hu.owner]++
			continue
		}
		for i := 0; i < p.perPage; i++ {
			h := &p.hdrs[u*p.perPage+i]
			if uint8(h.pstate.Load()) == stateOut {
				n++
				by[h.owner]++
			}
		}
	}
	return n, by
}

// drainAll moves every returned unit from the ring into free state (the
// cache, then the spare list). Owner only.
func (p *Pool) drainAll() {
	// Retire the unit being carved: pieces never handed out are not "out".
	if p.cur >= 0 {
		u := uint32(p.cur)
		unused := p.perPage - p.curNext
		p.cur = -1
		if unused > 0 && p.refs[u].Add(-int32(unused)) == 0 {
			p.unitHome(&p.hdrs[int(u)*p.perPage])
		}
	}
	for {
		got := p.ring.pop(p.scratch)
		if got == 0 {
			break
		}
		for _, e := range p.scratch[:got] {
			h, ok := p.accept(e)
			if !ok {
				continue
			}
			if p.cacheRoom() > 0 {
				p.cacheUnit(h)
				p.o[cRefillIn]++
			} else {
				p.spare = append(p.spare, h.idx/uint32(p.perPage))
			}
		}
	}
	p.publish()
}

// LeakError reports buffers that did not come back before Close gave up.
type LeakError struct {
	Pool    string
	Count   int
	ByOwner map[string]int
}

// Error names the pool and the buffers still out, by owner.
func (e *LeakError) Error() string {
	names := make([]string, 0, len(e.ByOwner))
	for n := range e.ByOwner {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%d held by %s", e.ByOwner[n], n)
	}
	return fmt.Sprintf("pool %q: %d buffers never came back (%s); their memory stays mapped", e.Pool, e.Count, strings.Join(parts, ", "))
}

// ErrClosed is returned by Close on a closed pool.
var ErrClosed = errors.New("pool already closed")

// Close waits up to timeout for every buffer to come back, polling the
// ring, and then reports what is still out as a *LeakError instead of
// hanging. Owner only. The region is the caller's to close afterwards,
// and only if Close returned nil: leaked buffers may still be written.
//
// Once every buffer is back, no header points into the region any more
// (retire): a *Packet an application kept after freeing it reads and
// writes a zeroed buffer of its size in ordinary memory, which lives as
// long as such a pointer does, instead of faulting on the unmapped region;
// and its Reach is 0, so no TX queue takes it.
func (p *Pool) Close(timeout time.Duration) error {
	if p.closed {
		return fmt.Errorf("pool %q: %w", p.name, ErrClosed)
	}
	deadline := time.Now().Add(timeout)
	for {
		n, by := p.outstanding()
		if n == 0 {
			p.closed = true
			p.retire()
			return nil
		}
		if !time.Now().Before(deadline) {
			p.closed = true
			e := &LeakError{Pool: p.name, Count: n, ByOwner: map[string]int{}}
			p.ownersMu.Lock()
			for id, c := range by {
				name := "unknown"
				if int(id) < len(p.owners) {
					name = p.owners[id]
				}
				e.ByOwner[name] += c
			}
			p.ownersMu.Unlock()
			return e
		}
		time.Sleep(time.Millisecond)
	}
}

// retire points every header at one zeroed buffer of the pool's buffer
// size in Go memory, with its bus address and reach cleared, so a header
// used after its pool closed (a use after free the pool cannot see: Data
// has no check, to stay one slice expression) reads that buffer and never
// the DMA region the caller is about to unmap. Every buffer is home: no
// holder is left to race with.
func (p *Pool) retire() {
	dead := make([]byte, p.bufSize)
	for i := range p.hdrs {
		h := &p.hdrs[i]
		h.buf = dead[:len(h.buf):len(h.buf)]
		h.iova, h.reach = 0, 0
	}
}

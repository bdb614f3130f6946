// Package pool is gopmd's page pool: fixed-size DMA buffers carved from a
// Region mapped once, recycled on free instead of released, as the Linux
// page_pool does.
//
// A Pool belongs to one owner goroutine (the RX queue that refills from it).
// The owner allocates from a private LIFO cache with no atomics, and returns
// buffers straight into it (Recycle, FreeBulkDirect: the kernel's
// page_pool_recycle_direct); buffers freed from any other goroutine land in
// a shared lock-free ring, from which the owner refills its cache in bulk.
// Every header lives in its pool's header array and carries a home flag
// and a generation bumped on every return, so a free of a foreign, forged
// or already-free buffer is refused and counted instead of corrupting a
// pool.
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
	// Name names the pool in errors, stats and leak reports: within its
	// port ("rx0") when Port is given, else on its own.
	Name string
	// Port is the port whose buffers these are (its spec), if any. A leak
	// report names the pool and the holders of that port by their roles
	// alone, for the caller to name the port once; a holder of another
	// port is named with its port.
	Port string
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
	// the recycle fast path applies (simple), rounded up to the power of
	// two the header array reaches (newHeaders), else 0; syncSpan the span when
	// the bulk recycles' syncing fast path applies (whole buffers on
	// non-coherent memory), else 0.
	hdrBase, hdrSpan, fastSpan, syncSpan uintptr

	freshHead uint64   // a fresh header's metaHead (data at the headroom, one segment) as a word: see reset
	o         counters // the owner's counters: no atomics
	runs      int      // bulk runs (split pages: units) taken since the last publish

	name     string // Config.Name
	port     string // Config.Port
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
	owners   []Holder // by owner id (Packet.SetOwner); 0 is the pool itself
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
		return fmt.Errorf("pool %q: %s", Holder{Port: cfg.Port, Role: name}, fmt.Sprintf(format, a...))
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
		name: name, port: cfg.Port, region: r, hdrs: newHeaders(cfg.Count), units: units,
		perPage: cfg.PerPage, bufSize: cfg.BufSize, headroom: cfg.Headroom, refill: cfg.Refill,
		offset: cfg.Offset, spare: make([]uint32, 0, units), needSync: r.NeedsSync(),
		scratch: make([]uint32, cfg.Refill),
		cur:     -1, ring: newRing(2 * units), owners: []Holder{{Port: cfg.Port, Role: "pool " + name}},
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
		p.fastSpan = headerReach(p.hdrs)
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

// Name is the pool's name, its port's spec first when it has one.
func (p *Pool) Name() string { return Holder{Port: p.port, Role: p.name}.String() }

// Port is the port whose buffers these are (Config.Port), or "".
func (p *Pool) Port() string { return p.port }

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

// Holder is who holds a pool's buffers, for leak reports: the port it
// belongs to and what it is there.
type Holder struct {
	// Port is the holder's port (its spec). Registered with Pool.Holder,
	// "" is the pool's own port.
	Port string
	// Role is what holds the buffers within the port: "rx ring 0", "rx
	// queue 0 caller", "tx ring 1", "tx in flight".
	Role string
}

// String names the holder in full: its port, then its role.
func (h Holder) String() string {
	if h.Port == "" {
		return h.Role
	}
	return h.Port + " " + h.Role
}

// Holder registers h for leak reports and returns its id for
// Packet.SetOwner; the same holder gets the same id. A holder of another
// port than the pool's (a TX ring of port B holding frames received on
// port A) gives its Port. Call it at setup.
func (p *Pool) Holder(h Holder) uint16 {
	if h.Port == "" {
		h.Port = p.port
	}
	return p.register(h)
}

// Owner registers a holder of the pool's own port by its role, as
// Holder(Holder{Role: role}) does, and returns its id for
// Packet.SetOwner. Call it at setup.
func (p *Pool) Owner(role string) uint16 { return p.Holder(Holder{Role: role}) }

func (p *Pool) register(h Holder) uint16 {
	p.ownersMu.Lock()
	defer p.ownersMu.Unlock()
	for i, o := range p.owners {
		if o == h {
			return uint16(i)
		}
	}
	p.owners = append(p.owners, h)
	return uint16(len(p.owners) - 1)
}

// A Claimer holds buffers of pools it does not own and sends none of them
// back for a while: a TX ring, which takes frames of any port's pools and
// frees them only when it reclaims. Such a buffer carries the holder its
// last owner gave it (the RX queue's caller that forwarded it, say), which
// would misname it in a leak report. A claimer instead names the buffers it
// holds when a report is made, at no cost per buffer while it runs.
type Claimer interface {
	// ClaimHeld gives every buffer of p the claimer holds now its own
	// holder (SetOwner with an id from p.Holder), and touches no other. It
	// runs on the goroutine closing p, p's owner, while the claimer's own
	// goroutines may be running: it keeps them off what it reads and
	// writes for as long as it reads, and waits for nothing p's owner
	// could be holding.
	ClaimHeld(p *Pool)
}

// claimers are the Claimers every pool asks before it reports a leak.
// Copied on write: a report asks the slice it read.
var claimers struct {
	mu   sync.Mutex
	list []Claimer
}

// AddClaimer makes c one of the claimers every pool asks before it reports
// a leak, until RemoveClaimer. Call it when c starts to take buffers (a
// port's New).
func AddClaimer(c Claimer) {
	claimers.mu.Lock()
	defer claimers.mu.Unlock()
	claimers.list = append(claimers.list[:len(claimers.list):len(claimers.list)], c)
}

// RemoveClaimer undoes AddClaimer, once c holds no buffer (a port's Close).
func RemoveClaimer(c Claimer) {
	claimers.mu.Lock()
	defer claimers.mu.Unlock()
	list := make([]Claimer, 0, len(claimers.list))
	for _, x := range claimers.list {
		if x != c {
			list = append(list, x)
		}
	}
	claimers.list = list
}

// claimHeld asks every claimer to name the buffers of p it holds.
func (p *Pool) claimHeld() {
	claimers.mu.Lock()
	list := claimers.list
	claimers.mu.Unlock()
	for _, c := range list {
		c.ClaimHeld(p)
	}
}

// owns reports whether pk is one of p's headers (nil is not).
func (p *Pool) owns(pk *Packet) bool {
	return uintptr(unsafe.Pointer(pk))-p.hdrBase < p.hdrSpan
}

// reset readies a header for a new holder: data at the headroom, no bytes,
// one segment, every other field zero.
func (p *Pool) reset(h *Packet) { h.resetMeta(p.freshHead) }

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
	// Pool is the pool's name (Pool.Name: its port's spec first, if any),
	// Port its port (Config.Port).
	Pool, Port string
	Count      int
	// ByOwner counts the buffers out by holder, each named in full
	// (Holder.String); ByHolder counts the same by holder.
	ByOwner  map[string]int
	ByHolder map[Holder]int
}

// Error names the pool and the buffers still out, by holder. The pool's
// port is left for the caller to name once: the pool and that port's
// holders are named by their roles, holders of other ports with their
// port.
func (e *LeakError) Error() string {
	type part struct {
		name string
		n    int
	}
	parts := make([]part, 0, len(e.ByHolder))
	for h, n := range e.ByHolder {
		name := h.String()
		if e.Port != "" && h.Port == e.Port {
			name = h.Role
		}
		parts = append(parts, part{name, n})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].name < parts[j].name })
	held := make([]string, len(parts))
	for i, pt := range parts {
		held[i] = fmt.Sprintf("%d held by %s", pt.n, pt.name)
	}
	pool := e.Pool
	if e.Port != "" {
		pool = strings.TrimPrefix(pool, e.Port+" ")
	}
	what := "buffers never came back"
	if e.Count == 1 {
		what = "buffer never came back"
	}
	return fmt.Sprintf("pool %q: %d %s (%s); their memory stays mapped", pool, e.Count, what, strings.Join(held, ", "))
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
		return fmt.Errorf("pool %q: %w", p.Name(), ErrClosed)
	}
	deadline := time.Now().Add(timeout)
	for {
		n, _ := p.outstanding()
		if n == 0 {
			p.closed = true
			p.retire()
			return nil
		}
		if !time.Now().Before(deadline) {
			// The buffers on a claimer (another port's TX ring) take its
			// name; the count is taken again after, and may have come to
			// nothing meanwhile.
			p.claimHeld()
			n, by := p.outstanding()
			if n == 0 {
				continue
			}
			p.closed = true
			e := &LeakError{Pool: p.Name(), Port: p.port, Count: n, ByOwner: map[string]int{}, ByHolder: map[Holder]int{}}
			p.ownersMu.Lock()
			for id, c := range by {
				h := Holder{Port: p.port, Role: fmt.Sprintf("unknown holder %d", id)}
				if int(id) < len(p.owners) {
					h = p.owners[id]
				}
				e.ByHolder[h] += c
				e.ByOwner[h.String()] += c
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

// Package pool is gopmd's page pool: fixed-size DMA buffers carved from a
// Region mapped once, recycled on free instead of released, as the Linux
// page_pool does.
//
// A Pool belongs to one owner goroutine (the RX queue that refills from it).
// The owner allocates from a private LIFO cache with no atomics; buffers
// freed from any other goroutine land in a shared lock-free ring, from which
// the owner refills its cache in bulk. Every header carries its pool's
// identity, so a free of a foreign, forged or already-free buffer is refused
// and counted instead of corrupting a pool.
package pool

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/dma"
)

// Defaults, as the kernel's page_pool sizes its alloc cache.
const (
	DefaultCacheSize = 128
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
	// CacheSize and Refill size the owner's alloc cache (128 and 64).
	CacheSize, Refill int
}

// Pool is a page pool. See the package documentation.
type Pool struct {
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
	fresh    meta // what a header's meta looks like when allocated

	// Owner-only state: no atomics.
	cache    []uint32 // LIFO of free unit indices
	spare    []uint32 // free units drained past the cache's size (InFlight, Close)
	scratch  []uint32
	cur      int32 // split pages: unit being carved, or -1
	curNext  int   // split pages: next piece of cur
	o        counters
	closed   bool
	allocOwn uint16

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
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.Refill == 0 {
		cfg.Refill = DefaultRefill
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
		cache: make([]uint32, 0, cfg.CacheSize), scratch: make([]uint32, cfg.Refill),
		cur: -1, ring: newRing(2 * units), owners: []string{"pool " + name},
	}
	if cfg.PerPage > 1 {
		p.refs = make([]atomic.Int32, units)
	}
	p.fresh = meta{off: int32(cfg.Headroom), NSegs: 1}
	p.simple = cfg.PerPage == 1 && !p.needSync
	mem := r.Bytes()
	for i := range p.hdrs {
		off := cfg.Offset + i*cfg.BufSize
		if !r.ContiguousRange(off, cfg.BufSize) {
			return nil, bad("buffer %d at region offset %d crosses a break in bus addresses; use contiguous memory or a buffer size that divides the page size", i, off)
		}
		h := &p.hdrs[i]
		h.buf = mem[off : off+cfg.BufSize : off+cfg.BufSize]
		h.iova = r.IOVAAt(off)
		h.pool = p
		h.idx = uint32(i)
		h.off = int32(cfg.Headroom)
		h.state = stateOut // every unit starts in the ring: "out, returning"
	}
	entries := make([]uint32, units)
	for u := range entries {
		entries[u] = uint32(u) // gen 0
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

func (p *Pool) owns(pk *Packet) bool {
	return int(pk.idx) < len(p.hdrs) && &p.hdrs[pk.idx] == pk
}

// reset readies a header for a new holder: one block copy of the template.
func (p *Pool) reset(h *Packet) { h.meta = p.fresh }

// takeUnit pops a unit from the cache, refilling from the ring when empty.
// Owner only.
func (p *Pool) takeUnit() (uint32, bool) {
	if n := len(p.cache); n > 0 {
		u := p.cache[n-1]
		p.cache = p.cache[:n-1]
		return u, true // a fast pop: counted by derivation in publish
	}
	if p.refillCache() == 0 {
		p.o[cAllocEmpty]++
		return 0, false
	}
	p.o[cAllocSlow]++
	n := len(p.cache)
	u := p.cache[n-1]
	p.cache = p.cache[:n-1]
	return u, true
}

// refillCache moves up to Refill returned units from the ring into the
// cache, refusing stale duplicates (double frees). Owner only.
func (p *Pool) refillCache() int {
	room := cap(p.cache) - len(p.cache)
	if room > p.refill {
		room = p.refill
	}
	p.o[cAllocRefill]++
	if n := len(p.spare); n > 0 {
		k := min(n, room)
		p.o[cRefillIn] += uint64(k)
		p.cache = append(p.cache, p.spare[n-k:]...)
		p.spare = p.spare[:n-k]
		p.publish()
		return len(p.cache)
	}
	got := p.ring.pop(p.scratch[:room])
	for _, e := range p.scratch[:got] {
		if u, ok := p.accept(e); ok {
			p.cache = append(p.cache, u)
			p.o[cRefillIn]++
		}
	}
	p.publish()
	return len(p.cache)
}

// accept checks a ring entry against its unit's state: a unit that is
// already free, or an entry from an earlier allocation (a stale duplicate),
// is a double free and is refused. Owner only.
func (p *Pool) accept(e uint32) (uint32, bool) {
	u := e & idxMask
	if int(u) >= p.units {
		p.o[cRefusedDouble]++ // cannot come from a push; counted, never used
		return 0, false
	}
	h := &p.hdrs[int(u)*p.perPage]
	if h.state != stateOut || h.gen&genMask != e>>idxBits {
		p.o[cRefusedDouble]++
		return 0, false
	}
	h.state = stateFree
	return u, true
}

// Alloc takes one buffer, or nil when the pool is empty. Owner only.
func (p *Pool) Alloc() *Packet {
	n := len(p.cache)
	if n == 0 || p.perPage != 1 {
		return p.allocSlow()
	}
	// The fast path: pop the owner's LIFO cache; no shared state touched.
	u := p.cache[n-1]
	p.cache = p.cache[:n-1]
	h := &p.hdrs[u]
	h.state = stateOut
	h.gen++
	h.meta = p.fresh
	return h
}

func (p *Pool) allocSlow() *Packet {
	if p.perPage > 1 {
		return p.allocPiece()
	}
	u, ok := p.takeUnit()
	if !ok {
		return nil
	}
	h := &p.hdrs[u]
	h.state = stateOut
	h.gen++
	p.reset(h)
	return h
}

// AllocBulk fills out with buffers and returns how many it got. Owner only.
// Whole buffers come off the cache in one run (a driver's RX refill).
func (p *Pool) AllocBulk(out []*Packet) int {
	if !p.simple {
		for i := range out {
			h := p.Alloc()
			if h == nil {
				return i
			}
			out[i] = h
		}
		return len(out)
	}
	n := 0
	for n < len(out) {
		c := len(p.cache)
		if c == 0 {
			if p.refillCache() == 0 {
				p.o[cAllocEmpty]++
				break
			}
			p.o[cAllocSlow]++ // this refill served the allocation of one buffer slowly
			c = len(p.cache)
		}
		k := min(c, len(out)-n)
		for i, u := range p.cache[c-k : c] {
			h := &p.hdrs[u]
			h.state = stateOut
			h.gen++
			h.meta = p.fresh
			out[n+k-1-i] = h // LIFO order, as Alloc would hand them out
		}
		p.cache = p.cache[:c-k]
		n += k
	}
	return n
}

func (p *Pool) allocPiece() *Packet {
	if p.cur < 0 || p.curNext == p.perPage {
		u, ok := p.takeUnit()
		if !ok {
			return nil
		}
		hu := &p.hdrs[int(u)*p.perPage]
		hu.state = stateOut
		hu.gen++
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
// headroom start if data was prepended, and no more.
func (p *Pool) dirtySync(h *Packet) {
	if !p.needSync {
		return
	}
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
// are recycled too.
func (p *Pool) Recycle(pk *Packet) {
	if !p.tryCache(pk) {
		p.recycleSlow(pk)
	}
}

// tryCache is the recycle fast path: a single, whole, out buffer of this
// very pool (the header's address proves it), coherent memory, room in the
// cache. It reports whether it took the buffer.
func (p *Pool) tryCache(pk *Packet) bool {
	n := len(p.cache)
	if !p.simple || pk.next != nil || n == cap(p.cache) ||
		uint(pk.idx) >= uint(len(p.hdrs)) || &p.hdrs[pk.idx] != pk || pk.state != stateOut {
		return false
	}
	pk.state = stateFree
	p.cache = p.cache[:n+1]
	p.cache[n] = pk.idx
	p.o[cRecycleCached]++
	return true
}

func (p *Pool) recycleSlow(pk *Packet) {
	for pk != nil {
		next := pk.next
		if pk.pool != p || !p.owns(pk) {
			if pk.pool == nil || !pk.pool.owns(pk) {
				forgedFrees.Add(1)
			} else {
				p.o[cRefusedForeign]++
			}
			return
		}
		pk.next = nil
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
			p.unitHome(u)
		}
		return
	}
	if h.state != stateOut {
		p.o[cRefusedDouble]++
		return
	}
	p.dirtySync(h)
	p.unitHome(h.idx)
}

// unitHome puts a unit whose buffers are all back into the cache, or into
// the ring when the cache is full. Owner only.
func (p *Pool) unitHome(u uint32) {
	hu := &p.hdrs[int(u)*p.perPage]
	if len(p.cache) < cap(p.cache) {
		hu.state = stateFree
		p.cache = append(p.cache, u)
		p.o[cRecycleCached]++
		return
	}
	p.o[cRecycleCacheFull]++
	p.pushRing(u, hu.gen)
}

// RecycleBulk is Recycle for many buffers. Owner only.
func (p *Pool) RecycleBulk(pkts []*Packet) {
	for _, pk := range pkts {
		if !p.tryCache(pk) {
			p.recycleSlow(pk)
		}
	}
}

func (p *Pool) pushRing(u, gen uint32) {
	e := [1]uint32{u | (gen&genMask)<<idxBits}
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
			p.pushRing(u, p.hdrs[int(u)*p.perPage].gen)
		}
		return
	}
	p.dirtySync(h)
	p.pushRing(h.idx, h.gen)
}

// freeBatch is how many ring entries FreeBulk gathers per pool before one
// push (the kernel's XDP_BULK_QUEUE_SIZE).
const freeBatch = 16

// FreeBulk returns many buffers (and their chained segments) to their pools
// from any goroutine. Consecutive buffers of one pool go to its ring in one
// reservation, as the kernel's xdp_return_frame_bulk does.
func FreeBulk(pkts []*Packet) {
	var (
		batch [freeBatch]uint32
		n     int
		cur   *Pool
	)
	flush := func() {
		if n == 0 {
			return
		}
		if cur.ring.push(batch[:n]) {
			cur.sharedRing.Add(uint64(n))
		} else {
			for _, e := range batch[:n] { // ring full: try one by one
				cur.pushRing(e&idxMask, e>>idxBits)
			}
		}
		n = 0
	}
	for _, pk := range pkts {
		for pk != nil {
			next := pk.next
			pk.next = nil
			pl := pk.pool
			if pl == nil || !pl.owns(pk) {
				forgedFrees.Add(1)
				break
			}
			if pl.perPage > 1 {
				pl.freeShared(pk)
			} else {
				if pl != cur || n == freeBatch {
					flush()
					cur = pl
				}
				pl.dirtySync(pk)
				batch[n] = pk.idx | (pk.gen&genMask)<<idxBits
				n++
			}
			pk = next
		}
	}
	flush()
}

// publish copies the owner's counters where other goroutines can read them.
func (p *Pool) publish() {
	// Every unit that entered the cache either is still there or left it
	// through an allocation; those that left right after a refill were slow.
	p.o[cAllocFast] = p.o[cRecycleCached] + p.o[cRefillIn] - uint64(len(p.cache)) - p.o[cAllocSlow]
	for i := range p.o {
		p.pub[i].Store(p.o[i])
	}
}

// Publish makes the owner's latest counts visible to Stats readers on other
// goroutines (they are published on every cache refill anyway). Owner only.
func (p *Pool) Publish() { p.publish() }

// Stats returns the counters. Read from the owner goroutine they are exact;
// from another goroutine, the owner-side counts are as of the last refill or
// Publish.
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
	return (len(p.cache) + len(p.spare) + p.ring.len()) * p.perPage
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
	by := map[uint16]int{}
	n := 0
	for u := 0; u < p.units; u++ {
		hu := &p.hdrs[u*p.perPage]
		if hu.state != stateOut {
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
			p.unitHome(u)
		}
	}
	for {
		got := p.ring.pop(p.scratch)
		if got == 0 {
			break
		}
		for _, e := range p.scratch[:got] {
			u, ok := p.accept(e)
			if !ok {
				continue
			}
			if len(p.cache) < cap(p.cache) {
				p.cache = append(p.cache, u)
				p.o[cRefillIn]++
			} else {
				p.spare = append(p.spare, u)
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
func (p *Pool) Close(timeout time.Duration) error {
	if p.closed {
		return fmt.Errorf("pool %q: %w", p.name, ErrClosed)
	}
	deadline := time.Now().Add(timeout)
	for {
		n, by := p.outstanding()
		if n == 0 {
			p.closed = true
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

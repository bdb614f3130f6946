package pool

import "unsafe"

// The cache's entries are header offsets below 4 GiB: a whole-buffer pool
// has at most MaxUnits headers.
const _ = uint32(MaxUnits * unsafe.Sizeof(Packet{}))

// newHeaders makes a pool's count headers in an array whose storage
// reaches a power of two bytes from its start (headerReach): the headers
// past count are never handed out, so an address less than that power of
// two past the first header is still one of the pool's, and the bulk free
// tests a turn's addresses with one compare of their OR (takeTurns). The
// headers of a pool of 1024 buffers take 24 KiB more so (64-bit).
func newHeaders(count int) []Packet {
	size := int(unsafe.Sizeof(Packet{}))
	reach := 1
	for reach < count*size {
		reach <<= 1
	}
	return make([]Packet, count, (reach+size-1)/size)
}

// headerReach is the power of two bytes newHeaders's array covers from
// hdrs[0]: the fast paths' span for whole buffers on coherent memory.
func headerReach(hdrs []Packet) uintptr {
	reach := uintptr(1)
	for reach < uintptr(len(hdrs))*unsafe.Sizeof(hdrs[0]) {
		reach <<= 1
	}
	return reach
}

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

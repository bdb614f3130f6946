package pool

import "unsafe"

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
		k := len(src)
		dst := out[n : n+k]
		head, base := p.freshHead, p.hdr0
		// Four buffers a turn: a turn of one spends a third of its
		// instructions on the loop itself. resetMeta is written out: a
		// call, even inlined, leaves a position marker (a NOP) per buffer.
		// The turns index the runs through unsafe.Add: reslicing them
		// costs more instructions than a turn saves.
		sp, dp := unsafe.Pointer(unsafe.SliceData(src)), unsafe.Pointer(unsafe.SliceData(dst))
		j := 0
		for ; j+4 <= k; j += 4 {
			s := (*[4]uint32)(unsafe.Add(sp, j*4))
			d := (*[4]*Packet)(unsafe.Add(dp, j*int(unsafe.Sizeof(dst[0]))))
			a, b := (*Packet)(unsafe.Add(base, s[0])), (*Packet)(unsafe.Add(base, s[1]))
			c, e := (*Packet)(unsafe.Add(base, s[2])), (*Packet)(unsafe.Add(base, s[3]))
			a.state += toOut
			a.metaTail = metaTail{}
			*(*uint64)(unsafe.Pointer(&a.metaHead)) = head
			b.state += toOut
			b.metaTail = metaTail{}
			*(*uint64)(unsafe.Pointer(&b.metaHead)) = head
			c.state += toOut
			c.metaTail = metaTail{}
			*(*uint64)(unsafe.Pointer(&c.metaHead)) = head
			e.state += toOut
			e.metaTail = metaTail{}
			*(*uint64)(unsafe.Pointer(&e.metaHead)) = head
			d[0], d[1], d[2], d[3] = a, b, c, e
		}
		for ; j < k; j++ {
			h := (*Packet)(unsafe.Add(base, src[j]))
			h.state += toOut
			h.metaTail = metaTail{}
			*(*uint64)(unsafe.Pointer(&h.metaHead)) = head
			dst[j] = h
		}
		n += k
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
		k := len(src)
		dst := out[n : n+k]
		base := p.hdr0
		// Four a turn, indexed as in AllocBulk.
		sp, dp := unsafe.Pointer(unsafe.SliceData(src)), unsafe.Pointer(unsafe.SliceData(dst))
		j := 0
		for ; j+4 <= k; j += 4 {
			s := (*[4]uint32)(unsafe.Add(sp, j*4))
			d := (*[4]*Packet)(unsafe.Add(dp, j*int(unsafe.Sizeof(dst[0]))))
			a, b := (*Packet)(unsafe.Add(base, s[0])), (*Packet)(unsafe.Add(base, s[1]))
			c, e := (*Packet)(unsafe.Add(base, s[2])), (*Packet)(unsafe.Add(base, s[3]))
			a.state += toOut
			a.owner = owner
			b.state += toOut
			b.owner = owner
			c.state += toOut
			c.owner = owner
			e.state += toOut
			e.owner = owner
			d[0], d[1], d[2], d[3] = a, b, c, e
		}
		for ; j < k; j++ {
			h := (*Packet)(unsafe.Add(base, src[j]))
			h.state += toOut
			h.owner = owner
			dst[j] = h
		}
		n += k
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

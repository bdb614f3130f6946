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
	// hdrAt and resetMeta spelled out: a call of them costs the inliner
	// more than Alloc's budget has left.
	h := (*Packet)(unsafe.Add(p.hdr0, p.cache[n]))
	p.cache = p.cache[:n]
	// The flags cleared in the word, not with markOut's byte store: the
	// buffer's free may follow at once (an allocate-and-drop loop), and
	// its word-wide addition would wait for a byte store to leave the
	// store buffer (no store forwarding from a narrower store), twice the
	// time of the whole loop on amd64. The bulk allocations store the
	// byte: a bulk lies between their stores and the frees' loads.
	h.state &^= 0xff
	h.metaTail = metaTail{}
	*(*uint64)(unsafe.Pointer(&h.metaHead)) = p.freshHead
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
	h.markOut()
	p.reset(h)
	return h
}

// AllocBulk fills out with buffers and returns how many it got. Owner only.
// Whole buffers come off the top of the cache in one run (a driver's RX
// refill), the run in cache order.
func (p *Pool) AllocBulk(out []*Packet) int {
	// The common case, takeRun's written out: the cache holds the whole
	// bulk and no publication is due (split pages keep the cache empty).
	// The run is the cache's top k entries, reached through unsafe.Add:
	// len >= k > 0 was checked, and a reslice would check it again and
	// guard its pointer against an empty result. The cache is read once,
	// before any store, so the compiler sees r <= len <= cap and checks
	// nothing in the reslice.
	cache, k := p.cache, len(out)
	r := len(cache) - k
	if r < 0 || k == 0 || p.runs >= publishRuns-1 {
		return p.allocBulkSlow(out)
	}
	p.cache = cache[:r] // the length alone
	p.runs++
	// markFresh written out, one call fewer a bulk; the loop's bound is
	// read from memory (turns' address is taken), a compare's operand, so
	// the eight headers, the entry and the loop's values fit amd64's
	// registers with two reloads a turn.
	sp := unsafe.Add(unsafe.Pointer(unsafe.SliceData(cache)), r*4)
	dp, base, head := unsafe.Pointer(unsafe.SliceData(out)), p.hdr0, p.freshHead
	j, turns := 0, k&^7
	for tp := &turns; j < *tp; j += 8 {
		s := (*[8]uint32)(unsafe.Add(sp, j*4))
		d := (*[8]*Packet)(unsafe.Add(dp, j*int(unsafe.Sizeof(out[0]))))
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = fresh(base, s[0], head), fresh(base, s[1], head),
			fresh(base, s[2], head), fresh(base, s[3], head), fresh(base, s[4], head), fresh(base, s[5], head),
			fresh(base, s[6], head), fresh(base, s[7], head)
	}
	for ; j < k; j++ {
		out[j] = fresh(base, *(*uint32)(unsafe.Add(sp, j*4)), head)
	}
	return k
}

// allocBulkSlow is AllocBulk when the cache holds less than the bulk, a
// publication is due, or the pages are split.
func (p *Pool) allocBulkSlow(out []*Packet) int {
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
		markFresh(out[n:n+len(src)], unsafe.SliceData(src), p.hdr0, p.freshHead)
		n += len(src)
	}
	return n
}

// markFresh marks the buffers of a run taken off the cache (from src on,
// as many as dst holds: cache entries against base) out, gives each a
// fresh holder's metadata (head: the fresh head word) and puts them into
// dst. Nothing is checked: a buffer in the cache is at home by
// construction (every way in checked it), and its entry is an offset the
// pool made.
func markFresh(dst []*Packet, src *uint32, base unsafe.Pointer, head uint64) {
	// Eight buffers a turn, so the loop's control and the write-barrier
	// test of the stores into dst (one for the eight: the right-hand side
	// is evaluated whole before the stores) are paid once for eight. The
	// turns index the runs through unsafe.Add: reslicing them costs more
	// instructions than a turn saves.
	sp, dp := unsafe.Pointer(src), unsafe.Pointer(unsafe.SliceData(dst))
	k := len(dst)
	j, turns := 0, k&^7
	for ; j < turns; j += 8 {
		s := (*[8]uint32)(unsafe.Add(sp, j*4))
		d := (*[8]*Packet)(unsafe.Add(dp, j*int(unsafe.Sizeof(dst[0]))))
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = fresh(base, s[0], head), fresh(base, s[1], head),
			fresh(base, s[2], head), fresh(base, s[3], head), fresh(base, s[4], head), fresh(base, s[5], head),
			fresh(base, s[6], head), fresh(base, s[7], head)
	}
	for ; j < k; j++ {
		dst[j] = fresh(base, *(*uint32)(unsafe.Add(sp, j*4)), head)
	}
}

// fresh marks the header at cache entry off (against base) out and gives
// it a fresh holder's metadata (head: the fresh head word), and returns
// it. resetMeta and markOut are written out: a call of them, even
// inlined, leaves a position marker (a NOP). The header is returned from
// the zeroing's address, which the compiler makes anyway (the zero stores
// take no index), where the header's own address would be a second
// addition on amd64.
func fresh(base unsafe.Pointer, off uint32, head uint64) *Packet {
	h := (*Packet)(unsafe.Add(base, off))
	h.metaTail = metaTail{}
	*(*uint64)(unsafe.Pointer(&h.metaHead)) = head
	*h.stateFlags() = 0
	return (*Packet)(unsafe.Pointer(&h.metaTail))
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
// (SetRx or SetRxRaw, SetSegment) before a buffer leaves the ring, which makes the
// reset AllocBulk does a second write of every field. Owner only.
func (p *Pool) AllocBulkRaw(out []*Packet, owner uint16) int {
	// The common case, as AllocBulk's.
	if c := len(p.cache); c >= len(out) && p.runs < publishRuns-1 {
		p.runs++
		p.cache = p.cache[:c-len(out)]
		markOwned(out, p.cache[c-len(out):c], p.hdr0, owner)
		return len(out)
	}
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
		markOwned(out[n:n+len(src)], src, p.hdr0, owner)
		n += len(src)
	}
	return n
}

// markOwned is markFresh for AllocBulkRaw: each buffer marked out and
// given to owner, its metadata left as it is.
func markOwned(dst []*Packet, src []uint32, base unsafe.Pointer, owner uint16) {
	k := len(src)
	dst = dst[:k]
	// Eight a turn, indexed as in markFresh.
	sp, dp := unsafe.Pointer(unsafe.SliceData(src)), unsafe.Pointer(unsafe.SliceData(dst))
	j, turns := 0, k&^7
	for ; j < turns; j += 8 {
		s := (*[8]uint32)(unsafe.Add(sp, j*4))
		d := (*[8]*Packet)(unsafe.Add(dp, j*int(unsafe.Sizeof(dst[0]))))
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = owned(base, s[0], owner), owned(base, s[1], owner),
			owned(base, s[2], owner), owned(base, s[3], owner), owned(base, s[4], owner), owned(base, s[5], owner),
			owned(base, s[6], owner), owned(base, s[7], owner)
	}
	for ; j < k; j++ {
		dst[j] = owned(base, src[j], owner)
	}
}

// owned marks the header at cache entry off (against base) out and gives
// it to owner, and returns it.
func owned(base unsafe.Pointer, off uint32, owner uint16) *Packet {
	h := (*Packet)(unsafe.Add(base, off))
	*h.stateFlags() = 0
	h.owner = owner
	return h
}

func (p *Pool) allocPiece() *Packet {
	if p.cur < 0 || p.curNext == p.perPage {
		hu, ok := p.takeUnit()
		if !ok {
			return nil
		}
		hu.markOut()
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

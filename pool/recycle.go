package pool

import "unsafe"

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
//
// On non-coherent memory a buffer is synced for the device on its way back
// so that no dirty cache line of it can be evicted over what the device
// writes next: only the bytes the CPU may have written (Packet.DirtySpan:
// the data window, widened to the headroom's start if data was prepended),
// nothing when that span is empty (MarkClean after a TX path synced it),
// and never the rest of the buffer, which the CPU did not write.
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
	// Whole buffers on non-coherent memory (syncSpan is 0 otherwise):
	// push's checks, and the one sync the guarantee needs, of the dirty
	// span alone (see syncDirty), straight into the cache. Anything else
	// (a chain, another pool's buffer, a double free, a full cache, split
	// pages) takes the general path below.
	if d := uintptr(unsafe.Pointer(pk)) - p.hdrBase; d < p.syncSpan && len(p.cache) < cap(p.cache) && pk.single() {
		// syncDirty written out: the call cost a tenth of the path.
		lo := min(pk.off, int32(p.headroom))
		if hi := pk.off + pk.len; hi > lo {
			p.region.SyncForDevice(p.offset+int(pk.idx)*p.bufSize+int(lo), int(hi-lo))
		}
		p.cache = append(p.cache, uint32(d))
		pk.state += toHome
		p.o[cRecycleCached]++
		return
	}
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
	// recycleRun written out for the common case, the cache with room for
	// the whole bulk on coherent memory: one call fewer a bulk. The cache's
	// length and the count are set for the whole bulk before the turns
	// (no other goroutine reads them), so nothing is left to do after the
	// turns when they took it all, and put back when they did not.
	n, k := len(p.cache), len(pkts)
	if m := n + k; k > 0 && m <= cap(p.cache) && p.syncSpan == 0 {
		p.cache = p.cache[:m] // the length alone
		p.o[cRecycleCached] += uint64(k)
		dst := unsafe.Add(unsafe.Pointer(unsafe.SliceData(p.cache)), n*4)
		i, ok := takeTurns(unsafe.Pointer(unsafe.SliceData(pkts)), dst, p.hdr0, p.hdrBase, p.fastSpan, k&^(turn-1))
		if i == k && ok {
			return
		}
		p.cache = p.cache[:n]
		p.o[cRecycleCached] -= uint64(k)
		if i = p.recycleRest(pkts, k, i, !ok); i < k {
			p.recycleBulkSlow(pkts, i)
		}
		return
	}
	if k := p.recycleRun(pkts); k < len(pkts) {
		p.recycleBulkSlow(pkts, k)
	}
}

// recycleBulkSlow is RecycleBulk from pkts[k] on, the first buffer its
// fast path refused.
func (p *Pool) recycleBulkSlow(pkts []*Packet, k int) {
	for k < len(pkts) {
		p.recycleSlow(pkts[k])
		k++
		k += p.recycleRun(pkts[k:])
	}
}

// recycleRun is the bulk fast path: it puts pkts into the cache, from the
// first, while each is a single, out buffer of this pool, whole and on
// coherent memory (as Recycle's fast path checks), and the cache has room.
// It returns how many it took. The room is counted once, so the cache and
// the packets are one run indexed alike. takeTurns takes the run a turn
// (eight buffers) at a time, with one address test a turn and none of a
// buffer's state; recycleRest ends a run it did not take whole, or undoes
// it. Owner only.
func (p *Pool) recycleRun(pkts []*Packet) int {
	if p.syncSpan != 0 {
		return p.recycleRunSync(pkts)
	}
	n := len(p.cache)
	k := min(len(pkts), cap(p.cache)-n)
	if k == 0 {
		return 0 // a full cache: dst below would point past its end
	}
	dst := unsafe.Add(unsafe.Pointer(unsafe.SliceData(p.cache)), n*4) // room for k was counted
	i, ok := takeTurns(unsafe.Pointer(unsafe.SliceData(pkts)), dst, p.hdr0, p.hdrBase, p.fastSpan, k&^(turn-1))
	if i < k || !ok {
		return p.recycleRest(pkts, k, i, !ok)
	}
	p.cache = p.cache[:n+i] // the length alone
	p.o[cRecycleCached] += uint64(i)
	return i
}

// recycleRest ends recycleRun when its turns did not take the whole run
// (pkts[:k]): the turns took pkts[:i] (their entries are written, the
// cache's length does not count them yet), and undo says one of them was
// not out and single. Then their additions are undone (additions commute,
// so a buffer added twice is subtracted twice) and the run is taken again
// from its start; else from i. Either way one buffer at a time, each
// checked before it is taken, up to the first the fast path refuses.
func (p *Pool) recycleRest(pkts []*Packet, k, i int, undo bool) int {
	pkts = pkts[:k]
	if undo {
		for _, pk := range pkts[:i] {
			pk.state -= toHome
		}
		i = 0
	}
	n := len(p.cache)
	dst := p.cache[n : n+len(pkts)]
	base, span := p.hdrBase, p.fastSpan
	for ; i < len(pkts); i++ {
		pk := pkts[i]
		d := uintptr(unsafe.Pointer(pk)) - base
		if d >= span || !pk.single() {
			break
		}
		pk.state += toHome
		dst[i] = uint32(d)
	}
	p.cache = p.cache[:n+i] // the length alone
	p.o[cRecycleCached] += uint64(i)
	return i
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

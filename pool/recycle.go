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
	// Four buffers a turn, each checked and taken in order (so a buffer
	// given twice finds itself already home), indexed through unsafe.Add:
	// reslicing costs more instructions than a turn saves. A turn that
	// stops part way leaves i at the buffers taken, and the loop below
	// stops at the same buffer.
	pp, op := unsafe.Pointer(unsafe.SliceData(pkts)), unsafe.Pointer(unsafe.SliceData(dst))
	i := 0
	for ; i+4 <= len(pkts); i += 4 {
		q := (*[4]*Packet)(unsafe.Add(pp, i*int(unsafe.Sizeof(pkts[0]))))
		o := (*[4]uint32)(unsafe.Add(op, i*4))
		a := q[0]
		da := uintptr(unsafe.Pointer(a)) - base
		if da >= span || !a.single() {
			break
		}
		a.state += toHome
		o[0] = uint32(da)
		b := q[1]
		db := uintptr(unsafe.Pointer(b)) - base
		if db >= span || !b.single() {
			i++
			break
		}
		b.state += toHome
		o[1] = uint32(db)
		c := q[2]
		dc := uintptr(unsafe.Pointer(c)) - base
		if dc >= span || !c.single() {
			i += 2
			break
		}
		c.state += toHome
		o[2] = uint32(dc)
		d := q[3]
		dd := uintptr(unsafe.Pointer(d)) - base
		if dd >= span || !d.single() {
			i += 3
			break
		}
		d.state += toHome
		o[3] = uint32(dd)
	}
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

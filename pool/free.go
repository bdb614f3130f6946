package pool

import "unsafe"

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

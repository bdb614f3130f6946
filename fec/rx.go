package fec

import (
	"strconv"
	"sync/atomic"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/internal/rxirq"
	"github.com/gopmd/gopmd/pool"
)

// rxQueue is one receive ring. One goroutine owns it (and its pool).
//
// Slots ntc..ntu-1 (cyclically, posted of them) hold buffers the MAC owns;
// slots ntu..ntc-1 are empty and wait for a refill. The MAC fills BDs in
// ring order from its own pointer, which is always at ntc: it
// stops at the first BD without E (an empty slot) and clears RDAR.
type rxQueue struct {
	port      *Port
	idx       int
	ring      bdRing
	pool      *pool.Pool
	bufRegion *dma.Region
	bufs      []*pool.Packet // buffer posted at each slot (an empty slot may still name the buffer it last held)
	ntc       int            // next to clean: oldest posted slot, the next BD the MAC completes
	ntu       int            // next to use: the next empty slot to refill
	posted    int
	short     int        // slots the last refill left empty for want of buffers
	spans     []dma.Span // the burst's received bytes, invalidated in one call before RxBurst returns
	rdar      uint32
	regs      driver.Regs
	enhanced  bool
	shift     int
	headroom  int
	bufLen    int
	ringOwn   uint16 // leak-report id while the ring holds a buffer
	appOwn    uint16 // leak-report id while the application holds it
	portID    uint16
	gate      *gate.Gate
	stats     driver.Counters
	doorbells atomic.Uint64
	burst     gate.Flag   // raised while inside a burst (the stop handshake)
	irq       rxirq.Queue // interrupt handle and counts (irq.go)

	// A line of padding: whatever size class the allocator puts queues
	// in, the fields of two queues never share a cache line.
	_ [dma.CacheLine]byte
}

func newRxQueue(p *Port, id int, ring bdRing, pl *pool.Pool, bufs *dma.Region) *rxQueue {
	q := &rxQueue{
		port: p, idx: id, ring: ring, pool: pl, bufRegion: bufs,
		bufs:  make([]*pool.Packet, ring.size),
		spans: make([]dma.Span, 0, ring.size),
		rdar:  regRDARn[id], regs: p.regs, enhanced: p.enhanced, shift: p.shift,
		headroom: p.headroom, bufLen: p.rxBufLen, portID: p.cfg.PortID, gate: &p.gate,
	}
	q.ringOwn = pl.Holder(pool.Holder{Role: "rx ring " + strconv.Itoa(id)})
	q.appOwn = pl.Holder(pool.Holder{Role: "rx queue " + strconv.Itoa(id) + " caller"})
	return q
}

// init writes every BD empty and unowned (no E), W on the last, before
// the ring base is programmed; buffers are posted by refill.
func (q *rxQueue) init() {
	q.ntc, q.ntu, q.posted = 0, 0, 0
	for i := 0; i < q.ring.size; i++ {
		for k := 1; k < q.ring.stride; k++ {
			q.ring.set(i, k, 0)
		}
		q.ring.publish(i, w0(q.wrap(i), 0))
	}
	q.shift, q.bufLen = q.port.shift, q.port.rxBufLen
}

func (q *rxQueue) wrap(i int) uint32 {
	if i == q.ring.size-1 {
		return rxbd_W // the MAC continues at RDSR after this BD
	}
	return 0
}

// next is the slot after i; the ring need not be a power of two.
func (q *rxQueue) next(i int) int {
	if i++; i == q.ring.size {
		return 0
	}
	return i
}

// Pool is the queue's buffer pool.
func (q *rxQueue) Pool() *pool.Pool { return q.pool }

// Stats are the queue's counters.
func (q *rxQueue) Stats() driver.QueueStats { return q.stats.Snapshot() }

// RxBurst fills pkts with received frames and returns how many, in three
// steps:
//
//  1. check the gate (internal/gate): a stopped port returns 0 and writes
//     no RDAR;
//  2. take completed BDs from ntc: a one-BD frame through single, a frame
//     of several BDs through frameBDs and gather; errored frames are
//     counted by cause and their buffers recycled;
//  3. refill the ring in bulk and write RDAR once.
func (q *rxQueue) RxBurst(pkts []*pool.Packet) int {
	g, shared := q.burst.Enter(q.gate)
	if shared {
		q.port.concurrentUse("rx", q.idx, "RxBurst") // another goroutine is inside: touch nothing
	}
	if g&gate.Closed != 0 {
		q.burst.Leave()
		return 0 // stopped, or closed: the ring memory may be gone
	}
	n := 0
	var bytes uint64
	for n < len(pkts) && q.posted > 0 {
		// Fast path: good one-BD frames, in loops that call nothing but,
		// on ARM, one read barrier per run.
		k, b := q.singles(pkts[n:])
		n += k
		bytes += b
		if n == len(pkts) || q.posted == 0 {
			break
		}
		if k > 0 && q.ntc == 0 {
			continue // the run ended at the ring's end: the rest from slot 0
		}
		// The BD at ntc is anything else: one frame through the general path.
		st, length := sc(q.ring.status(q.ntc))
		if st&rxbd_E != 0 {
			break // the MAC still owns it: nothing more arrived
		}
		if st&rxbd_L == 0 {
			k := q.frameBDs()
			if k == 0 {
				break // the rest of this frame is still being written
			}
			if pk := q.gather(k); pk != nil {
				pkts[n] = pk
				n++
				bytes += uint64(pk.PktLen)
			}
		} else {
			dma.ReadBarrier() // the status word before the length, esc and data it guards
			if pk := q.single(st, int(length)); pk != nil {
				pkts[n] = pk
				n++
				bytes += uint64(pk.PktLen)
			}
		}
	}
	// Non-coherent DMA: drop stale cache lines over every frame received,
	// in one call, before the caller reads them.
	q.flushSync()
	q.refill() // also retries slots a short pool left empty
	q.stats.Add(uint64(n), bytes)
	q.burst.Leave()
	return n
}

// rxErrBits are the status bits rxCause turns into a drop.
const rxErrBits = rxbd_CR | rxbd_LG | rxbd_TR | rxbd_NO | rxbd_SH | rxbd_OV

// singles takes good one-BD frames from ntc on into pkts, at most posted
// of them and none past the ring's end (ntc becomes 0 when it reaches it:
// RxBurst comes back for the BDs from slot 0), and stops at the first BD
// that is anything else: still the MAC's, not the frame's last, with an
// error bit (status or esc), or a length outside what single accepts. It
// does what single does for such a frame, with no call, and returns the
// frames taken and their bytes. The slots from ntc on are one run, indexed
// as pkts with no wrap.
func (q *rxQueue) singles(pkts []*pool.Packet) (int, uint64) {
	if len(pkts) > q.posted {
		pkts = pkts[:q.posted]
	}
	if room := q.ring.size - q.ntc; len(pkts) > room {
		pkts = pkts[:room]
	}
	// The burst's invalidates go into the spans' free room, indexed as pkts
	// (never short: a burst takes at most every BD once).
	spans := q.spans[len(q.spans):cap(q.spans)]
	if len(pkts) > len(spans) {
		pkts = pkts[:len(spans)]
	}
	spans = spans[:len(pkts)]
	ntc, size, headroom := q.ntc, q.ring.size, q.headroom
	// The lengths a BD may hold (rxSingles checks each).
	minLen, maxLen := q.shift+ethHdr+fcsLen, min(q.bufLen, q.pool.BufSize()-headroom)
	if maxLen < minLen {
		return 0, 0 // no length fits: single drops each frame, counted
	}
	n := q.shift + fcsLen
	c := rxRun{
		span: uint(maxLen - minLen), off: uint32(headroom + q.shift), minLen: minLen,
		tag: pool.MakeRxTag(q.appOwn, q.portID, uint16(q.idx), pool.RxDecoded),
	}
	// The run's slots and BDs, indexed as pkts, in the ring's one format.
	bufs := q.bufs[ntc : ntc+len(pkts)]
	var i int
	if enh := q.ring.enh; enh != nil {
		i = rxSingles(enh[ntc:ntc+len(pkts)], bufs, pkts, c)
	} else {
		i = rxSingles(q.ring.leg[ntc:ntc+len(pkts)], bufs, pkts, c)
	}
	// Non-coherent DMA: what the MAC wrote (pad, frame and FCS) is
	// invalidated before RxBurst returns. A second pass over the frames
	// taken, with the bytes: fewer values live in each loop than in one.
	base := regionBase(q.bufRegion) - uintptr(headroom) // a buffer's address less base: its frame's offset
	bytes := rxSpans(pkts[:i], spans, base, n)
	// The MAC has moved past these BDs; the slots are rewritten before
	// they are read again.
	if ntc += i; ntc == size {
		ntc = 0
	}
	q.spans = q.spans[:len(q.spans)+i]
	q.ntc = ntc
	q.posted -= i
	return i, bytes
}

// rxSpans is singles' second pass over the frames rxSingles took (spans at
// least as long as pkts): each frame's span to invalidate, its frame and
// the n bytes of pad and FCS around it (offsets from base: a buffer's
// address less base is its frame's offset), and their lengths summed. A
// function of its own, so that base and n are each one register, where
// inlined the compiler rebuilt both from their parts for every frame.
//
//go:noinline
func rxSpans(pkts []*pool.Packet, spans []dma.Span, base uintptr, n int) uint64 {
	spans = spans[:len(pkts)]
	var bytes uint64
	for j, pk := range pkts {
		fl := pk.Len()
		spans[j] = dma.Span{Off: bufFrom(base, pk), Len: fl + n}
		bytes += uint64(fl)
	}
	return bytes
}

// rxRun is what the RX one-BD loop needs of its queue, copied once per run.
type rxRun struct {
	span   uint       // the longest frame taken less the shortest (a header)
	off    uint32     // where the frame starts in its buffer: headroom and pad (rxSingles says why 32 bits)
	minLen int        // the shortest BD length taken: pad, a header and FCS
	tag    pool.RxTag // the queue's caller, port and queue, values stored decoded (RxDecoded)
}

// The RX one-BD loop's masks. A BD is a good one-BD frame's when its word
// 0 masked by rxReadyMask is rxReady: E clear (the MAC handed it back), L
// set (the frame's last BD) and no error bit. Its esc word has a bit of
// rxESCRare only for a frame with an error (rxbd_ESC_ERR_MASK: it ends
// the run) or a bad checksum (its flags): neither the common case.
const (
	rxReadyMask = (rxbd_E | rxbd_L | rxErrBits) << 16
	rxReady     = rxbd_L << 16
	rxESCRare   = rxbd_ESC_ERR_MASK | rxbd_ICE | rxbd_PCR
)

// rxMasks are the masks above for ARM's loops: a variable, so that each
// is loaded once a run and stays in a register, where a constant, which
// no ARM AND or TST can hold, is built anew for every BD. amd64 has no
// register to spare there and holds them in its instructions instead.
var rxMasks = struct{ readyMask, ready, escRare uint32 }{rxReadyMask, rxReady, rxESCRare}

// rxSingles is singles' loop over BDs of one format B (bufs and pkts
// at least as long as bds): it takes the good one-BD frames into pkts,
// every field set, and returns how many. The format is the type: a legacy
// BD has no esc word (rxESC is the constant 0 there, and its checks
// vanish), so no BD tests it.
//
// On ARM it reads the run in two passes with one read barrier between
// them: word 0 of each BD first, up to the first whose status is not a
// good one-BD frame's, then the esc words of the BDs found ready (and,
// later, their data). A DMB orders every load before it before every load
// after it, so the one barrier does for the whole run what Linux's
// dma_rmb after each status load does for one BD (docs/design.md,
// "Ordering"), and neither loop calls anything. On amd64, whose loads stay
// in order (dma.LoadsInOrder), one pass checks each status where it reads
// the BD, and calls nothing.
func rxSingles[B bdLeg | bdEnh](bds []B, bufs, pkts []*pool.Packet, c rxRun) int {
	escRare := uint32(rxESCRare) // amd64's immediate; ARM's register, from rxMasks after pass 1
	if !dma.LoadsInOrder {
		// Pass 1: the words 0, up to the first that is not a good one-BD
		// frame's; then one barrier for the run.
		readyMask, ready := rxMasks.readyMask, rxMasks.ready
		for i := range bds {
			if atomic.LoadUint32(bdWord0(&bds[i]))&readyMask != ready {
				bds = bds[:i]
				break
			}
		}
		if len(bds) == 0 {
			return 0
		}
		dma.ReadBarrier() // every status load above before the esc words and data below
		escRare = rxMasks.escRare
	}
	bufs, pkts = bufs[:len(bds)], pkts[:len(bds)]
	// In locals: the stores through pk could alias c as far as the
	// compiler knows. off comes from 32 bits, the width SetRxRaw stores:
	// zero-extended from 16, it took a register copy for that store on
	// arm64, for every BD.
	span, off, minLen, tag := c.span, uint(c.off), c.minLen, c.tag
	for i := range bds {
		bd := &bds[i]
		var w uint32
		if dma.LoadsInOrder {
			// No pass 1: this is the status load.
			if w = atomic.LoadUint32(bdWord0(bd)); w&rxReadyMask != rxReady {
				return i
			}
		} else {
			w = *bdWord0(bd) // pass 1 loaded it; the MAC writes a BD it has handed back no more
		}
		// The esc word, written by the MAC before it cleared E: one test
		// for its rare bits, an error (the run ends) or a bad checksum.
		var flags uint64 // SetRxRaw's w0: the flags, no hash
		if e := rxESC(bd); e&escRare != 0 {
			if e&rxbd_ESC_ERR_MASK != 0 {
				return i
			}
			flags = uint64(escFlags(e))
		}
		// The length is device-written: it must cover the pad, a header
		// and the FCS, and fit both MRBR and the buffer the MAC was given
		// (every buffer of the ring is the queue's pool's, of one size):
		// one unsigned range check. The frame is the length less pad and
		// FCS: a header more than what the check subtracted.
		_, length := sc(w)
		d := int(length) - minLen
		if uint(d) > span {
			return i
		}
		fl := d + ethHdr
		pk := bufs[i]
		// The window fits: checked above. The flags are those of the esc
		// word checked above, stored decoded with no hash, ptype or VLAN:
		// SetRx's fields in SetRxRaw's three stores, the holder, port and
		// queue one word (tag). The length is below 0xFFFF (a 16-bit
		// field less the pad and FCS, a header more): the mask changes
		// nothing, and tells the compiler SetRxRaw's sum cannot wrap.
		pk.SetRxRaw(off, uint(fl)&0xFFFF, tag, flags, 0)
		pkts[i] = pk
	}
	return len(bds)
}

// take removes the buffer at ntc from the ring: it is the driver's now.
func (q *rxQueue) take() *pool.Packet {
	// The slot is not cleared: only posted slots are read, and refill
	// writes every slot it posts.
	pk := q.bufs[q.ntc]
	q.ntc = q.next(q.ntc) // the MAC has moved past this BD
	q.posted--
	return pk
}

// rxCause maps a BD's error bits to a drop cause (0 status: no error).
func (q *rxQueue) rxCause(st uint32, esc uint32) (driver.Cause, bool) {
	switch {
	case st&rxbd_CR != 0:
		return driver.CauseCRC, true
	case st&(rxbd_LG|rxbd_TR) != 0:
		return driver.CauseOversize, true
	case st&(rxbd_NO|rxbd_SH|rxbd_OV) != 0, esc&rxbd_ESC_ERR_MASK != 0:
		return driver.CauseFrame, true
	}
	return 0, false
}

// single handles a one-BD frame at ntc (L set, status already loaded).
func (q *rxQueue) single(st uint32, length int) *pool.Packet {
	var esc uint32
	if q.enhanced {
		esc = q.ring.word(q.ntc, wESC)
	}
	pk := q.take()
	if c, bad := q.rxCause(st, esc); bad {
		q.stats.Drop(c, 1)
		q.pool.Recycle(pk) // errored frame: buffer straight back to the cache
		return nil
	}
	// The length is device-written: it must cover the pad, a header and
	// the FCS, and fit the buffer the MAC was given.
	if length < q.shift+ethHdr+fcsLen || length > q.bufLen || q.headroom+length > pk.BufSize() {
		q.stats.Drop(driver.CauseBadDescriptor, 1)
		q.pool.Recycle(pk)
		return nil
	}
	// Non-coherent DMA: what the MAC wrote is invalidated before RxBurst
	// returns, with the burst's other frames.
	if len(q.spans) == cap(q.spans) {
		q.flushSync() // never: a burst takes at most every BD once
	}
	q.spans = append(q.spans, dma.Span{Off: bufOffset(q.bufRegion, pk) + q.headroom, Len: length})
	var f pool.Flags
	if q.enhanced {
		f = escFlags(esc)
	}
	// Every field at once (refill left them as the last holder did); the
	// window fits: checked above. The application's now, for leak reports.
	pk.SetRx(uint16(q.headroom+q.shift), uint16(length-q.shift-fcsLen), q.appOwn, q.portID, uint16(q.idx), 0, 0, f, 0)
	return pk
}

// escFlags are the checksum flags of an enhanced BD's esc word: ICE and
// PCR become FlagL3CsumBad and FlagL4CsumBad, each bit shifted into its
// flag's place, with no branch.
func escFlags(esc uint32) pool.Flags {
	return pool.Flags(esc>>iceToL3&uint32(pool.FlagL3CsumBad) | esc>>pcrToL4&uint32(pool.FlagL4CsumBad))
}

// The shifts that take ICE and PCR to their flags' bits, checked at compile
// time: an index other than 0 into a one-element array does not compile.
const iceToL3, pcrToL4 = 3, 1

var (
	_ = [1]struct{}{}[rxbd_ICE>>iceToL3-uint32(pool.FlagL3CsumBad)]
	_ = [1]struct{}{}[rxbd_PCR>>pcrToL4-uint32(pool.FlagL4CsumBad)]
)

// syncForCPU queues bytes of the buffer region for the burst's invalidate
// (one span per BD: the ring's size bounds a burst's).
func (q *rxQueue) syncForCPU(off, n int) {
	if len(q.spans) == cap(q.spans) {
		q.flushSync() // never: a burst takes at most every BD once
	}
	q.spans = append(q.spans, dma.Span{Off: off, Len: n})
}

// flushSync invalidates the queued spans.
func (q *rxQueue) flushSync() {
	if len(q.spans) > 0 {
		q.bufRegion.SyncSpansForCPU(q.spans)
		q.spans = q.spans[:0]
	}
}

// frameBDs counts the BDs of the frame starting at ntc: k > 0 when its
// last BD (L) is complete, 0 when a BD of it is still owned by the MAC,
// -k when k BDs without L can never end (no more buffers or too many):
// then they are dropped as a bad descriptor.
func (q *rxQueue) frameBDs() int {
	i := q.ntc
	limit := min(maxRxSegs, q.posted)
	for k := 1; k <= limit; k++ {
		st, _ := sc(q.ring.status(i))
		if st&rxbd_E != 0 {
			return 0
		}
		if st&rxbd_L != 0 {
			return k
		}
		i = q.next(i) // the frame's BDs are consecutive in ring order
	}
	if limit == maxRxSegs || q.posted == q.ring.size {
		return -limit
	}
	return 0 // the frame continues into BDs not yet refilled
}

// gather builds a chained packet from a frame of k BDs (k < 0: broken
// chain to drop). Per the reference, BDs before the last hold MRBR bytes;
// the last BD's length is the whole frame (RM) or its own chunk (QEMU): a
// value larger than the bytes before it can only be the total.
func (q *rxQueue) gather(k int) *pool.Packet {
	dma.ReadBarrier() // every status word before the lengths and data
	if k < 0 {
		for i := 0; i < -k; i++ {
			q.pool.Recycle(q.take())
		}
		q.stats.Drop(driver.CauseBadDescriptor, 1)
		return nil
	}
	var (
		segs  [maxRxSegs]*pool.Packet
		lens  [maxRxSegs]int
		cause driver.Cause
		bad   bool
	)
	prior := 0
	for i := 0; i < k; i++ {
		st, length := sc(q.ring.status(q.ntc))
		var esc uint32
		if q.enhanced {
			esc = q.ring.word(q.ntc, wESC)
		}
		if c, b := q.rxCause(st, esc); b && !bad {
			cause, bad = c, true
		}
		segs[i] = q.take()
		l := int(length)
		if i < k-1 {
			if l > q.bufLen {
				cause, bad = driver.CauseBadDescriptor, true
			}
			l = q.bufLen
		} else if l > prior {
			l -= prior // the whole frame's length
		}
		if l < 0 || l > q.bufLen {
			cause, bad = driver.CauseBadDescriptor, true
		}
		lens[i] = l
		prior += l
	}
	total := prior
	if !bad && total < q.shift+ethHdr+fcsLen {
		cause, bad = driver.CauseBadDescriptor, true
	}
	if bad {
		for i := 0; i < k; i++ {
			q.pool.Recycle(segs[i])
		}
		q.stats.Drop(cause, 1)
		return nil
	}
	payload := total - q.shift - fcsLen
	left := payload
	head := segs[0]
	var last *pool.Packet
	nseg := 0
	for i := 0; i < k; i++ {
		pk := segs[i]
		start := q.headroom
		room := lens[i]
		if i == 0 {
			start += q.shift
			room -= q.shift
		}
		use := min(room, left)
		if use <= 0 {
			q.pool.Recycle(pk) // holds only FCS bytes
			continue
		}
		// Non-coherent DMA: invalidated before RxBurst returns.
		q.syncForCPU(bufOffset(q.bufRegion, pk)+start, use)
		pk.SetSegment(start, use, q.appOwn) // every field reset (refill left them); fits: use <= MRBR, the buffer less its headroom
		pk.Port, pk.Queue = q.portID, uint16(q.idx)
		if last != nil {
			last.SetNext(pk)
		}
		last = pk
		left -= use
		nseg++
	}
	head.PktLen = payload
	head.NSegs = int32(nseg)
	return head
}

// refill posts fresh buffers into every empty slot from ntu on, taken in
// bulk straight into the slots (one run to the ring's end, one after the
// wrap), and writes RDAR once if it posted any.
func (q *rxQueue) refill() {
	need := q.ring.size - q.posted
	if need == 0 {
		return
	}
	got := 0
	for t := q.ntu; got < need; t = 0 {
		run := min(need-got, q.ring.size-t)
		k := q.pool.AllocBulkRaw(q.bufs[t:t+run], q.ringOwn) // RxBurst sets every field (SetRx, SetSegment)
		got += k
		if k < run {
			break // the pool ran dry
		}
	}
	if short := need - got; short > q.short {
		q.stats.Drop(driver.CauseNoMem, uint64(short-q.short)) // count each slot left empty once
		q.short = short
	} else {
		q.short = short
	}
	if got == 0 {
		return
	}
	// The slots are at most two runs: from ntu up to the ring's end, and
	// the rest from slot 0; the ring's last BD, if the first run reaches
	// it, takes W with its E bit, in one store.
	t := q.ntu
	n1 := min(got, q.ring.size-t) // >= 1: got > 0, t < size
	b1, b2 := q.bufs[t:t+n1], q.bufs[:got-n1]
	last := w0(rxbd_E, 0) // clears L and stale error bits too
	if t+n1 == q.ring.size {
		last = w0(rxbd_E|rxbd_W, 0) // the MAC continues at RDSR after this BD
	}
	if enh := q.ring.enh; enh != nil {
		rxPost(enh[t:t+n1], enh[:len(b2)], b1, b2, uint32(q.headroom), last)
	} else {
		rxPost(q.ring.leg[t:t+n1], q.ring.leg[:len(b2)], b1, b2, uint32(q.headroom), last)
	}
	if t += got; t >= q.ring.size {
		t -= q.ring.size
	}
	q.ntu = t             // the next empty slot
	q.posted += got       // these BDs are the MAC's now
	dma.DoorbellBarrier() // every E bit visible before the doorbell
	q.regs.Write32(q.rdar, dar_ACTIVE)
	q.doorbells.Add(1)
}

// rxPost hands the buffers b1 and b2 to the MAC in the BDs r1 and r2 of
// one format B (two runs of the ring, as long as b1 and b2; r1 not empty):
// the BDs' other words first, plain stores (the driver owns these BDs:
// see bdRing), then the barrier, then the E bits, atomic, in the same
// slots and order, last the word 0 of r1's last BD.
func rxPost[B bdLeg | bdEnh](r1, r2 []B, b1, b2 []*pool.Packet, headroom, last uint32) {
	b1, b2 = b1[:len(r1)], b2[:len(r2)]
	for i, pk := range b1 {
		rxSetBD(&r1[i], uint32(pk.BufIOVA())+headroom) // the MAC writes after the pool's headroom
	}
	for i, pk := range b2 {
		rxSetBD(&r2[i], uint32(pk.BufIOVA())+headroom)
	}
	dma.WriteBarrier() // addresses before the E bits that hand them to the MAC
	for i := range r1[:len(r1)-1] {
		atomic.StoreUint32(bdWord0(&r1[i]), w0(rxbd_E, 0))
	}
	atomic.StoreUint32(bdWord0(&r1[len(r1)-1]), last)
	for i := range r2 {
		atomic.StoreUint32(bdWord0(&r2[i]), w0(rxbd_E, 0)) // never the ring's last BD: got <= size
	}
}

// drain takes every posted buffer back after the MAC was disabled, and
// counts each frame the MAC had written into them that no RxBurst took:
// nothing the device received is lost uncounted. A posted BD with E clear
// was written by the MAC (refill set E on every one); a frame's BDs are
// consecutive and its last has L. A frame with an error bit on a BD counts
// under the cause RxBurst gives it (rxCause), any other as
// driver.CauseStopped; written BDs that end without L (cut off, or
// followed by a BD still E) count as one frame. Lengths are not checked:
// the frame is dropped either way, and a bad one is counted as stopped.
func (q *rxQueue) drain() {
	open, cause := false, driver.CauseStopped // inside a frame: written BDs seen, no L yet
	for q.posted > 0 {
		st, _ := sc(q.ring.status(q.ntc))
		if st&rxbd_E == 0 {
			dma.ReadBarrier() // the status word before the esc word it guards
			var esc uint32
			if q.enhanced {
				esc = q.ring.word(q.ntc, wESC)
			}
			if c, bad := q.rxCause(st, esc); bad && cause == driver.CauseStopped {
				cause = c // the first error names the frame's cause, as in gather
			}
			open = true
			if st&rxbd_L != 0 {
				q.stats.Drop(cause, 1)
				open, cause = false, driver.CauseStopped
			}
		} else if open {
			q.stats.Drop(cause, 1) // a frame without its last BD
			open, cause = false, driver.CauseStopped
		}
		q.pool.Recycle(q.take()) // the disabled MAC no longer owns it: back to the cache
	}
	if open {
		q.stats.Drop(cause, 1) // a frame without its last BD
	}
	q.ntc, q.ntu = 0, 0 // ETHEREN=0 rewound the MAC to RDSR: so do we
}

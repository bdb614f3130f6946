package fec

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/pool"
)

// txQueue is one transmit ring. One goroutine owns it.
//
// Slots ntc..ntu-1 (cyclically, inFlight of them) hold BDs handed to the
// MAC and not yet reclaimed; the packet of a frame is parked at the slot of
// its last BD and freed when the MAC has cleared R there.
type txQueue struct {
	port      *Port
	idx       int
	ring      bdRing
	bufs      []*pool.Packet // frame parked at its last BD's slot
	pend      []uint32       // word 0 of each BD of the burst being built
	syncR     *dma.Region    // the region of the spans below
	spans     []dma.Span     // the burst's frame bytes, cleaned in one call before the R bits
	ntu       int            // next to use: the next slot to fill
	ntc       int            // next to clean: the oldest slot not yet reclaimed
	inFlight  int            // BDs owned by the MAC or not yet reclaimed
	frames    int            // frames among them
	reclaimAt int            // reclaim when fewer free slots than this
	tdar      uint32
	regs      driver.Regs
	enhanced  bool
	esc       uint32 // esc word for every BD: FTYPE = ring id on AVB rings
	txAlign   uint64
	err007885 bool
	stats     driver.Counters
	doorbells atomic.Uint64
	rekicks   atomic.Uint64 // ERR006358 TDAR re-writes
	reach     uint32        // pool.ReachLow(the device's DMA domain): what a buffer must have
	owners    []txOwner
	lastPool  *pool.Pool // ownerIn's last look-up, and its answer
	lastOwner uint16
	gate      *gate.Gate
	// RecycleDirect: the pool whose owner goroutine is this queue's (nil
	// for none), and the burst flag of the RX queue it refills, read on
	// every reclaim as the proof that no other goroutine runs that RX
	// queue.
	direct   *pool.Pool
	directRx *gate.Flag

	burst gate.Flag // raised while inside a burst (the stop handshake)

	ts *txStamps // timestamps=tx: requests and stamps (timestamp.go); nil without

	// marks holds, from mHead to mTail (slots of the ring), one entry per
	// burst on the ring: the slot after its last BD and the bytes queued
	// from Start up to there. A burst's bytes count as sent once reclaim
	// passes its end (reclaimTo); queued and done are the bytes queued and
	// counted so far.
	marks        []txMark
	mHead, mTail int
	queued, done uint64
	errBytes     uint64 // bytes of errored frames not yet taken off a done burst's

	// A line of padding: whatever size class the allocator puts queues
	// in, the fields of two queues never share a cache line.
	_ [dma.CacheLine]byte
}

// txOwner is the leak-report id of this queue in one of the port's pools.
type txOwner struct {
	pool *pool.Pool
	id   uint16
}

func newTxQueue(p *Port, id int, ring bdRing) *txQueue {
	q := &txQueue{
		port: p, idx: id, ring: ring,
		bufs: make([]*pool.Packet, ring.size), pend: make([]uint32, ring.size), marks: make([]txMark, ring.size),
		spans: make([]dma.Span, 0, ring.size),
		tdar:  regTDARn[id], regs: p.regs,
		enhanced: p.enhanced, txAlign: p.prof.txAlign(), err007885: p.prof.has(qERR007885),
		reach: pool.ReachLow(dma.DomainID(p.dev.Mapper)), gate: &p.gate,
	}
	q.reclaimAt = max(ring.size/4, min(32, ring.size))
	if p.prof.has(qAVB) && id > 0 {
		q.esc = uint32(id) << txbd_FTYPE_SHIFT // AVB class = this ring
	}
	if p.stamps&driver.TimestampTx != 0 {
		q.ts = newTxStamps(ring.size)
	}
	for _, rq := range p.rx {
		q.owners = append(q.owners, txOwner{rq.pool, rq.pool.Holder(q.holder())})
	}
	return q
}

func (q *txQueue) init() {
	q.ntu, q.ntc, q.inFlight, q.frames = 0, 0, 0, 0
	q.mHead, q.mTail, q.queued, q.done, q.errBytes = 0, 0, 0, 0, 0
	for i := 0; i < q.ring.size; i++ {
		for k := 1; k < q.ring.stride; k++ {
			q.ring.set(i, k, 0)
		}
		q.ring.publish(i, w0(q.wrap(i), 0))
	}
}

func (q *txQueue) wrap(i int) uint32 {
	if i == q.ring.size-1 {
		return txbd_W // the MAC continues at TDSR after this BD
	}
	return 0
}

// next is the slot after i; the ring need not be a power of two.
func (q *txQueue) next(i int) int {
	if i++; i == q.ring.size {
		return 0
	}
	return i
}

// Stats are the queue's counters.
func (q *txQueue) Stats() driver.QueueStats { return q.stats.Snapshot() }

// Pending is the number of frames queued and not yet reclaimed.
func (q *txQueue) Pending() int { return q.frames }

// Reclaim frees the buffers of sent frames now and reports how many; 0 on
// a stopped or closed port (Stop reclaimed everything).
func (q *txQueue) Reclaim() int {
	g, shared := q.burst.Enter(q.gate)
	if shared {
		q.port.concurrentUse("tx", q.idx, "Reclaim") // another goroutine is inside: touch nothing
	}
	if g&gate.Closed != 0 {
		q.burst.Leave()
		return 0
	}
	n := q.reclaimOwn()
	q.burst.Leave()
	return n
}

// TxBurst queues as many frames as fit and returns how many it took, in
// four steps:
//
//  1. check the gate (internal/gate): a stopped or closed port takes
//     nothing and returns 0; while the PHY reports the link down every frame is taken,
//     freed and counted as link_down;
//  2. clean up: reclaim sent frames when free BDs run low;
//  3. write one BD per one-segment frame (the fast path, singles), one BD
//     per segment of any other frame (chainLen, putChain; L on the last),
//     R withheld; frames it cannot ever send (too many segments, too
//     long, too short, a buffer the device cannot reach) are taken,
//     counted and freed (refuse);
//  4. publish: the frames' bytes cleaned, R bits last-BD-first, one
//     barrier, one TDAR write.
func (q *txQueue) TxBurst(pkts []*pool.Packet) int {
	g, shared := q.burst.Enter(q.gate)
	if shared {
		q.port.concurrentUse("tx", q.idx, "TxBurst") // another goroutine is inside: touch nothing
	}
	if g != 0 {
		q.burst.Leave()
		if g&gate.Closed != 0 {
			return 0
		}
		q.stats.Drop(driver.CauseLinkDown, uint64(len(pkts)))
		pool.FreeBulk(pkts) // link down: the frames are ours, and dropped
		return len(pkts)
	}
	if q.ring.size-q.inFlight < q.reclaimAt {
		q.reclaimOwn()
	}
	start, nbd, n := q.ntu, 0, 0
	for n < len(pkts) {
		// Fast path: one-BD frames, in a loop that calls nothing.
		k := q.singles(pkts[n:], q.ring.size-q.inFlight)
		n += k
		nbd += k
		q.inFlight += k // owned by the MAC until reclaim sees R clear
		q.frames += k
		if n == len(pkts) {
			break
		}
		// Anything else, or the first frame of a pool or region: one
		// frame, one BD per segment.
		pk := pkts[n]
		segs, ok := q.chainLen(pk)
		if !ok {
			q.refuse(pk)
			n++
			continue
		}
		if segs > q.ring.size-q.inFlight {
			break // ring full: the caller keeps pkts[n:]
		}
		q.putChain(pk)
		n++
		nbd += segs
		q.inFlight += segs
		q.frames++
	}
	q.flushSync() // every frame byte cleaned before an R bit hands a BD over
	if nbd > 0 {
		q.queued += q.publish(start, nbd)
		// One mark per burst on the ring, and a burst holds a BD at
		// least: the marks never outnumber the slots.
		q.marks[q.mTail] = txMark{end: q.ntu, bytes: q.queued}
		if q.mTail++; q.mTail == len(q.marks) {
			q.mTail = 0
		}
	}
	q.burst.Leave()
	return n
}

// chainLen counts a frame's segments; ok is false when the MAC cannot
// send it: more than maxTxSegs segments, shorter than a header or longer
// than the longest frame, or a buffer out of the device's reach (another
// DMA domain, or above 4 GiB: a BD holds a 32-bit address; the pool
// checked whole buffers, as fixAlign may move the data inside one).
func (q *txQueue) chainLen(pk *pool.Packet) (segs int, ok bool) {
	total := 0
	miss := uint32(0) // non-zero when a segment's buffer is out of reach
	for s := pk; s != nil; s = s.Next() {
		segs++
		total += s.Len()
		miss |= s.Reach() ^ q.reach
	}
	return segs, segs <= maxTxSegs && total >= ethHdr && total <= q.port.maxFL-fcsLen && miss == 0
}

// refuse frees a frame chainLen refused and counts it: as
// CauseUnreachable when a segment's buffer is out of the device's reach,
// CauseFrame when it is shorter than a header, else CauseTooBig.
func (q *txQueue) refuse(pk *pool.Packet) {
	total := 0
	miss := uint32(0)
	for s := pk; s != nil; s = s.Next() {
		total += s.Len()
		miss |= s.Reach() ^ q.reach
	}
	cause := driver.CauseTooBig
	switch {
	case miss != 0:
		cause = driver.CauseUnreachable
	case total < ethHdr:
		cause = driver.CauseFrame
	}
	q.stats.Drop(cause, 1)
	pk.Free()
}

// putChain writes one BD per segment of pk from slot ntu (R withheld: the
// words 0 wait in pend for publish), L on the last, parks the frame at the
// last BD's slot, queues each segment's dirty bytes for the burst's clean
// and advances ntu past the frame. The caller checked the frame
// (chainLen) and that its segments fit.
func (q *txQueue) putChain(pk *pool.Packet) {
	t := q.ntu
	for s := pk; s != nil; s = s.Next() {
		if s.IOVA()&q.txAlign != 0 {
			q.fixAlign(s)
		}
		// Non-coherent DMA: the bytes the CPU may have written (the
		// frame, and any headroom it grew into) are cleaned out of the
		// CPU cache before publish, with the burst's other frames: the
		// span the free after the transmission would clean again but for
		// MarkClean below.
		r := s.Pool().Region()
		if r != q.syncR || len(q.spans) == cap(q.spans) {
			q.flushSync() // another region's spans go first
			q.syncR = r
		}
		lo, dirty := s.DirtySpan()
		q.spans = append(q.spans, dma.Span{Off: bufOffset(r, s) + lo, Len: dirty}) // within cap: flushed above
		q.ring.set(t, wAddr, uint32(s.IOVA()))
		if q.enhanced {
			q.ring.set(t, wESC, q.esc)
			q.ring.set(t, wBDU, 0)
		}
		st := uint32(txbd_R | txbd_TC)
		q.bufs[t] = nil // reclaim frees the frame at its last BD only
		if s.Next() == nil {
			st |= txbd_L
			q.bufs[t] = pk // the frame is the MAC's until R clears on its last BD
			pk.SetOwner(q.ownerIn(pk.Pool()))
		}
		q.pend[t] = w0(st|q.wrap(t), uint32(s.Len()))
		s.MarkClean() // the BD holds address and length; the free syncs nothing
		t = q.next(t) // a frame's BDs are consecutive
	}
	q.ntu = t // next free slot
}

// singles writes one BD per one-segment frame of pkts from slot ntu, at
// most free of them, and stops at the first packet that is anything else:
// chained, shorter than a header or longer than the longest frame, out of
// the device's reach, not at the TX start alignment, of another pool than
// the frame before (whose leak-report id it takes) or of another region
// than the burst's queued cleans, or with the clean queue full. It returns
// how many packets it took, and advances ntu. It does what chainLen and
// putChain do for such a frame, with no call.
func (q *txQueue) singles(pkts []*pool.Packet, free int) int {
	k := q.singlesRun(pkts, free)
	if q.ntu == 0 && k > 0 && k < min(len(pkts), free) {
		// The run ended at the ring's end: the rest from slot 0.
		k += q.singlesRun(pkts[k:], free-k)
	}
	return k
}

// singlesRun is singles up to the ring's end: the slots from ntu on are
// one run, indexed as pkts with no wrap (W set once, on the ring's last
// BD, if the run reaches it), and ntu becomes 0 when it does.
func (q *txQueue) singlesRun(pkts []*pool.Packet, free int) int {
	if len(pkts) > free {
		pkts = pkts[:free]
	}
	if room := q.ring.size - q.ntu; len(pkts) > room {
		pkts = pkts[:room]
	}
	// The burst's cleans go into the spans' free room, indexed as pkts.
	spans := q.spans[len(q.spans):cap(q.spans)]
	if len(pkts) > len(spans) {
		pkts = pkts[:len(spans)]
	}
	spans = spans[:len(pkts)]
	t, size := q.ntu, q.ring.size
	lastPool, syncR := q.lastPool, q.syncR
	if lastPool == nil || lastPool.Region() != syncR {
		return 0 // every frame here is of lastPool, whose buffers must be in syncR
	}
	c := txRun{
		pool: lastPool, owner: q.lastOwner, maxLen: uint(q.port.maxFL - fcsLen - ethHdr),
		align: q.txAlign, esc: q.esc,
	}
	// The run's slots and BDs, indexed as pkts, in the ring's one format.
	bufs := q.bufs[t : t+len(pkts)]
	var i int
	if enh := q.ring.enh; enh != nil {
		i = txSingles(enh[t:t+len(pkts)], pkts, bufs, c)
	} else {
		i = txSingles(q.ring.leg[t:t+len(pkts)], pkts, bufs, c)
	}
	// A second pass over the frames taken (fewer values live in each loop
	// than in one): their words 0 and clean spans.
	pend := q.pend[t : t+i]
	txPending(pkts[:i], pend, spans, regionBase(syncR), lastPool.Headroom(), w0(txbd_R|txbd_TC|txbd_L, 0))
	q.spans = q.spans[:len(q.spans)+i]
	if t += i; t == size {
		pend[i-1] |= txbd_W << 16 // the ring's last BD: the MAC continues at TDSR
		t = 0
	}
	q.ntu = t
	return i
}

// txRun is what the TX one-BD loop needs of its queue, copied once per run.
type txRun struct {
	pool   *pool.Pool // the pool of every frame taken: the last putChain took a frame of
	owner  uint16     // this queue's leak-report id in pool
	maxLen uint       // the longest frame less the shortest (a header)
	align  uint64     // the TX start alignment mask
	esc    uint32     // an enhanced BD's esc word
}

// txSingles is singlesRun's loop over BDs of one format B (pkts and bufs
// at least as long as bds): it writes a BD for each one-segment frame the
// device can send as it is, parks the frame at its slot under the queue's
// holder id, and returns how many it took. It calls nothing. The format
// is the type: txSetBD writes a legacy BD's address alone, with no test.
func txSingles[B bdLeg | bdEnh](bds []B, pkts, bufs []*pool.Packet, c txRun) int {
	pkts, bufs = pkts[:len(bds)], bufs[:len(bds)]
	// In locals: the stores through pk could alias c as far as the
	// compiler knows.
	pl, owner, maxLen, align, esc := c.pool, c.owner, c.maxLen, c.align, c.esc
	for i := range bds {
		pk := pkts[i]
		// A buffer of pl is in the device's reach: Reach is its pool's,
		// the same for every buffer, and putChain names a pool lastPool
		// (txRun.pool) only for a frame whose Reach chainLen checked.
		if pk.Next() != nil || uint(pk.Len()-ethHdr) > maxLen || pk.IOVA()&align != 0 || pk.Pool() != pl {
			return i
		}
		// Plain stores: the BD is the driver's until publish's ownership
		// store (see bdRing).
		txSetBD(&bds[i], uint32(pk.IOVA()), esc)
		bufs[i] = pk // the frame is the MAC's until R clears on its (only) BD
		pk.SetOwner(owner)
	}
	return len(bds)
}

// txPending is singlesRun's second pass over the frames txSingles took
// (pend and spans at least as long as pkts): each frame's word 0 for
// publish and, for non-coherent DMA, its dirty span (offsets from base,
// the first byte of its pool's region), cleaned before publish with the
// burst's other frames; the free after the transmission then syncs
// nothing (MarkClean). Every frame is of one pool, whose
// headroom is headroom. st is word 0 with no length: a parameter, held in
// a register, where the constant would be built anew for every frame.
func txPending(pkts []*pool.Packet, pend []uint32, spans []dma.Span, base uintptr, headroom int, st uint32) {
	pend, spans = pend[:len(pkts)], spans[:len(pkts)]
	// Last frame first (each is independent of the others): the loop's
	// test is the index's sign, one instruction on arm64 (TBZ), where a
	// compare with the length is two.
	for i := len(pkts) - 1; i >= 0; i-- {
		pk := pkts[i]
		// In locals, loaded once: the stores below could alias pk as far
		// as the compiler knows.
		off, n := pk.Headroom(), pk.Len()
		pend[i] = st | uint32(n)&0xFFFF // w0(txbd_R|txbd_TC|txbd_L, n)
		// pk.DirtySpan, with the pool's headroom held in a register.
		lo := min(off, headroom)
		spans[i] = dma.Span{Off: bufFrom(base, pk) + lo, Len: off + n - lo}
		pk.MarkClean()
	}
}

// flushSync cleans the queued spans: one call per run of segments from one
// region (one pool's; the common case is one per burst).
func (q *txQueue) flushSync() {
	if len(q.spans) > 0 {
		q.syncR.SyncSpansForDevice(q.spans)
		q.spans = q.spans[:0]
	}
}

// txMark is the end of a burst on the ring: the slot after its last BD,
// and the bytes queued from Start up to there.
type txMark struct {
	end   int
	bytes uint64
}

// publish hands nbd BDs from start to the MAC and rings TDAR once. It
// returns the BDs' lengths summed: the bytes of the frames they hold.
func (q *txQueue) publish(start, nbd int) uint64 {
	dma.WriteBarrier() // addresses and esc before the R bits that hand them over
	// Last BD first: the MAC, which may still be running, stops at the
	// first BD without R, so it never sees part of a frame or burst.
	// The burst is at most two runs: from start up to the ring's end, and
	// the rest from slot 0; the second run's BDs come after the first's.
	n1 := min(nbd, q.ring.size-start)
	p1, p2 := q.pend[start:start+n1], q.pend[:nbd-n1]
	var bytes uint64
	if enh := q.ring.enh; enh != nil {
		bytes = publishRun(enh[:len(p2)], p2) + publishRun(enh[start:start+n1], p1)
	} else {
		bytes = publishRun(q.ring.leg[:len(p2)], p2) + publishRun(q.ring.leg[start:start+n1], p1)
	}
	dma.DoorbellBarrier() // every R bit visible before the doorbell
	q.kick()
	return bytes
}

// publishRun stores the words 0 pend (at least as long as bds) into the
// BDs of one format B, last BD first, and returns their lengths summed.
func publishRun[B bdLeg | bdEnh](bds []B, pend []uint32) uint64 {
	pend = pend[:len(bds)]
	var bytes uint64
	for i := len(bds) - 1; i >= 0; i-- {
		w := pend[i]
		_, length := sc(w)
		bytes += uint64(length)
		atomic.StoreUint32(bdWord0(&bds[i]), w)
	}
	return bytes
}

// kick writes TDAR. On ERR007885 parts a write racing the uDMA's clear can
// hang it: read TDAR up to four times and write only after a read of 0; if
// every read says active, the running DMA will see the new BDs anyway.
func (q *txQueue) kick() {
	if q.err007885 {
		idle := false
		for i := 0; i < 4 && !idle; i++ {
			idle = q.regs.Read32(q.tdar)&dar_ACTIVE == 0
		}
		if !idle {
			return
		}
	}
	q.regs.Write32(q.tdar, dar_ACTIVE)
	q.doorbells.Add(1)
}

// fixAlign moves a segment's data to the TX start alignment the part needs
// (16 bytes on single-queue parts), inside its own buffer.
func (q *txQueue) fixAlign(s *pool.Packet) {
	mis := int(s.IOVA() & q.txAlign)
	if mis == 0 {
		return
	}
	off, n := s.Offset(), s.Len()
	to := off - mis
	if to < 0 {
		to = off + int(q.txAlign) + 1 - mis
	}
	b := s.Buf()
	if to+n > len(b) {
		return // no room to move: send as is
	}
	copy(b[to:to+n], b[off:off+n])
	s.SetData(to, n)
}

// holder names this queue in a pool's leak report. The pools of this
// port take it as theirs; another port's pool names this port beside it.
func (q *txQueue) holder() pool.Holder {
	return pool.Holder{Port: q.port.ownerID, Role: "tx ring " + strconv.Itoa(q.idx)}
}

// ownerIn is this queue's leak-report id in pl.
func (q *txQueue) ownerIn(pl *pool.Pool) uint16 {
	if pl == q.lastPool {
		return q.lastOwner // the pool of the frame before: the common case
	}
	q.lastPool, q.lastOwner = pl, q.ownerScan(pl)
	return q.lastOwner
}

// ownerScan is ownerIn's look-up. A pool met for the first time (one of
// another port, whose frames this queue forwards) registers this queue as
// a holder there, once: its leak report then names this port's ring, not
// the pool.
func (q *txQueue) ownerScan(pl *pool.Pool) uint16 {
	for i := range q.owners {
		if q.owners[i].pool == pl {
			return q.owners[i].id
		}
	}
	if pl == nil {
		return 0
	}
	id := pl.Holder(q.holder())
	q.owners = append(q.owners, txOwner{pl, id})
	return id
}

// RecycleDirect implements driver.DirectRecycler: rx must be an RX queue
// of a FEC port, or nil.
func (q *txQueue) RecycleDirect(rx driver.RxQueue) error {
	if q.port.shut.Load() {
		return q.port.errClosed()
	}
	if rx == nil {
		q.direct, q.directRx = nil, nil
		return nil
	}
	r, ok := rx.(*rxQueue)
	if !ok {
		return fmt.Errorf("TX ring %d: RecycleDirect takes an RX queue of a FEC port, not %T; without it reclaim frees through the pools' shared rings", q.idx, rx)
	}
	q.direct, q.directRx = r.pool, &r.burst
	return nil
}

// reclaimOwn is reclaim inside a burst (TxBurst, Reclaim): buffers of the
// RecycleDirect pool go straight into its cache, after a check that no
// other goroutine is inside the paired RX queue.
func (q *txQueue) reclaimOwn() int {
	own := q.direct
	if own != nil && q.directRx.Active() {
		// Another goroutine is inside the RX queue whose pool we were told
		// we own: the declaration is false; free nothing.
		q.burst.Leave()
		q.port.concurrentUse("tx", q.idx, "Reclaim (RecycleDirect: the paired RX queue is in use by another goroutine)")
	}
	if q.ts != nil {
		q.harvestStamps() // before reclaimTo frees the slots to be written again
	}
	return q.reclaimTo(own)
}

// reclaim is reclaimTo with shared frees only: the control goroutine's.
func (q *txQueue) reclaim() int {
	if q.ts != nil {
		q.harvestStamps() // before reclaimTo frees the slots to be written again
	}
	return q.reclaimTo(nil)
}

// reclaimTo walks completed BDs from ntc, frees their frames in bulk (those
// of own, when not nil, straight into its cache: the caller is own's owner
// goroutine), and applies the ERR006358 workaround: BDs still pending while
// TDAR reads idle get another TDAR write.
func (q *txQueue) reclaimTo(own *pool.Pool) int {
	// The completed BDs from ntc: one status load each, and their esc
	// words. At most two runs: from ntc up to the ring's end, then from
	// slot 0.
	start, k := q.ntc, 0
	var done txDoneRun
	for i := start; k < q.inFlight; i = 0 {
		run := min(q.inFlight-k, q.ring.size-i)
		bufs, pend := q.bufs[i:i+run], q.pend[i:i+run]
		var n int
		if enh := q.ring.enh; enh != nil {
			n = txDone(enh[i:i+run], bufs, pend, &done)
		} else {
			n = txDone(q.ring.leg[i:i+run], bufs, pend, &done)
		}
		k += n // the MAC is done with these BDs
		if n < run {
			break
		}
	}
	// The frames are ours again: back to their pools in bulk, straight from
	// the slots (one run to the ring's end, one after the wrap). The slots
	// are not cleared: only in-flight ones are read, and TxBurst writes
	// every slot it fills (nil for a frame's BDs before its last). What
	// FreeSlots counts, the slots that hold a packet, are the frames done.
	var frames int
	if end := start + k; end > q.ring.size {
		frames = pool.FreeSlots(own, q.bufs[start:]) + pool.FreeSlots(own, q.bufs[:end-q.ring.size])
	} else {
		frames = pool.FreeSlots(own, q.bufs[start:end])
	}
	q.ntc = start + k
	if q.ntc >= q.ring.size {
		q.ntc -= q.ring.size
	}
	q.inFlight -= k
	q.frames -= frames
	// Sent: the frames done less those the MAC reported an error for
	// (counted as frame errors, not sent), and the bytes of every burst
	// now done whole less the errored frames'.
	bytes := q.done
	for h := q.mHead; h != q.mTail; {
		m := q.marks[h]
		d := m.end - start // BDs from start to the burst's end, wrapping
		if d <= 0 {
			d += q.ring.size
		}
		if d > k {
			break // the MAC is not done with this burst
		}
		bytes = m.bytes
		if h++; h == len(q.marks) {
			h = 0
		}
		q.mHead = h
	}
	if done.errs > 0 {
		q.stats.Drop(driver.CauseFrame, uint64(done.errs))
		if done.busErr {
			// A transmit DMA fault (FE) also set EIR.EBERR: counted here,
			// not again as a receive one (busErrorLocked).
			q.regs.Write32(regEIR, eir_EBERR)
		}
	}
	sent := bytes - q.done
	if done.errBytes|q.errBytes != 0 {
		// Errored frames' bytes come off the bursts' as those are done
		// (an errored frame may be done before its burst).
		e := q.errBytes + done.errBytes
		take := min(e, sent)
		sent, q.errBytes = sent-take, e-take
	}
	q.stats.Add(uint64(frames-done.errs), sent) // a burst ends with a frame: frames > 0 when bytes moved
	q.done = bytes
	if q.inFlight > 0 && q.regs.Read32(q.tdar)&dar_ACTIVE == 0 && q.gate.Load()&gate.LinkDown == 0 {
		// ERR006358: TDAR cleared although ready BDs remain. Not while the
		// link is down: the MAC, which does not sense the link, would send
		// them into nothing; they wait for the restart at link up.
		q.regs.Write32(q.tdar, dar_ACTIVE)
		q.rekicks.Add(1)
		q.doorbells.Add(1)
	}
	return frames
}

// txDoneRun is what reclaimTo's walks found: the frames among the BDs the
// MAC is done with that it reported an error for, and their bytes.
type txDoneRun struct {
	errBytes uint64
	errs     int
	busErr   bool // an error frame has FE: its data read faulted
}

// txDone is reclaimTo's walk over BDs of one format B (bufs and pend at
// least as long as bds): how many BDs from the first on the MAC is done
// with. It counts in d the frames among them (a frame's packet is parked
// at its last BD) whose last BD has an error in the esc word, with their
// bytes, from the words 0 TxBurst wrote (pend: the driver's own copy, not
// the device's write-back).
func txDone[B bdLeg | bdEnh](bds []B, bufs []*pool.Packet, pend []uint32, d *txDoneRun) int {
	n, esc := txDoneWalk(bds)
	if esc&txbd_ESC_ERR_MASK != 0 {
		pend = pend[:len(bds)]
		// Some BD has one: count the frames whose last BD has (the MAC
		// writes no BD it does not own, so the words are the ones loaded
		// above), and their bytes: a frame's BDs run up to its last. A
		// frame that began before this run has its bytes before it
		// counted as sent (rare: an error on a chained frame across the
		// ring's end).
		bufs = bufs[:n]
		var fb uint64
		for i := range bufs {
			fb += uint64(pend[i] & 0xFFFF)
			if bufs[i] == nil {
				continue
			}
			if e := txESC(&bds[i]); e&txbd_ESC_ERR_MASK != 0 {
				d.errs++
				d.errBytes += fb
				d.busErr = d.busErr || e&txbd_FE != 0
			}
			fb = 0
		}
	}
	return n
}

// txDoneWalk is txDone's walk: how many BDs from the first the MAC is done
// with (R clear), and their esc words ORed (an error is rare). On ARM it
// reads in two passes with one read barrier between them, as rxSingles
// does: the words 0 up to the first BD with R, then (enhanced BDs only)
// the esc words of those before it. On amd64, whose loads stay in order
// (dma.LoadsInOrder), one pass reads each BD's esc word after its word 0.
// A function of its own, so that on ARM only the walk's own few values are
// saved across the barrier's call (not inlined, on amd64 either: there the
// caller's values would crowd the loop instead).
//
//go:noinline
func txDoneWalk[B bdLeg | bdEnh](bds []B) (n int, esc uint32) {
	const r = txbd_R << 16 // the status half of word 0
	if !dma.LoadsInOrder {
		// A range loop each: no bounds check inside.
		n = len(bds)
		for i := range bds {
			if atomic.LoadUint32(bdWord0(&bds[i]))&r != 0 {
				n = i // the MAC still owns it
				break
			}
		}
		done := bds[:n]
		if len(done) == 0 || unsafe.Sizeof(done[0]) != bdEnhancedSize {
			return n, 0 // a legacy BD has no esc word
		}
		dma.ReadBarrier() // every status load above before the esc words below
		// Last BD first, as the order of an OR does not matter: the
		// loop's test is the index's sign, one TBZ.
		for i := len(done) - 1; i >= 0; i-- {
			esc |= txESC(&done[i])
		}
		return n, esc
	}
	for ; n < len(bds); n++ {
		bd := &bds[n]
		if atomic.LoadUint32(bdWord0(bd))&r != 0 {
			break // the MAC still owns it
		}
		esc |= txESC(bd) // after the atomic load of word 0: in order on amd64
	}
	return n, esc
}

// stallCheck is the ERR006358 stall detector, run by the port's watcher
// goroutine: reclaim re-kicks TDAR only when the queue's owner polls, and
// after the last burst of a quiet spell nobody may. If any BD still has R
// while TDAR reads idle, the MAC lost a doorbell: write TDAR again. It
// reads only descriptor status words (device memory, loaded atomically)
// and the atomic counters, never the owner's indices.
func (q *txQueue) stallCheck() {
	for i := 0; i < q.ring.size; i++ {
		if st, _ := sc(q.ring.status(i)); st&txbd_R != 0 {
			if q.regs.Read32(q.tdar)&dar_ACTIVE == 0 {
				q.regs.Write32(q.tdar, dar_ACTIVE)
				q.rekicks.Add(1)
				q.doorbells.Add(1)
			}
			return
		}
	}
}

// drain frees every frame left on the ring after the MAC was disabled,
// counting each as stopped: TxBurst took it, the MAC never sent it.
func (q *txQueue) drain() {
	for q.inFlight > 0 {
		if pk := q.bufs[q.ntc]; pk != nil {
			q.bufs[q.ntc] = nil
			pk.Free() // the disabled MAC will not send it: back to its pool
			q.stats.Drop(driver.CauseStopped, 1)
		}
		q.ntc = q.next(q.ntc)
		q.inFlight--
	}
	q.frames = 0
	if q.ts != nil {
		q.harvestStamps() // the frames the MAC finished before it stopped
		q.dropStamps()    // the rest were not sent
	}
	q.mHead, q.done, q.errBytes = q.mTail, q.queued, 0 // none of their bytes was sent
	q.ntu, q.ntc = 0, 0                                // ETHEREN=0 rewound the MAC to TDSR: so do we
}

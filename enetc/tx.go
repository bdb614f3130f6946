package enetc

import (
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/pool"
)

// txQueue is one TX BD ring. Everything but burst, ctr and the atomic
// counters belongs to the queue's goroutine (and to the control goroutine
// while the port is stopped).
type txQueue struct {
	// Hot, owner-only state.
	bds       []txBD
	bufs      []*pool.Packet // frame head at the slot of its last BD; nil elsewhere
	mask      uint32
	ntu       uint32 // next BD to fill; the last value written to TBPIR
	ntc       uint32 // next BD to reclaim; follows TBCIR
	maxLen    uint32 // longest frame accepted, FCS excluded
	reclaimAt uint32 // reclaim when fewer free slots than this
	pending   int    // frames queued and not yet reclaimed
	gate      *gate.Gate
	regs      driver.Regs
	tbpir     uint32
	tbcir     uint32
	reach     uint32 // pool.ReachLow(the device's DMA domain): a buffer from another is refused

	// marks holds, from mHead to mTail (ring indices), one entry per burst
	// on the ring: where it ends and the bytes queued from Start up to
	// there. A burst's bytes count as sent once the device consumed it
	// whole (sentUpTo); queued and done are the bytes queued and counted
	// sent from Start on.
	marks        []txMark
	mHead, mTail uint32
	queued, done uint64
	// RecycleDirect: the pool whose owner goroutine is this queue's (nil
	// for none), and the burst flag of the RX queue it refills, read on
	// every reclaim as the proof that no other goroutine runs that RX
	// queue.
	direct   *pool.Pool
	directRx *gate.Flag

	ctr driver.Counters

	burst gate.Flag // raised while inside a burst (the stop and ERR050089 handshake)

	doorbells atomic.Uint64 // TBPIR writes
	badCI     atomic.Uint64 // TBCIR values refused by the bounds check
	// Bursts that waited for an MDIO transaction (ERR050089), the time
	// they waited in all and the longest wait, in ns; and the bursts that
	// gave up after mdioGateWaitMax.
	mdioWaits, mdioWaitNs, mdioWaitMaxNs, mdioWaitTimeouts atomic.Uint64

	ts *txStamps // timestamps=tx: requests and stamps (timestamp.go); nil without

	// Set-up state.
	port *Port
	idx  int
	iova uint64

	// A line of padding: whatever size class the allocator puts queues
	// in, the fields of two queues never share a cache line.
	_ [dma.CacheLine]byte
}

func newTxQueue(p *Port, i int, mem []byte, iova uint64) *txQueue {
	n := len(mem) / bdSize
	q := &txQueue{
		bds: txRing(mem), bufs: make([]*pool.Packet, n), marks: make([]txMark, n), mask: uint32(n - 1),
		maxLen: uint32(p.maxFrame() - fcsLen), reclaimAt: uint32(n / 2),
		gate: &p.gate, regs: p.regs, tbpir: txRingReg(i, regTBPIR), tbcir: txRingReg(i, regTBCIR),
		reach: pool.ReachLow(dma.DomainID(p.dev.Mapper)), port: p, idx: i, iova: iova,
	}
	if p.stamps&driver.TimestampTx != 0 {
		q.ts = newTxStamps(n)
	}
	return q
}

// setup programs the ring registers (§4.2), leaving the ring disabled, and
// adopts the device's producer and consumer indices: ENETC v1 cannot reset
// them (§5.4). Control goroutine, port stopped.
func (q *txQueue) setup() error {
	r := q.regs
	r.Write32(txRingReg(q.idx, regTBMR), 0)
	r.Write32(txRingReg(q.idx, regTBBAR0), uint32(q.iova))
	r.Write32(txRingReg(q.idx, regTBBAR1), uint32(q.iova>>32))
	r.Write32(txRingReg(q.idx, regTBLENR), uint32(len(q.bds))&^7)
	pi := r.Read32(txRingReg(q.idx, regTBPIR)) & tbcir_IDX_MSK
	ci := r.Read32(txRingReg(q.idx, regTBCIR)) & tbcir_IDX_MSK
	if pi > q.mask || ci > q.mask {
		return fmt.Errorf("TX ring %d: TBPIR %d / TBCIR %d lie outside the %d-BD ring (left by an earlier user with another ring size): reset the function (reopen the device) or use that ring size", q.idx, pi, ci, len(q.bds))
	}
	if pi != ci {
		return fmt.Errorf("TX ring %d holds unsent BDs (TBPIR %d != TBCIR %d) from an earlier user; ENETC v1 cannot reset them (erratum): reset the function (reopen the device)", q.idx, pi, ci)
	}
	r.Write32(txRingReg(q.idx, regTBIER), 0) // poll mode: no interrupts
	for i := range q.bds {
		q.bds[i] = txBD{}
	}
	q.ntu, q.ntc = pi, ci
	q.mHead, q.mTail, q.queued, q.done = 0, 0, 0, 0
	return nil
}

// Stats implements driver.TxQueue.
func (q *txQueue) Stats() driver.QueueStats { return q.ctr.Snapshot() }

// Pending implements driver.TxQueue.
func (q *txQueue) Pending() int { return q.pending }

// Doorbells is the number of TBPIR writes so far (one per accepted burst).
func (q *txQueue) Doorbells() uint64 { return q.doorbells.Load() }

// TxBurst implements driver.TxQueue, in four steps:
//
//  1. check the gate: while the port is stopped it takes nothing and
//     returns 0; while an MDIO transaction runs, or a leak report reads
//     the rings (ClaimHeld), it waits for it to end (waitMDIO, bounded by
//     mdioGateWaitMax; past that it takes nothing and returns 0); while
//     the link is down nothing goes into the ring (frames queued then
//     would stay there, §5.4): every packet is taken, freed and counted
//     once as CauseLinkDown, as a NIC without carrier drops;
//  2. clean up: reclaim sent frames when free BDs run low;
//  3. write one BD per one-segment frame (the fast path), one BD per
//     segment of a chained frame (chainLen, putChain; F on the last);
//     packets the device cannot take (too long, too many segments, empty)
//     are taken, freed and counted as CauseTooBig;
//  4. publish: one barrier and ONE TBPIR write for the whole burst.
func (q *txQueue) TxBurst(pkts []*pool.Packet) int {
	if len(pkts) == 0 {
		return 0
	}
	g, shared := q.burst.Enter(q.gate) // announce the burst before reading the gate
	if shared {
		q.port.concurrentUse("tx", q.idx, "TxBurst") // another goroutine is inside: refuse, touch nothing
	}
	if g&(gate.MDIO|gate.Hold) != 0 {
		g = q.waitMDIO(g, "TxBurst") // an MDIO transaction is short: wait it out, do not refuse
	}
	if g != 0 {
		q.burst.Leave()
		if g&(gate.Closed|gate.Hold) != 0 {
			return 0
		}
		q.ctr.Drop(driver.CauseLinkDown, uint64(len(pkts)))
		pool.FreeBulk(pkts) // link down: the frames are ours, and dropped
		return len(pkts)
	}
	mask := q.mask
	free := mask - ((q.ntu - q.ntc) & mask) // one slot stays empty: PI == CI means empty
	if free < q.reclaimAt || free < uint32(len(pkts)) {
		q.reclaim()
		free = mask - ((q.ntu - q.ntc) & mask)
	}
	ntu := q.ntu
	var (
		n, frames int
		bytes     uint64
	)
	for n < len(pkts) && free > 0 {
		// Fast path: one-segment frames, one BD each, in a loop that calls
		// nothing.
		k, b := q.singles(pkts[n:], ntu, free)
		n += k
		frames += k
		free -= uint32(k)
		ntu = (ntu + uint32(k)) & mask // wraps by the power-of-two mask
		bytes += b
		if n == len(pkts) || free == 0 {
			break
		}
		if k > 0 && ntu == 0 {
			continue // singles stopped at the ring's end: the run after the wrap
		}
		pk := pkts[n]
		if pk.Next() == nil {
			// One segment the device cannot take: too long, empty, or in
			// another DMA domain.
			q.refuse(pk)
			n++
			continue
		}
		// A chained frame: one BD per segment.
		segs, total, ok := q.chainLen(pk)
		if !ok {
			q.refuse(pk)
			n++
			continue
		}
		if segs > free {
			break // the caller keeps it; room comes with the next reclaim
		}
		ntu = q.putChain(pk, ntu, total)
		free -= segs
		n++
		frames++
		bytes += uint64(total)
	}
	q.publish(ntu, bytes)
	q.pending += frames
	q.burst.Leave()
	return n
}

// singles writes one BD per one-segment frame of pkts from slot ntu, at
// most free of them and none past the ring's end (the caller comes back
// for the slots after the wrap), and stops at the first packet that is
// anything else: chained, empty, longer than the longest frame, or in
// another DMA domain. It returns the packets taken and their bytes. BDs, slots and packets are one run indexed alike: no bounds check
// and no ring arithmetic in the loop, which calls nothing.
func (q *txQueue) singles(pkts []*pool.Packet, ntu, free uint32) (int, uint64) {
	if int(ntu) >= len(q.bds) {
		return 0, 0 // never: ntu stays below the ring size (the mask)
	}
	bds := q.bds[ntu:]
	if len(pkts) < len(bds) {
		bds = bds[:len(pkts)]
	}
	if int(free) < len(bds) {
		bds = bds[:free]
	}
	bufs := q.bufs[ntu:]
	bufs = bufs[:len(bds)] // as long as the run: no bounds check in the loop
	pkts = pkts[:len(bds)]
	// Locals: the BD stores could alias q for all the compiler knows. The
	// length, its bound and the byte count are full-width: on arm64 a
	// uint32 length would be widened again for the one BD word, a copy a
	// BD. The bytes fit 32 bits too: a run is shorter than the ring (at
	// most 32768 BDs), a frame at most maxLen (below MaxFrame).
	maxLen, reach := uint(q.maxLen), q.reach
	var bytes uint
	// On amd64, whose addresses scale an index by 8 at most, the BDs are
	// walked by a byte offset that the BD size steps (an integer, never a
	// pointer past the run): no shift a BD. arm64 adds the shifted index
	// in the instruction.
	base, at := unsafe.Pointer(unsafe.SliceData(bds)), uintptr(0)
	for i, pk := range pkts {
		// ln 0 wraps to the top: one compare for 1..maxLen. A buffer
		// of the queue's domain below 4 GiB (Reach() == reach, the
		// usual one) passes on the first compare; Reach()|1 == reach
		// takes the rest of the domain (the BD holds 64 bits).
		if ln := uint(pk.Len()); pk.Next() != nil || ln-1 >= maxLen || pk.Reach() != reach && pk.Reach()|1 != reach {
			return i, uint64(bytes)
		}
		ln := uint(pk.Len()) // the same load: the condition's own ln spares its line a position marker
		bd := &bds[i]
		if runtime.GOARCH == "amd64" {
			bd = (*txBD)(unsafe.Add(base, at))
		}
		at += bdSize
		bd.addr = pk.IOVA()
		if runtime.GOARCH == "arm64" { // little-endian
			// bufLen, frmLen and lstatus, 8-byte aligned, in one store:
			// two ORs and a store where a constant and three stores
			// were. ln fits 16 bits: it is at most maxLen, below
			// MaxFrame. (On amd64 the three stores are fewer.)
			*(*uint64)(unsafe.Pointer(&bd.bufLen)) = uint64(ln) | uint64(ln)<<16 | txbdLstatusF<<32
		} else {
			bd.bufLen = uint16(ln)
			bd.frmLen = uint16(ln)
			bd.lstatus = txbdLstatusF
		}
		bufs[i] = pk // the ring owns the buffer until TBCIR passes this slot
		bytes += ln
	}
	return len(bds), uint64(bytes)
}

// chainLen counts a chained frame's segments and bytes; ok is false when
// the device cannot send it (an empty segment, more than txMaxBDs
// segments, a buffer in another DMA domain, longer than the longest
// frame).
func (q *txQueue) chainLen(pk *pool.Packet) (segs, total uint32, ok bool) {
	for s := pk; s != nil; s = s.Next() {
		segs++
		l := uint32(s.Len())
		if l == 0 || segs > txMaxBDs || s.Reach()|1 != q.reach {
			return segs, total, false
		}
		total += l
	}
	return segs, total, total <= q.maxLen
}

// putChain writes one BD per segment of pk from slot ntu, the frame's
// length in the first, F in the last, and parks the head at the last BD's
// slot. It returns the slot after the frame.
func (q *txQueue) putChain(pk *pool.Packet, ntu, total uint32) uint32 {
	first := true
	for s := pk; s != nil; s = s.Next() {
		bd := &q.bds[ntu]
		bd.addr = s.IOVA()
		bd.bufLen = uint16(s.Len())
		bd.frmLen = 0
		if first {
			bd.frmLen = uint16(total) // frame length in the first BD only
			first = false
		}
		bd.lstatus = 0
		q.bufs[ntu] = nil // reclaim skips the frame's other BDs
		if s.Next() == nil {
			bd.lstatus = txbdLstatusF
			q.bufs[ntu] = pk // the head, at the last BD: freed once the whole frame left
		}
		ntu = (ntu + 1) & q.mask // wraps by the power-of-two mask
	}
	return ntu
}

// publish hands the BDs written up to ntu, bytes of frames, to the device:
// one barrier, one TBPIR write, none when the burst wrote no BD. It marks
// where the burst ends (marks).
func (q *txQueue) publish(ntu uint32, bytes uint64) {
	if ntu == q.ntu {
		return
	}
	dma.DoorbellBarrier() // every BD store visible before TBPIR hands them over
	q.regs.Write32(q.tbpir, ntu)
	q.ntu = ntu
	q.doorbells.Add(1)
	q.queued += bytes
	// One mark per burst on the ring, and a burst holds a BD at least: the
	// marks never outnumber the ring's slots.
	q.marks[q.mTail&q.mask] = txMark{end: ntu, bytes: q.queued}
	q.mTail = (q.mTail + 1) & q.mask
}

// txMark is the end of a burst on the ring: the slot after its last BD, and
// the bytes queued from Start up to there.
type txMark struct {
	end   uint32
	bytes uint64
}

// refuse frees a frame the device cannot take and counts it: as
// CauseUnreachable when a segment's buffer lies in another DMA domain (the
// device would fault reading it), else as CauseTooBig.
func (q *txQueue) refuse(pk *pool.Packet) {
	cause := driver.CauseTooBig
	for s := pk; s != nil; s = s.Next() {
		if s.Reach()|1 != q.reach {
			cause = driver.CauseUnreachable
			break
		}
	}
	q.ctr.Drop(cause, 1)
	pk.Free()
}

// Reclaim implements driver.TxQueue.
func (q *txQueue) Reclaim() int {
	// TBCIR is a register: honour the MDIO gate; stopped: Stop reclaimed
	// everything; held: ClaimHeld reads the ring, briefly, so wait.
	g, shared := q.burst.Enter(q.gate)
	if shared {
		q.port.concurrentUse("tx", q.idx, "Reclaim")
	}
	if g&gate.Hold != 0 {
		g = q.waitMDIO(g, "Reclaim")
	}
	if g&(gate.Closed|gate.Hold) != 0 {
		q.burst.Leave()
		return 0
	}
	n := q.reclaim()
	q.burst.Leave()
	return n
}

// hwCI reads TBCIR's index.
func (q *txQueue) hwCI() uint32 { return q.regs.Read32(q.tbcir) & tbcir_IDX_MSK }

// reclaim frees every frame whose BDs the device consumed, as TBCIR says
// (§3.6), after checking that the index lies inside the ring and between
// our consumer and producer indices. Returns the frames freed.
func (q *txQueue) reclaim() int {
	ci := q.hwCI()
	inflight := (q.ntu - q.ntc) & q.mask // BDs queued and not yet reclaimed, wrapping
	if ci > q.mask || (ci-q.ntc)&q.mask > inflight {
		q.badCI.Add(1) // a bogus index: trust nothing, free nothing
		return 0
	}
	own := q.direct
	if own != nil && q.directRx.Active() {
		// Another goroutine is inside the RX queue whose pool we were told
		// we own: the declaration is false; free nothing.
		q.burst.Leave()
		q.port.concurrentUse("tx", q.idx, "Reclaim (RecycleDirect: the paired RX queue is in use by another goroutine)")
	}
	if q.ts != nil {
		q.harvestStamps(ci) // before sentUpTo frees the slots to be written again
	}
	return q.sentUpTo(ci, own)
}

// sentUpTo frees the frames in slots [ntc, end), which the device consumed
// and sent, as freeUpTo does, and counts them sent; and the bytes of every
// burst the device consumed whole (marks). end must lie in the ring.
func (q *txQueue) sentUpTo(end uint32, own *pool.Pool) int {
	mask, ntc := q.mask, q.ntc
	if end == ntc {
		return 0
	}
	bytes := q.done
	for h := q.mHead; h != q.mTail; h = (h + 1) & mask {
		m := q.marks[h&mask]
		if (m.end-ntc)&mask > (end-ntc)&mask { // BDs from ntc, wrapping
			break // the device has not consumed this burst whole
		}
		bytes, q.mHead = m.bytes, (h+1)&mask
	}
	n := q.freeUpTo(end, own)
	q.ctr.Add(uint64(n), bytes-q.done) // a burst ends with a frame: n > 0 when bytes moved
	q.done = bytes
	return n
}

// RecycleDirect implements driver.DirectRecycler: rx must be an RX queue
// of an ENETC port, or nil.
func (q *txQueue) RecycleDirect(rx driver.RxQueue) error {
	if q.port.shut.Load() {
		return q.port.errClosed()
	}
	if rx == nil {
		q.direct, q.directRx = nil, nil
		return nil
	}
	r, ok := rx.(*rxQueue)
	if s, stamping := rx.(rxStampQueue); stamping {
		r, ok = s.rxQueue, true // a timestamps=rx port's queue (rxstamp.go)
	}
	if !ok {
		return fmt.Errorf("TX ring %d: RecycleDirect takes an RX queue of an ENETC port, not %T; without it reclaim frees through the pools' shared rings", q.idx, rx)
	}
	q.direct, q.directRx = r.pool, &r.burst
	return nil
}

// freeUpTo returns the buffers of the frames in slots [ntc, end) to their
// pools, in bulk; those of own (nil for none: the caller must be own's
// owner goroutine) straight into its cache.
// The slots are freed in place, in one run up to the ring's end and a
// second after the wrap; the buffers may belong to any port's pool. end
// must lie in the ring. The slots are not cleared: only [ntc, ntu) is ever
// read, and TxBurst writes every slot it puts there (a buffer, or nil for a
// chained frame's other BDs).
func (q *txQueue) freeUpTo(end uint32, own *pool.Pool) int {
	total := 0
	ntc := q.ntc
	if end < ntc {
		total += pool.FreeSlots(own, q.bufs[ntc:])
		ntc = 0
	}
	total += pool.FreeSlots(own, q.bufs[ntc:end])
	q.ntc = end
	q.pending -= total
	return total
}

// drain, on a disabled ring, frees what the device consumed (counted
// sent) and then the frames it never sent, counting those as stopped:
// TxBurst took them, Stop found them still queued. It returns how many were
// lost. Control goroutine, port stopped.
func (q *txQueue) drain() int {
	ci := q.hwCI()
	inflight := (q.ntu - q.ntc) & q.mask // BDs queued and not yet reclaimed, wrapping
	if ci <= q.mask && (ci-q.ntc)&q.mask <= inflight {
		if q.ts != nil {
			q.harvestStamps(ci) // the frames the device sent before it stopped
		}
		q.sentUpTo(ci, nil) // the control goroutine owns no pool: shared frees
	}
	lost := q.freeUpTo(q.ntu, nil)
	q.ctr.Drop(driver.CauseStopped, uint64(lost))
	if q.ts != nil {
		q.dropStamps() // their frames were not sent
	}
	q.mHead, q.done = q.mTail, q.queued // none of their bytes was sent
	return lost
}

// txClaim is a port's pool.Claimer: its TX rings keep frames of any
// port's pools (forwarding) until they reclaim them, and name them as
// theirs when one of those pools reports a leak, which would name the
// holder the frame had before TxBurst took it otherwise (an RX queue's
// caller). A struct of one pointer, not the Port itself: ClaimHeld is no
// method of the port.
type txClaim struct{ p *Port }

// ClaimHeld implements pool.Claimer, on the goroutine closing pl. The rings'
// indices and slots belong to the queue goroutines and, while the port is
// stopped, to its control path. The chip's ERR050089 lock, taken for
// writing, keeps every control path of the chip off (Start, Stop, an MDIO
// register access) and makes this the only setter of the gate's Hold bit,
// which keeps the TX data path off while the rings are read: a TX burst
// or Reclaim waits it out as a TX burst does an MDIO register access, so
// no frame is refused; RX runs on. It touches no register, and runs only
// when a pool is about to report a leak, on a port whose device reaches
// the pool's memory.
func (c txClaim) ClaimHeld(pl *pool.Pool) {
	p := c.p
	if len(p.tx) == 0 || pl.Domain() != p.tx[0].reach>>1 {
		return // TX refuses a buffer of another DMA domain: none is on the rings
	}
	p.chip.rw.Lock()
	defer p.chip.rw.Unlock()
	if p.shut.Load() {
		return // closed: Stop took every frame off the rings
	}
	p.gate.Close(gate.Hold)
	gate.WaitIdle(p.bursts()[len(p.rx):], time.Time{}) // the TX queues' flags: bursts lists RX's first
	for _, q := range p.tx {
		q.claimHeld(pl)
	}
	p.gate.Open(gate.Hold)
}

// claimHeld gives every buffer of pl on the ring (every segment of the
// frames queued and not yet reclaimed: slots ntc to ntu, a frame's head at
// its last BD's) the ring as its holder.
func (q *txQueue) claimHeld(pl *pool.Pool) {
	var id uint16
	named := false
	for i := q.ntc; i != q.ntu; i = (i + 1) & q.mask {
		for s := q.bufs[i]; s != nil; s = s.Next() {
			if s.Pool() != pl {
				continue
			}
			if !named {
				id, named = pl.Holder(q.holder()), true
			}
			s.SetOwner(id)
		}
	}
}

// holder names the ring in a pool's leak report: a pool of this port
// takes it as its own, another port's names this port beside it.
func (q *txQueue) holder() pool.Holder {
	return pool.Holder{Port: q.port.name, Role: "tx ring " + strconv.Itoa(q.idx)}
}

package enetc

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/internal/rxirq"
	"github.com/gopmd/gopmd/pool"
)

// rxRefillBundle is the least number of free slots worth a refill: one
// RBCIR write then hands at least this many buffers over (§4.4).
const rxRefillBundle = 16

// rxStuckPolls is how many looks a not-ready BD followed by a ready one is
// waited for before it counts as skipped by the device.
const rxStuckPolls = 128

// ptrSize is the size of a pointer, a slot of the RX ring's buffer array.
const ptrSize = unsafe.Sizeof((*pool.Packet)(nil))

// rxPeekEvery: a poll that finds BD ntc not ready looks at the BD after it
// only once in this many polls. A poll of an idle ring then reads one
// status word, not two: the BDs ahead are the ones the device is about to
// write, and every read pulls their cache line away from it. A skipped BD
// is given up after rxStuckPolls looks, rxStuckPolls*rxPeekEvery polls.
const rxPeekEvery = 16

// rxQueue is one RX BD ring and its buffer pool. Everything but burst and
// ctr belongs to the queue's goroutine (and to the control goroutine while
// the port is stopped).
type rxQueue struct {
	// Hot, owner-only state.
	bds      []rxBD
	bufs     []*pool.Packet // buffer posted at each slot (the write-back overwrites addr)
	mask     uint32
	ntc      uint32 // next BD to clean (software consumer)
	ntu      uint32 // next BD to post; the last value written to RBCIR
	bufLen   uint32 // RBBSR: most bytes the device may write per BD
	maxLen   uint32 // longest frame accepted, FCS excluded
	headroom int
	gate     *gate.Gate
	regs     driver.Regs
	rbcir    uint32
	pool     *pool.Pool
	portID   uint16
	qid      uint16
	rss      bool
	ringOwn  uint16 // pool owner ids for leak reports
	appOwn   uint16
	maxSegs  uint32     // most BDs a valid frame can span
	oneMax   uint32     // longest one-BD frame: min(bufLen, maxLen, the buffer less its headroom)
	rxTag    pool.RxTag // appOwn, portID, qid and the write-back's format (rxFmtRSS with RSS, else rxFmtPlain)
	stGood   [2]uint32  // the status bits singles tests and their value on a good one-BD frame
	lost     lostLooks  // looks at BD ntc not ready (lostBD)
	idle     uint32     // polls that found BD ntc not ready (paces the looks ahead)
	shift    uint32     // BD i is bds[i<<shift]: 0, or 1 for 32-byte extended BDs (rxstamp.go); singles and RxBurst run only at 0

	ctr driver.Counters

	burst gate.Flag // raised while inside a burst (the stop and ERR050089 handshake)

	// Set-up state.
	port    *Port
	idx     int
	iova    uint64
	region  *dma.Region
	badBDs  atomic.Uint64 // write-backs refused by a check, for stats
	skipped atomic.Uint64 // BDs given up as never written back

	irq rxirq.Queue // interrupt handle and counts (irq.go)

	// A line of padding: whatever size class the allocator puts queues
	// in, the fields of two queues never share a cache line.
	_ [dma.CacheLine]byte
}

func newRxQueue(p *Port, i int, mem []byte, iova uint64, pl *pool.Pool, reg *dma.Region) *rxQueue {
	shift := p.rxBDShift()
	n := len(mem) / bdSize >> shift
	q := &rxQueue{
		bds: rxRing(mem), bufs: make([]*pool.Packet, n), mask: uint32(n - 1), shift: shift,
		bufLen: uint32(p.rxBufLen), maxLen: uint32(p.maxFrame() - fcsLen),
		headroom: pl.Headroom(), gate: &p.gate, regs: p.regs, rbcir: rxRingReg(i, regRBCIR),
		pool: pl, portID: p.cfg.PortID, qid: uint16(i), rss: p.cfg.RxQueues > 1,
		port: p, idx: i, iova: iova, region: reg,
		stGood: [2]uint32{rxbd_LSTATUS_R | rxbd_LSTATUS_F | rxbd_LSTATUS_ERR_MASK, rxbd_LSTATUS_R | rxbd_LSTATUS_F},
	}
	q.setMaxLen(uint32(p.maxFrame() - fcsLen))
	q.ringOwn = pl.Holder(pool.Holder{Role: "rx ring " + strconv.Itoa(i)})
	q.appOwn = pl.Holder(pool.Holder{Role: "rx queue " + strconv.Itoa(i) + " caller"})
	f := rxFmtPlain
	if q.rss {
		f = rxFmtRSS
	}
	q.rxTag = pool.MakeRxTag(q.appOwn, q.portID, q.qid, f)
	return q
}

// setMaxLen sets the longest frame accepted and the BDs it can span.
func (q *rxQueue) setMaxLen(n uint32) {
	q.maxLen = n
	// SetRxRaw's window, headroom plus length, always fits the buffer.
	q.oneMax = min(n, q.bufLen, uint32(max(0, min(q.pool.BufSize(), 0xFFFF)-q.headroom)))
	q.maxSegs = (n + q.bufLen - 1) / q.bufLen
	if q.maxSegs < 1 {
		q.maxSegs = 1
	}
}

// setup programs the ring registers and posts buffers (§4.3), leaving the
// ring disabled. Control goroutine, port stopped.
func (q *rxQueue) setup() {
	r := q.regs
	r.Write32(rxRingReg(q.idx, regRBMR), 0)
	r.Write32(rxRingReg(q.idx, regRBBAR0), uint32(q.iova))
	r.Write32(rxRingReg(q.idx, regRBBAR1), uint32(q.iova>>32))
	r.Write32(rxRingReg(q.idx, regRBLENR), uint32(len(q.bufs))&^7) // in BDs, of either size
	r.Write32(rxRingReg(q.idx, regRBBSR), q.bufLen)
	// PI = 0, CI = 1: until buffers are posted the device owns no BD and
	// drops instead of writing to stale addresses (§5.4).
	r.Write32(rxRingReg(q.idx, regRBPIR), 0)
	r.Write32(rxRingReg(q.idx, regRBCIR), 1)
	r.Write32(rxRingReg(q.idx, regRBIER), 0) // poll mode: no interrupts
	for i := range q.bds {
		q.bds[i] = rxBD{}
	}
	q.ntc, q.ntu = 0, 0
	if q.shift != 0 {
		q.refillExt() // 32-byte BDs (rxstamp.go)
	} else {
		q.refill()
	}
}

// Pool implements driver.RxQueue.
func (q *rxQueue) Pool() *pool.Pool { return q.pool }

// Stats implements driver.RxQueue.
func (q *rxQueue) Stats() driver.QueueStats { return q.ctr.Snapshot() }

// RxBurst implements driver.RxQueue. Its steps, as fec's:
//
//  1. check the gate (ERR050089, Stop): a closed gate returns 0; then
//     BD ntc's status: not written back, the poll returns 0 (peek);
//  2. take written-back BDs from ntc: a one-BD frame on the fast path, a
//     frame of several BDs through frameBDs and gather, a BD the device
//     skipped through lostBD;
//  3. refill the ring in bundles with one RBCIR write.
//
// Every device-written field is checked (ready bit on every BD of a frame,
// length within the buffer and the longest frame, frame within the posted
// BDs); bad frames are counted by cause and their buffers recycled.
func (q *rxQueue) RxBurst(pkts []*pool.Packet) int {
	g, shared := q.burst.Enter(q.gate) // announce the burst before reading the gate
	if shared {
		q.port.concurrentUse("rx", q.idx, "RxBurst") // another goroutine is inside: refuse, touch nothing
		return 0                                     // never: concurrentUse panics; returning keeps the spills of the arguments off the empty poll
	}
	if g&gate.Closed != 0 {
		q.burst.Leave()
		return 0
	}
	// An empty poll: BD ntc not written back. It reads that one status
	// word, counts the poll and leaves; every rxPeekEvery-th such poll
	// also looks ahead for a BD the device skipped and retries a refill
	// that came up short (peek). The next poll takes what follows a BD
	// given up. The look comes after Enter and the gate: a burst that
	// read the gate open raised its flag first, so Stop, which closes the
	// gate before it waits for the flags to come down, cannot drain the
	// ring (drain moves ntc) nor Close unmap it before Leave below. Only
	// the status is read, so no barrier (docs/design.md, "Ordering"): the
	// loop loads it again before any other field.
	// BD ntc is found by its offset, with no bounds check: ntc stays
	// below the ring size (the mask), and RxBurst runs only on 16-byte
	// BDs (shift 0).
	if (*rxBD)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(q.bds)), uintptr(q.ntc)*bdSize)).loadStatus()&rxbd_LSTATUS_R == 0 {
		q.idle++
		if q.idle%rxPeekEvery == 0 {
			q.peek() // leaves the burst itself: no spill of q for the other empty polls
			return 0
		}
		q.burst.Leave()
		return 0
	}
	ntc := q.ntc
	bds := q.bds
	var (
		n     int
		bytes uint64
	)
	mask := q.mask
	posted := (q.ntu - ntc) & mask // BDs the device may have written
	bufs := q.bufs[:len(bds)]      // as long as the ring: one bounds check serves both
	for n < len(pkts) && posted > 0 {
		// Fast path: good one-BD frames, in a loop that calls nothing.
		got, b := q.singles(pkts[n:], ntc, posted)
		n += got
		posted -= uint32(got)
		ntc = (ntc + uint32(got)) & mask // wraps by the power-of-two mask
		bytes += b
		if n == len(pkts) || posted == 0 {
			break
		}
		if got > 0 && ntc == 0 {
			continue // singles stopped at the ring's end: the run after the wrap
		}
		// BD ntc is anything else.
		if int(ntc) >= len(bds) {
			break // never: ntc stays below the ring size (the mask)
		}
		bd := &bds[ntc]
		st := bd.loadStatus()
		if st&(rxbd_LSTATUS_R|rxbd_LSTATUS_F|rxbd_LSTATUS_ERR_MASK) == rxbd_LSTATUS_R|rxbd_LSTATUS_F {
			// A good one-BD status, written back since singles looked, or
			// one that failed singles' checks: recycled and counted then.
			dma.ReadBarrier() // the status load before the other fields
			pk := bufs[ntc]
			ln := uint32(bd.bufLen)
			if ln-1 < q.oneMax && pk != nil && q.headroom+int(ln) <= pk.BufSize() {
				continue // it passes singles' checks: singles takes it
			}
			bufs[ntc] = nil // ownership moves from the ring to us
			q.badWriteBack(pk, ln)
			ntc = (ntc + 1) & mask // ring index wraps by the power-of-two mask
			posted--
			continue
		}
		if st&rxbd_LSTATUS_R == 0 {
			// Not written back yet. An idle ring reads one status word per
			// poll; only every rxPeekEvery-th poll looks past it for a BD
			// the device skipped.
			q.idle++
			if q.idle%rxPeekEvery != 0 || !q.lostBD(ntc, posted-1) {
				break
			}
			q.dropBDs(ntc, 1, driver.CauseBadDescriptor)
			ntc = (ntc + 1) & mask // wraps by the power-of-two mask
			posted--
			continue
		}
		if st&rxbd_LSTATUS_F != 0 {
			// A one-BD frame with an error: counted and recycled.
			dma.ReadBarrier() // the status load before the other fields
			pk := bufs[ntc]
			bufs[ntc] = nil // ownership moves from the ring to us
			q.ctr.Drop(errCause(st), 1)
			if pk != nil {
				q.pool.Recycle(pk)
			}
			ntc = (ntc + 1) & mask // ring index wraps by the power-of-two mask
			posted--
			continue
		}
		// A frame of several BDs.
		k, fst := q.frameBDs(ntc, posted, st)
		if k == 0 {
			break // the rest of the frame is still being written back
		}
		if fst&rxbd_LSTATUS_F == 0 {
			// No final BD where one must be: the device wrote nonsense.
			q.dropBDs(ntc, k, driver.CauseBadDescriptor)
		} else if pk := q.gather(ntc, k, fst); pk != nil {
			pkts[n] = pk
			n++
			bytes += uint64(pk.PktLen)
		}
		ntc = (ntc + k) & mask // past the frame's k BDs, wrapping
		posted -= k
	}
	if ntc != q.ntc {
		q.lost = lostLooks{} // progress: whatever looked stuck was not
	}
	q.ntc = ntc
	q.ctr.Add(uint64(n), bytes)
	if q.mask-((q.ntu-q.ntc)&q.mask) >= rxRefillBundle { // free slots: size - 1 - posted
		q.refill()
	}
	q.burst.Leave()
	return n
}

// singles takes good one-BD frames from BD ntc on into pkts, at most
// posted of them and none past the ring's end (the caller comes back for
// the BDs after the wrap), and stops at the first BD that is anything
// else: not written back, not final, with an error, or a length outside
// 1..oneMax. It returns the frames taken and their bytes. BDs, slots and
// packets are one run indexed alike, so the loops have no bounds check and
// no ring arithmetic.
//
// On ARM it reads the run in two passes with one read barrier between
// them: the status words first, up to the first BD that is not a good
// one-BD frame, then the other fields of the BDs found ready. A DMB orders
// every load before it before every load after it, so the one barrier
// does for the whole run what Linux's dma_rmb after each status load does
// for one BD (docs/design.md, "Ordering"), and the loops call nothing. On
// amd64, whose loads stay in order (dma.LoadsInOrder), one pass checks each
// status where it reads the BD.
func (q *rxQueue) singles(pkts []*pool.Packet, ntc, posted uint32) (int, uint64) {
	if int(ntc) >= len(q.bds) {
		return 0, 0 // never: ntc stays below the ring size (the mask)
	}
	bds := q.bds[ntc:]
	if len(pkts) < len(bds) {
		bds = bds[:len(pkts)]
	}
	if int(posted) < len(bds) {
		bds = bds[:posted]
	}
	mask, want := uint32(rxbd_LSTATUS_R|rxbd_LSTATUS_F|rxbd_LSTATUS_ERR_MASK), uint32(rxbd_LSTATUS_R|rxbd_LSTATUS_F)
	if !dma.LoadsInOrder {
		// Pass 1: the status words, up to the first that is not a good
		// one-BD frame's; then one barrier for the run. The two words
		// come from q (stGood), loaded once: as constants the compiler
		// would build them again in the loop, three instructions a BD.
		// The status words are addressed from the first one's: the index
		// shifted into the address is the one addition a BD (its offset
		// in the BD would be a second, the acquire load taking no offset).
		mask, want := q.stGood[0], q.stGood[1]
		st0 := unsafe.Pointer(&bds[0].lstatus)
		for i := range bds {
			if atomic.LoadUint32((*uint32)(unsafe.Add(st0, uintptr(i)*bdSize)))&mask != want { // loadStatus of BD i
				bds = bds[:i]
				break
			}
		}
		if len(bds) == 0 {
			return 0, 0
		}
		dma.ReadBarrier() // every status load above before the other fields below
	}
	// Pass 2: the other fields. Where loads stay in order (amd64) there
	// is no pass 1, and this loop checks each status itself.
	bufs := q.bufs[ntc:]
	bufs = bufs[:len(bds)] // as long as the run: no bounds check in the loop
	pkts = pkts[:len(bds)]
	// The bound, the offset and the tag in locals: the stores to the
	// packets below could alias q for all the compiler knows, and it would
	// load them again per packet. The length, the offset and the bound
	// are full-width, as the byte count they add to and SetRxRaw's window
	// are: on arm64 a narrower one costs a copy where it is widened. The
	// offset and the length are masked to 16 bits, which changes neither
	// where a frame is taken (a headroom above 0xFFFF makes oneMax 0),
	// so the compiler sees that SetRxRaw's sum cannot wrap and keeps one
	// compare of it.
	oneMax, off, tag := uint64(q.oneMax), uint(q.headroom)&0xFFFF, q.rxTag
	var bytes uint64
	// The loop walks the run with a BD pointer, stepped only when another
	// BD follows (never past the run): the 16-byte stride would otherwise
	// cost a shift and an address computation per BD.
	bd := &bds[0]
	bufs0, pkts0 := unsafe.Pointer(unsafe.SliceData(bufs)), unsafe.Pointer(unsafe.SliceData(pkts))
	for i := 0; ; {
		var st uint32
		if dma.LoadsInOrder {
			st = atomic.LoadUint32(&bd.lstatus) // no pass 1: this is the status load (loadStatus, written out: no position marker)
		}
		// The BD's two words, loaded after its status: on arm64 one
		// paired load. The length is masked out of the second word
		// rather than loaded as a uint16: widened from that load it
		// would cost a copy on arm64. ln 0 wraps to the top: one compare
		// for 1..oneMax.
		w0, hi := bd.addr, bdHi(bd)
		ln := hi & 0xFFFF
		if dma.LoadsInOrder && st&mask != want || ln-1 >= oneMax {
			return i, bytes
		}
		// SetRxRaw sets every field AllocBulkRaw left as it was; its
		// window fits (oneMax). A posted slot always holds a buffer:
		// refill posts only the BDs it has buffers for. The write-back
		// goes into the header undecoded (rxmeta.go), w1 from the BD's
		// second word (bdHi).
		//
		// The slot and the packet are indexed past the compiler's bounds
		// check, which it cannot prove: i stays below len(bds), and bufs
		// and pkts were cut to that length above.
		pk := *(**pool.Packet)(unsafe.Add(bufs0, uintptr(i)*ptrSize))
		pk.SetRxRaw(off, uint(ln), tag, w0, uint32(hi>>16))
		*(**pool.Packet)(unsafe.Add(pkts0, uintptr(i)*ptrSize)) = pk // ownership moves from the ring to us (the slot is rewritten before it is read again)
		bytes += ln
		if i++; i == len(bds) {
			return i, bytes
		}
		bd = (*rxBD)(unsafe.Add(unsafe.Pointer(bd), bdSize)) // the next BD of the run
	}
}

// peek is every rxPeekEvery-th poll that finds BD ntc not written back:
// it gives BD ntc up when the device skipped it (lostBD), dropping it and
// moving q.ntc past it, and otherwise retries a refill that came up short
// (RxBurst's loop, which refills, does not run on such a poll). Then it
// ends RxBurst's burst (Leave).
func (q *rxQueue) peek() {
	ntc := q.ntc
	posted := (q.ntu - ntc) & q.mask // BDs the device may have written
	if posted == 0 || !q.lostBD(ntc, posted-1) {
		if q.mask-posted >= rxRefillBundle { // free slots: size - 1 - posted
			q.refill()
		}
	} else {
		q.dropBDs(ntc, 1, driver.CauseBadDescriptor)
		q.ntc = (ntc + 1) & q.mask // wraps by the power-of-two mask
	}
	q.burst.Leave()
}

// lostBD is the stuck-BD recovery: BD j is not written back, and ahead
// BDs are posted after it. It reports whether the device skipped j (a lost
// status write), that is whether a later posted BD is ready while j has
// stayed not ready for rxStuckPolls looks from then on. Then the caller
// drops j rather than stall the ring forever. Each look until a ready BD
// is found reads one status word ahead, the next one each time (j+1, j+2,
// ..., round again), so any number of lost write-backs in a row is found:
// a BD is given up at most ahead + rxStuckPolls looks after it stalled
// the ring, and then the next, each by itself (every step of ntc starts
// the looks again).
func (q *rxQueue) lostBD(j, ahead uint32) bool {
	if ahead == 0 {
		return false
	}
	if q.lost.stuck == 0 {
		i := (j + 1 + q.lost.scan%ahead) & q.mask // a BD after j, wrapping
		q.lost.scan++
		if q.bds[i<<q.shift].loadStatus()&rxbd_LSTATUS_R == 0 {
			return false
		}
	}
	q.lost.stuck++ // a later BD is ready: j was skipped, or is being written
	if q.lost.stuck < rxStuckPolls {
		return false
	}
	q.lost = lostLooks{}
	q.skipped.Add(1)
	return true
}

// lostLooks is lostBD's state for the BD at ntc: looks spent finding a
// ready BD after it (scan) and, once one was found, looks since (stuck).
// RxBurst zeroes it, one store, when ntc moves.
type lostLooks struct{ stuck, scan uint32 }

// frameBDs finds the BDs of the frame that starts at ntc (BD ntc ready,
// not final, with status first) among the posted ones. It returns k = 0 while a BD of it is
// still being written back; else its k BDs and their status, errors of
// every BD ORed in, with F set only when the k-th BD is the frame's final
// one. Without F the k BDs are broken and must be dropped: a non-final BD
// shorter than RBBSR (§4.4: a lost F bit), a BD the device skipped
// (lostBD), every posted BD ready with none final, or more BDs than the
// longest frame needs. A non-final BD longer than RBBSR is corrupt but
// its missing F still says the frame goes on: gather drops the whole frame.
func (q *rxQueue) frameBDs(ntc, posted, first uint32) (k, st uint32) {
	mask := q.mask
	j := ntc
	dma.ReadBarrier() // the status load before the length
	st = first
	broken := uint32(q.bds[j<<q.shift].bufLen) < q.bufLen
	for k = 1; !broken && k < posted && k < q.maxSegs; {
		j = (j + 1) & mask // next BD of the frame, wrapping
		s := q.bds[j<<q.shift].loadStatus()
		if s&rxbd_LSTATUS_R == 0 {
			if q.lostBD(j, posted-k-1) { // j is the frame's BD k+1 of the posted
				return k + 1, st // the frame so far and the skipped BD
			}
			return 0, 0 // wait for the rest of the frame
		}
		k++
		st |= s & rxbd_LSTATUS_ERR_MASK // an error on any BD spoils the frame
		if s&rxbd_LSTATUS_F != 0 {
			return k, st | rxbd_LSTATUS_F
		}
		dma.ReadBarrier() // the status load before the length
		broken = uint32(q.bds[j<<q.shift].bufLen) < q.bufLen
	}
	return k, st
}

// gather checks a complete frame of k BDs from ntc (st: their ORed
// status) and chains its buffers as segments; a frame that fails a check
// is counted by cause, its buffers recycled, and gather returns nil.
func (q *rxQueue) gather(ntc, k, st uint32) *pool.Packet {
	mask := q.mask
	dma.ReadBarrier() // every status load before the other fields
	if st&rxbd_LSTATUS_ERR_MASK != 0 {
		q.ctr.Drop(errCause(st), 1)
		q.recycleBDs(ntc, k)
		return nil
	}
	total := uint32(0)
	ok := true
	s := ntc
	for i := uint32(0); i < k; i++ {
		ln := uint32(q.bds[s<<q.shift].bufLen)
		if ln == 0 || ln > q.bufLen || q.bufs[s] == nil {
			ok = false
		}
		total += ln
		s = (s + 1) & mask // next BD of the frame, wrapping
	}
	if !ok || total > q.maxLen {
		cause := driver.CauseBadDescriptor
		if ok {
			cause = driver.CauseOversize
		}
		q.dropBDs(ntc, k, cause)
		return nil
	}
	if q.headroom+int(q.bufLen) > q.pool.BufSize() || q.headroom > 0xFFFF {
		q.dropBDs(ntc, k, driver.CauseBadDescriptor) // never: RBBSR is the buffer less its headroom
		return nil
	}
	head := q.bufs[ntc]
	prev := (*pool.Packet)(nil)
	s = ntc
	for i := uint32(0); i < k; i++ {
		pk := q.bufs[s]
		q.bufs[s] = nil                                                    // ownership moves from the ring to the frame
		pk.SetSegment(q.headroom, int(q.bds[s<<q.shift].bufLen), q.appOwn) // fits: checked above
		if prev != nil {
			prev.SetNext(pk)
		}
		prev = pk
		s = (s + 1) & mask // next BD of the frame, wrapping
	}
	bd := &q.bds[ntc<<q.shift]
	w0, w1 := rxRaw(st, bd)
	head.SetRxRaw(uint(q.headroom), uint(bd.bufLen), q.rxTag, w0, w1) // fits: checked above
	head.PktLen, head.NSegs = int(total), int32(k)
	return head
}

// errCause maps the write-back error byte to a drop cause. The reference
// does not document the error bits (§10), so every error is a frame error.
func errCause(st uint32) driver.Cause { return driver.CauseFrame }

// badWriteBack counts and recycles a one-BD frame whose write-back failed a
// check.
func (q *rxQueue) badWriteBack(pk *pool.Packet, ln uint32) {
	cause := driver.CauseBadDescriptor
	if ln > q.maxLen && ln <= q.bufLen {
		cause = driver.CauseOversize
	}
	q.ctr.Drop(cause, 1)
	q.badBDs.Add(1)
	if pk != nil {
		q.pool.Recycle(pk)
	}
}

// dropBDs counts one frame lost for cause and recycles its k buffers.
func (q *rxQueue) dropBDs(from, k uint32, cause driver.Cause) {
	q.ctr.Drop(cause, 1)
	if cause == driver.CauseBadDescriptor {
		q.badBDs.Add(1)
	}
	q.recycleBDs(from, k)
}

// recycleBDs returns the buffers of k BDs from slot from to the pool.
func (q *rxQueue) recycleBDs(from, k uint32) {
	for i := uint32(0); i < k; i++ {
		s := (from + i) & q.mask // wraps by the power-of-two mask
		if pk := q.bufs[s]; pk != nil {
			q.bufs[s] = nil // ownership moves from the ring back to the pool
			q.pool.Recycle(pk)
		}
	}
}

// refill posts buffers into every free slot but one (so ntu never meets
// ntc) and hands them over with a single RBCIR write, on a ring of 16-byte
// BDs; refillExt (rxstamp.go) is the same for the 32-byte BDs of
// timestamps=rx. Both are refillRing, compiled once for each BD size.
func (q *rxQueue) refill() { refillRing(q, q.bds) }

// rxBDExt is a 32-byte extended RX BD (RBMR.BDS): the 16-byte BD and its
// extension, whose first word holds the receive timestamp (rxstamp.go).
type rxBDExt struct{ bd, ext rxBD }

// refillRing is refill on ring, the queue's BDs as B: the buffers come from
// the pool in bulk (AllocBulkRaw), straight into the ring's slots, one run
// up to the ring's end and a second after the wrap, and each BD is written
// in the buffer format (rxBD.post), an extended BD's extension zeroed so no
// stale stamp survives from the last write-back. B's size is a constant in
// each of the two compiled forms; on amd64 the loop walks the BDs by a byte
// offset that the stride steps (an integer, never a pointer past the run).
func refillRing[B rxBD | rxBDExt](q *rxQueue, ring []B) {
	mask := q.mask
	ntu := q.ntu
	free := mask - ((ntu - q.ntc) & mask) // slots - 1 - posted: one slot always stays empty
	if free == 0 {
		return
	}
	start := ntu
	headroom := uint64(q.headroom)
	for free > 0 {
		run := min(free, uint32(len(q.bufs))-ntu) // up to the ring's end; the rest after the wrap
		bufs := q.bufs[ntu : ntu+run]
		got := q.pool.AllocBulkRaw(bufs, q.ringOwn) // the ring owns them from here
		bufs = bufs[:got]
		if got > 0 {
			bds := ring[ntu:]
			bds = bds[:len(bufs)] // one BD per buffer, in the ring
			base := unsafe.Pointer(&bds[0])
			off := uintptr(0)
			for i, pk := range bufs {
				// amd64 addresses scale an index by 8 at most: a byte
				// offset, stepped by the stride, saves a shift a BD;
				// arm64 adds a shifted index in the instruction, and
				// pairs the BD's two stores on it.
				bd := (*rxBD)(unsafe.Pointer(&bds[i]))
				if runtime.GOARCH == "amd64" {
					bd = (*rxBD)(unsafe.Add(base, off))
				}
				bd.post(pk.BufIOVA() + headroom) // where RxBurst's SetRxRaw puts the data
				if unsafe.Sizeof(bds[0]) > bdSize {
					(*rxBDExt)(unsafe.Pointer(bd)).ext = rxBD{}
				}
				off += unsafe.Sizeof(bds[0])
			}
		}
		ntu = (ntu + uint32(got)) & mask // wraps by the power-of-two mask
		free -= uint32(got)
		if uint32(got) < run {
			q.ctr.Drop(driver.CauseNoMem, 1) // counts refills that came up short
			break
		}
	}
	if ntu == start {
		return
	}
	dma.DoorbellBarrier() // posted BDs visible before RBCIR hands them to the device
	q.regs.Write32(q.rbcir, ntu)
	q.ntu = ntu
}

// drain takes every posted buffer back from a disabled ring. Control
// goroutine, port stopped.
//
// Each frame the device had written back into the posted BDs that no
// RxBurst took is counted, so nothing it received is lost uncounted: a
// posted BD with R set was written back (refill zeroed lstatus on every
// one); a frame's BDs are consecutive and its last has F. A frame with an
// error byte on a BD counts under errCause, as RxBurst counts it, any other
// as driver.CauseStopped; written-back BDs that end without F (cut off, or
// followed by a BD not written back) count as one frame. Lengths are not
// checked: the frame is dropped either way, and a bad one counts as
// stopped.
func (q *rxQueue) drain() {
	open, errs := false, uint32(0) // inside a frame: written-back BDs seen, no F yet; their error bits
	// Only the posted slots, [ntc, ntu), hold the ring's buffers: a slot
	// outside them may still name a buffer handed on since.
	for i := q.ntc; i != q.ntu; i = (i + 1) & q.mask { // wraps by the power-of-two mask
		if st := q.bds[i<<q.shift].loadStatus(); st&rxbd_LSTATUS_R != 0 {
			open = true
			errs |= st & rxbd_LSTATUS_ERR_MASK
			if st&rxbd_LSTATUS_F != 0 {
				q.ctr.Drop(stopCause(errs), 1)
				open, errs = false, 0
			}
		} else if open {
			q.ctr.Drop(stopCause(errs), 1) // a frame without its final BD
			open, errs = false, 0
		}
		if pk := q.bufs[i]; pk != nil {
			q.bufs[i] = nil // ownership moves from the ring back to the pool
			q.pool.Recycle(pk)
		}
	}
	if open {
		q.ctr.Drop(stopCause(errs), 1) // a frame without its final BD
	}
	q.ntc, q.ntu = 0, 0
}

// stopCause is the cause drain counts a frame under: its error's (errs:
// the error bits of its BDs ORed), else driver.CauseStopped.
func stopCause(errs uint32) driver.Cause {
	if errs != 0 {
		return errCause(errs)
	}
	return driver.CauseStopped
}

package fec

import (
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
	id        int
	ring      bdRing
	pool      *pool.Pool
	bufRegion *dma.Region
	bufs      []*pool.Packet // buffer posted at each slot, nil when empty
	ntc       int            // next to clean: oldest posted slot, the next BD the MAC completes
	ntu       int            // next to use: the next empty slot to refill
	posted    int
	short     int            // slots the last refill left empty for want of buffers
	scratch   []*pool.Packet // one refill batch
	rdar      uint32
	regs      driver.Regs
	enhanced  bool
	shift     int
	headroom  int
	mrbr      int
	owner     uint16 // leak-report id while the ring holds a buffer
	appOwn    uint16 // leak-report id while the application holds it
	portID    uint16
	gate      *gate.Gate
	stats     driver.Counters
	doorbells atomic.Uint64
	burst     gate.Flag   // raised while inside a burst (the stop handshake)
	irq       rxirq.Queue // interrupt handle and counts (irq.go)
}

func newRxQueue(p *Port, id int, ring bdRing, pl *pool.Pool, bufs *dma.Region) *rxQueue {
	q := &rxQueue{
		port: p, id: id, ring: ring, pool: pl, bufRegion: bufs,
		bufs: make([]*pool.Packet, ring.size), scratch: make([]*pool.Packet, ring.size),
		rdar: regRDARn[id], regs: p.regs, enhanced: p.enhanced, shift: p.shift,
		headroom: p.headroom, mrbr: p.mrbr, portID: p.cfg.PortID, gate: &p.gate,
	}
	q.owner = pl.Owner(p.ownerID + " rx ring")
	q.appOwn = pl.Owner(p.ownerID + " rx" + itoa(id) + " caller")
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
	q.shift, q.mrbr = q.port.shift, q.port.mrbr
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
		q.port.concurrentUse("rx", q.id, "RxBurst") // another goroutine is inside: touch nothing
	}
	if g&gate.Closed != 0 {
		q.burst.Leave()
		return 0 // stopped, or closed: the ring memory may be gone
	}
	n := 0
	var bytes uint64
	for n < len(pkts) && q.posted > 0 {
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
	q.refill() // also retries slots a short pool left empty
	q.stats.Add(uint64(n), bytes)
	q.burst.Leave()
	return n
}

// take removes the buffer at ntc from the ring: it is the driver's now.
func (q *rxQueue) take() *pool.Packet {
	pk := q.bufs[q.ntc]
	q.bufs[q.ntc] = nil
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
	if length < q.shift+ethHdr+fcsLen || length > q.mrbr {
		q.stats.Drop(driver.CauseBadDescriptor, 1)
		q.pool.Recycle(pk)
		return nil
	}
	// Non-coherent DMA: drop stale cache lines before reading what the MAC wrote.
	q.bufRegion.SyncForCPU(bufOffset(q.bufRegion, pk)+q.headroom, length)
	pk.SetData(q.headroom+q.shift, length-q.shift-fcsLen)
	pk.PktLen = length - q.shift - fcsLen
	pk.NSegs = 1
	pk.Port, pk.Queue = q.portID, uint16(q.id)
	pk.SetOwner(q.appOwn) // the application's now, for leak reports
	if q.enhanced {
		q.escFlags(pk, esc)
	}
	return pk
}

func (q *rxQueue) escFlags(pk *pool.Packet, esc uint32) {
	if esc&rxbd_ICE != 0 {
		pk.Flags |= pool.FlagL3CsumBad
	}
	if esc&rxbd_PCR != 0 {
		pk.Flags |= pool.FlagL4CsumBad
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
			if l > q.mrbr {
				cause, bad = driver.CauseBadDescriptor, true
			}
			l = q.mrbr
		} else if l > prior {
			l -= prior // the whole frame's length
		}
		if l < 0 || l > q.mrbr {
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
		// Non-coherent DMA: drop stale cache lines before reading the segment.
		q.bufRegion.SyncForCPU(bufOffset(q.bufRegion, pk)+start, use)
		pk.SetData(start, use)
		pk.Port, pk.Queue = q.portID, uint16(q.id)
		pk.SetOwner(q.appOwn) // the application's now, for leak reports
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

// refill posts fresh buffers into every empty slot from ntu on, in one
// bulk allocation, and writes RDAR once if it posted any.
func (q *rxQueue) refill() {
	need := q.ring.size - q.posted
	if need == 0 {
		return
	}
	got := q.pool.AllocBulk(q.scratch[:need])
	if short := need - got; short > q.short {
		q.stats.Drop(driver.CauseNoMem, uint64(short-q.short)) // count each slot left empty once
		q.short = short
	} else {
		q.short = short
	}
	if got == 0 {
		return
	}
	t := q.ntu
	for i := 0; i < got; i++ {
		pk := q.scratch[i]
		pk.SetOwner(q.owner)
		q.bufs[t] = pk                                                // the buffer is the MAC's from the status write on
		q.ring.set(t, wAddr, uint32(pk.BufIOVA())+uint32(q.headroom)) // the MAC writes after the pool's headroom
		if q.enhanced {
			q.ring.set(t, wESC, rxbd_INT) // RXF/RXB on completion: masked by EIMR unless armed (irq.go)
			q.ring.set(t, wProt, 0)
			q.ring.set(t, wBDU, 0)
		}
		t = q.next(t) // empty slots run from ntu towards ntc
	}
	dma.WriteBarrier() // addresses before the E bits that hand them to the MAC
	t = q.ntu
	for i := 0; i < got; i++ {
		q.ring.publish(t, w0(rxbd_E|q.wrap(t), 0)) // clears L and stale error bits too
		q.scratch[i] = nil
		t = q.next(t) // same slots, same order as above
	}
	q.ntu = t             // the next empty slot
	q.posted += got       // these BDs are the MAC's now
	dma.DoorbellBarrier() // every E bit visible before the doorbell
	q.regs.Write32(q.rdar, dar_ACTIVE)
	q.doorbells.Add(1)
}

// drain takes every posted buffer back after the MAC was disabled.
func (q *rxQueue) drain() {
	for q.posted > 0 {
		q.pool.Recycle(q.take()) // the disabled MAC no longer owns it: back to the cache
	}
	q.ntc, q.ntu = 0, 0 // ETHEREN=0 rewound the MAC to RDSR: so do we
}

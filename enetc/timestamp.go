package enetc

import (
	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/pool"
)

// Transmit timestamps for two-step PTP (docs/hardware-enetc.md §12.5). A
// frame whose first BD has EX is followed by an extension BD; its e_flags
// TWO_STEP_PTP asks the device to write the frame's transmit time back
// into the first BD (bytes 0-3: the low 32 bits of the timer's time; W set
// in the flags byte), as Linux's enetc_map_tx_buffs and
// enetc_clean_tx_ring do. The driver extends the 32 bits with SICTR1, the
// upper half of the timer's time as the SI reads it now (Linux's
// enetc_get_tx_tstamp): a stamp is at most a few seconds old when TBCIR
// passes it, inside the 4.29 s the low half takes to wrap.
//
// Receive timestamps come in extended RX BDs (RBMR.BDS): rxstamp.go.
//
// TxStamped writes its own BDs: TxBurst does not look at a stamp, so a port
// without timestamps= pays nothing.

// parseTimestamps reads timestamps=: rx sets up 32-byte extended RX BDs
// (rxstamp.go), tx the TX queues' stamp lists.
func (p *Port) parseTimestamps(v string) error {
	t, err := driver.ParseTimestamps(v)
	if err != nil {
		return err
	}
	p.stamps = t
	return nil
}

// txStamps is a TX queue's timestamp requests and results. The queue's
// goroutine owns it (and the control goroutine while the port is
// stopped). Both lists have the ring's size as capacity: TxStamped refuses
// a request that would make them hold more, so appends never allocate.
type txStamps struct {
	req  []txReq          // requested frames on the ring, oldest first
	done []driver.TxStamp // stamps the caller has not taken, oldest first
}

// txReq is a requested frame on the ring: the slot of its first BD (where
// the device writes the stamp back) and the caller's id.
type txReq struct {
	slot uint32
	id   uint64
}

func newTxStamps(size int) *txStamps {
	return &txStamps{req: make([]txReq, 0, size), done: make([]driver.TxStamp, 0, size)}
}

func (q *txQueue) stampsOn(call string) *txStamps {
	if q.ts == nil {
		panic(&driver.TimestampsOff{Port: q.port.name, Call: call, Want: "timestamps=tx"})
	}
	return q.ts
}

// TxStamped implements driver.TxTimestamper: the frame's BDs with an
// extension BD after the first, TWO_STEP_PTP in its e_flags, one TBPIR
// write. It also reports false while the queue holds a ring's worth of
// requests and stamps not taken: call TxTimestamps.
func (q *txQueue) TxStamped(pk *pool.Packet, id uint64) bool {
	if q.port.shut.Load() {
		return false // closed: the caller keeps p
	}
	t := q.stampsOn("TxStamped")
	if len(t.req)+len(t.done) >= cap(t.req) {
		return false
	}
	g, shared := q.burst.Enter(q.gate) // announce the burst before reading the gate
	if shared {
		q.port.concurrentUse("tx", q.idx, "TxStamped") // another goroutine is inside: refuse, touch nothing
	}
	if g&(gate.MDIO|gate.Hold) != 0 {
		g = q.waitMDIO(g, "TxStamped") // an MDIO transaction is short: wait it out
	}
	if g != 0 {
		q.burst.Leave()
		if g&(gate.Closed|gate.Hold) != 0 {
			return false
		}
		q.ctr.Drop(driver.CauseLinkDown, 1)
		pk.Free() // link down: the frame is ours, and dropped
		t.done = append(t.done, driver.TxStamp{ID: id, Lost: true})
		return true
	}
	segs, total, ok := q.chainLen(pk)
	if !ok || total == 0 || segs+1 > txMaxBDs { // the extension BD counts against the cap
		q.refuse(pk)
		t.done = append(t.done, driver.TxStamp{ID: id, Lost: true})
		q.burst.Leave()
		return true
	}
	mask := q.mask
	free := mask - ((q.ntu - q.ntc) & mask) // one slot stays empty: PI == CI means empty
	if free < segs+1 {
		q.reclaim()
		free = mask - ((q.ntu - q.ntc) & mask)
	}
	if free < segs+1 {
		q.burst.Leave()
		return false // the caller keeps it; room comes with the next reclaim
	}
	first := q.ntu
	ntu := first
	for s := pk; s != nil; s = s.Next() {
		bd := &q.bds[ntu]
		bd.addr = s.IOVA()
		bd.bufLen = uint16(s.Len())
		bd.frmLen = 0
		bd.lstatus = 0
		q.bufs[ntu] = nil // reclaim skips the frame's other BDs
		if ntu == first {
			bd.frmLen = uint16(total) // frame length in the first BD only
			bd.lstatus = txbd_FLAGS_EX << txbdFlagsShift
			ntu = (ntu + 1) & mask // the extension BD, wrapping
			ext := &q.bds[ntu]
			*ext = txBD{lstatus: txbd_E_FLAGS_TWO_STEP_PTP << txbdEFlagsShift}
			q.bufs[ntu] = nil
			bd = ext // F goes on the extension BD of a one-segment frame
		}
		if s.Next() == nil {
			bd.lstatus |= txbdLstatusF
			q.bufs[ntu] = pk // the head, at the last BD: freed once the whole frame left
		}
		ntu = (ntu + 1) & mask // wraps by the power-of-two mask
	}
	t.req = append(t.req, txReq{slot: first, id: id})
	q.publish(ntu, uint64(total))
	q.pending++
	q.burst.Leave()
	return true
}

// TxTimestamps implements driver.TxTimestamper. It returns 0 while the
// port is stopped; the frames a Stop took off the ring are reported Lost
// after the next Start.
func (q *txQueue) TxTimestamps(dst []driver.TxStamp) int {
	if q.port.shut.Load() {
		return 0 // closed
	}
	t := q.stampsOn("TxTimestamps")
	g, shared := q.burst.Enter(q.gate)
	if shared {
		q.port.concurrentUse("tx", q.idx, "TxTimestamps")
	}
	if g&gate.Hold != 0 {
		g = q.waitMDIO(g, "TxTimestamps") // a leak report reads the ring: a short wait
	}
	if g&(gate.Closed|gate.Hold) != 0 {
		q.burst.Leave()
		return 0
	}
	if len(t.req) > 0 {
		q.reclaim()
	}
	n := copy(dst, t.done)
	t.done = t.done[:copy(t.done, t.done[n:])]
	q.burst.Leave()
	return n
}

// harvestStamps moves the requests among the slots [ntc, end), which the
// device consumed, to the stamps: the time from the first BD's write-back,
// or Lost when the device wrote none (no W: it dropped the frame).
// reclaim and drain call it before sentUpTo frees those slots to be
// written again.
func (q *txQueue) harvestStamps(end uint32) {
	t := q.ts
	mask, ntc := q.mask, q.ntc
	n := 0
	var hi, lo uint32
	read := false
	for _, r := range t.req {
		if (r.slot-ntc)&mask >= (end-ntc)&mask { // slots from ntc, wrapping
			break // not consumed yet; nor any later one
		}
		dma.ReadBarrier() // TBCIR before the write-back it covers
		bd := &q.bds[r.slot]
		s := driver.TxStamp{ID: r.id}
		if bd.lstatus>>txbdFlagsShift&txbd_FLAGS_W == 0 {
			s.Lost = true
		} else {
			if !read {
				// The timer's time now, low half first (Linux's order).
				lo, hi = q.regs.Read32(regSICTR0), q.regs.Read32(regSICTR1)
				read = true
			}
			s.Time = extendStamp(uint32(bd.addr), lo, hi)
		}
		t.done = append(t.done, s)
		n++
	}
	t.req = t.req[:copy(t.req, t.req[n:])]
}

// extendStamp is the 64-bit time of a 32-bit stamp taken before the timer
// read lo, hi: the upper half less one when the low half has wrapped
// since, that is when lo is below the stamp. Linux's enetc_get_tx_tstamp
// also takes one off when lo equals the stamp, which cannot happen on
// silicon (time passed between the two); in model time it can, and then
// no wrap happened.
func extendStamp(stamp, lo, hi uint32) driver.Time {
	if lo < stamp {
		hi--
	}
	return driver.Time(uint64(hi)<<32 | uint64(stamp))
}

// dropStamps reports every request still on the ring Lost: drain took
// their frames off it unsent.
func (q *txQueue) dropStamps() {
	t := q.ts
	for _, r := range t.req {
		t.done = append(t.done, driver.TxStamp{ID: r.id, Lost: true})
	}
	t.req = t.req[:0]
}

var _ driver.TxTimestamper = (*txQueue)(nil)

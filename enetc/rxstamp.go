package enetc

import (
	"unsafe"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/pool"
)

// Receive timestamps (docs/hardware-enetc.md §12.5). With timestamps=rx the
// port sets RBMR.BDS on its RX rings: every BD is 32 bytes, the 16-byte
// write-back format followed by an extension whose bytes 0-3 hold the low
// 32 bits of the timer's time when the frame reached the MAC, flagged by
// TSTMP (bit 10 of the write-back flags), as Linux's enetc_get_rx_tstamp
// reads them. The driver extends the 32 bits with SICTR0/1 read after the
// write-backs, as the TX side does (timestamp.go, extendStamp).
//
// The ring is still a []rxBD, two entries a BD: BD i is bds[i<<shift] and
// its extension bds[i<<shift+1]. frameBDs, gather, lostBD and drain index
// by shift; refill, singles and RxBurst's loop assume 16-byte BDs and never
// run on a stamping queue (refillExt is its refill): RxQueue hands out
// rxStampQueue there, whose RxBurst is the stamped path with the stamps
// dropped. A port without timestamps=rx pays nothing on RxBurst.

// rxBDShift is the RX BD size of the port as a shift of 16 bytes: 1 for
// the 32-byte extended BDs of timestamps=rx, else 0.
func (p *Port) rxBDShift() uint32 {
	if p.stamps&driver.TimestampRx != 0 {
		return 1
	}
	return 0
}

// rxBDSize is the size of one of the port's RX BDs.
func (p *Port) rxBDSize() int { return bdSize << p.rxBDShift() }

// rbmrBDS is the RBMR.BDS bit of the queue's BD size.
func (q *rxQueue) rbmrBDS() uint32 {
	if q.shift != 0 {
		return rbmr_BDS
	}
	return 0
}

// refillExt is refill (rx.go) for 32-byte BDs: the ring is viewed as
// extended BDs, two rxBD entries each.
func (q *rxQueue) refillExt() {
	refillRing(q, unsafe.Slice((*rxBDExt)(unsafe.Pointer(unsafe.SliceData(q.bds))), len(q.bds)/2))
}

// rxStampQueue is the RX queue of a port opened with timestamps=rx. Its
// RxBurst is RxBurstStamped without the stamps: the plain loop reads
// 16-byte BDs, and a stamping queue's are 32.
type rxStampQueue struct{ *rxQueue }

// RxBurst implements driver.RxQueue on extended BDs.
func (q rxStampQueue) RxBurst(pkts []*pool.Packet) int { return q.burstExt(pkts, nil, "RxBurst") }

// api is what RxQueue hands out for the queue.
func (q *rxQueue) api() driver.RxQueue {
	if q.shift != 0 {
		return rxStampQueue{q}
	}
	return q
}

// rxNoStamp marks, in stamps while a burst runs, a frame whose write-back
// had no TSTMP; the others hold their raw 32-bit stamp until the burst
// reads SICTR0/1.
const rxNoStamp = driver.Time(-1)

// RxBurstStamped implements driver.RxTimestamper: frame by frame, each
// frame through frameBDs and gather as RxBurst's general path, the stamp
// read from the extension of its first BD. A frame the device wrote back
// without TSTMP gets stamp 0. It returns 0 once the port is closed, and
// panics with *driver.TimestampsOff on a port opened without
// timestamps=rx.
func (q *rxQueue) RxBurstStamped(pkts []*pool.Packet, stamps []driver.Time) int {
	if q.port.shut.Load() {
		return 0 // closed: the ring memory is gone
	}
	if q.shift == 0 {
		panic(&driver.TimestampsOff{Port: q.port.name, Call: "RxBurstStamped", Want: "timestamps=rx"})
	}
	if len(stamps) < len(pkts) {
		pkts = pkts[:len(stamps)]
	}
	return q.burstExt(pkts, stamps[:len(pkts)], "RxBurstStamped")
}

// burstExt takes frames from an extended ring into pkts and, unless stamps
// is nil (as long as pkts otherwise), their receive times into stamps.
// Every device-written field is checked as in RxBurst (frameBDs, gather,
// lostBD); the stamp is any 32-bit value, read only from the extension of
// a BD in the ring.
func (q *rxQueue) burstExt(pkts []*pool.Packet, stamps []driver.Time, call string) int {
	g, shared := q.burst.Enter(q.gate) // announce the burst before reading the gate
	if shared {
		q.port.concurrentUse("rx", q.idx, call) // another goroutine is inside: refuse, touch nothing
	}
	if g&gate.Closed != 0 {
		q.burst.Leave()
		return 0
	}
	var (
		n       int
		bytes   uint64
		stamped bool // a frame in stamps holds a raw stamp
	)
	mask := q.mask
	ntc := q.ntc
	posted := (q.ntu - ntc) & mask // BDs the device may have written
	for n < len(pkts) && posted > 0 {
		bd := &q.bds[ntc<<1] // ntc stays below the ring size (the mask)
		st := bd.loadStatus()
		if st&rxbd_LSTATUS_R == 0 {
			// Not written back yet; every rxPeekEvery-th poll looks past
			// it for a BD the device skipped, as RxBurst.
			q.idle++
			if q.idle%rxPeekEvery != 0 || !q.lostBD(ntc, posted-1) {
				break
			}
			q.dropBDs(ntc, 1, driver.CauseBadDescriptor)
			ntc = (ntc + 1) & mask // wraps by the power-of-two mask
			posted--
			continue
		}
		k, fst := uint32(1), st
		if st&rxbd_LSTATUS_F == 0 {
			k, fst = q.frameBDs(ntc, posted, st)
			if k == 0 {
				break // the rest of the frame is still being written back
			}
		}
		if fst&rxbd_LSTATUS_F == 0 {
			// No final BD where one must be: the device wrote nonsense.
			q.dropBDs(ntc, k, driver.CauseBadDescriptor)
		} else if pk := q.gather(ntc, k, fst); pk != nil { // gather: the read barrier after the status loads
			if stamps != nil {
				t := rxNoStamp
				if st&rxbd_FLAG_TSTMP != 0 {
					t = driver.Time(uint32(q.bds[ntc<<1+1].addr)) // the extension's bytes 0-3
					stamped = true
				}
				stamps[n] = t
			}
			pkts[n] = pk
			n++
			bytes += uint64(pk.PktLen)
		}
		ntc = (ntc + k) & mask // past the frame's k BDs, wrapping
		posted -= k
	}
	if stamped {
		// The timer's time now, after every write-back read above (the
		// stamps are older), low half first as on TX.
		dma.ReadBarrier()
		lo, hi := q.regs.Read32(regSICTR0), q.regs.Read32(regSICTR1)
		for i, t := range stamps[:n] {
			if t == rxNoStamp {
				stamps[i] = 0
			} else {
				stamps[i] = extendStamp(uint32(t), lo, hi)
			}
		}
	} else if stamps != nil {
		clear(stamps[:n]) // no frame had a stamp
	}
	if ntc != q.ntc {
		q.lost = lostLooks{} // progress: whatever looked stuck was not
	}
	q.ntc = ntc
	q.ctr.Add(uint64(n), bytes)
	if q.mask-((q.ntu-q.ntc)&q.mask) >= rxRefillBundle { // free slots: size - 1 - posted
		q.refillExt()
	}
	q.burst.Leave()
	return n
}

var (
	_ driver.RxTimestamper = (*rxQueue)(nil)
	_ driver.RxTimestamper = rxStampQueue{}
	_ driver.RxInterrupter = rxStampQueue{} // the queue's other methods, promoted
)

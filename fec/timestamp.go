package fec

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/pool"
)

// Hardware timestamps (docs/hardware-fec.md §12.5). With ECR.EN1588 every
// BD is enhanced and the MAC writes the 1588 counter into word 5 (ts): on
// receive into every frame it receives, on transmit into the last BD of a
// frame whose esc word has TS. Linux reads both there (fec_enet_rx_queue,
// fec_enet_tx_queue). The counter is 31 bits of nanoseconds (ATPER =
// 2^31); the driver extends a stamp to the clock's time from the last
// counter read, which the clock publishes for these paths (stampBase).
//
// The stamped calls are a path of their own: RxBurst and TxBurst do not
// look at a stamp, so a port without timestamps= pays nothing.

// stampBase is the clock time and counter of the clock's last read,
// published by the clock (under its mu) for the timestamp paths, which
// read it without a lock: a sequence count, odd while an update is under
// way.
type stampBase struct {
	seq  atomic.Uint32
	base atomic.Int64
	last atomic.Uint32
}

// publish stores a new base and counter. The clock's mu serialises the
// writers.
func (s *stampBase) publish(base int64, last uint32) {
	s.seq.Add(1) // odd: readers retry
	s.base.Store(base)
	s.last.Store(last)
	s.seq.Add(1)
}

// time extends a 31-bit counter value to the clock's time: the counter
// value nearest the last read, up to half a wrap (1.07 s) before or after
// it. A stamp is older than the read that follows it by the time the
// driver took to look at it, and the clock's keeper reads the counter
// every 200 ms: far inside that.
func (s *stampBase) time(raw uint32) driver.Time {
	for {
		q := s.seq.Load()
		if q&1 != 0 {
			runtime.Gosched() // a writer is between its stores
			continue
		}
		base, last := s.base.Load(), s.last.Load()
		if s.seq.Load() != q {
			continue
		}
		d := int64((raw - last) & ptpMask)
		if d > ptpMask/2 {
			d -= ptpMask + 1 // before the last read
		}
		return driver.Time(base + d)
	}
}

// startStamps starts the port's clock for timestamps=, after the MAC
// reset of Start. Control goroutine, ctl held.
func (p *Port) startStamps() error {
	if p.stamps == 0 {
		return nil
	}
	if _, err := p.Clock(); err != nil {
		return fmt.Errorf("timestamps=%v needs the 1588 timer: %w", p.stamps, err)
	}
	return nil
}

// stampBase is the clock's published base; the port has one from Start
// on when timestamps= is given (the gate opened after startStamps).
func (p *Port) stampBase() *stampBase { return &p.ptp.tc }

// RxBurstStamped implements driver.RxTimestamper: RxBurst's general path,
// frame by frame, with each frame's stamp read from its last BD after the
// status word (the MAC writes it before it clears E).
func (q *rxQueue) RxBurstStamped(pkts []*pool.Packet, stamps []driver.Time) int {
	if q.port.shut.Load() {
		return 0 // closed: the ring memory is gone
	}
	if q.port.stamps&driver.TimestampRx == 0 {
		panic(&driver.TimestampsOff{Port: q.port.name, Call: "RxBurstStamped", Want: "timestamps=rx"})
	}
	g, shared := q.burst.Enter(q.gate)
	if shared {
		q.port.concurrentUse("rx", q.idx, "RxBurstStamped") // another goroutine is inside: touch nothing
	}
	if g&gate.Closed != 0 {
		q.burst.Leave()
		return 0 // stopped, or closed: the ring memory may be gone
	}
	if len(stamps) < len(pkts) {
		pkts = pkts[:len(stamps)]
	}
	tc := q.port.stampBase()
	n := 0
	var bytes uint64
	for n < len(pkts) && q.posted > 0 {
		st, length := sc(q.ring.status(q.ntc))
		if st&rxbd_E != 0 {
			break // the MAC still owns it: nothing more arrived
		}
		var (
			pk  *pool.Packet
			raw uint32
		)
		if st&rxbd_L == 0 {
			k := q.frameBDs()
			if k == 0 {
				break // the rest of this frame is still being written
			}
			if k > 0 {
				last := q.ntc + k - 1 // the frame's last BD, wrapping
				if last >= q.ring.size {
					last -= q.ring.size
				}
				dma.ReadBarrier() // the status words before the stamp
				raw = q.ring.word(last, wTS)
			}
			pk = q.gather(k)
		} else {
			dma.ReadBarrier() // the status word before the stamp, length, esc and data
			raw = q.ring.word(q.ntc, wTS)
			pk = q.single(st, int(length))
		}
		if pk != nil {
			pkts[n], stamps[n] = pk, tc.time(raw)
			n++
			bytes += uint64(pk.PktLen)
		}
	}
	q.flushSync()
	q.refill()
	q.stats.Add(uint64(n), bytes)
	q.burst.Leave()
	return n
}

// txStamps is a TX queue's timestamp requests and results. The queue's
// goroutine owns it (and the control goroutine while the port is
// stopped). Both lists have the ring's size as capacity: TxStamped refuses
// a request that would make them hold more, so appends never allocate.
type txStamps struct {
	req  []txReq          // requested frames on the ring, oldest first
	done []driver.TxStamp // stamps the caller has not taken, oldest first
	one  [1]*pool.Packet  // TxStamped's burst of one
}

// txReq is a requested frame on the ring: the slot of its last BD (where
// the MAC writes the stamp) and the caller's id.
type txReq struct {
	slot int
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

// TxStamped implements driver.TxTimestamper: TxBurst of one frame with TS
// in the esc word of its BDs (Linux sets it in the last; the MAC reads it
// there). It also reports false while the queue holds a ring's worth of
// requests and stamps not taken: call TxTimestamps.
func (q *txQueue) TxStamped(p *pool.Packet, id uint64) bool {
	if q.port.shut.Load() {
		return false // closed: the caller keeps p
	}
	t := q.stampsOn("TxStamped")
	if len(t.req)+len(t.done) >= cap(t.req) {
		return false
	}
	ntu := q.ntu
	t.one[0] = p
	q.esc |= txbd_TS // TxBurst's BDs take the queue's esc word
	n := q.TxBurst(t.one[:])
	q.esc &^= txbd_TS
	t.one[0] = nil
	if n == 0 {
		return false // no room, or stopped: the caller keeps p
	}
	if q.ntu == ntu {
		// Taken and dropped (counted by cause): link down, or a frame
		// TxBurst refuses.
		t.done = append(t.done, driver.TxStamp{ID: id, Lost: true})
		return true
	}
	last := q.ntu - 1 // the frame's last BD: TxBurst wrote it last
	if last < 0 {
		last = q.ring.size - 1
	}
	t.req = append(t.req, txReq{slot: last, id: id})
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
		q.port.concurrentUse("tx", q.idx, "TxTimestamps") // another goroutine is inside: touch nothing
	}
	if g&gate.Closed != 0 {
		q.burst.Leave()
		return 0
	}
	q.reclaimOwn()
	n := copy(dst, t.done)
	t.done = t.done[:copy(t.done, t.done[n:])]
	q.burst.Leave()
	return n
}

// harvestStamps moves the requests whose frame the MAC is done with (R
// clear on its last BD; the requests are in ring order, their slots not
// yet reclaimed) to the stamps: the time from the last BD's ts word, or
// Lost when its esc word has an error. reclaimTo calls it first, before
// any slot is freed to be written again.
func (q *txQueue) harvestStamps() {
	t := q.ts
	tc := q.port.stampBase()
	n := 0
	for _, r := range t.req {
		if st, _ := sc(q.ring.status(r.slot)); st&txbd_R != 0 {
			break // the MAC still owns it; and every later one
		}
		dma.ReadBarrier() // the status word before the words the MAC wrote with it
		s := driver.TxStamp{ID: r.id}
		if q.ring.word(r.slot, wESC)&txbd_ESC_ERR_MASK != 0 {
			s.Lost = true
		} else {
			s.Time = tc.time(q.ring.word(r.slot, wTS))
		}
		t.done = append(t.done, s)
		n++
	}
	t.req = t.req[:copy(t.req, t.req[n:])]
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

var (
	_ driver.RxTimestamper = (*rxQueue)(nil)
	_ driver.TxTimestamper = (*txQueue)(nil)
)

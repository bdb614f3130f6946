package model

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/gopmd/gopmd/sim/simdma"
	"github.com/gopmd/gopmd/wire"
)

// txRing is the device side of one TX BD ring: what the driver writes
// (TBPIR, its doorbell count) on one cache line, what the device writes
// (TBCIR and its own state) on another.
type txRing struct {
	pi        atomic.Uint32 // TBPIR: next BD the driver will fill
	doorbells atomic.Uint64
	_         [cacheLine - 16]byte
	ci        atomic.Uint32 // TBCIR: next BD the device will send
	halted    atomic.Bool   // stopped on a fatal ring error until reprogrammed
	busy      atomic.Bool   // a goroutine is working the ring (processTx)
	reported  atomic.Uint32 // ring errors already recorded since programming
	_         [cacheLine - 12]byte

	// Owned by whoever holds busy.
	idx                int
	scratch            []byte      // gathers multi-BD and padded frames
	ringView, dataView simdma.View // the BD ring's and the frames' translations
	staged             [][]byte    // frames gathered, not yet sent (txPass)
	touched            byte        // keeps txPass's early reads of staged frames
}

// Ring error kinds, recorded once per ring programming.
const (
	reAlign uint32 = 1 << iota
	reLen
	reZeroLen
	reIndex
	reBDFault
	reNoFinal
	reTooLong
	reFrmLen
	reBufSize
	reRSSRing
)

// maxTxBDs bounds the BDs one frame may chain (Linux uses at most 15).
const maxTxBDs = 64

// once records a ring error the first time it happens since the ring was
// programmed, so a misprogrammed ring polled by the engine does not flood
// the record.
func once(rep *atomic.Uint32, kind uint32) bool {
	for {
		old := rep.Load()
		if old&kind != 0 {
			return false
		}
		if rep.CompareAndSwap(old, old|kind) {
			return true
		}
	}
}

// txLen is TX ring n's length in BDs as the device takes it.
func (d *Device) txLen(n int) uint32 {
	return d.get(regTBLENR+uint32(n)*RingStride) &^ (RingLenAlign - 1)
}

// txAllowed reports whether the MAC may send now: link up, no stall, SI
// enabled and (PF) port SI 0 and MAC TX enabled.
func (d *Device) txAllowed() bool {
	if !d.carrier() || d.faults.txStall.Load() || d.get(regSIMR)&simr_EN == 0 {
		return false
	}
	if d.pf && (d.get(regPMR)&pmr_SI0EN == 0 || d.get(regPM0_CMD_CFG)&pm_cmd_cfg_TX_EN == 0) {
		return false
	}
	return true
}

// kickAllTx lets queued TX frames leave after a state change (synchronous
// mode), or wakes the engine.
func (d *Device) kickAllTx() {
	if d.engine {
		d.kickEngine()
		return
	}
	for i := 0; i < d.nTx; i++ {
		if d.tx[i].pi.Load() != d.tx[i].ci.Load() {
			d.processTx(i)
		}
	}
}

// txBatch accumulates one doorbell's counters so the shared atomics are
// updated once per batch, not per frame.
type txBatch struct {
	frames, bytes, errs uint64
	cast                [3]uint64
	hist                [7]uint64
	under               uint64
	tsn                 *tsnSched // non-nil while gating or a shaper is on (tsn.go)
	ring                int
	// departed is when the last frame send gave the scheduler left, in
	// timer ns (-1: unscheduled, no timer); sent reports it was sent.
	departed int64
	sent     bool
}

// processTx sends the frames of TX ring n from its consumer index up to its
// producer index and returns how many left. One goroutine works a ring at a
// time (in synchronous mode a doorbell and a link change may come from two);
// one that finds the ring taken leaves its work to the holder, which
// re-reads PI after letting go: a try-lock per doorbell, never per frame.
func (d *Device) processTx(n int) int {
	t := &d.tx[n]
	sent := 0
	for {
		if !t.busy.CompareAndSwap(false, true) {
			return sent // the holder sees our PI when it re-checks
		}
		pi := t.pi.Load() // acquire: the BDs before PI are the driver's published work
		sent += d.txPass(n, pi)
		t.busy.Store(false)
		if t.pi.Load() == pi {
			return sent
		}
	}
}

// txPass is one pass of processTx over the BDs before pi.
func (d *Device) txPass(n int, pi uint32) int {
	t := &d.tx[n]
	rb := uint32(n) * RingStride
	if t.halted.Load() || d.get(regTBMR+rb)&tbmr_EN == 0 || !d.txAllowed() {
		return 0 // frames stay queued
	}
	base := uint64(d.get(regTBBAR1+rb))<<32 | uint64(d.get(regTBBAR0+rb))
	lenr := d.get(regTBLENR + rb)
	l := lenr &^ (RingLenAlign - 1)
	if base&(RingAlign-1) != 0 {
		if once(&t.reported, reAlign) {
			d.recordErr("TX ring %d: base IOVA %#x is not %d-byte aligned (TBBAR0)", n, base, RingAlign)
		}
		return 0
	}
	if lenr&(RingLenAlign-1) != 0 && once(&t.reported, reLen) {
		d.recordErr("TX ring %d: TBLENR %d is not a multiple of %d: the device uses %d", n, lenr, RingLenAlign, l)
	}
	if l == 0 {
		if once(&t.reported, reZeroLen) {
			d.recordErr("TX ring %d: enabled with TBLENR %d (no BDs)", n, lenr)
		}
		return 0
	}
	ci := t.ci.Load()
	if pi >= l || ci >= l {
		if once(&t.reported, reIndex) {
			d.recordErr("TX ring %d: index past the ring (PI %d, CI %d, length %d)", n, pi, ci, l)
		}
		return 0
	}
	ring := t.ringView.Slice(base, int(l)*BDSize, false)
	if ring == nil {
		d.st.dmaFaults.Add(1)
		t.halted.Store(true)
		d.recordErr("TX ring %d: BD ring at IOVA %#x (%d BDs) is not mapped: ring halted until reprogrammed", n, base, l)
		return 0
	}
	b := txBatch{tsn: d.tsnSched(), ring: n}
	cmd := uint32(pm_cmd_cfg_TXP)
	if d.pf {
		cmd = d.get(regPM0_CMD_CFG)
	}
	w := d.out.Load().w
	if d.pf && cmd&pm_cmd_cfg_XGLP != 0 {
		w = loopback{d} // MAC loopback: frames come back into this port's RX
	}
	for ci != pi {
		if bd := ring[int(ci)*BDSize : int(ci)*BDSize+BDSize]; bd[15]&(TxFlagF|TxFlagEX) == TxFlagF && d.faults.txDMA.Load() <= 0 {
			// The common case in short: a whole frame in one BD, long
			// enough to need no padding, nothing injected.
			blen := int(binary.LittleEndian.Uint16(bd[8:10]))
			if blen >= MinFrame && blen <= len(t.scratch) && blen == int(binary.LittleEndian.Uint16(bd[10:12])) {
				if data := t.dataView.Slice(binary.LittleEndian.Uint64(bd[0:8]), blen, false); data == nil {
					d.st.dmaFaults.Add(1) // recorded by the IOMMU; the frame is lost
					b.errs++
				} else {
					t.staged = append(t.staged, data)
					if len(t.staged) == cap(t.staged) {
						d.sendStaged(t, w, &b)
					}
				}
				if ci++; ci == l {
					ci = 0 // indices wrap at the ring length
				}
				continue
			}
		}
		// Gather one frame: BDs from ci up to and including the one with F.
		j := ci
		nbd, total, frmLen := 0, 0, 0
		ok, ext := true, false
		var frame, first, stampBD []byte
		for {
			if j == pi {
				// The driver published part of a frame: the device waits
				// for the rest (a driver bug if it never comes).
				if once(&t.reported, reNoFinal) {
					d.recordErr("TX ring %d: PI %d stops inside a frame starting at BD %d (no F bit before PI)", n, pi, ci)
				}
				d.sendStaged(t, w, &b)
				d.flushTx(&b, t, ci)
				return int(b.frames)
			}
			bd := ring[j*BDSize : j*BDSize+BDSize]
			j++
			if j == l {
				j = 0 // indices wrap at the ring length
			}
			nbd++
			flags := bd[15]
			if nbd == 1 {
				first = bd
			}
			if ext {
				ext = false // extension BD: VLAN/timestamp data, no buffer
				if bd[14]&TxEFlagTwoStep != 0 {
					stampBD = first // the transmit time goes back into the first BD
				}
			} else {
				addr := binary.LittleEndian.Uint64(bd[0:8])
				blen := int(binary.LittleEndian.Uint16(bd[8:10]))
				if nbd == 1 {
					frmLen = int(binary.LittleEndian.Uint16(bd[10:12]))
					if take(&d.faults.txDMA) {
						d.st.faultsInjected.Add(1)
						addr += unmappedDelta
					}
				}
				ext = flags&TxFlagEX != 0
				if ok && blen > 0 {
					data := t.dataView.Slice(addr, blen, false)
					switch {
					case data == nil:
						d.st.dmaFaults.Add(1)
						ok = false
					case total+blen > len(t.scratch):
						if once(&t.reported, reTooLong) {
							d.recordErr("TX ring %d: frame at BD %d longer than %d bytes: not sent", n, ci, len(t.scratch))
						}
						ok = false
					case nbd == 1 && flags&TxFlagF != 0:
						frame = data // single-BD frame: sent from the buffer, no copy
					default:
						if frame != nil && &frame[0] != &t.scratch[0] {
							copy(t.scratch, frame)
						}
						copy(t.scratch[total:], data)
						frame = t.scratch[:total+blen]
					}
				}
				total += blen
			}
			if flags&TxFlagF != 0 {
				break
			}
			if nbd >= maxTxBDs {
				if once(&t.reported, reNoFinal) {
					d.recordErr("TX ring %d: frame at BD %d chains more than %d BDs without F", n, ci, maxTxBDs)
				}
				ok = false
				break
			}
		}
		ci = j // the whole frame's BDs are done, sent or not
		if ok && frmLen != total {
			if once(&t.reported, reFrmLen) {
				d.recordErr("TX ring %d: frame at BD %d: frm_len %d in the first BD but its BDs hold %d bytes", n, ci, frmLen, total)
			}
			ok = false
		}
		if !ok || total == 0 {
			b.errs++
			continue
		}
		if total < MinFrame && cmd&pm_cmd_cfg_TXP != 0 {
			if &frame[0] != &t.scratch[0] {
				copy(t.scratch, frame)
			}
			clear(t.scratch[total:MinFrame]) // pad with zeros to the minimum
			frame = t.scratch[:MinFrame]
		} else if total < MinFrame {
			b.under++
		}
		if &frame[0] == &t.scratch[0] || stampBD != nil {
			// Gathered or padded: the scratch is reused by the next such
			// frame, so this one leaves now, after the frames before it;
			// so does one to be stamped as it leaves.
			d.sendStaged(t, w, &b)
			d.send(w, &b, frame)
			if stampBD != nil && b.sent {
				d.stampTx(stampBD, &b)
			}
			continue
		}
		// Sent from the driver's buffer: staged (see sendStaged).
		t.staged = append(t.staged, frame)
		if len(t.staged) == cap(t.staged) {
			d.sendStaged(t, w, &b)
		}
	}
	d.sendStaged(t, w, &b)
	d.flushTx(&b, t, ci)
	return int(b.frames)
}

// txStageFrames bounds the frames txPass stages before it sends them.
const txStageFrames = 32

// sendStaged hands the staged frames to the wire in order. It first reads
// one byte of each in a tight loop: their cache lines, last written by the
// driver's core, then arrive together instead of each read waiting for the
// one before (the sum is kept only so the reads stay).
func (d *Device) sendStaged(t *txRing, w wire.Wire, b *txBatch) {
	var touched byte
	for _, f := range t.staged {
		touched += f[0]
	}
	t.touched += touched
	for i, f := range t.staged {
		d.send(w, b, f)
		t.staged[i] = nil
	}
	t.staged = t.staged[:0]
}

// send hands one frame to the wire and counts it.
func (d *Device) send(w wire.Wire, b *txBatch, frame []byte) {
	b.sent = true
	if b.tsn == nil {
		w.Transmit(frame)
	} else if b.departed, b.sent = b.tsn.transmit(d, w, b.ring, frame); !b.sent {
		b.errs++ // fits no window of its gate (tsn.go)
		return
	}
	b.frames++
	b.bytes += uint64(len(frame))
	b.cast[castOf(frame)]++
	b.hist[sizeBucket(len(frame)+4)]++
}

// stampTx writes a sent frame's transmit time back into its first BD
// (docs/hardware-enetc.md §12.5): bytes 0-3 the low 32 bits of the chip
// timer's time as the frame left, W in the flags byte; before CI passes
// the frame (flushTx). The time the frame left is the wire edge: now, or,
// while gating or a shaper times the frames (tsn.go), the departure the
// scheduler gave it, the first bit of its preamble (Departure.Start), so
// a frame held for its gate is stamped when it went, not when it was
// handed over.
func (d *Device) stampTx(bd []byte, b *txBatch) {
	t := d.stampNs()
	if b.tsn != nil && b.departed >= 0 {
		t = uint64(b.departed)
	}
	binary.LittleEndian.PutUint32(bd[0:4], uint32(t))
	bd[15] |= TxFlagW
}

// loopback is the wire of a MAC in loopback (PM0_CMD_CFG XGLP).
type loopback struct{ d *Device }

// Transmit hands the frame to the port's own receive side.
func (l loopback) Transmit(f []byte) { l.d.Receive(f) }

// flushTx publishes the consumer index and the batch's counters. MAC octet
// counters include the 4-byte FCS; SI octet counters do not.
func (d *Device) flushTx(b *txBatch, t *txRing, ci uint32) {
	if b.errs != 0 {
		// Before CI: the MAC knew the frames failed when it read them, so
		// a driver that sees them consumed finds their errors counted.
		d.mac[cTERR].Add(b.errs)
		d.st.txErrors.Add(b.errs)
	}
	t.ci.Store(ci) // release: the driver may reuse every BD before CI
	if b.frames != 0 {
		m := &d.mac
		m[cTFRM].Add(b.frames)
		m[cTEOCT].Add(b.bytes + 4*b.frames)
		m[cTOCT].Add(b.bytes + 4*b.frames)
		for i, c := range b.cast {
			if c != 0 {
				m[cTUCA+i].Add(c)
				if i > 0 {
					d.si[sTMCA].Add(c)
				} else {
					d.si[sTUCA].Add(c)
				}
			}
		}
		for i, c := range b.hist {
			if c != 0 {
				m[cT64+i].Add(c)
			}
		}
		d.si[sTFRM].Add(b.frames)
		d.si[sTOCT].Add(b.bytes)
		d.st.txFrames.Add(b.frames)
		d.st.txBytes.Add(b.bytes)
	}
	if b.frames+b.errs != 0 {
		d.mac[cTPKT].Add(b.frames + b.errs)
	}
	if b.under != 0 {
		d.mac[cTUND].Add(b.under)
	}
}

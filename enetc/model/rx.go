package model

import (
	"encoding/binary"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/sim/simdma"
)

// rxRing is the device side of one RX BD ring: the registers the driver
// writes (RBCIR, its doorbell count) on one cache line, what the device
// writes (RBPIR, RBDCR) on another, so the two sides do not invalidate
// each other's line on every access.
type rxRing struct {
	ci        atomic.Uint32 // RBCIR: first BD not handed to the device
	doorbells atomic.Uint64
	_         [cacheLine - 16]byte
	pi        atomic.Uint32 // RBPIR: next BD the device fills
	dcr       atomic.Uint64 // RBDCR: frames discarded by this ring
	reported  atomic.Uint32
	_         [cacheLine - 24]byte
}

// cacheLine separates fields two goroutines write.
const cacheLine = 64

// Receive implements wire.Port: a frame arrives from the wire (without
// FCS). It is written into posted buffers of the ring RSS (or ring 0)
// selects, or counted where it is lost. It reports whether the frame
// reached a ring. In synchronous mode it takes no lock unless sources are
// attached (then it waits for a running pump). Its write-back and counters
// are published before it returns.
func (d *Device) Receive(frame []byte) bool {
	if d.engine {
		d.rxMu.Lock() // the engine delivers too; one delivery at a time
		ok := d.deliver(frame)
		d.rxFlush()
		d.rxMu.Unlock()
		return ok
	}
	if len(*d.srcs.Load()) == 0 {
		ok := d.deliver(frame) // nothing else delivers: no lock at all
		d.rxFlush()
		return ok
	}
	for !d.pumping.CompareAndSwap(false, true) {
		runtime.Gosched() // a pump (from an RBCIR write) is delivering
	}
	ok := d.deliver(frame)
	d.rxFlush()
	d.pumping.Store(false)
	return ok
}

// RxRoom implements wire.Port: how many maximum-size frames the rings that
// frames go to could take now, 0 while the port cannot receive.
func (d *Device) RxRoom() int {
	if !d.carrier() || !d.rxAllowed() || d.fifoLock.Load() {
		return 0
	}
	rings := uint32(1)
	if d.get(regSIMR)&simr_RSSE != 0 {
		rings = d.rssRings.Load()
	}
	room := -1
	for n := 0; n < d.nRx; n++ {
		if rings&(1<<n) == 0 {
			continue
		}
		rb := uint32(n) * RingStride
		l := d.get(regRBLENR+rb) &^ (RingLenAlign - 1)
		bs := int(d.get(regRBBSR+rb) & rbbsr_MASK)
		r := &d.rx[n]
		pi, ci := r.pi.Load(), r.ci.Load()
		if d.get(regRBMR+rb)&rbmr_EN == 0 || l == 0 || bs == 0 || pi >= l || ci >= l {
			return 0
		}
		maxf := MaxFrame
		if d.pf {
			maxf = int(d.get(regPM0_MAXFRM) & pm0_maxfrm_MASK)
		}
		f := int(owned(pi, ci, l)) / ((maxf + bs - 1) / bs)
		if room < 0 || f < room {
			room = f
		}
	}
	return max(room, 0)
}

// owned is how many BDs the device may fill: from PI up to, not including,
// the one before CI (it never advances PI onto CI, §4.1). pi, ci < l.
func owned(pi, ci, l uint32) uint32 {
	if ci > pi {
		return ci - pi - 1
	}
	return ci + l - pi - 1 // CI wrapped behind PI
}

// bdsFor is how many BDs of bs bytes a frame of size bytes fills. A frame
// that fits one buffer, the common case, costs no division.
func bdsFor(size, bs int) int {
	if size <= bs {
		return 1
	}
	return (size + bs - 1) / bs
}

// rxAllowed: MAC RX enabled and port/SI enabled.
func (d *Device) rxAllowed() bool {
	if d.get(regSIMR)&simr_EN == 0 {
		return false
	}
	return !d.pf || (d.get(regPM0_CMD_CFG)&pm_cmd_cfg_RX_EN != 0 && d.get(regPMR)&pmr_SI0EN != 0)
}

// deliver runs one frame through the MAC, the port filter and RSS into a
// ring. It is the whole receive path; the caller serialises it and calls
// rxFlush before it lets go.
func (d *Device) deliver(frame []byte) bool {
	n := len(frame)
	m := &d.mac
	// Every frame the MAC or the port discards before a ring is counted
	// where the driver can read it: RDRP for receive disabled, link down
	// and FIFO drops, RUND for runts, UFDMF/MFDMF for the address filter,
	// RBDCR for the ring (a VF's driver sees only RBDCR).
	if !d.carrier() {
		d.st.rxLinkDown.Add(1) // no carrier: the MAC drops what trickles in
		m[cRDRP].Add(1)
		return false
	}
	if d.pf && d.get(regPM0_CMD_CFG)&pm_cmd_cfg_RX_EN == 0 {
		d.st.rxMACOff.Add(1)
		m[cRDRP].Add(1)
		return false
	}
	if n < MinFrame {
		m[cRUND].Add(1)
		m[cRPKT].Add(1)
		d.st.rxRunt.Add(1)
		return false
	}
	var errb uint8
	if d.pf {
		if d.fifoLock.Load() {
			m[cRDRNTP].Add(1)
			m[cRDRP].Add(1)
			d.st.rxFIFO.Add(1)
			return false
		}
		if d.get(regPM0_RX_FIFO) != 1 {
			d.fifoCount++
			if d.fifoCount >= d.cfg.FIFOLockAfter {
				d.fifoLock.Store(true)
				d.recordErr("MAC RX locked up after %d frames: PM0_RX_FIFO is %d, the power-on value; write 1 (erratum §5.4); only a function reset recovers", d.fifoCount, d.get(regPM0_RX_FIFO))
			}
		}
		maxfrm := int(d.get(regPM0_MAXFRM) & pm0_maxfrm_MASK)
		over := n+4 > maxfrm
		if take(&d.faults.oversize) {
			d.st.faultsInjected.Add(1)
			over = true
		}
		if over {
			errb |= RxErrOversize
			m[cROVR].Add(1)
			if maxfrm >= MinFrame+4 && n+4 > maxfrm {
				n = maxfrm - 4 // the MAC stops writing at MAXFRM
			}
		}
	}
	if n > len(d.vlanBuf) {
		// Longer than the MAC's buffering can hold (a jumbo past any
		// MAXFRM the MAC takes): truncated and flagged.
		if errb&RxErrOversize == 0 {
			m[cROVR].Add(1)
		}
		errb |= RxErrOversize
		n = len(d.vlanBuf)
	}
	if take(&d.faults.crc) {
		d.st.faultsInjected.Add(1)
		errb |= RxErrCRC
		m[cRFCS].Add(1)
	}
	frame = frame[:n]
	cast := castOf(frame)
	c := &d.rxc
	c.n++
	if d.pf {
		c.reoct += uint64(n) + 4
		c.hist[sizeBucket(n+4)]++
		if errb != 0 {
			c.rerr++
		} else {
			c.rfrm++
			c.cast[cast]++
		}
	}
	var p parsed
	p.noL3Check = d.pf && d.get(regPAR_PORT_CFG)&d.parL3CD() != 0
	parseFrame(frame, &p)
	if d.pf && p.vlan {
		c.rvlan++
	}
	if d.pf && errb == 0 && !d.accept(frame, cast) {
		d.st.rxFiltered.Add(1)
		return false
	}
	if d.pf && errb == 0 && d.qciOn() && !d.qciPass(frame) {
		d.st.rxStream.Add(1) // and in its stream filter's counters, by cause (qci.go)
		return false
	}
	if !d.rxAllowed() {
		d.st.rxSIOff.Add(1)
		m[cRDRP].Add(1)
		return false
	}
	ring, hash := 0, uint32(0)
	if d.get(regSIMR)&simr_RSSE != 0 {
		hash = d.rssHash(&p)
		ring = int(d.rssTable[hash&(RSSTableLen-1)].Load())
		if ring >= d.nRx {
			if once(&d.rx[0].reported, reRSSRing) {
				d.recordErr("RSS indirection table entry %d names RX ring %d; the SI has %d: frames go to ring 0", hash&(RSSTableLen-1), ring, d.nRx)
			}
			ring = 0
		}
	}
	return d.toRing(ring, frame, errb, &p, hash, cast)
}

// rxWritten counts a frame written into a ring: the SI counters (bytes
// without FCS and without a stripped tag) and, with a non-zero error byte,
// the model's count of errored frames.
func (d *Device) rxWritten(size int, cast int, errb uint8) {
	c := &d.rxc
	c.siFrames++
	c.siBytes += uint64(size)
	if cast == 0 {
		c.siUC++
	} else {
		c.siMC++
	}
	if errb != 0 {
		c.errFrames++
	}
}

// accept is the port's MAC filter for SI 0 (PSIPMR, PSIPMAR0(0), CBDR
// exact-match entries). Broadcast always passes; multicast needs MP0 or an
// exact entry or its bucket set in the multicast hash filter (mcHashHit).
func (d *Device) accept(f []byte, cast int) bool {
	pm := d.get(regPSIPMR)
	switch cast {
	case 2:
		return true
	case 1:
		if pm&psipmr_MP0 != 0 || d.exactMatch(f) || d.mcHashHit(f) {
			return true
		}
		d.set(regMFDMF, d.get(regMFDMF)+1) // only the RX side writes it
		return false
	}
	if pm&psipmr_UP0 != 0 {
		return true
	}
	lo := uint32(f[0]) | uint32(f[1])<<8 | uint32(f[2])<<16 | uint32(f[3])<<24
	hi := uint32(f[4]) | uint32(f[5])<<8
	if lo == d.get(regPSIPMAR0) && hi == d.get(regPSIPMAR1)&0xFFFF || d.exactMatch(f) {
		return true
	}
	d.set(regUFDMF, d.get(regUFDMF)+1)
	return false
}

// mcHashHit reports whether the destination's bucket is set in SI 0's
// multicast hash filter. The model is revision-1 silicon (the PCI
// revision sim:enetc reports), whose UC/MC "0" hash registers are swapped:
// buckets 0-31 of the multicast filter are at PSIUMHFR0's offset, 32-63 at
// PSIMMHFR1. The bucket folds the address, read as a little-endian 48-bit
// number, into six bits: bit i is the parity of bits i, i+6, ..., i+42
// (the hash of the Linux driver's enetc_mac_addr_hash_idx).
func (d *Device) mcHashHit(f []byte) bool {
	a := uint64(f[0]) | uint64(f[1])<<8 | uint64(f[2])<<16 | uint64(f[3])<<24 | uint64(f[4])<<32 | uint64(f[5])<<40
	b := uint64(0)
	for ; a != 0; a >>= 6 {
		b ^= a & 0x3F
	}
	if b < 32 {
		return d.get(regPSIUMHFR0)&(1<<b) != 0
	}
	return d.get(regPSIMMHFR1)&(1<<(b-32)) != 0
}

func (d *Device) exactMatch(f []byte) bool {
	a := uint64(f[0]) | uint64(f[1])<<8 | uint64(f[2])<<16 | uint64(f[3])<<24 | uint64(f[4])<<32 | uint64(f[5])<<40
	for i := range d.macFilt {
		e := &d.macFilt[i]
		if e.en.Load() && e.si.Load()&1 != 0 && e.addr.Load() == a {
			return true
		}
	}
	return false
}

// rxPendMax bounds the write-backs a ring holds back in one batch: the
// statuses go out together (fewer trips of each BD cache line between the
// device's core and the driver's), but at most this many frames late.
const rxPendMax = 64

// rxDeliver is the receive side's state of one RX ring during a delivery
// batch (owned by whoever delivers): the ring programming the batch was
// opened with, the device's producer index and the write-backs whose data
// and fields are ready but whose status words are not yet published.
type rxDeliver struct {
	open                       bool
	mr, bar0, bar1, lenr, bbsr uint32 // the registers the batch was opened with
	base                       uint64
	l                          uint32
	bs, bdsz                   int
	pi                         uint32 // next BD to fill: RBPIR plus the pending write-backs
	ring                       []byte // the BD ring, once a frame of the batch translated it
	ringView, bufView          simdma.View
	n                          int
	wb                         [rxPendMax]rxWB
}

// rxWB is one BD's write-back waiting for publication.
type rxWB struct {
	slot    uint32
	hash    uint32
	lstatus uint32
	ps, bl  uint16
	vo      uint16
	noStamp bool // CorruptNoTimestamp: an extended BD without its stamp
}

// rxOpen returns ring n's batch state, opening the batch (checking the
// ring's programming) if none is open or the ring was reprogrammed since:
// the registers are compared on every frame. The ring is translated by the
// batch's first frame and again when the batch is published. nil means the
// frame cannot go to this ring; the loss is counted.
func (d *Device) rxOpen(n int, r *rxRing) *rxDeliver {
	o := &d.rxd[n]
	rb := uint32(n) * RingStride
	mr := d.get(regRBMR + rb)
	bar0, bar1, lenr, bbsr := d.get(regRBBAR0+rb), d.get(regRBBAR1+rb), d.get(regRBLENR+rb), d.get(regRBBSR+rb)
	if o.open {
		if mr == o.mr && bar0 == o.bar0 && bar1 == o.bar1 && lenr == o.lenr && bbsr == o.bbsr {
			return o
		}
		d.rxPublish(n) // reprogrammed: what was written goes out first
	}
	if mr&rbmr_EN == 0 {
		r.dcr.Add(1)
		d.st.rxRingOff.Add(1)
		return nil
	}
	base := uint64(bar1)<<32 | uint64(bar0)
	l := lenr &^ (RingLenAlign - 1)
	bs := int(bbsr & rbbsr_MASK)
	if !d.rxRingOK(n, r, base, lenr, bs) {
		r.dcr.Add(1)
		d.st.rxRingOff.Add(1)
		return nil
	}
	pi := r.pi.Load()
	if pi >= l {
		if once(&r.reported, reIndex) {
			d.recordErr("RX ring %d: index past the ring (RBPIR %d, length %d)", n, pi, l)
		}
		r.dcr.Add(1)
		d.st.rxRingOff.Add(1)
		return nil
	}
	o.open = true
	d.rxOpenRings |= 1 << n
	o.mr, o.bar0, o.bar1, o.lenr, o.bbsr = mr, bar0, bar1, lenr, bbsr
	o.base, o.l, o.bs, o.pi, o.n = base, l, bs, pi, 0
	o.bdsz = BDSize
	if mr&rbmr_BDS != 0 {
		o.bdsz = BDSizeExt
	}
	return o
}

// rxPublish writes ring n's pending write-backs into their BDs, each BD's
// status word last with an atomic store, then RBPIR, and closes the batch.
func (d *Device) rxPublish(n int) {
	d.runCopies() // data before any status
	o := &d.rxd[n]
	if o.n > 0 {
		ring := o.ringView.Slice(o.base, int(o.l)*o.bdsz, true)
		if ring == nil {
			// Unmapped under the device (a driver that freed a live ring):
			// the write-backs are lost.
			d.st.dmaFaults.Add(1)
			if once(&d.rx[n].reported, reBDFault) {
				d.recordErr("RX ring %d: BD ring at IOVA %#x (%d BDs of %d bytes) unmapped while frames were written", n, o.base, o.l, o.bdsz)
			}
		} else {
			// Every BD's other fields first, then the status words in ring
			// order: the atomic stores (a full barrier on amd64) then wait
			// for the field stores once, not once per BD.
			for i := range o.wb[:o.n] {
				w := &o.wb[i]
				bd := ring[int(w.slot)*o.bdsz : int(w.slot+1)*o.bdsz]
				binary.LittleEndian.PutUint16(bd[0:2], 0) // inet_csum: not modelled
				binary.LittleEndian.PutUint16(bd[2:4], w.ps)
				binary.LittleEndian.PutUint32(bd[4:8], w.hash)
				binary.LittleEndian.PutUint16(bd[8:10], w.bl)
				binary.LittleEndian.PutUint16(bd[10:12], w.vo)
				if o.bdsz == BDSizeExt {
					stamp := uint32(d.stampNs()) // RX timestamp (§12.5)
					if w.noStamp {
						stamp = 0
					}
					binary.LittleEndian.PutUint32(bd[16:20], stamp)
				}
			}
			for i := range o.wb[:o.n] {
				w := &o.wb[i]
				off := int(w.slot)*o.bdsz + 12
				st := w.lstatus
				if o.bdsz == BDSizeExt && !w.noStamp {
					st |= RxFlagTSTMP // every extended write-back carries its stamp
				}
				simdma.StoreLE32(ring[off:off+4], st) // publish: status after every other field
			}
		}
	}
	frames := 0
	for i := range o.wb[:o.n] {
		if o.wb[i].lstatus&RxStatusF != 0 {
			frames++
		}
	}
	o.n = 0
	o.open, o.ring = false, nil
	d.rxOpenRings &^= 1 << n
	d.rx[n].pi.Store(o.pi) // RBPIR: the device's progress
	if frames > 0 {
		d.rxFramesDone(n, frames) // after RBPIR: an interrupt finds the frames
	}
}

// toRing writes a frame into RX ring n's posted buffers and queues the
// BDs' write-backs (rxPublish writes them), or counts a discard in RBDCR.
func (d *Device) toRing(n int, frame []byte, errb uint8, p *parsed, hash uint32, cast int) bool {
	r := &d.rx[n]
	o := d.rxOpen(n, r)
	if o == nil {
		return false
	}
	l, bs, bdsz := o.l, o.bs, o.bdsz
	pi := o.pi
	ci := r.ci.Load() // acquire: the BDs before CI were posted by the driver
	if ci >= l {
		if once(&r.reported, reIndex) {
			d.recordErr("RX ring %d: index past the ring (RBPIR %d, RBCIR %d, length %d)", n, pi, ci, l)
		}
		r.dcr.Add(1)
		d.st.rxRingOff.Add(1)
		return false
	}
	var flags, vlan uint16
	if o.mr&rbmr_VTE != 0 && p.vlan && len(frame) >= 18 {
		vlan = binary.BigEndian.Uint16(frame[14:16])
		flags = RxFlagVLAN | d.tpidCode(p.tpid)
		copy(d.vlanBuf, frame[:12])
		copy(d.vlanBuf[12:], frame[16:])
		frame = d.vlanBuf[:len(frame)-4] // tag stripped into the BD
	}
	size := len(frame)
	need := bdsFor(size, bs)
	if need > int(owned(pi, ci, l)) {
		r.dcr.Add(1) // no buffer posted: the frame is discarded
		d.st.noBuf.Add(1)
		return false
	}
	ring := o.ring // translated once per batch; rxPublish translates again
	if ring == nil {
		if ring = o.ringView.Slice(o.base, int(l)*bdsz, true); ring == nil {
			d.st.dmaFaults.Add(1)
			if once(&r.reported, reBDFault) {
				d.recordErr("RX ring %d: BD ring at IOVA %#x (%d BDs of %d bytes) is not mapped", n, o.base, l, bdsz)
			}
			r.dcr.Add(1)
			d.st.rxRingOff.Add(1)
			return false
		}
		o.ring = ring
	}
	if need == 1 && flags == 0 && o.n < len(o.wb) && d.faults.rxDMA.Load() <= 0 && d.faults.corrupt.Load() <= 0 {
		// The common case, one BD and nothing injected, in short.
		addr := binary.LittleEndian.Uint64(ring[int(pi)*bdsz:])
		switch buf := o.bufView.Slice(addr, size, true); {
		case buf == nil:
			d.st.dmaFaults.Add(1)
			errb |= RxErrDMA
		case d.staging && d.nCopies < len(d.copies):
			c := &d.copies[d.nCopies] // field by field (see below)
			c.dst, c.src = buf, frame
			d.nCopies++
		default:
			copy(buf, frame)
		}
		w := &o.wb[o.n]
		w.slot, w.ps, w.hash, w.bl, w.vo, w.noStamp = pi, p.summary, hash, uint16(size), 0, false
		w.lstatus = RxStatusR | RxStatusF | uint32(errb)<<RxErrShift
		o.n++
		if pi++; pi == l {
			pi = 0 // indices wrap at the ring length
		}
		o.pi = pi
		if o.n == len(o.wb) {
			d.rxPublish(n)
		}
		d.rxWritten(size, cast, errb)
		return true
	}
	if take(&d.faults.rxDMA) {
		d.st.faultsInjected.Add(1)
		errb |= rxDMAFault // resolved below per BD
	}
	corrupt := d.faults.takeCorrupt()
	if corrupt != CorruptNone {
		d.st.faultsInjected.Add(1)
	}
	// Data first, into every buffer of the frame; the write-backs wait
	// until the batch is published, each status word after its BD's other
	// fields.
	idx := pi
	off := 0
	first := o.n
	for k := 0; k < need; k++ {
		addr := binary.LittleEndian.Uint64(ring[int(idx)*bdsz:])
		chunk := min(bs, size-off)
		if errb&rxDMAFault != 0 {
			addr += unmappedDelta
		}
		if buf := o.bufView.Slice(addr, chunk, true); buf == nil {
			d.st.dmaFaults.Add(1)
			errb |= RxErrDMA
		} else if !d.staging || flags&RxFlagVLAN != 0 || d.nCopies == len(d.copies) {
			// One frame (Receive), a tag stripped into vlanBuf (reused by
			// the next frame) or no room left: copied at once.
			copy(buf, frame[off:off+chunk])
		} else {
			// Field by field: a composite literal is built on the stack and
			// copied with wide loads the CPU cannot forward from the
			// narrower stores that built it (a stall per frame).
			c := &d.copies[d.nCopies]
			c.dst, c.src = buf, frame[off:off+chunk]
			d.nCopies++
		}
		if o.n == len(o.wb) {
			// A frame longer than the batch: what it wrote so far goes out
			// now (its first BDs ready before the rest, as the driver
			// allows), with the errors known so far.
			d.finishWB(o, first, errb&^rxDMAFault, flags, corrupt)
			corrupt = CorruptNone
			o.pi = idx
			d.rxPublish(n)
			o.open, first = true, 0 // the same programming, reopened in place
			d.rxOpenRings |= 1 << n
		}
		w := &o.wb[o.n] // field by field, as above
		w.slot, w.ps, w.hash, w.bl, w.vo, w.lstatus, w.noStamp = idx, p.summary, hash, uint16(chunk), vlan, RxStatusR, false
		o.n++
		off += chunk
		idx++
		if idx == l {
			idx = 0 // indices wrap at the ring length
		}
	}
	errb &^= rxDMAFault
	o.wb[o.n-1].lstatus |= RxStatusF
	d.finishWB(o, first, errb, flags, corrupt)
	o.pi = idx
	if o.n == len(o.wb) {
		d.rxPublish(n)
	}
	d.rxWritten(size, cast, errb)
	return true
}

// finishWB completes the status words of the pending write-backs from
// index first on (flags and error byte beside the R and F bits already set)
// and applies an injected corruption to the first of them, the frame's
// first BD.
func (d *Device) finishWB(o *rxDeliver, first int, errb uint8, flags uint16, c Corruption) {
	for i := first; i < o.n; i++ {
		o.wb[i].lstatus |= uint32(flags) | uint32(errb)<<RxErrShift
	}
	w := &o.wb[first]
	switch c {
	case CorruptLength:
		w.bl = uint16(min(o.bs+1024, 0xFFFF))
	case CorruptZeroStatus:
		w.lstatus = 0
	case CorruptNoFinal:
		w.lstatus &^= RxStatusF
	case CorruptBogus:
		w.ps, w.hash, w.bl, w.vo = 0xFFFF, 0xDEADBEEF, 0, 0xFFFF
		w.lstatus = w.lstatus&(RxStatusR|RxStatusF) | 0xFBFF | uint32(errb)<<RxErrShift
	case CorruptNoTimestamp:
		w.noStamp = true
	}
}

// rxDMAFault marks a frame whose DMA is to be misdirected (never written
// into a BD: cleared before write-back).
const rxDMAFault = 1 << 7

// rxRingOK checks an enabled RX ring's programming, recording each
// violation once.
func (d *Device) rxRingOK(n int, r *rxRing, base uint64, lenr uint32, bs int) bool {
	if base&(RingAlign-1) != 0 {
		if once(&r.reported, reAlign) {
			d.recordErr("RX ring %d: base IOVA %#x is not %d-byte aligned (RBBAR0)", n, base, RingAlign)
		}
		return false
	}
	if lenr&(RingLenAlign-1) != 0 && once(&r.reported, reLen) {
		d.recordErr("RX ring %d: RBLENR %d is not a multiple of %d: the device uses %d", n, lenr, RingLenAlign, lenr&^(RingLenAlign-1))
	}
	if lenr&^(RingLenAlign-1) == 0 {
		if once(&r.reported, reZeroLen) {
			d.recordErr("RX ring %d: enabled with RBLENR %d (no BDs)", n, lenr)
		}
		return false
	}
	if bs == 0 {
		if once(&r.reported, reBufSize) {
			d.recordErr("RX ring %d: enabled with RBBSR 0 (no buffer size)", n)
		}
		return false
	}
	return true
}

// tpidCode is the RX BD TPID code of an outer tag (§3.5).
func (d *Device) tpidCode(tpid uint16) uint16 {
	switch {
	case tpid == etVLAN:
		return 0
	case tpid == etQinQ:
		return 1
	case d.pf && uint32(tpid) == d.get(regPCVLANR1)&0xFFFF:
		return 2
	case d.pf && uint32(tpid) == d.get(regPCVLANR2)&0xFFFF:
		return 3
	}
	return 0
}

func (d *Device) nowNs() uint64 { return uint64(time.Since(d.t0)) }

// stampNs is the time the MAC stamps frames with and SICTR0/1 read: the
// chip's 1588 timer (TMR_CNT + TMR_OFF), host time since the device was
// made while no timer is attached. (inferred) Linux extends a stamp's low
// 32 bits with SICTR1 and reports the result as the timer's time, so the
// stamps and SICTR count the timer's time, offset included.
func (d *Device) stampNs() uint64 {
	if t := d.chip.Timer(); t != nil {
		return t.Time()
	}
	return d.nowNs()
}

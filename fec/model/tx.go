package model

import (
	"encoding/binary"
	"hash/crc32"
	"sync/atomic"
)

// txMaxFrame is the largest frame the TX engine gathers; longer frames are
// cut there and EIR.BABT is set.
const txMaxFrame = 16 << 10

// maxWalk bounds the BDs one engine pass handles before it yields.
const maxWalk = 4096

// unmappedIOVABit is ORed into an address to make an injected DMA fault:
// a 32-bit BD address can never reach above 4 GiB.
const unmappedIOVABit = 1 << 32

// txRing is the DMA engine's state for one TX ring.
type txRing struct {
	n   int
	cur uint64 // IOVA of the next BD to fetch
	// req counts TDAR writes not yet answered: TDAR reads active while it
	// is non-zero. The engine clears it with a compare-and-swap, so a write
	// that lands while the engine decides the ring is empty is never lost.
	req atomic.Uint32
	// sawEmpty: the engine's last fetch found R=0 (the ERR006358 condition).
	sawEmpty atomic.Bool
	buf      []byte // frame being gathered
	fill     int
	inFrame  bool
	bad      bool // a DMA fault hit the frame being gathered
}

var (
	eirTXFBits = [3]uint32{eir_TXF, eir_TXF1, eir_TXF2}
	eirTXBBits = [3]uint32{eir_TXB, eir_TXB1, eir_TXB2}
)

func (d *Device) tdarWrite(i int) {
	d.st.tdarWrites.Add(1)
	if i >= d.nrings || d.reg(regECR)&ecr_ETHEREN == 0 {
		return // TDAR is ignored while the MAC is disabled
	}
	if !d.dmaOwns.Load() {
		d.dmaOwns.Store(true) // the DMA owns a ring (speedRuleApplies)
	}
	r := &d.tx[i]
	if d.prof.ERR006358 && r.sawEmpty.Load() && take(&d.faults.err006358) {
		// ERR006358: the ring ran empty before; this write is lost and
		// TDAR clears without the new BDs being fetched.
		d.st.lostTDAR.Add(1)
		return
	}
	r.req.Add(1)
	if d.engine {
		d.run.kick()
		return
	}
	// Synchronous mode: the writer's goroutine runs the TX engine. TDAR
	// may be written from two goroutines (a queue and a driver's stall
	// detector), as on silicon: txMu keeps their walks apart.
	d.txMu.Lock()
	d.runTX(r)
	d.txMu.Unlock()
}

// resumeTX processes doorbells held back by GTS or a TX stall.
func (d *Device) resumeTX() {
	if d.engine {
		d.run.kick()
		return
	}
	d.txMu.Lock()
	for i := 0; i < d.nrings; i++ {
		d.runTX(&d.tx[i])
	}
	d.txMu.Unlock()
}

// txHeld reports whether the TX engine may not start a new frame.
func (d *Device) txHeld() bool {
	return d.faults.txStall.Load() || d.reg(regTCR)&tcr_GTS != 0 || d.reg(regECR)&ecr_ETHEREN == 0
}

// runTX answers TDAR for ring r: it sends every ready frame and clears TDAR
// when it finds no ready BD. Callers hold txMu in engine mode. It reports
// whether any BD was processed.
func (d *Device) runTX(r *txRing) bool {
	progress := false
	for pass := 0; ; pass++ {
		n := r.req.Load()
		if n == 0 || d.txHeld() {
			return progress
		}
		p, done := d.txWalk(r)
		progress = progress || p
		if done && r.req.CompareAndSwap(n, 0) {
			return progress
		}
		if !done && (d.engine || pass >= maxSyncPasses) {
			// Yield: the engine comes back; in synchronous mode a ring that
			// keeps re-arming itself (loopback into its own BDs) is left
			// with TDAR set for the next TDAR write to continue.
			return progress
		}
	}
}

// maxSyncPasses bounds the walks one synchronous TDAR write makes.
const maxSyncPasses = 16

// txWalk processes BDs from r.cur. done means the walk stopped on a BD
// without R (or on a fatal fault, after clearing TDAR).
func (d *Device) txWalk(r *txRing) (progress, done bool) {
	f := d.format()
	base := d.reg(tdsrOff[r.n])
	for budget := maxWalk; budget > 0; budget-- {
		if !r.inFrame && d.txHeld() {
			return progress, false
		}
		w0, ok := d.load(f, r.cur+bdWord0)
		if !ok {
			d.descFault("TX", r.n, r.cur)
			r.req.Store(0)
			return progress, true
		}
		sc := uint16(w0 >> 16)
		if sc&txbd_R == 0 {
			r.sawEmpty.Store(true)
			return progress, true
		}
		r.sawEmpty.Store(false)
		progress = true
		length := int(w0 & 0xFFFF)
		addr, _ := d.load(f, r.cur+bdAddr)
		var esc uint32
		if f.enh {
			esc, _ = d.load(f, r.cur+bdESC)
		}
		skip := 0
		if !r.inFrame {
			r.inFrame, r.fill, r.bad = true, 0, false
			if d.reg(regTACC)&tacc_SHIFT16 != 0 {
				skip = 2 // TX data starts 2 bytes into the first buffer
			}
		}
		if n := length - skip; n > 0 && !r.bad {
			iova := uint64(addr) + uint64(skip)
			if take(&d.faults.txDMA) {
				iova |= unmappedIOVABit
			}
			src := d.iommu.Slice(iova, n, false)
			if src == nil {
				r.bad = true
				d.dataFault("TX", r.n, iova, n)
			} else {
				room := txMaxFrame - r.fill
				if n > room {
					n = room
					d.setEIR(eir_BABT)
				}
				copy(r.buf[r.fill:], src[:n])
				r.fill += n
			}
		}
		last := sc&bd_L != 0
		var errs uint32
		if last {
			errs = d.txSend(r, sc, esc, f.enh)
			r.inFrame = false
			if f.enh && esc&txbd_TS != 0 && errs == 0 {
				// The frame left at this model time: its stamp (Linux's
				// fec_enet_tx_queue reads it from the last BD).
				d.store(f, r.cur+bdTS, d.ptp.stamp())
			}
		}
		if f.enh {
			d.store(f, r.cur+bdESC, esc&^txbd_ESC_ERR_MASK|errs)
			if last {
				d.store(f, r.cur+bdBDU, bd_BDU)
			}
		}
		nw0 := uint32(sc&^txbd_R)<<16 | uint32(length)
		if take(&d.faults.txCorrupt) {
			nw0 ^= 0xFFFF // the length half comes back garbled
		}
		// Publish: R cleared last, after the other words.
		if !d.store(f, r.cur+bdWord0, nw0) {
			d.descFault("TX", r.n, r.cur)
			r.req.Store(0)
			return progress, true
		}
		if !f.enh || esc&txbd_INT != 0 {
			ev := eirTXBBits[r.n]
			if last {
				ev |= eirTXFBits[r.n]
			}
			d.setEIR(ev)
		}
		r.cur = next(f, r.cur, sc, base)
	}
	return progress, false
}

// txSend puts the gathered frame on the wire and returns the esc error
// bits for its last BD.
func (d *Device) txSend(r *txRing, sc uint16, esc uint32, enh bool) uint32 {
	if r.bad {
		d.st.txDropped.Add(1)
		d.mib(mibTDrop, 1)
		return txbd_TXE | txbd_FE
	}
	frame := r.buf[:r.fill]
	if sc&txbd_TC == 0 {
		// The buffer carries its own FCS: check and strip it.
		if len(frame) < 4 || binary.LittleEndian.Uint32(frame[len(frame)-4:]) != crc32.ChecksumIEEE(frame[:len(frame)-4]) {
			d.st.txBadFCS.Add(1)
			return 0
		}
		frame = frame[:len(frame)-4]
	}
	if sc&txbd_ABC != 0 {
		d.st.txBadFCS.Add(1) // sent with a bad CRC: the peer drops it
		return 0
	}
	if n := len(frame) + 4; n > d.prof.TxFIFO && (!d.prof.Jumbo || d.reg(regTFWR)&tfwr_STRFWD != 0) {
		// Store-and-forward waits for the whole frame in the TX FIFO,
		// which cannot hold it; a part without jumbo support sends no
		// frame longer than its FIFO at all (docs/hardware-fec.md §2.8).
		d.st.txFIFOTooLong.Add(1)
		d.mib(mibTDrop, 1)
		return txbd_TXE | txbd_UE
	}
	if uint32(len(frame)+4) > d.reg(regRCR)>>rcr_MAX_FL_SHIFT&rcr_MAX_FL_MASK {
		d.setEIR(eir_BABT)
	}
	for len(frame) < 60 {
		frame = append(frame, 0) // within r.buf's spare capacity: no allocation
	}
	if d.prof.Checksum {
		tacc := d.reg(regTACC)
		ip := tacc&tacc_IPCHK != 0 || enh && esc&txbd_IINS != 0
		l4 := tacc&tacc_PROCHK != 0 || enh && esc&txbd_PINS != 0
		if ip || l4 {
			insertChecksums(frame, ip, l4)
		}
	}
	if d.avbOn() {
		d.avbDepart(r.n, len(frame)) // avb.go
	}
	d.deliverTX(frame)
	return 0
}

// deliverTX hands a frame to the wire, or back to RX in loopback.
func (d *Device) deliverTX(frame []byte) {
	rcr := d.reg(regRCR)
	if rcr&rcr_LOOP != 0 {
		// RCR.LOOP loops at the MAC-PHY interface (docs/hardware-fec.md §2.5): the
		// MAC's transmit side sent the frame, so its TX counters count it
		// as they would for the wire, and the RX side counts it again.
		d.countTX(frame)
		if d.engine {
			d.rxMu.Lock()
			defer d.rxMu.Unlock()
		}
		d.receiveLocked(frame, true)
		return
	}
	if !d.linkOK(d.reg(regECR), rcr) {
		d.st.txLinkDown.Add(1)
		return
	}
	d.countTX(frame)
	d.wire.Load().w.Transmit(frame)
}

// countTX counts a frame (padded, without FCS) the MAC transmitted, in the
// model's counters and the MIB.
func (d *Device) countTX(frame []byte) {
	d.st.txFrames.Add(1)
	d.st.txBytes.Add(uint64(len(frame)))
	d.mib(mibTPackets, 1)
	d.mib(mibTFrameOK, 1)
	d.mib(mibTOctets, uint32(len(frame)+4))
	d.mib(mibTOctetsOK, uint32(len(frame)+4))
	d.mibSize(mibTP64, len(frame)+4)
	if frame[0]&1 != 0 {
		if isBroadcast(frame) {
			d.mib(mibTBC, 1)
		} else {
			d.mib(mibTMC, 1)
		}
	}
}

func (d *Device) descFault(dir string, ring int, iova uint64) {
	d.st.dmaFaults.Add(1)
	d.setEIR(eir_EBERR)
	d.modelError("%s ring %d: descriptor at IOVA %#x is not mapped (missing wrap bit or bad ring base?)", dir, ring, iova)
}

func (d *Device) dataFault(dir string, ring int, iova uint64, n int) {
	d.st.dmaFaults.Add(1)
	d.setEIR(eir_EBERR)
	d.modelError("%s ring %d: buffer of %d bytes at IOVA %#x is not mapped", dir, ring, n, iova)
}

package model

import (
	"encoding/binary"
	"runtime"
	"sync/atomic"
	"time"
)

// rxRing is the device side of one RX BD ring.
type rxRing struct {
	pi        atomic.Uint32 // RBPIR: next BD the device fills
	ci        atomic.Uint32 // RBCIR: first BD not handed to the device
	dcr       atomic.Uint64 // RBDCR: frames discarded by this ring
	doorbells atomic.Uint64
	reported  atomic.Uint32
}

// pumpBatch bounds how many frames one Pump (or engine round) pulls from
// one source, so an endless generator cannot starve the TX side.
const pumpBatch = 256

// Receive implements wire.Port: a frame arrives from the wire (without
// FCS). It is written into posted buffers of the ring RSS (or ring 0)
// selects, or counted where it is lost. It reports whether the frame
// reached a ring. In synchronous mode it takes no lock unless sources are
// attached (then it waits for a running pump).
func (d *Device) Receive(frame []byte) bool {
	if d.engine {
		d.rxMu.Lock() // the engine delivers too; one delivery at a time
		ok := d.deliver(frame)
		d.rxMu.Unlock()
		return ok
	}
	if len(*d.srcs.Load()) == 0 {
		return d.deliver(frame) // nothing else delivers: no lock at all
	}
	for !d.pumping.CompareAndSwap(false, true) {
		runtime.Gosched() // a pump (from an RBCIR write) is delivering
	}
	ok := d.deliver(frame)
	d.pumping.Store(false)
	return ok
}

// RxRoom implements wire.Port: how many maximum-size frames the rings that
// frames go to could take now, 0 while the port cannot receive.
func (d *Device) RxRoom() int {
	if !d.link.Load() || !d.rxAllowed() || d.fifoLock.Load() {
		return 0
	}
	rings := uint32(1)
	if d.get(SIMR)&SIMR_RSSE != 0 {
		rings = d.rssRings.Load()
	}
	room := -1
	for n := 0; n < d.nRx; n++ {
		if rings&(1<<n) == 0 {
			continue
		}
		rb := uint32(n) * RingStride
		l := d.get(RBLENR+rb) &^ (RingLenAlign - 1)
		bs := int(d.get(RBBSR+rb) & RBBSR_MASK)
		r := &d.rx[n]
		pi, ci := r.pi.Load(), r.ci.Load()
		if d.get(RBMR+rb)&RBMR_EN == 0 || l == 0 || bs == 0 || pi >= l || ci >= l {
			return 0
		}
		avail := int((ci + l - pi - 1) % l)
		maxf := MaxFrame
		if d.pf {
			maxf = int(d.get(PM0_MAXFRM) & MAXFRM_MASK)
		}
		f := avail / ((maxf + bs - 1) / bs)
		if room < 0 || f < room {
			room = f
		}
	}
	return max(room, 0)
}

// rxAllowed: MAC RX enabled and port/SI enabled.
func (d *Device) rxAllowed() bool {
	if d.get(SIMR)&SIMR_EN == 0 {
		return false
	}
	return !d.pf || (d.get(PM0_CMD_CFG)&CMD_CFG_RX_EN != 0 && d.get(PMR)&PMR_SI0EN != 0)
}

// Pump pulls frames from the attached sources and delivers them (a
// lossless source's frame only once its ring has room: it waits in the
// source's slot until then), at most 256 per source. It
// returns how many frames were pulled. Synchronous mode; in engine mode the
// engine pumps.
//
// In synchronous mode every RBCIR write pumps too, so a driver that only
// refills its ring keeps frames from sources coming; a pump already running
// in another goroutine makes the second one return 0.
func (d *Device) Pump() int {
	if d.engine {
		d.rxMu.Lock()
		n := d.pump()
		d.rxMu.Unlock()
		return n
	}
	if !d.pumping.CompareAndSwap(false, true) {
		return 0 // another goroutine is pumping
	}
	n := d.pump()
	d.pumping.Store(false)
	return n
}

func (d *Device) pump() int {
	total := 0
	for _, s := range *d.srcs.Load() {
		for i := 0; i < pumpBatch; i++ {
			if s.lossless {
				// Pull into the source's pending buffer; deliver only when
				// every ring the frame may go to has room for it.
				if s.pendN == 0 {
					n, ok := s.s.Next(s.pend)
					if !ok {
						break
					}
					s.pendN = max(min(n, len(s.pend)), 1)
				}
				if !d.roomFor(s.pendN) {
					break
				}
				d.deliver(s.pend[:s.pendN])
				s.pendN = 0
				total++
				continue
			}
			n, ok := s.s.Next(d.pumpBuf)
			if !ok {
				break
			}
			d.deliver(d.pumpBuf[:min(n, len(d.pumpBuf))])
			total++
		}
	}
	return total
}

// roomFor reports whether a frame of size bytes would find its BDs on
// every ring frames may go to now (ring 0, or the rings of the RSS table).
func (d *Device) roomFor(size int) bool {
	if !d.link.Load() || !d.rxAllowed() || d.fifoLock.Load() {
		return false
	}
	rings := uint32(1)
	if d.get(SIMR)&SIMR_RSSE != 0 {
		rings = d.rssRings.Load()
	}
	for n := 0; n < d.nRx; n++ {
		if rings&(1<<n) == 0 {
			continue
		}
		rb := uint32(n) * RingStride
		l := d.get(RBLENR+rb) &^ (RingLenAlign - 1)
		bs := int(d.get(RBBSR+rb) & RBBSR_MASK)
		r := &d.rx[n]
		pi, ci := r.pi.Load(), r.ci.Load()
		if d.get(RBMR+rb)&RBMR_EN == 0 || l == 0 || bs == 0 || pi >= l || ci >= l {
			return false
		}
		if int((ci+l-pi-1)%l) < (size+bs-1)/bs { // BDs the device owns vs BDs the frame needs
			return false
		}
	}
	return true
}

// deliver runs one frame through the MAC, the port filter and RSS into a
// ring. It is the whole receive path; the caller serialises it.
func (d *Device) deliver(frame []byte) bool {
	n := len(frame)
	if !d.link.Load() {
		d.st.rxLinkDown.Add(1) // lost on the wire
		return false
	}
	if d.pf && d.get(PM0_CMD_CFG)&CMD_CFG_RX_EN == 0 {
		d.st.rxMACOff.Add(1)
		return false
	}
	m := &d.mac
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
			d.st.rxFIFO.Add(1)
			return false
		}
		if d.get(PM0_RX_FIFO) != 1 {
			d.fifoCount++
			if d.fifoCount >= d.cfg.FIFOLockAfter {
				d.fifoLock.Store(true)
				d.recordErr("MAC RX locked up after %d frames: PM0_RX_FIFO is %d, the power-on value; write 1 (erratum §5.4); only a function reset recovers", d.fifoCount, d.get(PM0_RX_FIFO))
			}
		}
		maxfrm := int(d.get(PM0_MAXFRM) & MAXFRM_MASK)
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
	if d.pf {
		m[cREOCT].Add(uint64(n) + 4)
		m[cR64+sizeBucket(n+4)].Add(1)
		if errb != 0 {
			m[cRERR].Add(1)
			m[cRPKT].Add(1) // RPKT reads as RFRM plus the bad frames counted here
		} else {
			m[cRFRM].Add(1)
			m[cRUCA+cast].Add(1)
		}
	}
	var p parsed
	parseFrame(frame, &p)
	if d.pf && p.vlan {
		m[cRVLAN].Add(1)
	}
	if d.pf && errb == 0 && !d.accept(frame, cast) {
		d.st.rxFiltered.Add(1)
		return false
	}
	if !d.rxAllowed() {
		d.st.rxSIOff.Add(1)
		return false
	}
	ring, hash := 0, uint32(0)
	if d.get(SIMR)&SIMR_RSSE != 0 {
		hash = d.rssHash(&p)
		ring = int(d.rssTable[hash&(RSSTableLen-1)].Load())
		if ring >= d.nRx {
			if once(&d.rx[0].reported, reRSSRing) {
				d.recordErr("RSS indirection table entry %d names RX ring %d; the SI has %d: frames go to ring 0", hash&(RSSTableLen-1), ring, d.nRx)
			}
			ring = 0
		}
	}
	return d.toRing(ring, frame, errb, &p, hash)
}

// accept is the port's MAC filter for SI 0 (PSIPMR, PSIPMAR0(0), CBDR
// exact-match entries). Broadcast always passes; multicast needs MP0 or an
// exact entry (the hash filters are not modelled).
func (d *Device) accept(f []byte, cast int) bool {
	pm := d.get(PSIPMR)
	switch cast {
	case 2:
		return true
	case 1:
		if pm&PSIPMR_MP0 != 0 || d.exactMatch(f) {
			return true
		}
		d.set(MFDMF, d.get(MFDMF)+1) // only the RX side writes it
		return false
	}
	if pm&PSIPMR_UP0 != 0 {
		return true
	}
	lo := uint32(f[0]) | uint32(f[1])<<8 | uint32(f[2])<<16 | uint32(f[3])<<24
	hi := uint32(f[4]) | uint32(f[5])<<8
	if lo == d.get(PSIPMAR0) && hi == d.get(PSIPMAR1)&0xFFFF || d.exactMatch(f) {
		return true
	}
	d.set(UFDMF, d.get(UFDMF)+1)
	return false
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

// toRing writes a frame into RX ring n's posted buffers and writes the BDs
// back, or counts a discard in RBDCR.
func (d *Device) toRing(n int, frame []byte, errb uint8, p *parsed, hash uint32) bool {
	r := &d.rx[n]
	rb := uint32(n) * RingStride
	mr := d.get(RBMR + rb)
	if mr&RBMR_EN == 0 {
		r.dcr.Add(1)
		d.st.rxRingOff.Add(1)
		return false
	}
	base := uint64(d.get(RBBAR1+rb))<<32 | uint64(d.get(RBBAR0+rb))
	lenr := d.get(RBLENR + rb)
	l := lenr &^ (RingLenAlign - 1)
	bs := int(d.get(RBBSR+rb) & RBBSR_MASK)
	if !d.rxRingOK(n, r, base, lenr, bs) {
		r.dcr.Add(1)
		d.st.rxRingOff.Add(1)
		return false
	}
	pi := r.pi.Load()
	ci := r.ci.Load() // acquire: the BDs before CI were posted by the driver
	if pi >= l || ci >= l {
		if once(&r.reported, reIndex) {
			d.recordErr("RX ring %d: index past the ring (RBPIR %d, RBCIR %d, length %d)", n, pi, ci, l)
		}
		r.dcr.Add(1)
		d.st.rxRingOff.Add(1)
		return false
	}
	// The device owns the BDs from PI up to, not including, the one before
	// CI: it never advances PI onto CI (§4.1).
	avail := int((ci + l - pi - 1) % l)
	var flags uint16
	var vlan uint16
	if mr&RBMR_VTE != 0 && p.vlan && len(frame) >= 18 {
		vlan = binary.BigEndian.Uint16(frame[14:16])
		flags = RxFlagVLAN | d.tpidCode(p.tpid)
		copy(d.vlanBuf, frame[:12])
		copy(d.vlanBuf[12:], frame[16:])
		frame = d.vlanBuf[:len(frame)-4] // tag stripped into the BD
	}
	size := len(frame)
	need := (size + bs - 1) / bs
	if need > avail {
		r.dcr.Add(1) // no buffer posted: the frame is discarded
		d.st.noBuf.Add(1)
		return false
	}
	bdsz := BDSize
	if mr&RBMR_BDS != 0 {
		bdsz = BDSizeExt
	}
	ring := d.iommu.Slice(base, int(l)*bdsz, true)
	if ring == nil {
		d.st.dmaFaults.Add(1)
		if once(&r.reported, reBDFault) {
			d.recordErr("RX ring %d: BD ring at IOVA %#x (%d BDs of %d bytes) is not mapped", n, base, l, bdsz)
		}
		r.dcr.Add(1)
		d.st.rxRingOff.Add(1)
		return false
	}
	if take(&d.faults.rxDMA) {
		d.st.faultsInjected.Add(1)
		errb |= rxDMAFault // resolved below per BD
	}
	// Data first, into every buffer of the frame.
	idx := pi
	off := 0
	for k := 0; k < need; k++ {
		bd := ring[int(idx)*bdsz:]
		addr := binary.LittleEndian.Uint64(bd[0:8])
		chunk := min(bs, size-off)
		if errb&rxDMAFault != 0 {
			addr += unmappedDelta
		}
		buf := d.iommu.Slice(addr, chunk, true)
		if buf == nil {
			d.st.dmaFaults.Add(1)
			errb |= RxErrDMA
		} else {
			copy(buf, frame[off:off+chunk])
		}
		off += chunk
		idx++
		if idx == l {
			idx = 0 // indices wrap at the ring length
		}
	}
	errb &^= rxDMAFault
	// Then the write-backs, each BD's status word last.
	corrupt := Corruption(d.faults.corrupt.Swap(0))
	if corrupt != CorruptNone {
		d.st.faultsInjected.Add(1)
	}
	idx = pi
	off = 0
	for k := 0; k < need; k++ {
		bdIOVA := base + uint64(idx)*uint64(bdsz)
		bd := ring[int(idx)*bdsz : int(idx)*bdsz+bdsz]
		chunk := min(bs, size-off)
		off += chunk
		st := uint32(RxStatusR)
		if k == need-1 {
			st |= RxStatusF
		}
		ps, h, bl, fl, vo := p.summary, hash, uint16(chunk), flags, vlan
		if k == 0 {
			switch corrupt {
			case CorruptLength:
				bl = uint16(min(bs+1024, 0xFFFF))
			case CorruptZeroStatus:
				st = 0
			case CorruptNoFinal:
				st &^= RxStatusF
			case CorruptBogus:
				ps, h, bl, fl, vo = 0xFFFF, 0xDEADBEEF, 0, 0xFBFF, 0xFFFF
			}
		}
		binary.LittleEndian.PutUint16(bd[0:2], 0) // inet_csum: not modelled
		binary.LittleEndian.PutUint16(bd[2:4], ps)
		binary.LittleEndian.PutUint32(bd[4:8], h)
		binary.LittleEndian.PutUint16(bd[8:10], bl)
		binary.LittleEndian.PutUint16(bd[10:12], vo)
		if bdsz == BDSizeExt {
			binary.LittleEndian.PutUint32(bd[16:20], uint32(d.nowNs())) // RX timestamp
		}
		lstatus := uint32(fl) | uint32(errb)<<RxErrShift | st
		if st == 0 {
			lstatus = 0
		}
		d.iommu.Store32(bdIOVA+12, lstatus) // publish: status after every other field
		idx++
		if idx == l {
			idx = 0 // indices wrap at the ring length
		}
	}
	r.pi.Store(idx) // RBPIR: the device's progress
	d.si[sRFRM].Add(1)
	d.si[sROCT].Add(uint64(size))
	if p := castOf(frame); p == 0 {
		d.si[sRUCA].Add(1)
	} else {
		d.si[sRMCA].Add(1)
	}
	if errb != 0 {
		d.st.rxErrFrames.Add(1)
	}
	return true
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
	case d.pf && uint32(tpid) == d.get(PCVLANR1)&0xFFFF:
		return 2
	case d.pf && uint32(tpid) == d.get(PCVLANR2)&0xFFFF:
		return 3
	}
	return 0
}

func (d *Device) nowNs() uint64 { return uint64(time.Since(d.t0)) }

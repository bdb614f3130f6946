package model

import (
	"encoding/binary"
	"hash/crc32"
	"sync/atomic"
)

// rxMaxFrame is the largest frame the RX side accepts from the wire; longer
// ones are cut there.
const rxMaxFrame = 16 << 10

// rxRing is the DMA engine's state for one RX ring.
type rxRing struct {
	n   int
	cur uint64 // IOVA of the next BD to fill
	// req counts RDAR writes not yet answered: RDAR reads active while it
	// is non-zero. The engine clears it with a compare-and-swap when it
	// finds no empty BD, so a refill's RDAR write is never lost.
	req atomic.Uint32
}

var (
	eirRXFBits = [3]uint32{eir_RXF, eir_RXF1, eir_RXF2}
	eirRXBBits = [3]uint32{eir_RXB, eir_RXB1, eir_RXB2}
)

func (d *Device) rdarWrite(i int) {
	d.st.rdarWrites.Add(1)
	if i >= d.nrings || d.reg(regECR)&ecr_ETHEREN == 0 {
		return // RDAR is ignored while the MAC is disabled
	}
	if !d.dmaOwns.Load() {
		d.dmaOwns.Store(true) // the DMA owns a ring (speedRuleApplies)
	}
	r := &d.rx[i]
	n := r.req.Add(1)
	if d.engine && len(*d.sources.Load()) != 0 {
		d.run.kick() // buffers are back: a lossless source's frames come in
	}
	// The DMA fetches the current BD at once: if it is not empty, RDAR
	// clears again and receiving stays stopped.
	if d.engine {
		d.rxMu.Lock()
		defer d.rxMu.Unlock()
	}
	f := d.format()
	w0, ok := d.load(f, r.cur+bdWord0)
	if !ok {
		d.descFault("RX", i, r.cur)
		r.req.Store(0)
		return
	}
	if uint16(w0>>16)&rxbd_E == 0 {
		r.req.CompareAndSwap(n, 0)
		return
	}
	if !d.engine && i == 0 && len(*d.sources.Load()) != 0 {
		// Empty buffers are there (at enable, or a refill gave them
		// back): frames waiting at sources come in, so a driver's plain
		// RX loop sees them with no Pump call.
		d.Pump()
	}
}

// Receive offers a frame from the wire (without FCS). It is DMAed into the
// ring's empty BDs now (synchronous mode) or under the RX lock (engine
// mode). It reports whether the frame reached memory.
func (d *Device) Receive(frame []byte) bool {
	if d.engine {
		d.rxMu.Lock()
		defer d.rxMu.Unlock()
	}
	return d.receiveLocked(frame, false)
}

// RxRoom reports how many more full-size frames ring 0 can take now.
func (d *Device) RxRoom() int {
	if d.reg(regECR)&ecr_ETHEREN == 0 {
		return 0
	}
	if d.engine {
		d.rxMu.Lock()
		defer d.rxMu.Unlock()
	}
	r := &d.rx[0]
	if r.req.Load() == 0 {
		return 0
	}
	mrbr := int(d.reg(mrbrOff[0]) & 0x3FF0)
	if mrbr == 0 {
		return 0
	}
	perFrame := (2 + int(d.reg(regRCR)>>rcr_MAX_FL_SHIFT&rcr_MAX_FL_MASK) + mrbr - 1) / mrbr
	if perFrame < 1 {
		perFrame = 1
	}
	f := d.format()
	base := d.reg(rdsrOff[0])
	cur, empty := r.cur, 0
	for empty < 64 {
		w0, ok := d.load(f, cur)
		if !ok {
			break
		}
		sc := uint16(w0 >> 16)
		if sc&rxbd_E == 0 {
			break
		}
		empty++
		cur = next(f, cur, sc, base)
		if cur == r.cur {
			break
		}
	}
	return empty / perFrame
}

// linkOK reports whether frames pass between MAC and PHY: link up and the
// MAC programmed for the PHY's speed. 1000 Mb/s takes RGMII (RCR.RGMII_EN):
// MII and RMII carry 10 and 100 Mb/s only (docs/hardware-fec.md §5.4), so
// ECR.SPEED without RGMII_EN passes nothing.
func (d *Device) linkOK(ecr, rcr uint32) bool {
	if !d.link.Load() {
		return false
	}
	mac := 100
	switch {
	case d.prof.Gigabit && ecr&ecr_SPEED != 0 && rcr&rcr_RGMII_EN == 0:
		d.st.speedMismatch.Add(1)
		return false
	case d.prof.Gigabit && ecr&ecr_SPEED != 0:
		mac = 1000
	case rcr&rcr_RMII_10T != 0:
		mac = 10
	}
	if int32(mac) != d.phy.speed.Load() {
		d.st.speedMismatch.Add(1)
		return false
	}
	return true
}

func isBroadcast(f []byte) bool {
	return f[0]&f[1]&f[2]&f[3]&f[4]&f[5] == 0xFF
}

// hashBit is the 6-bit hash-table index of an address: the top bits of
// the little-endian CRC-32 without final inversion (docs/hardware-fec.md §2.7).
func hashBit(addr []byte) uint32 {
	return ^crc32.ChecksumIEEE(addr[:6]) >> 26
}

func (d *Device) hashHit(addr []byte, hi, lo uint32) bool {
	h := hashBit(addr)
	if h >= 32 {
		return d.reg(hi)&(1<<(h-32)) != 0
	}
	return d.reg(lo)&(1<<h) != 0
}

// filter applies the MAC's address filter: station address, individual
// and group hash tables, broadcast reject and promiscuous mode.
func (d *Device) filter(f []byte, rcr uint32) (sc uint16, esc uint32, ok bool) {
	prom := rcr&rcr_PROM != 0
	if f[0]&1 != 0 {
		if isBroadcast(f) {
			if rcr&rcr_BC_REJ != 0 && !prom {
				return 0, 0, false
			}
			return rxbd_BC, 0, true
		}
		if d.hashHit(f, regGAUR, regGALR) {
			return rxbd_MC, 0, true
		}
		if prom {
			return rxbd_MC | rxbd_M, 0, true
		}
		return 0, 0, false
	}
	mac := d.MAC()
	if [6]byte(f[:6]) == mac || d.hashHit(f, regIAUR, regIALR) {
		return 0, rxbd_UC, true
	}
	if prom {
		return rxbd_M, rxbd_UC, true
	}
	return 0, 0, false
}

// classify picks the RX ring: on multi-queue parts a VLAN-tagged frame
// whose priority matches RCMR1 or RCMR2 goes to ring 1 or 2.
func (d *Device) classify(f []byte) int {
	if d.nrings == 1 || len(f) < 18 || binary.BigEndian.Uint16(f[12:]) != 0x8100 {
		return 0
	}
	pcp := uint32(f[14] >> 5)
	for ring, off := range [2]uint32{regRCMR1, regRCMR2} {
		m := d.reg(off)
		if m&rcmr_MATCHEN == 0 {
			continue
		}
		for k := 0; k < 4; k++ {
			if m>>(4*k)&7 == pcp {
				return ring + 1
			}
		}
	}
	return 0
}

// receiveLocked runs the receive path; callers hold rxMu in engine mode.
// loop marks a frame coming from the MAC's own TX in loopback.
func (d *Device) receiveLocked(frame []byte, loop bool) bool {
	// Every frame the MAC discards is counted where a driver can read it:
	// RMON_R_DROP for receive disabled, link down, the address filter and
	// the RACC discards, RMON_R_UNDERSIZE for runts, IEEE_R_DROP for want
	// of an empty BD. The reference leaves RMON_R_DROP undocumented (only
	// U-Boot names it); the model gives it this meaning and counts each
	// discard once.
	ecr, rcr := d.reg(regECR), d.reg(regRCR)
	if ecr&ecr_ETHEREN == 0 {
		d.st.rxDisabled.Add(1)
		d.mib(mibRDrop, 1)
		return false
	}
	if !loop {
		if rcr&rcr_LOOP != 0 {
			d.st.rxLoopIgnored.Add(1) // the MAC listens to its own TX only
			d.mib(mibRDrop, 1)
			return false
		}
		if !d.linkOK(ecr, rcr) {
			d.st.rxLinkDown.Add(1)
			d.mib(mibRDrop, 1)
			return false
		}
	}
	if len(frame) < 14 {
		d.st.rxRunt.Add(1)
		d.mib(mibRUndersz, 1)
		return false
	}
	status, esc, ok := d.filter(frame, rcr)
	if !ok {
		d.st.rxFiltered.Add(1)
		d.mib(mibRDrop, 1)
		return false
	}
	ring := d.classify(frame)
	if ring >= d.nrings {
		ring = 0
	}
	shift := 0
	racc := d.reg(regRACC)
	if d.prof.RACC && racc&racc_SHIFT16 != 0 {
		shift = 2
	}
	// Stage the bytes as they go to memory: [2 pad bytes][frame][FCS].
	n := len(frame)
	if n > rxMaxFrame {
		n = rxMaxFrame
	}
	st := d.stage
	st[0], st[1] = 0, 0
	copy(st[shift:], frame[:n])
	for ; n < 60; n++ {
		st[shift+n] = 0
	}
	body := st[shift : shift+n]
	if d.prof.Checksum {
		ipBad, l4Bad, e := checkChecksums(body)
		esc |= e
		if ipBad {
			esc |= rxbd_ICE
		}
		if l4Bad {
			esc |= rxbd_PCR
		}
		if ipBad && racc&racc_IPDIS != 0 || l4Bad && racc&racc_PRODIS != 0 {
			d.st.rxCsumDiscard.Add(1)
			d.mib(mibRDrop, 1)
			return false
		}
	}
	if _, _, vlan := l3(body); vlan {
		esc |= rxbd_VLAN
	}
	fcs := crc32.ChecksumIEEE(body)
	if take(&d.faults.rxCRC) {
		fcs = ^fcs // the frame arrives damaged: its FCS does not match
		status |= rxbd_CR
	}
	binary.LittleEndian.PutUint32(st[shift+n:], fcs)
	flen := n + 4 // frame length on the wire, FCS included
	if uint32(flen) > rcr>>rcr_MAX_FL_SHIFT&rcr_MAX_FL_MASK || take(&d.faults.rxOversize) {
		status |= rxbd_LG
		d.setEIR(eir_BABR)
	}
	if ftrl := int(d.reg(regFTRL) & 0x3FFF); flen > ftrl {
		status |= rxbd_TR
		flen = ftrl
	}
	if take(&d.faults.rxTrunc) {
		status |= rxbd_TR
		if flen > 64 {
			flen = 64
		}
	}
	if take(&d.faults.rxOverrun) {
		status |= rxbd_OV
	}
	if take(&d.faults.rxNonOctet) {
		status |= rxbd_NO
	}
	if take(&d.faults.rxShort) {
		status |= rxbd_SH
	}
	if status&rxErrBits != 0 && racc&0x40 != 0 {
		d.st.rxErrDiscard.Add(1) // RACC.LINEDIS: MAC-layer errors are discarded
		d.mib(mibRDrop, 1)
		return false
	}
	return d.rxDMA(&d.rx[ring], st[:shift+flen], shift, status, esc, frame[0]&1 != 0)
}

// rxDMA writes data (what goes to memory, FCS included) into the ring's
// empty BDs and publishes them. status and esc are the last BD's bits.
func (d *Device) rxDMA(r *rxRing, data []byte, shift int, status uint16, esc uint32, group bool) bool {
	f := d.format()
	base := d.reg(rdsrOff[r.n])
	mrbr := int(d.reg(mrbrOff[r.n]) & 0x3FF0)
	if mrbr == 0 {
		d.st.rxNoBuffer.Add(1)
		d.modelError("RX ring %d: MRBR is 0: no byte fits a buffer", r.n)
		return false
	}
	need := (len(data) + mrbr - 1) / mrbr
	var avail int
	for {
		req := r.req.Load()
		if req == 0 {
			d.noBuffer()
			return false
		}
		avail = 0
		for p := r.cur; avail < need; avail++ {
			w0, ok := d.load(f, p+bdWord0)
			if !ok {
				d.descFault("RX", r.n, p)
				r.req.Store(0)
				return false
			}
			sc := uint16(w0 >> 16)
			if sc&rxbd_E == 0 {
				break
			}
			p = next(f, p, sc, base)
			if p == r.cur {
				avail++ // the whole ring is empty: every BD counted once
				break
			}
		}
		if avail > 0 {
			break
		}
		// No empty BD: RDAR clears, unless a new RDAR write came meanwhile.
		if r.req.CompareAndSwap(req, 0) {
			d.noBuffer()
			return false
		}
	}
	if avail < need {
		// The ring ran out mid-frame: what fits is written, the rest
		// overflows the FIFO.
		data = data[:avail*mrbr]
		status |= rxbd_OV
		d.st.rxOverrun.Add(1)
		d.mib(mibRMACErr, 1)
	}
	// Pass 1: the data, so a DMA fault drops the frame before any BD is
	// handed back.
	p := r.cur
	for k := 0; k < avail; k++ {
		w0, _ := d.load(f, p+bdWord0)
		addr, _ := d.load(f, p+bdAddr)
		chunk := data[k*mrbr : min((k+1)*mrbr, len(data))]
		iova := uint64(addr)
		if take(&d.faults.rxDMA) {
			iova |= unmappedIOVABit
		}
		dst := d.iommu.Slice(iova, len(chunk), true)
		if dst == nil {
			d.dataFault("RX", r.n, iova, len(chunk))
			d.st.rxDropped.Add(1)
			return false
		}
		copy(dst, chunk)
		p = next(f, p, uint16(w0>>16), base)
	}
	// Pass 2: write back and publish each BD, status word last.
	ev := uint32(0)
	var ts uint32
	if f.enh {
		ts = d.ptp.stamp() // the frame reached the MAC now: the wire edge in model time
	}
	for k := 0; k < avail; k++ {
		w0, _ := d.load(f, r.cur+bdWord0)
		sc := uint16(w0 >> 16)
		last := k == avail-1
		nsc := sc & (bd_W | bd_RO1 | bd_RO2)
		length := uint32(mrbr)
		if last {
			nsc |= bd_L | status
			length = uint32(len(data))
		}
		intr := !f.enh
		if f.enh {
			old, _ := d.load(f, r.cur+bdESC)
			intr = old&rxbd_INT != 0
			e := old & rxbd_INT
			if last {
				e |= esc
				if status&rxErrBits != 0 {
					e |= rxbd_ME
				}
			}
			d.store(f, r.cur+bdESC, e)
			d.store(f, r.cur+bdProt, 0)
			d.store(f, r.cur+bdBDU, bd_BDU)
			d.store(f, r.cur+bdTS, ts) // (inferred) every BD of the frame: Linux reads the last
		}
		nw0 := uint32(nsc)<<16 | length
		if last && take(&d.faults.rxCorrupt) {
			nw0 ^= 0xFFFF // the length half comes back garbled
		}
		d.store(f, r.cur+bdWord0, nw0)
		if intr {
			ev |= eirRXBBits[r.n]
			if last {
				ev |= eirRXFBits[r.n]
			}
		}
		r.cur = next(f, r.cur, sc, base)
	}
	d.setEIR(ev)
	// Look at the next BD now: a full ring clears RDAR.
	if req := r.req.Load(); req != 0 {
		if w0, ok := d.load(f, r.cur+bdWord0); ok && uint16(w0>>16)&rxbd_E == 0 {
			r.req.CompareAndSwap(req, 0)
		}
	}
	d.countRX(len(data)-shift, status, group)
	return avail == need
}

func (d *Device) noBuffer() {
	d.st.rxNoBuffer.Add(1)
	d.mib(mibRIEEEDrop, 1)
}

// countRX counts a frame of n bytes (FCS included) written to memory: the
// model's RxBytes without the FCS, as TxBytes, the driver and Linux's
// rx_bytes count, the MIB's octets with it.
func (d *Device) countRX(n int, status uint16, group bool) {
	d.st.rxFrames.Add(1)
	d.st.rxBytes.Add(uint64(max(n-4, 0)))
	if status&rxErrBits != 0 {
		d.st.rxErrors.Add(1)
	}
	d.mib(mibRPackets, 1)
	d.mib(mibROctets, uint32(n))
	d.mibSize(mibRP64, n)
	switch {
	case status&rxbd_BC != 0:
		d.mib(mibRBC, 1)
	case group:
		d.mib(mibRMC, 1)
	}
	if status&rxbd_CR != 0 {
		d.mib(mibRCRC, 1)
		d.mib(mibRCRCAlign, 1)
	}
	if status&rxbd_LG != 0 {
		d.mib(mibROversize, 1)
	}
	if status&rxErrBits == 0 {
		d.mib(mibRFrameOK, 1)
		d.mib(mibROctetsOK, uint32(n))
	}
}

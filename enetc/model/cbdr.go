package model

import (
	"encoding/binary"
	"math/bits"
)

// Control BD (§2.5): 32 bytes; bytes 0–23 command data (addr[0], addr[1],
// opt[0..3] as LE32 words), 24–25 index, 26–27 length, 28 cmd, 29 class,
// 31 status_flags (bit 7 SF; low 4 bits error status after completion).
const (
	cbdAddr0  = 0
	cbdAddr1  = 4
	cbdOpt0   = 8
	cbdOpt3   = 20
	cbdIndex  = 24
	cbdLength = 26
	cbdCmd    = 28
	cbdClass  = 29
	cbdStatus = 31
)

// CBD completion status codes the model writes in the low 4 bits of
// status_flags (the reference gives no codes; 0 is success).
const (
	CBDErrNone     = 0
	CBDErrClass    = 1 // unknown class or command
	CBDErrIndex    = 2 // entry index out of range
	CBDErrLength   = 3 // bad length
	CBDErrDMA      = 4 // data buffer not reachable
	CBDErrArgument = 5 // bad argument (ring number in the RSS table)
)

// processCBDR runs the control BDs from SICBDRCIR up to SICBDRPIR and
// returns how many it completed.
func (d *Device) processCBDR() int {
	if d.get(regSICBDRMR)&sicbdrmr_EN == 0 || d.cbdrHalted.Load() {
		return 0
	}
	base := uint64(d.get(regSICBDRBAR1))<<32 | uint64(d.get(regSICBDRBAR0))
	lenr := d.get(regSICBDRLENR)
	l := lenr &^ (RingLenAlign - 1)
	pi, ci := d.get(regSICBDRPIR), d.get(regSICBDRCIR)
	if pi == ci {
		return 0
	}
	bad := ""
	switch {
	case base&(RingAlign-1) != 0:
		bad = "base IOVA is not 128-byte aligned"
	case lenr&(RingLenAlign-1) != 0:
		bad = "SICBDRLENR is not a multiple of 8"
	case l == 0:
		bad = "SICBDRLENR is 0"
	case pi >= l || ci >= l:
		bad = "PIR or CIR past the ring's end"
	}
	ring := d.iommu.Slice(base, int(l)*CBDSize, true)
	if bad == "" && ring == nil {
		d.st.dmaFaults.Add(1)
		bad = "BD ring is not mapped"
	}
	if bad != "" {
		d.cbdrHalted.Store(true)
		d.recordErr("control BD ring (base %#x, SICBDRLENR %d, PIR %d, CIR %d): %s: halted until reprogrammed", base, lenr, pi, ci, bad)
		return 0
	}
	done := 0
	for ci != pi {
		cbd := ring[ci*CBDSize : ci*CBDSize+CBDSize]
		st := d.runCBD(cbd)
		cbd[cbdStatus] = cbd[cbdStatus]&0xF0 | st
		ci++
		if ci == l {
			ci = 0 // indices wrap at the ring length
		}
		done++
	}
	d.set(regSICBDRCIR, ci) // completion: the driver polls CIR
	return done
}

// runCBD executes one control command and returns its error status.
func (d *Device) runCBD(c []byte) uint8 {
	addr := uint64(binary.LittleEndian.Uint32(c[cbdAddr1:]))<<32 | uint64(binary.LittleEndian.Uint32(c[cbdAddr0:]))
	idx := int(binary.LittleEndian.Uint16(c[cbdIndex:]))
	length := int(binary.LittleEndian.Uint16(c[cbdLength:]))
	switch c[cbdClass] {
	case CBDClassMAC:
		if idx >= MACFilterEntries {
			return CBDErrIndex
		}
		opt0 := binary.LittleEndian.Uint32(c[cbdOpt0:])
		e := &d.macFilt[idx]
		lo := uint64(binary.LittleEndian.Uint32(c[cbdAddr0:]))
		hi := uint64(binary.LittleEndian.Uint32(c[cbdAddr1:]) & 0xFFFF)
		e.addr.Store(lo | hi<<32)
		e.si.Store(binary.LittleEndian.Uint32(c[cbdOpt3:]))
		e.en.Store(opt0&(1<<31) != 0)
		return CBDErrNone
	case CBDClassRSS:
		switch c[cbdCmd] {
		case CBDCmdRSSSet:
			if length == 0 || length > RSSTableLen {
				return CBDErrLength
			}
			b := d.iommu.Slice(addr, length, false)
			if b == nil {
				d.st.dmaFaults.Add(1)
				return CBDErrDMA
			}
			var rings uint32
			for _, v := range b {
				if int(v) >= d.nRx {
					return CBDErrArgument
				}
				rings |= 1 << v
			}
			for i, v := range b {
				d.rssTable[i].Store(uint32(v))
			}
			d.rssInit.Or(uint64(1)<<length - 1) // entries 0..length-1 written (1<<64 is 0)
			for i := length; i < RSSTableLen; i++ {
				rings |= 1 << d.rssTable[i].Load()
			}
			d.rssRings.Store(rings)
			return CBDErrNone
		case CBDCmdRSSQuery:
			if length == 0 || length > RSSTableLen {
				return CBDErrLength
			}
			b := d.iommu.Slice(addr, length, true)
			if b == nil {
				d.st.dmaFaults.Add(1)
				return CBDErrDMA
			}
			for i := range b {
				b[i] = byte(d.rssTable[i].Load())
			}
			return CBDErrNone
		}
		return CBDErrClass
	case CBDClassStreamID, CBDClassStreamFilter, CBDClassStreamGate, CBDClassFlowMeter:
		return d.runQciCBD(c, addr, idx, length)
	case CBDClassPortGCL:
		if !d.pf {
			return CBDErrClass
		}
		return d.loadGateList(c, addr, length)
	case CBDClassRFS:
		// Set one entry (cmd 0, Linux enetc_set_fs_entry): the 116-byte
		// struct enetc_cmd_rfse at addr. Flow steering is not modelled;
		// the entry counts as written (UninitializedMemories).
		if c[cbdCmd] != 0 {
			return CBDErrClass
		}
		if idx >= RFSEntries {
			return CBDErrIndex
		}
		if length != RFSEntrySize {
			return CBDErrLength
		}
		if d.iommu.Slice(addr, length, false) == nil {
			d.st.dmaFaults.Add(1)
			return CBDErrDMA
		}
		d.rfsInit.Or(1 << idx)
		return CBDErrNone
	}
	return CBDErrClass
}

// UninitializedMemories is how many entries of the port's RFS and RSS
// memories no control command has written since the model was made (its
// power-on; an FLR does not count). Linux zeroes both whole memories at
// every PF probe, and at boot for the ports the device tree disables,
// because uninitialised entries raise ECC errors (docs/hardware-enetc.md
// §2.5).
func (d *Device) UninitializedMemories() (rfs, rss int) {
	return RFSEntries - bits.OnesCount64(d.rfsInit.Load()), RSSTableLen - bits.OnesCount64(d.rssInit.Load())
}

// RSSTable returns the RSS indirection table as set through the CBDR.
func (d *Device) RSSTable() [RSSTableLen]uint8 {
	var t [RSSTableLen]uint8
	for i := range t {
		t[i] = uint8(d.rssTable[i].Load())
	}
	return t
}

// MACFilter returns exact-match entry i: address, SI bitmap, enabled.
func (d *Device) MACFilter(i int) (mac [6]byte, si uint32, enabled bool) {
	if i < 0 || i >= MACFilterEntries {
		return
	}
	e := &d.macFilt[i]
	a := e.addr.Load()
	for k := range mac {
		mac[k] = byte(a >> (8 * k))
	}
	return mac, e.si.Load(), e.en.Load()
}

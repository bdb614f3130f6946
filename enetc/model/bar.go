package model

import (
	"fmt"
	"time"
)

// Size is BAR0's length: 256 KiB for a PF, 64 KiB for a VF.
func (d *Device) Size() int { return int(d.size) }

// Err reports the first access outside BAR0 (or misaligned), naming offset
// and size.
func (d *Device) Err() error {
	d.recMu.Lock()
	defer d.recMu.Unlock()
	return d.oow
}

func (d *Device) outOfWindow(off uint32, n int, write bool) {
	d.st.oow.Add(1)
	d.recMu.Lock()
	if d.oow == nil {
		dir := "read"
		if write {
			dir = "write"
		}
		what := "outside"
		if off&uint32(n-1) != 0 && uint64(off)+uint64(n) <= uint64(d.size) {
			what = "misaligned in"
		}
		d.oow = fmt.Errorf("%s: %d-bit %s at offset %#x %s BAR0 of %#x bytes (%s): not performed", d.name, n*8, dir, off, what, d.size, d.kind())
	}
	d.recMu.Unlock()
}

func (d *Device) kind() string {
	if d.pf {
		return "PF"
	}
	return "VF: SI registers only"
}

// mmio waits out the configured cost of one register access.
func (d *Device) mmio() {
	if d.cost <= 0 {
		return
	}
	t := time.Now()
	for time.Since(t) < d.cost {
	}
}

func (d *Device) inWindow(off uint32, n uint32) bool {
	return off&(n-1) == 0 && uint64(off)+uint64(n) <= uint64(d.size)
}

// ringReg decodes a ring register offset: direction (0 TX, 1 RX), ring
// number and the offset of the register in ring 0's block.
func ringReg(off uint32) (dir int, ring int, reg uint32) {
	rel := off - RingBase
	ring = int(rel / RingStride)
	dir = int(rel/RingTypeStride) & 1
	reg = RingBase + uint32(dir)*RingTypeStride + rel%RingTypeStride
	return
}

// Read32 reads a 32-bit register.
func (d *Device) Read32(off uint32) uint32 {
	d.mmio()
	d.st.reads.Add(1)
	if !d.inWindow(off, 4) {
		d.outOfWindow(off, 4, false)
		return 0xFFFF_FFFF
	}
	if m := d.chip.mdio.Load(); m != nil {
		d.err050089(off, m)
	}
	if off >= RingBase && off < RingBase+MaxRings*RingStride {
		return d.readRing(off)
	}
	if off == regPSIMSGRR && !d.pf {
		return d.mbox.vsimsgsr.Load() // VSIMSGSR
	}
	if decode[off>>2] == accNone {
		d.recordUnimpl(off, false)
		return 0
	}
	switch {
	case off >= regSIROCT && off < regSITMCA+8:
		return half(d.si[(off-regSIROCT)/8].Load(), off)
	case off >= regPM0_REOCT && off < regPM0_TECOL+8:
		if i := macCounterIndex(off &^ 7); i >= 0 {
			return half(d.macCounter(i), off)
		}
		return 0
	case off >= regPM0_REOCT+PM1Offset && off < regPM0_TECOL+8+PM1Offset:
		return 0 // pMAC: no preemptible traffic in the model
	case off >= EMDIOBase && off < EMDIOBase+16:
		return d.mdioRead(&d.emdio, off-EMDIOBase)
	case off >= IMDIOBase && off < IMDIOBase+16:
		return d.mdioRead(&d.imdio, off-IMDIOBase)
	}
	switch off {
	case regSICTR0, regSICTR1:
		return half(d.stampNs(), off)
	case regMMCSR:
		return d.mmcsrRead() // preempt.go
	case regMMFAECR, regMMFSECR, regMMFAOCR, regMMFCRXR, regMMFCTXR, regMMHCR:
		return d.mergeCounter(off)
	case regSIPMAR0, regSIPMAR1:
		if d.pf {
			return d.get(off - regSIPMAR0 + regPSIPMAR0)
		}
	case regSICAPR0:
		if d.pf {
			c := d.get(regPSICFGR0)
			return min(c&0xFF, uint32(d.nTx)) | min(c>>16&0xFF, uint32(d.nRx))<<16
		}
		if pf := d.mbox.parent.Load(); pf != nil {
			// A VF owns what its PF assigned in PSICFGR0(n+1) (Linux
			// enetc_port_si_configure); a VF with no PF in the model
			// (the kernel's PF) keeps the rings it was made with.
			c := pf.get(regPSICFGR0 + PSICFGR0Stride*uint32(d.mbox.vsi+1))
			return min(c&0xFF, uint32(d.nTx)) | min(c>>16&0xFF, uint32(d.nRx))<<16
		}
	case regSICBDRCIR:
		return d.get(off)
	case regPM0_STATUS:
		return d.macStatus()
	}
	return d.get(off)
}

// half returns the 32-bit half of a 64-bit counter that off addresses.
func half(v uint64, off uint32) uint32 {
	if off&4 != 0 {
		return uint32(v >> 32)
	}
	return uint32(v)
}

// Read64 reads a 64-bit register: the SI and MAC statistics counters are
// read in one access; elsewhere it is two 32-bit reads (low word first).
func (d *Device) Read64(off uint32) uint64 {
	if !d.inWindow(off, 8) {
		d.mmio()
		d.st.reads.Add(1)
		d.outOfWindow(off, 8, false)
		return ^uint64(0)
	}
	idx := -1
	switch {
	case off >= regSIROCT && off < regSITMCA+8:
		idx = 0
	case off >= regPM0_REOCT && off < regPM0_TECOL+8:
		idx = macCounterIndex(off)
	}
	if idx < 0 {
		lo := d.Read32(off)
		return uint64(lo) | uint64(d.Read32(off+4))<<32
	}
	d.mmio()
	d.st.reads.Add(1)
	if m := d.chip.mdio.Load(); m != nil {
		d.err050089(off, m)
	}
	if off < regPM0_REOCT {
		return d.si[(off-regSIROCT)/8].Load()
	}
	return d.macCounter(idx)
}

// Write32 writes a 32-bit register.
func (d *Device) Write32(off uint32, v uint32) {
	d.mmio()
	d.st.writes.Add(1)
	if !d.inWindow(off, 4) {
		d.outOfWindow(off, 4, true)
		return
	}
	if m := d.chip.mdio.Load(); m != nil {
		d.err050089(off, m)
	}
	if off >= RingBase && off < RingBase+MaxRings*RingStride {
		d.writeRing(off, v)
		return
	}
	switch {
	case off == regPSIMSGRR && d.pf:
		d.pfAnswer(v)
		return
	case off == regPSIMSGRR:
		d.recordErr("write %#x to VSIMSGSR (%#x), which is read-only for a VF", v, off)
		return
	case off == regPSIVMSGRCVAR0 && !d.pf:
		d.set(off, v)
		d.vfSend(v) // VSIMSGSNDAR0: sends the message
		return
	case (off == regSIPMAR0 || off == regSIPMAR1) && !d.pf:
		d.recordErr("write %#x to %s (%#x) ignored: a VF's primary MAC is set by its PF (PSIPMAR0/1(n)); ask the PF with a VSI-to-PSI message", v, regName(off), off)
		return
	case d.pf && off >= regPSIPMAR0+PSIPMARStride && off < regPSIPMAR0+PSIPMARStride*(MaxVFs+1):
		d.set(off, v)
		d.pfSetVFMAC(off, v)
		return
	case d.pf && (off == regPSIVMSGRCVAR0 || off == regPSIVMSGRCVAR0+8):
		d.set(off, v)
		d.deliverMsg(int(off-regPSIVMSGRCVAR0) / 8) // a message waiting for a buffer arrives
		return
	}
	acc := decode[off>>2]
	switch acc {
	case accNone:
		d.recordUnimpl(off, true)
		return
	case accRO:
		d.recordErr("write %#x to read-only register %s (%#x) ignored", v, regName(off), off)
		return
	case accW1C:
		d.regs[off>>2].And(^v) // write 1 to clear
		return
	}
	switch {
	case off >= EMDIOBase && off < EMDIOBase+16:
		d.mdioWrite(&d.emdio, off-EMDIOBase, v)
		return
	case off >= IMDIOBase && off < IMDIOBase+16:
		d.mdioWrite(&d.imdio, off-IMDIOBase, v)
		return
	case off >= regPRSSK && off < regPRSSK+RSSKeyLen:
		d.set(off, v)
		d.keyGen.Add(1) // the RX side rebuilds its Toeplitz table
		return
	}
	switch off {
	case regSIPMAR0, regSIPMAR1:
		if d.pf {
			off = off - regSIPMAR0 + regPSIPMAR0 // the PF is SI 0: one register
		}
	case regSICBDRPIR:
		d.set(off, v)
		if !d.engine {
			d.processCBDR()
		} else {
			d.kickEngine()
		}
		return
	case regPM0_IF_MODE:
		d.set(off, v)
		d.updateIf()
		return
	case regSICBDRBAR0, regSICBDRBAR1, regSICBDRLENR, regSICBDRMR:
		d.cbdrHalted.Store(false)
	case regPM0_STAT_CONFIG:
		if v&pm0_stat_config_CLEAR != 0 {
			for i := range d.mac {
				d.mac[i].Store(0)
			}
		}
		d.set(off, v&^pm0_stat_config_CLEAR) // the clear bit is a trigger
		return
	case regPTGCR:
		d.set(off, v)
		d.tsnUpdate()
		return
	case regMMCSR:
		d.mmcsrWrite(v) // preempt.go
		return
	case regPTCFPR, regPTCFPR + 4, regPTCFPR + 8, regPTCFPR + 12,
		regPTCFPR + 16, regPTCFPR + 20, regPTCFPR + 24, regPTCFPR + 28:
		d.set(off, v)
		d.tsnUpdate()
		return
	case regPTCCBSR0, regPTCCBSR0 + 8, regPTCCBSR0 + 16, regPTCCBSR0 + 24,
		regPTCCBSR0 + 32, regPTCCBSR0 + 40, regPTCCBSR0 + 48, regPTCCBSR0 + 56:
		d.set(off, v)
		d.tsnUpdate()
		return
	case regPM0_CMD_CFG, regPMR, regSIMR:
		d.set(off, v)
		d.kickAllTx() // enabling the MAC lets queued frames leave
		if !d.engine && len(*d.srcs.Load()) != 0 && d.rxAllowed() {
			// Enabling receive lets frames waiting at sources in, so a
			// driver's plain RX loop sees them with no Pump call; each
			// RBCIR write keeps them coming.
			d.Pump()
		}
		return
	}
	d.set(off, v)
}

// readRing reads a BD-ring register.
func (d *Device) readRing(off uint32) uint32 {
	dir, n, reg := ringReg(off)
	if (dir == 0 && n >= d.nTx) || (dir == 1 && n >= d.nRx) || decode[reg>>2] == accNone {
		d.recordUnimpl(off, false)
		return 0
	}
	if dir == 0 {
		t := &d.tx[n]
		switch reg {
		case regTBPIR:
			return t.pi.Load()
		case regTBCIR:
			if d.faults.bogusCI.Load() > 0 && d.faults.bogusCI.Add(-1) >= 0 {
				d.st.faultsInjected.Add(1)
				return d.txLen(n) + 5 // an index past the ring's end
			}
			return t.ci.Load()
		case regTBSR:
			if t.pi.Load() != t.ci.Load() {
				return tbsr_BUSY
			}
			return 0
		}
	} else {
		r := &d.rx[n]
		switch reg {
		case regRBCIR:
			return r.ci.Load()
		case regRBPIR:
			return r.pi.Load()
		case regRBDCR:
			return uint32(r.dcr.Load())
		}
	}
	return d.get(off)
}

// writeRing writes a BD-ring register.
func (d *Device) writeRing(off, v uint32) {
	dir, n, reg := ringReg(off)
	if (dir == 0 && n >= d.nTx) || (dir == 1 && n >= d.nRx) || decode[reg>>2] == accNone {
		d.recordUnimpl(off, true)
		return
	}
	switch decode[reg>>2] {
	case accRO:
		if reg == regTBCIR {
			if v&tbcir_IDX_MASK != d.tx[n].ci.Load() {
				d.recordErr("TX ring %d: write %#x to TBCIR (read-only, CI is %d): ENETC v1 cannot reset TX PI/CI; adopt TBPIR/TBCIR at setup or reset the function (erratum §5.4)", n, v, d.tx[n].ci.Load())
			}
			return
		}
		d.recordErr("write %#x to read-only register %s (%#x) ignored", v, regName(off), off)
		return
	case accW1C:
		d.regs[off>>2].And(^v) // write 1 to clear
		return
	}
	if dir == 0 {
		t := &d.tx[n]
		switch reg {
		case regTBPIR:
			t.doorbells.Add(1)
			v &= tbcir_IDX_MASK
			if d.get(regTBMR+uint32(n)*RingStride)&tbmr_EN == 0 && v != t.ci.Load() && v != t.pi.Load() {
				d.recordErr("TX ring %d: TBPIR set to %d on a disabled ring while CI is %d: ENETC v1 cannot reset TX PI/CI (erratum §5.4); adopt TBPIR/TBCIR or reset the function", n, v, t.ci.Load())
			}
			t.pi.Store(v) // publishes the BDs the driver wrote before this store
			if d.engine {
				d.kickEngine()
			} else {
				d.processTx(n)
			}
			return
		case regTBBAR0, regTBBAR1, regTBLENR:
			if t.pi.Load() != t.ci.Load() {
				d.recordErr("TX ring %d: %s rewritten with PI %d != CI %d: the BDs between them become invalid (erratum §5.4); drain the ring first", n, regName(off), t.pi.Load(), t.ci.Load())
			}
			t.halted.Store(false)
			t.reported.Store(0)
		case regTBMR:
			t.halted.Store(false)
			d.set(off, v)
			if v&tbmr_EN != 0 && !d.engine {
				d.processTx(n) // frames queued on a disabled ring leave now
			}
			if v&tbmr_EN != 0 && d.engine {
				d.kickEngine() // as above, on the engine
			}
			if v&tbmr_EN == 0 && d.engine {
				d.engMu.Lock() // quiet once the write returns (see below)
				//lint:ignore SA2001 waits for the engine's round to end (see below)
				d.engMu.Unlock()
			}
			return
		}
	} else {
		r := &d.rx[n]
		switch reg {
		case regRBCIR:
			r.doorbells.Add(1)
			r.ci.Store(v & 0xFFFF) // hands the BDs before it to the device
			if len(*d.srcs.Load()) != 0 {
				// Buffers are back: frames waiting at sources come in.
				if d.engine {
					d.kickEngine()
				} else {
					d.Pump()
				}
			}
			return
		case regRBPIR:
			r.pi.Store(v & 0xFFFF)
			return
		case regRBIER:
			d.set(off, v)
			d.rbierWritten(n, v)
			return
		case regRBBAR0, regRBBAR1, regRBLENR, regRBBSR, regRBMR:
			r.reported.Store(0)
		}
	}
	d.set(off, v)
	if d.engine && dir == 1 && reg == regRBMR && v&rbmr_EN != 0 {
		d.kickEngine() // the engine starts pulling the sources (rxStarted)
	}
	if d.engine && (reg == regRBMR || reg == regTBMR) && v&rbmr_EN == 0 {
		// A disabled ring is quiet once the write returns: the engine
		// finishes the round it is in (which may still be filling this
		// ring), and a Receive under way its frame, before the driver
		// goes on to drain the ring or free its memory.
		d.engMu.Lock()
		//lint:ignore SA2001 the lock is taken only to wait for that round
		d.engMu.Unlock()
		d.rxMu.Lock()
		//lint:ignore SA2001 the lock is taken only to wait for that frame
		d.rxMu.Unlock()
	}
}

// regName names a register by offset for messages (not on a hot path).
func regName(off uint32) string {
	if off >= RingBase && off < RingBase+MaxRings*RingStride {
		dir, n, reg := ringReg(off)
		_ = dir
		for _, r := range ringRegs {
			if r.off == reg {
				return fmt.Sprintf("%s(%d)", r.name, n)
			}
		}
	}
	for _, r := range Registers() {
		if r.Offset == off || (r.Offset == off&^7 && off >= regPM0_REOCT && off < regPM0_TECOL+8+PM1Offset) {
			return r.Name
		}
	}
	for _, f := range families {
		if off >= f.off && off < f.off+uint32(f.n)*f.stride && (off-f.off)%f.stride == 0 {
			for _, r := range Registers() {
				if r.Offset == f.off {
					return fmt.Sprintf("%s(%d)", r.Name, (off-f.off)/f.stride)
				}
			}
		}
	}
	return fmt.Sprintf("register %#x", off)
}

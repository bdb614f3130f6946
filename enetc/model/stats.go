package model

import "sync/atomic"

// Indices of the eMAC counters in Device.mac (macCounters order).
const (
	cREOCT = iota
	cRALN
	cRXPF
	cRFRM
	cRFCS
	cRVLAN
	cRERR
	cRUCA
	cRMCA
	cRBCA
	cRDRP
	cRPKT
	cRUND
	cR64 // R64..R1523X: 7 buckets
	cR127
	cR255
	cR511
	cR1023
	cR1522
	cR1523X
	cROVR
	cRJBR
	cRFRG
	cRCNP
	cRDRNTP
	cTEOCT
	cTOCT
	cTCRSE
	cTXPF
	cTFRM
	cTFCS
	cTVLAN
	cTERR
	cTUCA
	cTMCA
	cTBCA
	cTPKT
	cTUND
	cT64
	cT127
	cT255
	cT511
	cT1023
	cT1522
	cT1523X
	cTCNP
	cTDFR
	cTMCOL
	cTSCOL
	cTLCOL
	cTECOL
	nMACCounters
)

// Indices of the SI counters in Device.si.
const (
	sROCT = iota
	sRFRM
	sRUCA
	sRMCA
	sTOCT
	sTFRM
	sTUCA
	sTMCA
)

// sizeBucket is the R64..R1523X / T64..T1523X histogram bucket of a frame
// of n bytes including FCS.
func sizeBucket(n int) int {
	switch {
	case n <= 64:
		return 0
	case n <= 127:
		return 1
	case n <= 255:
		return 2
	case n <= 511:
		return 3
	case n <= 1023:
		return 4
	case n <= 1522:
		return 5
	}
	return 6
}

// castOf classifies a frame by destination: 0 unicast, 1 multicast, 2 broadcast.
func castOf(f []byte) int {
	if len(f) < 6 || f[0]&1 == 0 {
		return 0
	}
	if f[0]&f[1]&f[2]&f[3]&f[4]&f[5] == 0xFF {
		return 2
	}
	return 1
}

// counters are the model's own counters (not registers).
type counters struct {
	// Counted by the driver's register accesses: a cache line of their
	// own, apart from what the DMA engine counts on another core.
	reads, writes                         atomic.Uint64
	_                                     [cacheLine - 16]byte
	unimpl, oow, modelErrors              atomic.Uint64
	txFrames, txBytes                     atomic.Uint64
	rxFramesBase, rxBytesBase             atomic.Uint64 // SIRFRM/SIROCT before the last reset
	noBuf, rxErrFrames                    atomic.Uint64
	rxLinkDown, rxMACOff, rxSIOff         atomic.Uint64
	rxFiltered, rxFIFO, rxRunt, rxRingOff atomic.Uint64
	rxStream                              atomic.Uint64 // dropped by per-stream filtering (qci.go)
	txErrors, dmaFaults, faultsInjected   atomic.Uint64
	resets, err050089                     atomic.Uint64
	msis                                  atomic.Uint64 // MSI-X messages sent (irq.go)
	mdioFrames                            atomic.Uint64 // MDIO frames put on either bus (mdio.go)
}

// Stats are the model's counters, for tests and benchmarks.
type Stats struct {
	// TxDoorbells and RxDoorbells count TBPIR and RBCIR writes per ring.
	TxDoorbells, RxDoorbells [MaxRings]uint64
	// RegReads and RegWrites count register accesses (all widths).
	RegReads, RegWrites uint64
	// Unimplemented counts accesses to unimplemented registers;
	// OutOfWindow accesses outside BAR0 (or misaligned).
	Unimplemented, OutOfWindow uint64
	// ModelErrors counts recorded model errors (see ModelErrors).
	ModelErrors uint64
	// TxFrames/TxBytes left the MAC onto the wire; RxFrames/RxBytes were
	// written into posted buffers (errored frames included), bytes without FCS.
	TxFrames, TxBytes, RxFrames, RxBytes uint64
	// RxErrorFrames were delivered with a non-zero error byte.
	RxErrorFrames uint64
	// NoBufferDrops were discarded for lack of a posted buffer (the sum of
	// the RBDCR increments for that reason).
	NoBufferDrops uint64
	// Receive-side losses before a ring, by cause: link down, MAC RX
	// disabled, port or SI disabled, MAC address filter, RX FIFO lock-up
	// (erratum), runt from the wire, ring disabled or misprogrammed.
	RxLinkDown, RxMACDisabled, RxSIDisabled, RxFiltered, RxFIFOLocked, RxRunts, RxRingDisabled uint64
	// RxStreamDropped were dropped by per-stream filtering (802.1Qci: max
	// SDU, gate or meter); their stream filter counts them by cause.
	RxStreamDropped uint64
	// TxErrors are frames the TX engine could not send (DMA fault, bad BD).
	TxErrors uint64
	// DMAFaults counts refused DMA accesses the device made.
	DMAFaults uint64
	// FaultsInjected counts injected faults that took effect.
	FaultsInjected uint64
	// WireDiscards counts frames sent into the default (discarding) wire.
	WireDiscards uint64
	// Resets counts function-level resets.
	Resets uint64
	// ERR050089 counts register accesses made during an MDIO register
	// access (also recorded as model errors).
	ERR050089 uint64
	// MSIs counts MSI-X messages sent (RX interrupts, irq.go).
	MSIs uint64
	// MDIOFrames counts the MDIO frames (read, write, clause-45 address
	// cycles) the function's two MDIO controllers put on their buses.
	MDIOFrames uint64
}

// Stats returns a snapshot of the model's counters.
func (d *Device) Stats() Stats {
	var s Stats
	for i := range d.tx {
		s.TxDoorbells[i] = d.tx[i].doorbells.Load()
		s.RxDoorbells[i] = d.rx[i].doorbells.Load()
	}
	c := &d.st
	s.RegReads, s.RegWrites = c.reads.Load(), c.writes.Load()
	s.Unimplemented, s.OutOfWindow, s.ModelErrors = c.unimpl.Load(), c.oow.Load(), c.modelErrors.Load()
	s.TxFrames, s.TxBytes, s.RxFrames, s.RxBytes = c.txFrames.Load(), c.txBytes.Load(),
		c.rxFramesBase.Load()+d.si[sRFRM].Load(), c.rxBytesBase.Load()+d.si[sROCT].Load()
	s.RxErrorFrames, s.NoBufferDrops = c.rxErrFrames.Load(), c.noBuf.Load()
	s.RxLinkDown, s.RxMACDisabled, s.RxSIDisabled = c.rxLinkDown.Load(), c.rxMACOff.Load(), c.rxSIOff.Load()
	s.RxFiltered, s.RxFIFOLocked, s.RxRunts, s.RxRingDisabled = c.rxFiltered.Load(), c.rxFIFO.Load(), c.rxRunt.Load(), c.rxRingOff.Load()
	s.RxStreamDropped = c.rxStream.Load()
	s.TxErrors, s.DMAFaults, s.FaultsInjected = c.txErrors.Load(), c.dmaFaults.Load(), c.faultsInjected.Load()
	s.WireDiscards = d.discard.frames.Load()
	s.Resets, s.ERR050089 = c.resets.Load(), c.err050089.Load()
	s.MSIs = c.msis.Load()
	s.MDIOFrames = c.mdioFrames.Load()
	return s
}

// MACCounter returns an eMAC counter by its register offset (REOCT...), or
// 0 for an offset that is not one.
func (d *Device) MACCounter(off uint32) uint64 {
	if i := macCounterIndex(off); i >= 0 {
		return d.macCounter(i)
	}
	return 0
}

// macCounter reads eMAC counter i. RPKT is kept as the count of bad frames
// and reads as that plus RFRM, saving the data path one atomic per frame.
func (d *Device) macCounter(i int) uint64 {
	if i == cRPKT {
		return d.mac[cRPKT].Load() + d.mac[cRFRM].Load()
	}
	return d.mac[i].Load()
}

// SICounter returns an SI counter by its register offset (SIROCT...).
func (d *Device) SICounter(off uint32) uint64 {
	if off >= regSIROCT && off <= regSITMCA && off&7 == 0 {
		return d.si[(off-regSIROCT)/8].Load()
	}
	return 0
}

// RxDiscards returns RBDCR of RX ring n.
func (d *Device) RxDiscards(n int) uint64 {
	if n < 0 || n >= MaxRings {
		return 0
	}
	return d.rx[n].dcr.Load()
}

// AdvanceMACCounter adds n to an eMAC counter (by register offset) as if n
// more events had been counted, so a test can take a counter near or past
// 2^32 (a 32-bit read sees its low word, a 64-bit read all of it) without
// sending 4 GB. It
// reports whether off names an eMAC counter.
func (d *Device) AdvanceMACCounter(off uint32, n uint64) bool {
	i := macCounterIndex(off)
	if i < 0 {
		return false
	}
	d.mac[i].Add(n)
	return true
}

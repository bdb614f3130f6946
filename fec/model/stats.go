package model

import "sync/atomic"

// Stats are the model's own counters (not the device's MIB counters).
type Stats struct {
	// Register traffic.
	RegReads, RegWrites    uint64
	TDARWrites, RDARWrites uint64
	// Unimplemented counts accesses to registers the part does not have.
	Unimplemented uint64
	// ModelErrors counts problems the engine met (DMA faults, MRBR 0);
	// LastModelError describes the latest.
	ModelErrors uint64
	// DMAFaults counts refused descriptor and buffer accesses.
	DMAFaults uint64
	// MDIOFrames counts management frames run.
	MDIOFrames uint64

	// TxFrames/TxBytes: frames that left the MAC (to the wire, or looped
	// back with RCR.LOOP), padded, without FCS.
	TxFrames, TxBytes uint64
	// TxDropped: frames lost to a DMA fault while being gathered.
	TxDropped uint64
	// TxBadFCS: frames sent with a bad FCS (ABC, or a wrong FCS the driver
	// supplied without TC); the peer drops them.
	TxBadFCS uint64
	// TxLinkDown: frames sent while the link was down or the MAC speed did
	// not match the PHY's.
	TxLinkDown uint64
	// LostTDAR: TDAR writes lost to erratum ERR006358.
	LostTDAR uint64

	// RxFrames/RxBytes: frames written to memory, with or without error
	// bits (bytes without the FCS and the SHIFT16 pad, as TxBytes and
	// Linux's rx_bytes count them; the MIB's octet counters include it).
	RxFrames, RxBytes uint64
	// RxErrors: frames written with an error bit (CR, LG, TR, OV, ...).
	RxErrors uint64
	// RxNoBuffer: frames dropped because RDAR was clear or no BD was empty.
	RxNoBuffer uint64
	// RxOverrun: frames cut because the ring ran out in their middle.
	RxOverrun uint64
	// RxFiltered: frames the address filter rejected.
	RxFiltered uint64
	// RxDropped: frames lost otherwise: MAC disabled, link down, speed
	// mismatch, loopback on, runt, checksum or error discard (RACC),
	// DMA fault.
	RxDropped uint64
	// SpeedMismatch counts frames refused because ECR.SPEED/RCR.RMII_10T
	// did not match the PHY's speed.
	SpeedMismatch uint64
	// TxFIFOTooLong counts frames the MAC refused because they are longer
	// than the TX FIFO (Profile.TxFIFO) while TFWR.STRFWD asks for store
	// and forward, or on a part that takes no jumbo frames at all: the BD
	// gets TXE|UE, nothing reaches the wire.
	TxFIFOTooLong uint64
	// RunningReconfig counts writes that changed the MAC's speed or duplex
	// bits while it ran (ECR.SPEED or RCR.RMII_10T/DRT with ECR.ETHEREN
	// set, a ring handed to the DMA since by RDAR or TDAR and no graceful
	// stop; TCR.FDEN with ECR.ETHEREN set); each is a model error too
	// (docs/hardware-fec.md §5.6).
	RunningReconfig uint64
}

type counters struct {
	regReads, regWrites, tdarWrites, rdarWrites        atomic.Uint64
	unimplemented, modelErrors, dmaFaults, mdioFrames  atomic.Uint64
	txFrames, txBytes, txDropped, txBadFCS, txLinkDown atomic.Uint64
	lostTDAR                                           atomic.Uint64
	rxFrames, rxBytes, rxErrors, rxNoBuffer, rxOverrun atomic.Uint64
	rxFiltered, rxDropped, rxDisabled, rxLoopIgnored   atomic.Uint64
	rxLinkDown, rxRunt, rxCsumDiscard, rxErrDiscard    atomic.Uint64
	speedMismatch, txFIFOTooLong, runningReconfig      atomic.Uint64
}

// Stats returns a snapshot of the model's counters.
func (d *Device) Stats() Stats {
	c := &d.st
	return Stats{
		RegReads: c.regReads.Load(), RegWrites: c.regWrites.Load(),
		TDARWrites: c.tdarWrites.Load(), RDARWrites: c.rdarWrites.Load(),
		Unimplemented: c.unimplemented.Load(), ModelErrors: c.modelErrors.Load(),
		DMAFaults: c.dmaFaults.Load(), MDIOFrames: c.mdioFrames.Load(),
		TxFrames: c.txFrames.Load(), TxBytes: c.txBytes.Load(), TxDropped: c.txDropped.Load(),
		TxBadFCS: c.txBadFCS.Load(), TxLinkDown: c.txLinkDown.Load(), LostTDAR: c.lostTDAR.Load(),
		RxFrames: c.rxFrames.Load(), RxBytes: c.rxBytes.Load(), RxErrors: c.rxErrors.Load(),
		RxNoBuffer: c.rxNoBuffer.Load(), RxOverrun: c.rxOverrun.Load(), RxFiltered: c.rxFiltered.Load(),
		RxDropped: c.rxDropped.Load() + c.rxDisabled.Load() + c.rxLoopIgnored.Load() + c.rxLinkDown.Load() +
			c.rxRunt.Load() + c.rxCsumDiscard.Load() + c.rxErrDiscard.Load(),
		SpeedMismatch: c.speedMismatch.Load(),
		TxFIFOTooLong: c.txFIFOTooLong.Load(), RunningReconfig: c.runningReconfig.Load(),
	}
}

// CountingDiscard is the default wire: it drops every frame and counts it.
// Safe for use from the engine goroutine while others read it.
type CountingDiscard struct{ frames, bytes atomic.Uint64 }

// Transmit implements wire.Wire.
func (c *CountingDiscard) Transmit(frame []byte) {
	c.frames.Add(1)
	c.bytes.Add(uint64(len(frame)))
}

// Frames is the number of frames discarded.
func (c *CountingDiscard) Frames() uint64 { return c.frames.Load() }

// Bytes is the number of bytes discarded.
func (c *CountingDiscard) Bytes() uint64 { return c.bytes.Load() }

package model

import "sync/atomic"

// Corruption is a kind of RX write-back corruption (CorruptNextRxBD).
type Corruption uint32

const (
	// CorruptNone leaves write-backs alone.
	CorruptNone Corruption = iota
	// CorruptLength writes a buf_len past the end of the posted buffer.
	CorruptLength
	// CorruptZeroStatus writes the data but leaves the status word zero:
	// the BD never shows ready.
	CorruptZeroStatus
	// CorruptNoFinal marks the BD ready without F although the frame ends
	// there: the next BD (another frame or none) looks like its tail.
	CorruptNoFinal
	// CorruptBogus writes garbage into buf_len (0), flags, VLAN, parse
	// summary and hash, with R and F set and the error byte clear.
	CorruptBogus
)

// String names the corruption.
func (c Corruption) String() string {
	switch c {
	case CorruptNone:
		return "none"
	case CorruptLength:
		return "length past buffer"
	case CorruptZeroStatus:
		return "zero status"
	case CorruptNoFinal:
		return "missing final bit"
	case CorruptBogus:
		return "bogus fields"
	}
	return "unknown"
}

// faultState holds pending injected faults. Counts are decremented by the
// side that applies them.
type faultState struct {
	crc, oversize atomic.Int64 // next N received frames
	corrupt       atomic.Uint32
	rxDMA, txDMA  atomic.Int64
	bogusCI       atomic.Int64 // next N TBCIR reads
	txStall       atomic.Bool
}

func (f *faultState) clear() {
	f.crc.Store(0)
	f.oversize.Store(0)
	f.corrupt.Store(0)
	f.rxDMA.Store(0)
	f.txDMA.Store(0)
	f.bogusCI.Store(0)
	f.txStall.Store(false)
}

// take consumes one pending fault of a counter, reporting whether one was
// pending.
func take(c *atomic.Int64) bool {
	if c.Load() <= 0 {
		return false
	}
	return c.Add(-1) >= 0
}

// SetLink brings the link up or down. While it is down received frames are
// lost (RxLinkDown) and TX frames stay queued in their rings; they leave
// when it comes back up (in synchronous mode before SetLink returns). The
// PHY latches a link loss in BMSR until it is read.
func (d *Device) SetLink(up bool) {
	if !up {
		d.latchDown.Store(true)
	}
	d.link.Store(up)
	d.updateIf()
	if up {
		d.kickAllTx()
	}
}

// LinkUp reports whether the link is up.
func (d *Device) LinkUp() bool { return d.link.Load() }

// FlapLink takes the link down and up again n times.
func (d *Device) FlapLink(n int) {
	for i := 0; i < n; i++ {
		d.SetLink(false)
		d.SetLink(true)
	}
	d.st.faultsInjected.Add(uint64(n))
}

// InjectRxCRC marks the next n received frames with an FCS error: they are
// delivered with RxErrCRC in the error byte and counted in RFCS and RERR.
func (d *Device) InjectRxCRC(n int) { d.faults.crc.Add(int64(n)) }

// InjectRxOversize makes the next n received frames count as longer than
// PM0_MAXFRM: delivered with RxErrOversize, counted in ROVR and RERR.
func (d *Device) InjectRxOversize(n int) { d.faults.oversize.Add(int64(n)) }

// CorruptNextRxBD corrupts the write-back of the next received frame's
// first BD as c says.
func (d *Device) CorruptNextRxBD(c Corruption) { d.faults.corrupt.Store(uint32(c)) }

// InjectRxDMAFault makes the next n received frames DMA to an unmapped
// IOVA (the posted address moved out of every mapping): the SimIOMMU
// records the fault, the frame's BD is written back with RxErrDMA.
func (d *Device) InjectRxDMAFault(n int) { d.faults.rxDMA.Add(int64(n)) }

// InjectTxDMAFault makes the next n transmitted frames read their data from
// an unmapped IOVA: the SimIOMMU records the fault, the frame is counted in
// TERR and skipped (its BDs still complete).
func (d *Device) InjectTxDMAFault(n int) { d.faults.txDMA.Add(int64(n)) }

// InjectBogusTxCI makes the next n TBCIR reads return an index past the
// ring's end, as a corrupted consumer index would.
func (d *Device) InjectBogusTxCI(n int) { d.faults.bogusCI.Add(int64(n)) }

// SetTxStall stops (on) or restarts (off) every TX ring's consumer index:
// while stalled, frames stay queued, as on the TX ring erratum.
func (d *Device) SetTxStall(on bool) {
	d.faults.txStall.Store(on)
	if on {
		d.st.faultsInjected.Add(1)
	} else {
		d.kickAllTx()
	}
}

// unmappedDelta moves an IOVA out of every SimIOMMU mapping: mappings
// start at 1 GiB and are packed upward, far below 2^46.
const unmappedDelta = 1 << 46

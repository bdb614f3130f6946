package model

import (
	"fmt"
	"sync/atomic"
)

// RxError is a kind of receive error InjectRxErrors can force. The kinds
// both models have carry the same name in fec/model.
type RxError int

const (
	// RxCRC: the frame arrives with a bad FCS (RxErrCRC in the error
	// byte, counted in RFCS and RERR).
	RxCRC RxError = iota
	// RxOversize: the frame counts as longer than PM0_MAXFRM
	// (RxErrOversize, counted in ROVR and RERR).
	RxOversize
)

// String names the kind.
func (k RxError) String() string {
	switch k {
	case RxCRC:
		return "crc"
	case RxOversize:
		return "oversize"
	}
	return fmt.Sprintf("RxError(%d)", int(k))
}

// Corruption is a kind of RX write-back corruption (CorruptRxWriteback).
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
	// CorruptNoTimestamp writes an extended BD (RBMR.BDS) back without a
	// timestamp: the TSTMP flag clear, the stamp word zero. Linux's
	// enetc_get_rx_tstamp reads a stamp only when the flag is set.
	CorruptNoTimestamp

	nCorruptions // the number of kinds, CorruptNone included
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
	case CorruptNoTimestamp:
		return "no timestamp"
	}
	return "unknown"
}

// faultState holds pending injected faults. Counts are decremented by the
// side that applies them.
type faultState struct {
	crc, oversize atomic.Int64 // next N received frames
	// corrupt is the number of RX write-backs still to corrupt, of any
	// kind (one load tells the fast path none is pending); corruptKind
	// holds how many of each.
	corrupt      atomic.Int64
	corruptKind  [nCorruptions]atomic.Int64
	rxDMA, txDMA atomic.Int64
	bogusCI      atomic.Int64 // next N TBCIR reads
	txStall      atomic.Bool
}

func (f *faultState) clear() {
	f.crc.Store(0)
	f.oversize.Store(0)
	f.corrupt.Store(0)
	for i := range f.corruptKind {
		f.corruptKind[i].Store(0)
	}
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

// takeCorrupt consumes one pending write-back corruption, the lowest kind
// first, and returns its kind (CorruptNone if none was pending).
func (f *faultState) takeCorrupt() Corruption {
	if !take(&f.corrupt) {
		return CorruptNone
	}
	for k := CorruptLength; k < nCorruptions; k++ {
		if take(&f.corruptKind[k]) {
			return k
		}
	}
	return CorruptNone
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

// InjectRxErrors makes the next n received frames carry error kind, on top
// of any still pending: each is delivered with the kind's bit in its BD's
// error byte and counted in the MAC's counters for it (see RxError). It
// returns an error for a kind the ENETC does not have.
func (d *Device) InjectRxErrors(kind RxError, n int) error {
	if n < 0 {
		return fmt.Errorf("enetc model %s: %d %v errors: the count of frames cannot be negative", d.name, n, kind)
	}
	switch kind {
	case RxCRC:
		d.faults.crc.Add(int64(n))
	case RxOversize:
		d.faults.oversize.Add(int64(n))
	default:
		return fmt.Errorf("enetc model %s: RX error kind %v is not an ENETC one: it takes %v and %v", d.name, kind, RxCRC, RxOversize)
	}
	return nil
}

// CorruptRxWriteback corrupts, as kind says, the write-back of the first BD
// of each of the next n received frames (on top of any still pending). It
// returns an error for CorruptNone or an unknown kind.
func (d *Device) CorruptRxWriteback(kind Corruption, n int) error {
	if kind == CorruptNone || kind >= nCorruptions {
		return fmt.Errorf("enetc model %s: RX write-back corruption %d is not one of CorruptLength, CorruptZeroStatus, CorruptNoFinal, CorruptBogus, CorruptNoTimestamp", d.name, kind)
	}
	if n < 0 {
		return fmt.Errorf("enetc model %s: %d %v corruptions: the count of frames cannot be negative", d.name, n, kind)
	}
	// The kind's count first: the engine takes the total, then a kind.
	d.faults.corruptKind[kind].Add(int64(n))
	d.faults.corrupt.Add(int64(n))
	return nil
}

// InjectRxDMAFault makes the next n received frames DMA to an unmapped
// IOVA (the posted address moved out of every mapping): the simdma.IOMMU
// records the fault, the frame's BD is written back with RxErrDMA.
func (d *Device) InjectRxDMAFault(n int) { d.faults.rxDMA.Add(int64(n)) }

// InjectTxDMAFault makes the next n transmitted frames read their data from
// an unmapped IOVA: the simdma.IOMMU records the fault, the frame is counted in
// TERR and skipped (its BDs still complete).
func (d *Device) InjectTxDMAFault(n int) { d.faults.txDMA.Add(int64(n)) }

// InjectBogusTxCI makes the next n TBCIR reads return an index past the
// ring's end, as a corrupted consumer index would. ENETC only: its TX
// completion is that index (a FEC writes TX BDs back, see fec/model's
// CorruptTxWriteback).
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

// unmappedDelta moves an IOVA out of every simdma.IOMMU mapping: mappings
// start at 1 GiB and are packed upward, far below 2^46.
const unmappedDelta = 1 << 46

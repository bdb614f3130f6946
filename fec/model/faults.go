package model

import (
	"fmt"
	"sync/atomic"
)

// faults holds the pending injected faults. Each counter is the number of
// future events it still applies to.
type faults struct {
	rxCRC, rxOversize, rxTrunc, rxOverrun atomic.Int32
	rxNonOctet, rxShort                   atomic.Int32
	rxCorrupt, txCorrupt                  atomic.Int32
	rxDMA, txDMA, err006358               atomic.Int32
	txStall                               atomic.Bool
}

// take consumes one pending event of c, reporting whether there was one.
func take(c *atomic.Int32) bool {
	for {
		n := c.Load()
		if n <= 0 {
			return false
		}
		if c.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// RxError is a kind of receive error InjectRxErrors can force. The kinds
// both models have (RxCRC, RxOversize) carry the same name in enetc/model.
type RxError int

const (
	// RxCRC: the frame arrives with a bad FCS (status CR).
	RxCRC RxError = iota
	// RxOversize: the frame is flagged longer than MAX_FL (status LG,
	// EIR.BABR).
	RxOversize
	// RxTruncate: the frame is cut to 64 bytes and flagged TR.
	RxTruncate
	// RxOverrun: the frame is flagged as a FIFO overrun (status OV).
	RxOverrun
	// RxNonOctet: the frame is flagged as not a whole number of bytes
	// (status NO).
	RxNonOctet
	// RxShort: the frame is flagged short (status SH).
	RxShort
)

// String names the kind.
func (k RxError) String() string {
	switch k {
	case RxCRC:
		return "crc"
	case RxOversize:
		return "oversize"
	case RxTruncate:
		return "truncate"
	case RxOverrun:
		return "overrun"
	case RxNonOctet:
		return "non-octet"
	case RxShort:
		return "short"
	}
	return fmt.Sprintf("RxError(%d)", int(k))
}

// Corruption is a kind of descriptor write-back corruption
// (CorruptRxWriteback, CorruptTxWriteback). The FEC has the one kind.
type Corruption uint32

const (
	// CorruptLength garbles the length half of the BD's first word (it
	// comes back past any buffer); the status bits stay right, so only a
	// driver that bounds-checks lengths notices. The value is enetc/model's
	// CorruptLength.
	CorruptLength Corruption = iota + 1
)

// String names the corruption.
func (c Corruption) String() string {
	if c == CorruptLength {
		return "length past buffer"
	}
	return "unknown"
}

// InjectRxErrors makes the next n received frames carry error kind, on top
// of any still pending. It returns an error for an unknown kind.
func (d *Device) InjectRxErrors(kind RxError, n int) error {
	if n < 0 {
		return fmt.Errorf("fec model %s: %d %v errors: the count of frames cannot be negative", d.name, n, kind)
	}
	var c *atomic.Int32
	switch kind {
	case RxCRC:
		c = &d.faults.rxCRC
	case RxOversize:
		c = &d.faults.rxOversize
	case RxTruncate:
		c = &d.faults.rxTrunc
	case RxOverrun:
		c = &d.faults.rxOverrun
	case RxNonOctet:
		c = &d.faults.rxNonOctet
	case RxShort:
		c = &d.faults.rxShort
	default:
		return fmt.Errorf("fec model %s: unknown RX error kind %d", d.name, kind)
	}
	c.Add(int32(n))
	return nil
}

// CorruptRxWriteback corrupts, as kind says, the write-back of the last BD
// of each of the next n received frames (on top of any still pending). It
// returns an error for a kind the FEC does not have.
func (d *Device) CorruptRxWriteback(kind Corruption, n int) error {
	return d.corrupt(&d.faults.rxCorrupt, "RX", kind, n)
}

// CorruptTxWriteback corrupts, as kind says, the next n TX BDs the engine
// writes back (on top of any still pending). FEC only: an ENETC does not
// write TX BDs back (enetc/model's InjectBogusTxCI corrupts its completion
// index instead).
func (d *Device) CorruptTxWriteback(kind Corruption, n int) error {
	return d.corrupt(&d.faults.txCorrupt, "TX", kind, n)
}

func (d *Device) corrupt(c *atomic.Int32, dir string, kind Corruption, n int) error {
	if kind != CorruptLength {
		return fmt.Errorf("fec model %s: %s write-back corruption %d is not one the FEC has: it takes CorruptLength", d.name, dir, kind)
	}
	if n < 0 {
		return fmt.Errorf("fec model %s: %d %s write-back corruptions: the count cannot be negative", d.name, n, dir)
	}
	c.Add(int32(n))
	return nil
}

// InjectRxDMAFault sends the data of the next n received frames to an
// unmapped IOVA: each is refused by the IOMMU (see simdma.IOMMU.Faults), sets
// EIR.EBERR and costs its frame (its BDs stay empty).
func (d *Device) InjectRxDMAFault(n int) { d.faults.rxDMA.Add(int32(n)) }

// InjectTxDMAFault makes the next n transmitted frames read their data from
// an unmapped IOVA: each is refused by the IOMMU, sets EIR.EBERR and costs
// its frame (its BDs complete with TXE in the enhanced status).
func (d *Device) InjectTxDMAFault(n int) { d.faults.txDMA.Add(int32(n)) }

// SetTxStall stops (true) or resumes (false) the TX DMA engine, as a hung TX
// state machine does (erratum ERR007885): TDAR writes are taken and TDAR
// stays set, but no BD is fetched until the stall ends.
func (d *Device) SetTxStall(on bool) {
	d.faults.txStall.Store(on)
	if !on {
		d.resumeTX()
	}
}

// ArmERR006358 makes the next TDAR write that meets the erratum's
// condition be lost: the engine last found the ring without a ready BD
// (TxBD[R]=0), so TDAR clears again without fetching the new BDs, and they
// wait for another TDAR write. Only parts with the erratum (imx6q) have it.
func (d *Device) ArmERR006358() error {
	if !d.prof.ERR006358 {
		return fmt.Errorf("fec model %s: %s does not have erratum ERR006358 (imx6q does)", d.name, d.prof.Name)
	}
	d.faults.err006358.Store(1)
	return nil
}

// SetLink sets the PHY's link state. A link that goes down stays latched
// low in BMSR until the next BMSR read. While it is down no frame passes.
func (d *Device) SetLink(up bool) {
	d.link.Store(up)
	d.phy.setLink(up)
}

// FlapLink takes the link down and up again n times: nothing is lost
// unless a frame comes in between, but BMSR shows the link down once.
func (d *Device) FlapLink(n int) {
	for i := 0; i < n; i++ {
		d.SetLink(false)
		d.SetLink(true)
	}
}

// SetLinkSpeed makes the PHY renegotiate with a partner whose top speed is
// speed Mb/s (10, 100 or, on gigabit parts, 1000; 0: the part's top
// speed), full duplex, as when the link partner changes: the link goes
// down once (latched low in BMSR) and comes back at the best speed both
// advertise (the partner's, unless the PHY's advertisement leaves it
// out). Frames pass again only once the MAC's ECR.SPEED and RCR.RMII_10T
// match it.
func (d *Device) SetLinkSpeed(speed int) error {
	s, err := checkSpeed(d.name, d.prof, speed)
	if err != nil {
		return err
	}
	up := d.link.Load()
	d.SetLink(false)
	d.phy.setPartner(s)
	d.SetLink(up)
	return nil
}

// LinkSpeed is the speed the PHY resolved, in Mb/s.
func (d *Device) LinkSpeed() int { return int(d.phy.speed.Load()) }

// LinkUp reports the PHY's link state.
func (d *Device) LinkUp() bool { return d.link.Load() }

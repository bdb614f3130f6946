package model

import (
	"sync/atomic"

	"github.com/gopmd/gopmd/internal/mii"
)

// mdioBus is one MDIO controller's registers (§2.9).
type mdioBus struct {
	cfg, ctl, data, addr atomic.Uint32
}

// PHYSSR is the PHY's vendor status register, laid out as the AR8031's
// PHY-specific status (Linux at803x.c AT803X_SPECIFIC_STATUS): bits 15:14
// speed (0 = 10M, 1 = 100M, 2 = 1G), bit 13 full duplex, bit 11 speed and
// duplex resolved, bit 10 link. The standard clause-22 registers are
// internal/mii's.
const phySSR = 0x11

// bmsrCaps is what the PHY can do: 100/10 full and half duplex, extended
// status (gigabit), auto-negotiation, extended capabilities.
const bmsrCaps = mii.BMSR_100FULL | mii.BMSR_100HALF | mii.BMSR_10FULL | mii.BMSR_10HALF |
	mii.BMSR_ESTATUS | mii.BMSR_ANCAPABLE | mii.BMSR_EXTCAP

// Clause-45 devices of the simulated PHY.
const (
	MMDPMAPMD = 1
	MMDPCS    = 3
	MMDAN     = 7
	// MMDStatus is the status register (reg 1) of every MMD: bit 2 link.
	MMDStatus = 1
)

// phy is the external PHY on the port MDIO bus.
type phy struct {
	addr             int
	bmcr, anar, gbcr atomic.Uint32
}

func (p *phy) reset() {
	p.bmcr.Store(mii.BMCR_ANENABLE | mii.BMCR_FULLDUPLEX | mii.BMCR_SPEED_MSB)
	p.anar.Store(mii.ANAR_100FULL | mii.ANAR_100HALF | mii.ANAR_10FULL | mii.ANAR_10HALF | mii.ANAR_CSMA)
	p.gbcr.Store(mii.CTRL1000_1000FULL | mii.CTRL1000_1000HALF)
}

// err050089 records a register access made while an MDIO transaction runs
// on function m of the chip (d itself, or another function).
func (d *Device) err050089(off uint32, m *Device) {
	if m == d && ((off >= EMDIOBase && off < EMDIOBase+16) || (off >= IMDIOBase && off < IMDIOBase+16)) {
		return // the transaction's own accesses
	}
	d.st.err050089.Add(1)
	where := ""
	if m != d {
		where = " on " + m.name
	}
	d.recordErr("ERR050089: access to %s (%#x) while an MDIO transaction runs%s: on LS1028A it may be dropped or corrupted; serialise MDIO against all other register accesses of every ENETC function", regName(off), off, where)
}

// mdioRead reads an MDIO controller register. A CFG read shows the
// transaction finished (BSY is never set for longer than the access that
// starts it), which ends the ERR050089 window.
func (d *Device) mdioRead(b *mdioBus, reg uint32) uint32 {
	switch reg {
	case regMDIO_CFG:
		d.chip.mdio.CompareAndSwap(d, nil) // the BSY poll: the transaction is over
		return b.cfg.Load() &^ mdio_cfg_BSY
	case regMDIO_CTL:
		return b.ctl.Load()
	case regMDIO_DATA:
		return b.data.Load()
	}
	return b.addr.Load()
}

// mdioWrite writes an MDIO controller register; CTL with READ set starts a
// read cycle, DATA starts a write cycle, ADDR (clause 45) an address cycle.
func (d *Device) mdioWrite(b *mdioBus, reg uint32, v uint32) {
	switch reg {
	case regMDIO_CFG:
		b.cfg.Store(v &^ (mdio_cfg_BSY | mdio_cfg_RD_ER))
		return
	case regMDIO_ADDR:
		b.addr.Store(v & 0xFFFF)
		d.chip.mdio.Store(d)
		return
	case regMDIO_CTL:
		b.ctl.Store(v &^ mdio_ctl_READ)
		if v&mdio_ctl_READ == 0 {
			return
		}
		d.chip.mdio.Store(d)
		val, ok := d.mdioAccess(b, false, 0)
		cfg := b.cfg.Load() &^ mdio_cfg_RD_ER
		if !ok {
			cfg |= mdio_cfg_RD_ER // nobody answered
			val = 0xFFFF
		}
		b.cfg.Store(cfg)
		b.data.Store(uint32(val))
		return
	case regMDIO_DATA:
		b.data.Store(v & 0xFFFF)
		d.chip.mdio.Store(d)
		d.mdioAccess(b, true, uint16(v))
	}
}

// mdioAccess performs one clause-22 or clause-45 cycle on bus b.
func (d *Device) mdioAccess(b *mdioBus, write bool, v uint16) (uint16, bool) {
	ctl := b.ctl.Load()
	port := int(ctl >> 5 & 0x1F)
	dev := int(ctl & 0x1F)
	c45 := b.cfg.Load()&mdio_cfg_ENC45 != 0
	if b == &d.imdio {
		if port != 0 {
			return 0, false
		}
		return d.pcsAccess(c45, dev, int(b.addr.Load()), write, v), true
	}
	if port != d.phy.addr {
		return 0, false
	}
	if c45 {
		return d.phyC45(dev, int(b.addr.Load()), write, v), true
	}
	return d.phyC22(dev, write, v), true
}

// linkBits returns the link state as a status register shows it; the first
// read after a link loss shows it down (latched low).
func (d *Device) linkBit() bool {
	if d.latchDown.Swap(false) {
		return false
	}
	return d.link.Load()
}

func (d *Device) speedCode() uint32 {
	switch d.speedMbps() {
	case 10:
		return 0
	case 100:
		return 1
	}
	return 2
}

func (d *Device) phyC22(reg int, write bool, v uint16) uint16 {
	p := &d.phy
	if write {
		switch reg {
		case mii.BMCR:
			p.bmcr.Store(uint32(v &^ mii.BMCR_RESET)) // reset completes at once
			if v&mii.BMCR_RESET != 0 {
				p.reset()
			}
		case mii.ANAR:
			p.anar.Store(uint32(v))
		case mii.CTRL1000:
			p.gbcr.Store(uint32(v))
		}
		return 0
	}
	up := d.link.Load()
	anlpar, stat1000 := mii.Partner(d.speedMbps())
	switch reg {
	case mii.BMCR:
		return uint16(p.bmcr.Load())
	case mii.BMSR:
		s := uint16(bmsrCaps)
		if d.linkBit() {
			s |= mii.BMSR_LINK | mii.BMSR_ANCOMPLETE
		}
		return s
	case mii.PHYID1:
		return uint16(d.cfg.PHYID >> 16)
	case mii.PHYID2:
		return uint16(d.cfg.PHYID)
	case mii.ANAR:
		return uint16(p.anar.Load())
	case mii.ANLPAR:
		if !up {
			return 0
		}
		return anlpar
	case mii.CTRL1000:
		return uint16(p.gbcr.Load())
	case mii.STAT1000:
		if !up {
			return 0
		}
		return stat1000
	case mii.ESTATUS:
		return mii.ESTATUS_1000T_FULL | mii.ESTATUS_1000T_HALF
	case phySSR:
		if !up {
			return 0
		}
		return uint16(d.speedCode()<<14 | 1<<13 | 1<<11 | 1<<10)
	}
	return 0
}

func (d *Device) phyC45(mmd, reg int, write bool, v uint16) uint16 {
	if write {
		return 0
	}
	switch mmd {
	case MMDPMAPMD, MMDPCS, MMDAN:
	default:
		return 0
	}
	switch reg {
	case MMDStatus:
		var s uint16
		if d.linkBit() {
			s |= mii.BMSR_LINK // an MMD status register has BMSR's link bit
		}
		if mmd == MMDAN && d.link.Load() {
			s |= mii.BMSR_ANCOMPLETE // and the AN MMD its AN-complete bit
		}
		return s
	case 2:
		return uint16(d.cfg.PHYID >> 16)
	case 3:
		return uint16(d.cfg.PHYID)
	case 5:
		return 1<<MMDPMAPMD | 1<<MMDPCS | 1<<MMDAN // devices in package
	}
	return 0
}

// macStatus is PM0_STATUS (DPDK's reading of it: bit 16 link, bits 18:17
// speed, bit 19 full duplex).
func (d *Device) macStatus() uint32 {
	if !d.carrier() {
		return 0
	}
	return pm0_status_LINK | d.speedCode()<<17 | pm0_status_FULLDX
}

// SetMACLoopback sets or clears the eMAC's loopback bit (PM0_CMD_CFG.XGLP)
// with a register write, as a driver would, and reports whether it was set.
// Only a PF has the eMAC.
func (d *Device) SetMACLoopback(on bool) (was bool) {
	v := d.Read32(regPM0_CMD_CFG)
	nv := v &^ pm_cmd_cfg_XGLP
	if on {
		nv |= pm_cmd_cfg_XGLP
	}
	d.Write32(regPM0_CMD_CFG, nv)
	return v&pm_cmd_cfg_XGLP != 0
}

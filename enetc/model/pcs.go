package model

import (
	"fmt"
	"sync/atomic"

	"github.com/gopmd/gopmd/sim/simphy"
)

// The port's interface to the board (docs/hardware-enetc.md §6.1): the
// MAC's PM0_IF_MODE and, for the SerDes modes, the Lynx PCS at address 0
// of the internal MDIO bus. With Config.PHYMode set, frames pass only when
// both are set for the wiring and the PHY's link is up; a driver that
// programs the wrong mode or speed has no link. Each sequence of Linux,
// U-Boot and gopmd links (bringup_test.go replays them).

// PHY modes the model's port can be wired for (Config.PHYMode).
const (
	PHYModeSGMII     = "sgmii"
	PHYMode2500BaseX = "2500base-x"
	PHYModeRGMII     = "rgmii"
	PHYModeInternal  = "internal"
)

// ValidPHYMode reports whether m is a Config.PHYMode the model takes ("" is
// the unmodelled interface: IF_MODE and the PCS do not gate traffic).
func ValidPHYMode(m string) bool {
	switch m {
	case "", PHYModeSGMII, PHYMode2500BaseX, PHYModeRGMII, PHYModeInternal:
		return true
	}
	return false
}

// PM0_IF_MODE bits (§2.4).
const (
	ifm_IFMODE_MASK = 0x3
	ifm_IFMODE_GMII = 2
	ifm_RG          = 1 << 2
	ifm_FULL_DPX    = 1 << 12
	ifm_SSP_SHIFT   = 13
	ifm_SSP_MASK    = 3 << ifm_SSP_SHIFT
	ifm_EN_AUTO     = 1 << 15
)

// Lynx PCS registers beyond the clause-22 set (§6.1).
const (
	PCSDevAbility  = 0x04
	PCSPartner     = 0x05
	PCSLinkTimerLo = 0x12
	PCSLinkTimerHi = 0x13
	PCSIfMode      = 0x14
)

// PCS IF_MODE bits.
const (
	pcsIfSGMIIEn   = 1 << 0
	pcsIfSGMIIAN   = 1 << 1
	pcsIfSpeedSh   = 2
	pcsIfSpeedMask = 3 << pcsIfSpeedSh
	pcsIfHalf      = 1 << 4
)

// pcs is the Lynx PCS: clause-22 registers, BMSR and the partner word
// computed from the link and the configuration, the rest plain storage.
type pcs struct {
	regs [32]atomic.Uint32
}

// reset is the PCS's power-on state: BMCR with AN enabled at 1000 full
// duplex, Lynx ID, everything else 0 (the model's choice: the reference
// gives no reset values; 0 in IF_MODE is what NXP calls the valid
// 2500BASE-X setting, §6.1). Only New calls it: neither an FLR of the
// ENETC nor the BMCR reset bit brings the PCS's registers back here.
func (p *pcs) reset() {
	for i := range p.regs {
		p.regs[i].Store(0)
	}
	p.regs[simphy.BMCR].Store(simphy.BMCR_ANENABLE | simphy.BMCR_FULLDUPLEX | simphy.BMCR_SPEED_MSB)
	p.regs[simphy.PHYID1].Store(0x0083)
	p.regs[simphy.PHYID2].Store(0xE400)
}

// ifModeReset is PM0/PM1_IF_MODE after a reset: what the RCW leaves for
// the port's wiring, GMII for the SerDes modes and GMII with RG for RGMII
// (Linux enetc_mac_config never writes IF_MODE for SGMII or 2500BASE-X and
// U-Boot's enetc_init_rgmii changes only EN_AUTO, SSP and FULL_DPX, so on
// silicon the reset value serves them, §6.1); 0 with StrictIFMode, for an
// internal port and when the wiring is not modelled.
func (d *Device) ifModeReset() uint32 {
	if d.cfg.StrictIFMode {
		return 0
	}
	switch d.cfg.PHYMode {
	case PHYModeSGMII, PHYMode2500BaseX:
		return ifm_IFMODE_GMII
	case PHYModeRGMII:
		return ifm_IFMODE_GMII | ifm_RG
	}
	return 0
}

// sgmiiSpeed is the 2-bit speed code of SGMII and of the PCS IF_MODE: 0 =
// 10, 1 = 100, 2 = 1000 Mb/s.
func sgmiiSpeed(mbps int) uint32 {
	switch mbps {
	case 10:
		return 0
	case 100:
		return 1
	}
	return 2
}

// rgmiiSSP is PM0_IF_MODE's SSP code: 0 = 100, 1 = 10, 2 = 1000 Mb/s.
func rgmiiSSP(mbps int) uint32 {
	switch mbps {
	case 10:
		return 1
	case 100:
		return 0
	}
	return 2
}

// pcsLink is the SerDes link as the PCS sees it, and whether in-band
// autonegotiation completed, for the SGMII and 2500BASE-X wirings.
func (d *Device) pcsLink() (link, anDone bool) {
	if !d.link.Load() {
		return false, false
	}
	r := &d.pcs.regs
	bmcr, ifm := r[simphy.BMCR].Load(), r[PCSIfMode].Load()
	an := bmcr&simphy.BMCR_ANENABLE != 0
	switch d.cfg.PHYMode {
	case PHYModeSGMII:
		if ifm&pcsIfSGMIIEn == 0 {
			return false, false // not in SGMII mode: no code-group sync
		}
		if ifm&pcsIfSGMIIAN != 0 {
			// In-band AN: the MAC side must advertise SGMII (bit 0), run
			// AN, and have a link timer to time the exchange with.
			ok := an && r[PCSDevAbility].Load()&1 != 0 && (r[PCSLinkTimerLo].Load() != 0 || r[PCSLinkTimerHi].Load() != 0)
			return ok, ok
		}
		// Out of band: AN off and the speed forced to what the PHY runs.
		return !an && ifm&pcsIfSpeedMask>>pcsIfSpeedSh == sgmiiSpeed(d.speedMbps()) && ifm&pcsIfHalf == 0, false
	case PHYMode2500BaseX:
		// The lane runs at 3.125 GHz from the RCW's PLL; the PCS codes it
		// as 1000BASE-X (IF_MODE 0) or as SGMII at a fixed 1000 (§6.1).
		if ifm&(pcsIfSGMIIAN|pcsIfHalf) != 0 {
			return false, false // SGMII in-band words or half duplex: nothing on this lane speaks them
		}
		if ifm&pcsIfSGMIIEn != 0 {
			// U-Boot's and Felix's setting: speed 1000, AN off.
			return !an && ifm&pcsIfSpeedMask>>pcsIfSpeedSh == 2, false
		}
		// 1000BASE-X coding: links with AN off (Linux before 2025 never
		// touched BMCR); with AN on the partner answers clause 37 (NXP's
		// back-to-back test of its 2025 change).
		return true, an
	}
	return false, false
}

// ifUp is whether the MAC interface passes frames: the wiring's MAC and
// PCS settings hold. Recomputed on every write that can change it.
func (d *Device) ifUp() bool {
	if !d.pf {
		return true
	}
	ifm := d.get(regPM0_IF_MODE)
	switch d.cfg.PHYMode {
	case "", PHYModeInternal:
		return true
	case PHYModeRGMII:
		if ifm&ifm_IFMODE_MASK != ifm_IFMODE_GMII || ifm&ifm_RG == 0 {
			return false
		}
		if ifm&ifm_EN_AUTO != 0 {
			return true // in-band status sets the speed
		}
		return ifm&ifm_SSP_MASK>>ifm_SSP_SHIFT == rgmiiSSP(d.speedMbps()) && ifm&ifm_FULL_DPX != 0
	}
	if ifm&ifm_IFMODE_MASK != ifm_IFMODE_GMII || ifm&ifm_RG != 0 {
		return false // the SerDes PCS talks GMII to the MAC
	}
	link, _ := d.pcsLink()
	return link
}

// updateIf recomputes the interface state after a write that can change
// it, letting queued TX frames leave when it came up.
func (d *Device) updateIf() {
	up := d.ifUp()
	if d.ifOK.Swap(up) != up && up {
		d.kickAllTx()
	}
}

// carrier is whether frames pass between MAC and wire: the PHY's link and
// the MAC interface.
func (d *Device) carrier() bool { return d.link.Load() && d.ifOK.Load() }

// InterfaceUp reports whether the MAC interface (PM0_IF_MODE and, for SGMII
// and 2500BASE-X, the PCS) is programmed for the port's wiring, so frames
// can pass while the link is up.
func (d *Device) InterfaceUp() bool { return d.ifOK.Load() }

// SetSpeed makes the PHY resolve mbps (10, 100 or 1000) from now on, as
// after a renegotiation with another link partner: the PHY's registers and
// the PCS's AN result report it, and an RGMII MAC forced to the old speed
// passes no frames until the driver follows.
func (d *Device) SetSpeed(mbps int) {
	switch mbps {
	case 10, 100, 1000:
	default:
		panic(fmt.Sprintf("enetc model %s: SetSpeed(%d): want 10, 100 or 1000", d.name, mbps))
	}
	d.speed.Store(int32(mbps))
	d.updateIf()
}

func (d *Device) speedMbps() int { return int(d.speed.Load()) }

// PHYMode is the wiring the port was built with ("" when unmodelled).
func (d *Device) PHYMode() string { return d.cfg.PHYMode }

func (d *Device) pcsAccess(c45 bool, dev, reg int, write bool, v uint16) uint16 {
	if c45 {
		reg = reg & 0x1F // the PCS answers clause-45 frames on any MMD with its clause-22 map
	} else {
		reg = dev
	}
	if write {
		switch reg {
		case simphy.BMCR:
			// Reset and restart are self-clearing; a reset restarts the
			// PCS but keeps IF_MODE, DEV_ABILITY and the link timer, and
			// BMCR takes the rest of the written value (U-Boot writes
			// them, then 0x8140 for 2500BASE-X; §6.1).
			d.pcs.regs[reg].Store(uint32(v &^ (simphy.BMCR_RESET | simphy.BMCR_ANRESTART)))
		case simphy.BMSR, simphy.PHYID1, simphy.PHYID2, PCSPartner:
		default:
			d.pcs.regs[reg].Store(uint32(v))
		}
		d.updateIf()
		return 0
	}
	switch reg {
	case simphy.BMSR:
		s := uint16(simphy.BMSR_ESTATUS | simphy.BMSR_ANCAPABLE | simphy.BMSR_EXTCAP)
		link, an := d.pcsLink()
		if d.cfg.PHYMode == "" {
			link, an = d.link.Load(), d.link.Load()
		}
		if link {
			s |= simphy.BMSR_LINK
		}
		if an {
			s |= simphy.BMSR_ANCOMPLETE
		}
		return s
	case PCSPartner:
		_, an := d.pcsLink()
		if an && d.cfg.PHYMode == PHYMode2500BaseX {
			// Clause 37: the partner's base page, full duplex (bit 5)
			// and acknowledge (bit 14).
			return 1<<14 | 1<<5
		}
		// The PHY's SGMII word after in-band AN: bit 15 link, bit 14
		// acknowledge, bit 12 full duplex, bits 11:10 speed, bit 0 set.
		if an || (d.cfg.PHYMode == "" && d.link.Load()) { // unmodelled: as BMSR says
			return uint16(1<<15 | 1<<14 | 1<<12 | sgmiiSpeed(d.speedMbps())<<10 | 1)
		}
		return 0
	}
	return uint16(d.pcs.regs[reg].Load())
}

// checkPHYMode is New's check of Config.PHYMode.
func checkPHYMode(cfg *Config) error {
	if !ValidPHYMode(cfg.PHYMode) {
		return fmt.Errorf("enetc model %s: PHYMode %q: want sgmii, 2500base-x, rgmii, internal or empty", cfg.Name, cfg.PHYMode)
	}
	return nil
}

// PCSRegister returns clause-22 register reg of the Lynx PCS as stored
// (BMSR and the partner word as a read computes them are not stored).
func (d *Device) PCSRegister(reg int) uint16 {
	if reg < 0 || reg >= len(d.pcs.regs) {
		return 0
	}
	return uint16(d.pcs.regs[reg].Load())
}

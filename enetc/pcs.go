package enetc

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/mii"
)

// The port's interface to the board (docs/hardware-enetc.md §6.1): the
// MAC's PM0/PM1_IF_MODE and, for SGMII and 2500BASE-X, the Lynx PCS at
// address 0 of the port's internal MDIO bus. The PHY mode comes from the
// phy-mode= option, else the device tree (phy-mode or phy-connection-type
// of the function's node); without either the interface is left as the
// bootloader programmed it.

// phyMode is how the port is wired.
type phyMode int

const (
	modeKeep      phyMode = iota // not known: leave IF_MODE and the PCS alone
	modeSGMII                    // SerDes SGMII through the PCS, in-band AN
	mode2500BaseX                // SerDes 2500BASE-X through the PCS, no AN
	modeRGMII                    // parallel RGMII to an external PHY
	modeInternal                 // fixed link inside the SoC (the switch ports)
)

func (m phyMode) String() string {
	switch m {
	case modeSGMII:
		return "sgmii"
	case mode2500BaseX:
		return "2500base-x"
	case modeRGMII:
		return "rgmii"
	case modeInternal:
		return "internal"
	}
	return "as left by the bootloader"
}

// parsePHYMode maps a device-tree phy-mode string (the RGMII delay
// variants included) to a mode.
func parsePHYMode(s string) (phyMode, bool) {
	switch s {
	case "sgmii":
		return modeSGMII, true
	case "2500base-x":
		return mode2500BaseX, true
	case "rgmii", "rgmii-id", "rgmii-rxid", "rgmii-txid":
		return modeRGMII, true
	case "internal":
		return modeInternal, true
	}
	return modeKeep, false
}

const phyModeAccepted = "sgmii, 2500base-x, rgmii (or rgmii-id, rgmii-rxid, rgmii-txid) or internal; LS1028A-RDB: sgmii on PF0 (00:00.0), internal on PF2 and PF3 (00:00.2, 00:00.6)"

// PM0_IF_MODE bits (§2.4).
const (
	ifm_IFMODE_MASK = 0x3
	ifm_IFMODE_GMII = 2
	ifm_RG          = 1 << 2
	ifm_FULL_DPX    = 1 << 12
	ifm_SSP_MASK    = 3 << 13
	ifm_SSP_1000    = 2 << 13
	ifm_SSP_100     = 0 << 13
	ifm_SSP_10      = 1 << 13
	ifm_EN_AUTO     = 1 << 15
)

// Lynx PCS registers and IF_MODE bits (§6.1).
const (
	pcsAddr        = 0
	pcsDevAbility  = 0x04
	pcsPartner     = 0x05
	pcsLinkTimerLo = 0x12
	pcsLinkTimerHi = 0x13
	pcsIfMode      = 0x14

	pcsIfSGMIIEn  = 1 << 0
	pcsIfSGMIIAN  = 1 << 1
	pcsIfSpeed1G  = 2 << 2
	pcsIfHalf     = 1 << 4
	pcsSGMIIAbil  = 0x4001 // SGMII, acknowledge (U-Boot's DEV_ABILITY)
	pcsLinkTimer  = 200000 // 1.6 ms at the PCS's 125 MHz (8 ns) clock
	sgmiiLink     = 1 << 15
	sgmiiDuplex   = 1 << 12
	sgmiiSpeedSh  = 10
	sgmiiSpeedMsk = 3
)

// resolvePHYMode picks the PHY mode (option, else device tree) and, for an
// internal port, its fixed-link speed from the device tree. Called from
// parseOptions; a bad option is a *driver.OptionError, a device-tree value
// gopmd does not program an error naming the node.
func (p *Port) resolvePHYMode() error {
	o := p.dev.Spec.Options
	if o != nil && o.Has("phy-mode") {
		v := o.Get("phy-mode")
		m, ok := parsePHYMode(v)
		if !ok {
			return driver.BadOption("phy-mode", v, "not a port interface gopmd programs", phyModeAccepted)
		}
		if !p.pf {
			return driver.BadOption("phy-mode", v, "a VF has no MAC or PCS of its own", "no phy-mode= on a VF; give it to the PF")
		}
		p.phyMode, p.phyModeName = m, v
		p.inband = m == modeSGMII // the RDB's PF0; in-band=off for a PHY without SGMII AN
	} else if node := p.dev.Node; p.pf && node.Exists() {
		for _, prop := range []string{"phy-mode", "phy-connection-type"} {
			v, ok, err := node.String1(prop)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			m, ok := parsePHYMode(v)
			if !ok {
				return fmt.Errorf("device tree %s is %q, which gopmd does not program: give phy-mode= (%s)", node.Prop(prop), v, phyModeAccepted)
			}
			p.phyMode, p.phyModeName = m, v
			// Linux's phylink: in-band AN only with managed =
			// "in-band-status" (the LS1028A-RDB's PF0), else the PHY's
			// result is forced into the PCS.
			managed, _, _ := node.String1("managed")
			p.inband = managed == "in-band-status"
			break
		}
	}
	if o != nil && o.Has("in-band") {
		v := o.Get("in-band")
		if v != "on" && v != "off" {
			return driver.BadOption("in-band", v, "not on or off", "on (SGMII in-band autonegotiation) or off (the PHY's speed forced into the PCS)")
		}
		if p.phyMode != modeSGMII {
			return driver.BadOption("in-band", v, "only SGMII has in-band autonegotiation ("+p.phyMode.String()+" here)", "in-band= with phy-mode=sgmii only")
		}
		p.inband = v == "on"
	}
	p.fixedSpeed = 1000
	if p.phyMode == modeInternal {
		// fixed-link { speed = <2500>; full-duplex; } (LS1028A PF2).
		if l, ok, err := p.dev.Node.FixedLink(); err == nil && ok && l.Speed > 0 {
			p.fixedSpeed = l.Speed
		}
	}
	return nil
}

// setupInterface programs the MAC interface and the PCS for the PHY mode
// (§6.1): SGMII: MAC in GMII mode, PCS link timer, SGMII with in-band AN,
// SGMII ability, AN enabled and restarted. 2500BASE-X: MAC in GMII mode,
// PCS IF_MODE 0 (SGMII off, as Linux programs it since NXP's 2025 Lynx
// change) with AN off. RGMII: MAC in RGMII (GMII | RG),
// in-band status off; speed and duplex follow the PHY at every link poll.
// Internal: nothing to program. Caller holds the port lock (p.lock).
func (p *Port) setupInterface() error {
	if !p.pf {
		return nil
	}
	r := p.regs
	switch p.phyMode {
	case modeKeep, modeInternal:
		return nil
	case modeRGMII:
		p.writeIfMode(r.Read32(regPM0_IF_MODE)&^(ifm_EN_AUTO|ifm_IFMODE_MASK) | ifm_IFMODE_GMII | ifm_RG)
		return nil
	}
	if r.Read32(regPCAPR0)&pcapr0_IMDIO == 0 {
		return fmt.Errorf("phy-mode %v needs the port's internal MDIO and PCS, which PCAPR0 bit 11 says this port has none of: on LS1028A only PF0 (00:00.0) is a SerDes port", p.phyMode)
	}
	p.writeIfMode(r.Read32(regPM0_IF_MODE)&^(ifm_EN_AUTO|ifm_IFMODE_MASK|ifm_RG) | ifm_IFMODE_GMII)
	var steps [][2]uint16
	p.pcsIfMode = pcsIfSGMIIEn | pcsIfSpeed1G
	if p.phyMode == mode2500BaseX {
		p.pcsIfMode = 0 // 1000BASE-X framing at 2.5 times the rate (§6.1)
	}
	if p.phyMode == modeSGMII && p.inband {
		steps = [][2]uint16{
			{pcsLinkTimerLo, pcsLinkTimer & 0xFFFF},
			{pcsLinkTimerHi, pcsLinkTimer >> 16},
			{pcsIfMode, pcsIfSGMIIEn | pcsIfSGMIIAN},
			{pcsDevAbility, pcsSGMIIAbil},
			{mii.BMCR, mii.BMCR_ANENABLE | mii.BMCR_ANRESTART | mii.BMCR_FULLDUPLEX | mii.BMCR_SPEED_MSB},
		}
	} else {
		// 2500BASE-X: IF_MODE 0; SGMII out of band: SGMII at speed 1000
		// (the PHY's speed replaces it at each link poll, followPCS).
		// AN off for both.
		steps = [][2]uint16{
			{pcsIfMode, p.pcsIfMode},
			{mii.BMCR, mii.BMCR_FULLDUPLEX | mii.BMCR_SPEED_MSB}, // AN off
		}
	}
	for _, s := range steps {
		if err := p.mdioWrite22At(regIMDIO, pcsAddr, int(s[0]), s[1]); err != nil {
			return fmt.Errorf("programming the PCS for %v (register %#x): %w", p.phyMode, s[0], err)
		}
	}
	return nil
}

// writeIfMode writes IF_MODE of both MACs (eMAC and pMAC, as Linux mirrors
// PM0_CMD_CFG into PM1).
func (p *Port) writeIfMode(v uint32) {
	p.regs.Write32(regPM0_IF_MODE, v)
	p.regs.Write32(regPM1_IF_MODE, v)
}

// readPCSLink reads the PCS's view of the SerDes link: BMSR twice (the link bit latches low), and for SGMII
// the in-band AN result (partner word: link, duplex, speed).
func (p *Port) readPCSLink() (driver.Link, error) {
	if _, err := p.mdioRead22At(regIMDIO, pcsAddr, mii.BMSR); err != nil {
		return driver.Link{}, err
	}
	bmsr, err := p.mdioRead22At(regIMDIO, pcsAddr, mii.BMSR)
	if err != nil {
		return driver.Link{}, err
	}
	if bmsr&mii.BMSR_LINK == 0 {
		return driver.Link{}, nil
	}
	if p.phyMode == mode2500BaseX {
		return driver.Link{Up: true, SpeedMbps: 2500, FullDuplex: true}, nil
	}
	if !p.inband {
		return driver.Link{Up: true, SpeedMbps: 1000, FullDuplex: true}, nil // the caller takes the PHY's speed
	}
	if bmsr&mii.BMSR_ANCOMPLETE == 0 {
		return driver.Link{}, nil
	}
	w, err := p.mdioRead22At(regIMDIO, pcsAddr, pcsPartner)
	if err != nil || w&sgmiiLink == 0 {
		return driver.Link{}, err
	}
	l := driver.Link{Up: true, FullDuplex: w&sgmiiDuplex != 0}
	switch w >> sgmiiSpeedSh & sgmiiSpeedMsk {
	case 0:
		l.SpeedMbps = 10
	case 1:
		l.SpeedMbps = 100
	case 2:
		l.SpeedMbps = 1000
	default:
		return driver.Link{}, fmt.Errorf("PCS partner word %#x has a reserved speed code", w)
	}
	return l, nil
}

// followPCS forces the PHY's speed and duplex into the PCS's IF_MODE for
// SGMII without in-band AN (Linux lynx_pcs_link_up_sgmii).
func (p *Port) followPCS(l driver.Link) error {
	if p.phyMode != modeSGMII || p.inband || !l.Up {
		return nil
	}
	v := uint16(pcsIfSGMIIEn)
	switch l.SpeedMbps {
	case 10:
	case 100:
		v |= 1 << 2
	default:
		v |= pcsIfSpeed1G
	}
	if !l.FullDuplex {
		v |= pcsIfHalf
	}
	if v == p.pcsIfMode {
		return nil
	}
	if err := p.mdioWrite22At(regIMDIO, pcsAddr, pcsIfMode, v); err != nil {
		return err
	}
	p.pcsIfMode = v
	return nil
}

// followRGMII forces the RGMII MAC's speed and duplex to what the PHY
// resolved (Linux mac_link_up: in-band status is not trusted). Caller
// holds ctl.
func (p *Port) followRGMII(l driver.Link) {
	if p.phyMode != modeRGMII || !l.Up {
		return
	}
	v := p.regs.Read32(regPM0_IF_MODE)
	nv := v &^ (ifm_SSP_MASK | ifm_FULL_DPX | ifm_EN_AUTO)
	switch l.SpeedMbps {
	case 10:
		nv |= ifm_SSP_10
	case 100:
		nv |= ifm_SSP_100
	default:
		nv |= ifm_SSP_1000
	}
	if l.FullDuplex {
		nv |= ifm_FULL_DPX
	}
	if nv != v {
		p.writeIfMode(nv)
	}
}

// PHYMode is the interface mode the port programs ("sgmii", "sgmii, out
// of band", "2500base-x", "rgmii", "internal"), or a sentence saying it
// keeps the bootloader's.
func (p *Port) PHYMode() string {
	if p.phyMode == modeSGMII && !p.inband {
		return "sgmii, out of band"
	}
	return p.phyMode.String()
}

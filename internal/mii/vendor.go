package mii

import "fmt"

// The PHYs on the boards gopmd names (docs/hardware.md) and what the
// kernel's PHY drivers program into them at bring-up, as facts from the
// public drivers: Linux drivers/net/phy/realtek (realtek_main.c),
// drivers/net/phy/qcom/at803x.c (at803x.c before 6.8), micrel.c. No
// PHY's vendor registers are guessed: a PHY not in Models is named by
// its OUI and left as the bootloader left it.

// Model is a PHY part: its identifier (PHYID1<<16 | PHYID2) under Mask,
// its name and where the fact is from.
type Model struct {
	ID, Mask uint32
	Name     string
	Source   string
	kind     vendorKind
}

type vendorKind int

const (
	kindOther vendorKind = iota
	kindRTL8211F
	kindAR803x
	kindAR8031 // AR8031/AR8033: an AR803x with a fiber/SGMII page
	kindKSZ8081
)

// Models are the known PHYs, most specific first.
var Models = []Model{
	{0x001cc916, 0xffffffff, "Realtek RTL8211F", "realtek: RTL_8211F id 0x001cc916 (i.MX93-EVK)", kindRTL8211F},
	{0x001cc878, 0xffffffff, "Realtek RTL8211F-VD (RTL8211FD-VX)", "realtek: RTL_8211FVD_PHYID 0x001cc878, the RTL8211F's config_init (i.MX8MP-EVK)", kindRTL8211F},
	{0x004dd074, 0xffffffff, "Qualcomm Atheros AR8031/AR8033", "at803x: ATH8031_PHY_ID 0x004dd074 (LS1028A-RDB, SGMII)", kindAR8031},
	{0x004dd072, 0xffffffff, "Qualcomm Atheros AR8035", "at803x: ATH8035_PHY_ID 0x004dd072", kindAR803x},
	{0x004dd076, 0xffffffff, "Qualcomm Atheros AR8030", "at803x: ATH8030_PHY_ID 0x004dd076", kindAR803x},
	{0x00221560, 0x00fffff0, "Microchip/Micrel KSZ8081 or KSZ8091", "micrel: PHY_ID_KSZ8081 0x00221560, mask 0x00fffff0 (i.MX6UL-EVK, RMII)", kindKSZ8081},
	{0x00221620, 0x00fffff0, "Microchip/Micrel KSZ9031", "micrel: PHY_ID_KSZ9031 0x00221620 (i.MX6Q boards)", kindOther},
	{0x00221610, 0x00fffff0, "Microchip/Micrel KSZ9021", "micrel: PHY_ID_KSZ9021 0x00221610", kindOther},
}

// Identify names the PHY with identifier id; ok is false for a part not
// in Models.
func Identify(id uint32) (m Model, ok bool) {
	for _, m := range Models {
		if id&m.Mask == m.ID&m.Mask {
			return m, true
		}
	}
	return Model{}, false
}

// Describe names a PHY for a person: the model, or its OUI, model number
// and revision.
func Describe(id uint32) string {
	if m, ok := Identify(id); ok {
		return fmt.Sprintf("%s (id %#08x)", m.Name, id)
	}
	oui, model, rev := PHYID(uint16(id>>16), uint16(id))
	return fmt.Sprintf("unknown PHY (id %#08x: OUI %#06x model %d rev %d)", id, oui, model, rev)
}

// Vendor registers, from the drivers named on Models.
const (
	// RTL8211F: register 0x1f selects the page of registers 0x10..0x1e;
	// on page 0xd08 register 0x11 bit 8 adds the TX clock delay and
	// register 0x15 bit 3 the RX clock delay (RTL8211F_TXCR, RTL8211F_RXCR,
	// RTL8211F_TX_DELAY, RTL8211F_RX_DELAY).
	RTL8211F_PAGE_SELECT = 0x1f
	RTL8211F_RGMII_PAGE  = 0xd08
	RTL8211F_TXCR        = 0x11
	RTL8211F_TX_DELAY    = 1 << 8
	RTL8211F_RXCR        = 0x15
	RTL8211F_RX_DELAY    = 1 << 3

	// AR803x: debug registers through an address (0x1d) and a data
	// (0x1e) register; debug 0x00 bit 15 is the RGMII RX clock delay,
	// debug 0x05 bit 8 the TX clock delay. AR8031/AR8033: register 0x1f
	// (chip configuration) bit 15 selects the copper page (set) or the
	// fiber/SGMII page (clear); bits 3..0 are the strapped mode, 0 =
	// copper to RGMII, 1 = copper to SGMII.
	AR803X_DEBUG_ADDR       = 0x1d
	AR803X_DEBUG_DATA       = 0x1e
	AR803X_DEBUG_REG_0      = 0x00
	AR803X_DEBUG_RX_CLK_DLY = 1 << 15
	AR803X_DEBUG_REG_5      = 0x05
	AR803X_DEBUG_TX_CLK_DLY = 1 << 8
	AR803X_CHIP_CONFIG      = 0x1f
	AR803X_BT_BX_REG_SEL    = 1 << 15
	AR803X_MODE_CFG_MASK    = 0x0f
	AR803X_MODE_BASET_RGMII = 0x0
	AR803X_MODE_BASET_SGMII = 0x1

	// KSZ8081: register 0x1f (PHY control 2) bit 7 selects the RMII
	// reference clock mode (KSZ8051_RMII_50MHZ_CLK): on parts whose
	// device-tree node has micrel,rmii-reference-clock-select-25-mhz the
	// bit's meaning is turned round.
	KSZ8081_CTRL2          = 0x1f
	KSZ8081_RMII_50MHZ_CLK = 1 << 7
)

// Setup is what the device tree says about a PHY's wiring.
type Setup struct {
	// Mode is the MAC node's phy-mode: "rgmii", "rgmii-id", "rgmii-rxid",
	// "rgmii-txid", "rmii", "mii", "sgmii", ... ("" when the tree gives
	// none: the PHY's delays are left as they are).
	Mode string
	// RMIIRef: the PHY node names a clock "rmii-ref" (clock-names), the
	// RMII reference the MAC feeds it, 50 MHz by the RMII specification;
	// RMIIRef25Sel: micrel,rmii-reference-clock-select-25-mhz.
	RMIIRef, RMIIRef25Sel bool
}

// RW reads and writes one register of the PHY.
type RW struct {
	Read  func(reg int) (uint16, error)
	Write func(reg int, v uint16) error
}

func (rw RW) modify(reg int, clear, set uint16) (old, now uint16, err error) {
	old, err = rw.Read(reg)
	if err != nil {
		return 0, 0, err
	}
	now = old&^clear | set
	if now == old {
		return old, now, nil
	}
	return old, now, rw.Write(reg, now)
}

// delays are the RGMII clock delays the PHY adds for a phy-mode, as the
// kernel's phy_interface_t means them: rgmii-id both, rgmii-rxid RX,
// rgmii-txid TX, rgmii none (the MAC or the board adds them). ok is false
// for a mode that is not RGMII.
func delays(mode string) (rx, tx, ok bool) {
	switch mode {
	case "rgmii":
		return false, false, true
	case "rgmii-id":
		return true, true, true
	case "rgmii-rxid":
		return true, false, true
	case "rgmii-txid":
		return false, true, true
	}
	return false, false, false
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Configure programs into the PHY with identifier id what the kernel's
// driver for it programs at bring-up for s, and returns one line per
// setting it made (what, where, the value). A PHY not in Models, or a
// setting the device tree does not ask for, is left alone.
func Configure(rw RW, id uint32, s Setup) ([]string, error) {
	m, ok := Identify(id)
	if !ok {
		return nil, nil
	}
	var done []string
	rx, tx, rgmii := delays(s.Mode)
	switch m.kind {
	case kindRTL8211F:
		if !rgmii {
			break
		}
		page, err := rw.Read(RTL8211F_PAGE_SELECT)
		if err != nil {
			return done, err
		}
		if err := rw.Write(RTL8211F_PAGE_SELECT, RTL8211F_RGMII_PAGE); err != nil {
			return done, err
		}
		var set = func(reg int, bit uint16, on bool) error {
			var c, s uint16 = bit, 0
			if on {
				c, s = 0, bit
			}
			_, _, err := rw.modify(reg, c, s)
			return err
		}
		err = set(RTL8211F_TXCR, RTL8211F_TX_DELAY, tx)
		if err == nil {
			err = set(RTL8211F_RXCR, RTL8211F_RX_DELAY, rx)
		}
		// The page the PHY was on is put back, as phy_modify_paged does.
		if werr := rw.Write(RTL8211F_PAGE_SELECT, page); err == nil {
			err = werr
		}
		if err != nil {
			return done, err
		}
		done = append(done, fmt.Sprintf("RGMII TX delay %s (page 0xd08 reg 0x11 bit 8), RX delay %s (page 0xd08 reg 0x15 bit 3) for phy-mode %s", onOff(tx), onOff(rx), s.Mode))
	case kindAR803x, kindAR8031:
		if m.kind == kindAR8031 {
			// Some bootloaders leave the fiber page selected: a part
			// strapped for copper gets the copper page back, or BMSR and
			// the advertisements read are the fiber side's
			// (at8031_config_init).
			cc, err := rw.Read(AR803X_CHIP_CONFIG)
			if err != nil {
				return done, err
			}
			if mode := cc & AR803X_MODE_CFG_MASK; mode == AR803X_MODE_BASET_RGMII || mode == AR803X_MODE_BASET_SGMII {
				what := "copper page selected (reg 0x1f bit 15)"
				if cc&AR803X_BT_BX_REG_SEL == 0 {
					if err := rw.Write(AR803X_CHIP_CONFIG, cc|AR803X_BT_BX_REG_SEL); err != nil {
						return done, err
					}
					what += "; the fiber page was"
				}
				done = append(done, what)
			}
		}
		if !rgmii {
			break
		}
		dbg := func(reg int, bit uint16, on bool) error {
			if err := rw.Write(AR803X_DEBUG_ADDR, uint16(reg)); err != nil {
				return err
			}
			v, err := rw.Read(AR803X_DEBUG_DATA)
			if err != nil {
				return err
			}
			n := v &^ bit
			if on {
				n |= bit
			}
			return rw.Write(AR803X_DEBUG_DATA, n)
		}
		if err := dbg(AR803X_DEBUG_REG_0, AR803X_DEBUG_RX_CLK_DLY, rx); err != nil {
			return done, err
		}
		if err := dbg(AR803X_DEBUG_REG_5, AR803X_DEBUG_TX_CLK_DLY, tx); err != nil {
			return done, err
		}
		done = append(done, fmt.Sprintf("RGMII RX delay %s (debug 0x00 bit 15), TX delay %s (debug 0x05 bit 8) for phy-mode %s", onOff(rx), onOff(tx), s.Mode))
	case kindKSZ8081:
		if !s.RMIIRef {
			break
		}
		// A 50 MHz reference: the bit set, unless the part's meaning is
		// turned round (kszphy_probe's rate > 49.5 MHz case).
		on := !s.RMIIRef25Sel
		c, set := uint16(KSZ8081_RMII_50MHZ_CLK), uint16(0)
		if on {
			c, set = 0, KSZ8081_RMII_50MHZ_CLK
		}
		if _, _, err := rw.modify(KSZ8081_CTRL2, c, set); err != nil {
			return done, err
		}
		how := "50 MHz RMII reference clock"
		if s.RMIIRef25Sel {
			how += " on a part with micrel,rmii-reference-clock-select-25-mhz"
		}
		done = append(done, fmt.Sprintf("%s: reg 0x1f bit 7 %s", how, onOff(on)))
	}
	return done, nil
}

// Report is what a driver did to its port's PHY at bring-up (nicctl phy
// prints it).
type Report struct {
	// ID is the PHY's identifier (PHYID1<<16 | PHYID2), 0 without a PHY.
	ID uint32 `json:"id"`
	// Name names the part (Describe).
	Name string `json:"name"`
	// Reset says what became of the PHY's reset line ("" where the
	// driver drives none).
	Reset string `json:"reset,omitempty"`
	// Programmed are the settings written into the PHY, one a line.
	Programmed []string `json:"programmed"`
	// Left says why nothing was programmed, "" when something was.
	Left string `json:"left,omitempty"`
}

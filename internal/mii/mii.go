// Package mii is the IEEE 802.3 clause-22 PHY management interface as
// the gopmd drivers and tools use it: the register numbers and bits (IEEE
// 802.3 22.2.4, 28.2.4 and 40.5; the same registers Linux's
// include/uapi/linux/mii.h describes) and how a link's speed and duplex
// are resolved from them. One copy, so the drivers and nicctl cannot
// disagree. The device models' PHYs have their own transcription,
// sim/simphy, which this package's tests check against this one.
//
// Names: a register is its usual datasheet name (BMCR, BMSR, ANAR,
// ANLPAR, ...); a bit is the register's name, an underscore and the bit's
// name (BMSR_LINK, ANAR_100FULL), as the drivers name their registers.
package mii

import "github.com/gopmd/gopmd/driver"

// Clause-22 register numbers.
const (
	BMCR     = 0x00 // basic mode control
	BMSR     = 0x01 // basic mode status
	PHYID1   = 0x02 // PHY identifier, OUI bits 3..18
	PHYID2   = 0x03 // PHY identifier, OUI bits 19..24, model, revision
	ANAR     = 0x04 // auto-negotiation advertisement
	ANLPAR   = 0x05 // auto-negotiation link partner ability
	ANER     = 0x06 // auto-negotiation expansion
	ANNPTR   = 0x07 // next page transmit
	ANLPNPAR = 0x08 // link partner next page
	CTRL1000 = 0x09 // 1000BASE-T control
	STAT1000 = 0x0A // 1000BASE-T status
	MMDCTRL  = 0x0D // MMD access control
	MMDDATA  = 0x0E // MMD access address/data
	ESTATUS  = 0x0F // extended status
)

// BMCR bits.
const (
	BMCR_RESET      = 1 << 15
	BMCR_LOOPBACK   = 1 << 14
	BMCR_SPEED_LSB  = 1 << 13 // with SPEED_MSB: 00 10 Mb/s, 01 100, 10 1000
	BMCR_ANENABLE   = 1 << 12
	BMCR_POWERDOWN  = 1 << 11
	BMCR_ISOLATE    = 1 << 10
	BMCR_ANRESTART  = 1 << 9
	BMCR_FULLDUPLEX = 1 << 8
	BMCR_COLLTEST   = 1 << 7
	BMCR_SPEED_MSB  = 1 << 6
)

// PHYID2 fields (IEEE 802.3 22.2.4.3.1): the low six bits of the OUI
// (bits 19..24), the manufacturer's model number and its revision.
const (
	PHYID2_OUI_SHIFT   = 10
	PHYID2_MODEL_SHIFT = 4
	PHYID2_MODEL_MASK  = 0x3F
	PHYID2_REV_MASK    = 0x0F
	// PHYID1_OUI_SHIFT places PHYID1's OUI bits 3..18 above PHYID2's six.
	PHYID1_OUI_SHIFT = 6
)

// PHYID splits the PHY identifier registers into the OUI (bits 3..24 of
// the manufacturer's identifier, as the standard numbers them), the model
// number and the revision.
func PHYID(id1, id2 uint16) (oui uint32, model, rev uint8) {
	oui = uint32(id1)<<PHYID1_OUI_SHIFT | uint32(id2)>>PHYID2_OUI_SHIFT
	return oui, uint8(id2 >> PHYID2_MODEL_SHIFT & PHYID2_MODEL_MASK), uint8(id2 & PHYID2_REV_MASK)
}

// BMSR bits.
const (
	BMSR_100BASE_T4        = 1 << 15
	BMSR_100FULL           = 1 << 14
	BMSR_100HALF           = 1 << 13
	BMSR_10FULL            = 1 << 12
	BMSR_10HALF            = 1 << 11
	BMSR_100T2FULL         = 1 << 10
	BMSR_100T2HALF         = 1 << 9
	BMSR_ESTATUS           = 1 << 8 // ESTATUS exists: a gigabit PHY
	BMSR_PREAMBLE_SUPPRESS = 1 << 6
	BMSR_ANCOMPLETE        = 1 << 5
	BMSR_REMOTE_FAULT      = 1 << 4
	BMSR_ANCAPABLE         = 1 << 3
	BMSR_LINK              = 1 << 2 // latches low: the first read after a loss shows it down
	BMSR_JABBER            = 1 << 1
	BMSR_EXTCAP            = 1 << 0
)

// ANAR bits; ANLPAR has the same layout for the link partner.
const (
	ANAR_NEXTPAGE     = 1 << 15
	ANAR_ACK          = 1 << 14
	ANAR_REMOTE_FAULT = 1 << 13
	ANAR_ASYM_PAUSE   = 1 << 11
	ANAR_PAUSE        = 1 << 10
	ANAR_100BASE_T4   = 1 << 9
	ANAR_100FULL      = 1 << 8
	ANAR_100HALF      = 1 << 7
	ANAR_10FULL       = 1 << 6
	ANAR_10HALF       = 1 << 5
	ANAR_SELECTOR     = 0x1F   // selector field
	ANAR_CSMA         = 0x0001 // selector value of IEEE 802.3
)

// ANER bits.
const (
	ANER_PARALLEL_DETECT_FAULT = 1 << 4
	ANER_LP_NEXTPAGE_ABLE      = 1 << 3
	ANER_NEXTPAGE_ABLE         = 1 << 2
	ANER_PAGE_RECEIVED         = 1 << 1
	ANER_LP_AN_ABLE            = 1 << 0
)

// CTRL1000 bits.
const (
	CTRL1000_MS_MANUAL = 1 << 12
	CTRL1000_MS_MASTER = 1 << 11
	CTRL1000_MULTIPORT = 1 << 10
	CTRL1000_1000FULL  = 1 << 9 // advertise 1000BASE-T full duplex
	CTRL1000_1000HALF  = 1 << 8
)

// STAT1000 bits. The link partner's abilities sit two bits above the
// matching CTRL1000 bits.
const (
	STAT1000_MS_FAULT     = 1 << 15
	STAT1000_MS_IS_MASTER = 1 << 14
	STAT1000_LOCAL_RX_OK  = 1 << 13
	STAT1000_REMOTE_RX_OK = 1 << 12
	STAT1000_LP_1000FULL  = 1 << 11
	STAT1000_LP_1000HALF  = 1 << 10
	STAT1000_IDLE_ERRORS  = 0xFF // idle error count field

	// stat1000LPShift lines STAT1000's partner bits up with CTRL1000's.
	stat1000LPShift = 2
)

// ESTATUS bits.
const (
	ESTATUS_1000X_FULL = 1 << 15
	ESTATUS_1000X_HALF = 1 << 14
	ESTATUS_1000T_FULL = 1 << 13
	ESTATUS_1000T_HALF = 1 << 12
)

// Regs are the register values link resolution looks at.
type Regs struct {
	BMCR, BMSR, ANAR, ANLPAR, CTRL1000, STAT1000 uint16
}

// Resolve is the link a PHY's registers describe, as IEEE 802.3 resolves
// it (28B.3 priority: 1000 full, 1000 half, 100 full, 100BASE-T4, 100
// half, 10 full, 10 half):
//   - BMSR_LINK clear: down;
//   - auto-negotiation off (BMCR_ANENABLE clear): BMCR's forced speed and
//     duplex;
//   - auto-negotiation not complete: down, since nothing is agreed yet;
//   - gigabit (the MAC can run 1000 Mb/s) and the PHY has ESTATUS: the best
//     1000BASE-T mode both ends advertise (CTRL1000, STAT1000);
//   - else the best mode of ANAR & ANLPAR (10 half when they share none).
func Resolve(r Regs, gigabit bool) driver.Link {
	if r.BMSR&BMSR_LINK == 0 {
		return driver.Link{}
	}
	l := driver.Link{Up: true}
	if r.BMCR&BMCR_ANENABLE == 0 {
		switch {
		case r.BMCR&BMCR_SPEED_MSB != 0:
			l.SpeedMbps = 1000
		case r.BMCR&BMCR_SPEED_LSB != 0:
			l.SpeedMbps = 100
		default:
			l.SpeedMbps = 10
		}
		l.FullDuplex = r.BMCR&BMCR_FULLDUPLEX != 0
		return l
	}
	if r.BMSR&BMSR_ANCOMPLETE == 0 {
		return driver.Link{}
	}
	if gigabit && r.BMSR&BMSR_ESTATUS != 0 {
		g := r.CTRL1000 & (r.STAT1000 >> stat1000LPShift) // our advertisement and the partner's
		switch {
		case g&CTRL1000_1000FULL != 0:
			l.SpeedMbps, l.FullDuplex = 1000, true
			return l
		case g&CTRL1000_1000HALF != 0:
			l.SpeedMbps = 1000
			return l
		}
	}
	c := r.ANAR & r.ANLPAR
	switch {
	case c&ANAR_100FULL != 0:
		l.SpeedMbps, l.FullDuplex = 100, true
	case c&(ANAR_100BASE_T4|ANAR_100HALF) != 0:
		l.SpeedMbps = 100
	case c&ANAR_10FULL != 0:
		l.SpeedMbps, l.FullDuplex = 10, true
	default:
		l.SpeedMbps = 10
	}
	return l
}

// ReadLink reads a PHY's link state with clause-22 reads and resolves it
// (Resolve). BMSR is read twice, as its link bit latches low: the second
// read is the current state. It reads only what the answer needs (MDIO is
// slow, and on some parts holds the data path off) and returns the first
// failed read's error.
func ReadLink(read func(reg int) (uint16, error), gigabit bool) (driver.Link, error) {
	var r Regs
	var err error
	if _, err = read(BMSR); err != nil {
		return driver.Link{}, err
	}
	if r.BMSR, err = read(BMSR); err != nil || r.BMSR&BMSR_LINK == 0 {
		return driver.Link{}, err
	}
	if r.BMCR, err = read(BMCR); err != nil {
		return driver.Link{}, err
	}
	if r.BMCR&BMCR_ANENABLE != 0 && r.BMSR&BMSR_ANCOMPLETE != 0 {
		if gigabit && r.BMSR&BMSR_ESTATUS != 0 {
			if r.CTRL1000, err = read(CTRL1000); err != nil {
				return driver.Link{}, err
			}
			if r.STAT1000, err = read(STAT1000); err != nil {
				return driver.Link{}, err
			}
			if r.CTRL1000&(r.STAT1000>>stat1000LPShift)&(CTRL1000_1000FULL|CTRL1000_1000HALF) != 0 {
				return Resolve(r, gigabit), nil // 1000BASE-T agreed: ANAR and ANLPAR cannot change it
			}
		}
		if r.ANAR, err = read(ANAR); err != nil {
			return driver.Link{}, err
		}
		if r.ANLPAR, err = read(ANLPAR); err != nil {
			return driver.Link{}, err
		}
	}
	return Resolve(r, gigabit), nil
}

// Name is a register's name, "" for a number clause 22 leaves to vendors.
func Name(reg int) string {
	if reg >= 0 && reg < len(names) {
		return names[reg]
	}
	return ""
}

var names = [...]string{BMCR: "BMCR", BMSR: "BMSR", PHYID1: "PHYID1", PHYID2: "PHYID2",
	ANAR: "ANAR", ANLPAR: "ANLPAR", ANER: "ANER", ANNPTR: "ANNPTR", ANLPNPAR: "ANLPNPAR",
	CTRL1000: "CTRL1000", STAT1000: "STAT1000", MMDCTRL: "MMDCTRL", MMDDATA: "MMDDATA", ESTATUS: "ESTATUS"}

// Bit is one named single-bit field of a register.
type Bit struct {
	Bit  uint
	Name string
}

// Bits names the single bits of a standard register, high bit first (nil
// for a register without named bits).
func Bits(reg int) []Bit { return bitNames[reg] }

var bitNames = map[int][]Bit{
	BMCR: {{15, "RESET"}, {14, "LOOPBACK"}, {13, "SPEED_LSB"}, {12, "ANENABLE"}, {11, "POWERDOWN"},
		{10, "ISOLATE"}, {9, "ANRESTART"}, {8, "FULLDUPLEX"}, {7, "COLLTEST"}, {6, "SPEED_MSB"}},
	BMSR: {{15, "100BASE-T4"}, {14, "100FULL"}, {13, "100HALF"}, {12, "10FULL"}, {11, "10HALF"},
		{10, "100T2FULL"}, {9, "100T2HALF"}, {8, "ESTATUS"}, {6, "PREAMBLE_SUPPRESS"}, {5, "ANCOMPLETE"},
		{4, "REMOTE_FAULT"}, {3, "ANCAPABLE"}, {2, "LINK"}, {1, "JABBER"}, {0, "EXTCAP"}},
	ANAR: {{15, "NEXTPAGE"}, {14, "ACK"}, {13, "REMOTE_FAULT"}, {11, "ASYM_PAUSE"}, {10, "PAUSE"},
		{9, "100BASE-T4"}, {8, "100FULL"}, {7, "100HALF"}, {6, "10FULL"}, {5, "10HALF"}},
	ANLPAR: {{15, "NEXTPAGE"}, {14, "ACK"}, {13, "REMOTE_FAULT"}, {11, "ASYM_PAUSE"}, {10, "PAUSE"},
		{9, "100BASE-T4"}, {8, "100FULL"}, {7, "100HALF"}, {6, "10FULL"}, {5, "10HALF"}},
	ANER:     {{4, "PARALLEL_DETECT_FAULT"}, {3, "LP_NEXTPAGE_ABLE"}, {2, "NEXTPAGE_ABLE"}, {1, "PAGE_RECEIVED"}, {0, "LP_AN_ABLE"}},
	CTRL1000: {{12, "MS_MANUAL"}, {11, "MS_MASTER"}, {10, "MULTIPORT"}, {9, "1000FULL"}, {8, "1000HALF"}},
	STAT1000: {{15, "MS_FAULT"}, {14, "MS_IS_MASTER"}, {13, "LOCAL_RX_OK"}, {12, "REMOTE_RX_OK"},
		{11, "LP_1000FULL"}, {10, "LP_1000HALF"}},
	ESTATUS: {{15, "1000X_FULL"}, {14, "1000X_HALF"}, {13, "1000T_FULL"}, {12, "1000T_HALF"}},
}

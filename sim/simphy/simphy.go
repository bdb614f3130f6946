// Package simphy is the device models' IEEE 802.3 clause-22 PHY: the
// register numbers and bits a model PHY answers with (IEEE 802.3 22.2.4
// for BMCR, BMSR, PHYID1/2, ANAR, ANLPAR and ANER; 40.5 for CTRL1000 and
// STAT1000; 22.2.4.4 for ESTATUS), what a link partner shows after
// negotiating a speed, and the link both ends agree on (28B.3 priority).
//
// It is the models' own transcription, written from the standard apart
// from the drivers' internal/mii, so that a driver and a model PHY that
// disagree about a bit are caught: internal/mii's cross-check test
// compares every register and bit this package names (Reg, Field) and
// the link both resolve from the same registers. Both models, enetc/model
// and fec/model, use it; neither imports internal/mii.
package simphy

// Clause-22 register numbers.
const (
	BMCR     = 0x00 // basic mode control
	BMSR     = 0x01 // basic mode status
	PHYID1   = 0x02 // PHY identifier, OUI bits 3..18
	PHYID2   = 0x03 // PHY identifier, OUI bits 19..24, model, revision
	ANAR     = 0x04 // auto-negotiation advertisement
	ANLPAR   = 0x05 // link partner base page ability
	ANER     = 0x06 // auto-negotiation expansion
	CTRL1000 = 0x09 // 1000BASE-T control
	STAT1000 = 0x0A // 1000BASE-T status
	ESTATUS  = 0x0F // extended status
)

// BMCR bits (22.2.4.1).
const (
	BMCR_RESET      = 1 << 15
	BMCR_LOOPBACK   = 1 << 14
	BMCR_SPEED_LSB  = 1 << 13 // speed selection bit 0.13
	BMCR_ANENABLE   = 1 << 12
	BMCR_POWERDOWN  = 1 << 11
	BMCR_ISOLATE    = 1 << 10
	BMCR_ANRESTART  = 1 << 9
	BMCR_FULLDUPLEX = 1 << 8
	BMCR_COLLTEST   = 1 << 7
	BMCR_SPEED_MSB  = 1 << 6 // speed selection bit 0.6: 1000 Mb/s with 0.13 clear
)

// BMSR bits (22.2.4.2).
const (
	BMSR_100BASE_T4        = 1 << 15
	BMSR_100FULL           = 1 << 14
	BMSR_100HALF           = 1 << 13
	BMSR_10FULL            = 1 << 12
	BMSR_10HALF            = 1 << 11
	BMSR_100T2FULL         = 1 << 10
	BMSR_100T2HALF         = 1 << 9
	BMSR_ESTATUS           = 1 << 8 // extended status in register 15
	BMSR_PREAMBLE_SUPPRESS = 1 << 6
	BMSR_ANCOMPLETE        = 1 << 5
	BMSR_REMOTE_FAULT      = 1 << 4
	BMSR_ANCAPABLE         = 1 << 3
	BMSR_LINK              = 1 << 2 // latching low
	BMSR_JABBER            = 1 << 1
	BMSR_EXTCAP            = 1 << 0
)

// ANAR bits (28.2.4.1.3 and annex 28B.2); ANLPAR has the same layout.
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
	ANAR_CSMA         = 0x0001 // selector field value of IEEE 802.3
)

// ANER bits (28.2.4.1.5).
const (
	ANER_PARALLEL_DETECT_FAULT = 1 << 4
	ANER_LP_NEXTPAGE_ABLE      = 1 << 3
	ANER_NEXTPAGE_ABLE         = 1 << 2
	ANER_PAGE_RECEIVED         = 1 << 1
	ANER_LP_AN_ABLE            = 1 << 0
)

// CTRL1000 bits (40.5.1.1, register 9).
const (
	CTRL1000_MS_MANUAL = 1 << 12
	CTRL1000_MS_MASTER = 1 << 11
	CTRL1000_MULTIPORT = 1 << 10
	CTRL1000_1000FULL  = 1 << 9
	CTRL1000_1000HALF  = 1 << 8
)

// STAT1000 bits (40.5.1.1, register 10).
const (
	STAT1000_MS_FAULT     = 1 << 15
	STAT1000_MS_IS_MASTER = 1 << 14
	STAT1000_LOCAL_RX_OK  = 1 << 13
	STAT1000_REMOTE_RX_OK = 1 << 12
	STAT1000_LP_1000FULL  = 1 << 11
	STAT1000_LP_1000HALF  = 1 << 10
)

// ESTATUS bits (22.2.4.4).
const (
	ESTATUS_1000X_FULL = 1 << 15
	ESTATUS_1000X_HALF = 1 << 14
	ESTATUS_1000T_FULL = 1 << 13
	ESTATUS_1000T_HALF = 1 << 12
)

// Reg is the number of a register by its datasheet name ("BMSR").
func Reg(name string) (int, bool) {
	r, ok := regs[name]
	return r, ok
}

// Regs lists the register names Reg knows.
func Regs() []string {
	names := make([]string, 0, len(regs))
	for n := range regs {
		names = append(names, n)
	}
	return names
}

var regs = map[string]int{"BMCR": BMCR, "BMSR": BMSR, "PHYID1": PHYID1, "PHYID2": PHYID2, "ANAR": ANAR,
	"ANLPAR": ANLPAR, "ANER": ANER, "CTRL1000": CTRL1000, "STAT1000": STAT1000, "ESTATUS": ESTATUS}

// Field is a single-bit field by "REGISTER.BIT" ("BMSR.LINK").
func Field(name string) (uint16, bool) {
	f, ok := fields[name]
	return f, ok
}

// Fields lists the field names Field knows.
func Fields() []string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	return names
}

var fields = map[string]uint16{
	"BMCR.RESET": BMCR_RESET, "BMCR.LOOPBACK": BMCR_LOOPBACK, "BMCR.SPEED_LSB": BMCR_SPEED_LSB,
	"BMCR.ANENABLE": BMCR_ANENABLE, "BMCR.POWERDOWN": BMCR_POWERDOWN, "BMCR.ISOLATE": BMCR_ISOLATE,
	"BMCR.ANRESTART": BMCR_ANRESTART, "BMCR.FULLDUPLEX": BMCR_FULLDUPLEX, "BMCR.COLLTEST": BMCR_COLLTEST,
	"BMCR.SPEED_MSB": BMCR_SPEED_MSB,

	"BMSR.100BASE-T4": BMSR_100BASE_T4, "BMSR.100FULL": BMSR_100FULL, "BMSR.100HALF": BMSR_100HALF,
	"BMSR.10FULL": BMSR_10FULL, "BMSR.10HALF": BMSR_10HALF, "BMSR.100T2FULL": BMSR_100T2FULL,
	"BMSR.100T2HALF": BMSR_100T2HALF, "BMSR.ESTATUS": BMSR_ESTATUS, "BMSR.PREAMBLE_SUPPRESS": BMSR_PREAMBLE_SUPPRESS,
	"BMSR.ANCOMPLETE": BMSR_ANCOMPLETE, "BMSR.REMOTE_FAULT": BMSR_REMOTE_FAULT, "BMSR.ANCAPABLE": BMSR_ANCAPABLE,
	"BMSR.LINK": BMSR_LINK, "BMSR.JABBER": BMSR_JABBER, "BMSR.EXTCAP": BMSR_EXTCAP,

	"ANAR.NEXTPAGE": ANAR_NEXTPAGE, "ANAR.ACK": ANAR_ACK, "ANAR.REMOTE_FAULT": ANAR_REMOTE_FAULT,
	"ANAR.ASYM_PAUSE": ANAR_ASYM_PAUSE, "ANAR.PAUSE": ANAR_PAUSE, "ANAR.100BASE-T4": ANAR_100BASE_T4,
	"ANAR.100FULL": ANAR_100FULL, "ANAR.100HALF": ANAR_100HALF, "ANAR.10FULL": ANAR_10FULL, "ANAR.10HALF": ANAR_10HALF,

	"ANLPAR.NEXTPAGE": ANAR_NEXTPAGE, "ANLPAR.ACK": ANAR_ACK, "ANLPAR.REMOTE_FAULT": ANAR_REMOTE_FAULT,
	"ANLPAR.ASYM_PAUSE": ANAR_ASYM_PAUSE, "ANLPAR.PAUSE": ANAR_PAUSE, "ANLPAR.100BASE-T4": ANAR_100BASE_T4,
	"ANLPAR.100FULL": ANAR_100FULL, "ANLPAR.100HALF": ANAR_100HALF, "ANLPAR.10FULL": ANAR_10FULL,
	"ANLPAR.10HALF": ANAR_10HALF,

	"ANER.PARALLEL_DETECT_FAULT": ANER_PARALLEL_DETECT_FAULT, "ANER.LP_NEXTPAGE_ABLE": ANER_LP_NEXTPAGE_ABLE,
	"ANER.NEXTPAGE_ABLE": ANER_NEXTPAGE_ABLE, "ANER.PAGE_RECEIVED": ANER_PAGE_RECEIVED, "ANER.LP_AN_ABLE": ANER_LP_AN_ABLE,

	"CTRL1000.MS_MANUAL": CTRL1000_MS_MANUAL, "CTRL1000.MS_MASTER": CTRL1000_MS_MASTER,
	"CTRL1000.MULTIPORT": CTRL1000_MULTIPORT, "CTRL1000.1000FULL": CTRL1000_1000FULL, "CTRL1000.1000HALF": CTRL1000_1000HALF,

	"STAT1000.MS_FAULT": STAT1000_MS_FAULT, "STAT1000.MS_IS_MASTER": STAT1000_MS_IS_MASTER,
	"STAT1000.LOCAL_RX_OK": STAT1000_LOCAL_RX_OK, "STAT1000.REMOTE_RX_OK": STAT1000_REMOTE_RX_OK,
	"STAT1000.LP_1000FULL": STAT1000_LP_1000FULL, "STAT1000.LP_1000HALF": STAT1000_LP_1000HALF,

	"ESTATUS.1000X_FULL": ESTATUS_1000X_FULL, "ESTATUS.1000X_HALF": ESTATUS_1000X_HALF,
	"ESTATUS.1000T_FULL": ESTATUS_1000T_FULL, "ESTATUS.1000T_HALF": ESTATUS_1000T_HALF,
}

// Partner is what a link partner that negotiated speedMbps (10, 100 or
// 1000) shows: in ANLPAR every 10 and 100 Mb/s mode up to its speed, both
// duplexes, the IEEE 802.3 selector and the acknowledge bit; in STAT1000,
// at 1000 Mb/s, both 1000BASE-T modes and both receivers OK.
func Partner(speedMbps int) (anlpar, stat1000 uint16) {
	anlpar = ANAR_ACK | ANAR_CSMA | ANAR_10HALF | ANAR_10FULL
	if speedMbps >= 100 {
		anlpar |= ANAR_100HALF | ANAR_100FULL
	}
	if speedMbps >= 1000 {
		stat1000 = STAT1000_LP_1000FULL | STAT1000_LP_1000HALF | STAT1000_LOCAL_RX_OK | STAT1000_REMOTE_RX_OK
	}
	return anlpar, stat1000
}

// Link is the link a PHY runs: up or down, speed and duplex.
type Link struct {
	Up         bool
	SpeedMbps  int
	FullDuplex bool
}

// Resolve is the link a PHY's registers give: down without BMSR's link
// bit; BMCR's forced speed and duplex with auto-negotiation off; down
// until negotiation completes; else the highest mode both ends
// advertise in the order of annex 28B.3 (1000BASE-T full, 1000BASE-T
// half, 100BASE-TX full, 100BASE-T4, 100BASE-TX half, 10BASE-T full,
// 10BASE-T half), the 1000BASE-T modes only for a gigabit MAC and a PHY
// with extended status.
func Resolve(bmcr, bmsr, anar, anlpar, ctrl1000, stat1000 uint16, gigabit bool) Link {
	if bmsr&BMSR_LINK == 0 {
		return Link{}
	}
	if bmcr&BMCR_ANENABLE == 0 {
		l := Link{Up: true, SpeedMbps: 10, FullDuplex: bmcr&BMCR_FULLDUPLEX != 0}
		if bmcr&BMCR_SPEED_MSB != 0 {
			l.SpeedMbps = 1000
		} else if bmcr&BMCR_SPEED_LSB != 0 {
			l.SpeedMbps = 100
		}
		return l
	}
	if bmsr&BMSR_ANCOMPLETE == 0 {
		return Link{}
	}
	if gigabit && bmsr&BMSR_ESTATUS != 0 {
		// STAT1000's partner bits are 1000FULL/1000HALF of CTRL1000 two up.
		if ctrl1000&CTRL1000_1000FULL != 0 && stat1000&STAT1000_LP_1000FULL != 0 {
			return Link{Up: true, SpeedMbps: 1000, FullDuplex: true}
		}
		if ctrl1000&CTRL1000_1000HALF != 0 && stat1000&STAT1000_LP_1000HALF != 0 {
			return Link{Up: true, SpeedMbps: 1000}
		}
	}
	both := anar & anlpar
	switch {
	case both&ANAR_100FULL != 0:
		return Link{Up: true, SpeedMbps: 100, FullDuplex: true}
	case both&(ANAR_100BASE_T4|ANAR_100HALF) != 0:
		return Link{Up: true, SpeedMbps: 100}
	case both&ANAR_10FULL != 0:
		return Link{Up: true, SpeedMbps: 10, FullDuplex: true}
	}
	return Link{Up: true, SpeedMbps: 10}
}

package model

import (
	"sort"
	"strings"
)

// Profile is the quirk set of one SoC's ENET block (docs/hardware-fec.md §1 and §6).
type Profile struct {
	// Name is the SoC name used in specs ("imx8mp").
	Name string
	// Compatible lists the device-tree compatible strings of the node, most
	// specific first, as the reference gives them.
	Compatible []string
	// WindowSize is the register window's length in bytes (DT reg size).
	WindowSize int
	// Gigabit: ECR.SPEED selects 1000 Mb/s (quirk HAS_GBIT).
	Gigabit bool
	// EnhancedBD: ECR.EN1588 selects 32-byte descriptors (HAS_BUFDESC_EX).
	EnhancedBD bool
	// Checksum: TX checksum insertion and RX checksum checks (HAS_CSUM).
	Checksum bool
	// MultiQueue: three RX and three TX rings (HAS_AVB, HAS_MULTI_QUEUES).
	MultiQueue bool
	// RACC: the RX accelerator register with SHIFT16 (HAS_RACC).
	RACC bool
	// Coalesce: TXICn/RXICn registers (HAS_COALESCE).
	Coalesce bool
	// ERR006358: a TDAR write can be lost after the ring ran empty.
	ERR006358 bool
	// ERR007885: TDAR written while the DMA clears it can hang TX.
	ERR007885 bool
	// ClearSetupMII: MSCR/MMFR writes generate MII events as described
	// for quirk CLEAR_SETUP_MII (§2.3).
	ClearSetupMII bool
	// MDIOC45: clause-45 MDIO frames are supported (HAS_MDIO_C45).
	MDIOC45 bool
	// EEE: LPI registers (HAS_EEE).
	EEE bool
	// DBSWP: the descriptor engine reads descriptors big-endian unless
	// ECR.DBSWP is set (every ENET-MAC part); false on old FEC blocks,
	// which are little-endian by construction.
	DBSWP bool
	// NonCoherent: the block's DMA does not snoop CPU caches. True on every
	// profile: docs/hardware-fec.md §4.7 finds no i.MX FEC declared dma-coherent and
	// takes them all as non-coherent (the driver's quirk table agrees).
	NonCoherent bool
	// Jumbo: the part takes frames longer than its TX FIFO, which it must
	// then send cut-through (TFWR.STRFWD clear); Linux FEC_QUIRK_JUMBO_FRAME,
	// the i.MX8QM/QXP only (docs/hardware-fec.md §2.8, §4.1).
	Jumbo bool
	// DelayClocks: ECR bits 16 (TXC_DLY) and 17 (RXC_DLY) add the MAC's
	// own 2 ns RGMII clock delays; Linux FEC_QUIRK_DELAYED_CLKS_SUPPORT,
	// the i.MX8QM (docs/hardware-fec.md §2.2). Elsewhere they are
	// reserved and read 0.
	DelayClocks bool
	// TxFIFO is the TX FIFO's size in bytes: the longest frame (FCS
	// included) the MAC sends store-and-forward, and on a part without
	// Jumbo the longest it sends at all. No public source gives the size:
	// the model takes 2 KiB, room for the 1984-byte frames every driver
	// sends store-and-forward and too little for a jumbo frame.
	TxFIFO int
	// IRQLines is how many MAC interrupt lines the part has (§1, §4.8): 3
	// where rings 1 and 2 raise their own lines int1 and int2 (i.MX7D,
	// i.MX8M, i.MX93, i.MX8QM), else 1 (0 counts as 1).
	IRQLines int
	// DTIRQLines maps the device tree's interrupts, in the order the
	// SoC's .dtsi lists them, to MAC lines: {1, 2, 0} where the tree
	// lists int1, int2, int0 (the i.MX8M and i.MX93 trees, §1), nil for
	// int0 first and the rest in order. Backends that deliver "interrupt
	// i of the node" (uio_pdrv_genirq: i = 0 only, vfio-platform: every
	// i) deliver line DTIRQLines[i].
	DTIRQLines []int
}

// irqLines is IRQLines with 0 read as 1.
func (p *Profile) irqLines() int {
	if p.IRQLines == 3 {
		return 3
	}
	return 1
}

// DTIRQLine is the MAC line behind the device tree's interrupt i, or -1
// when the part has no such line.
func (p *Profile) DTIRQLine(i int) int {
	if i < 0 || i >= p.irqLines() {
		return -1
	}
	if i < len(p.DTIRQLines) {
		return p.DTIRQLines[i]
	}
	return i
}

// txFIFOBytes is every profile's TxFIFO (see there).
const txFIFOBytes = 2048

// DefaultSoC is the profile used when none is named.
const DefaultSoC = "imx8mp"

var profiles = map[string]Profile{}

func init() {
	imx6sx := Profile{Gigabit: true, EnhancedBD: true, Checksum: true, MultiQueue: true, RACC: true,
		Coalesce: true, ERR007885: true, ClearSetupMII: true, MDIOC45: true, DBSWP: true, NonCoherent: true}
	imx7d := imx6sx
	imx7d.IRQLines = 3
	imx8mq := imx7d
	imx8mq.EEE = true
	imx8mq.DTIRQLines = []int{1, 2, 0}
	imx8qm := imx7d
	imx8qm.Jumbo = true
	imx8qm.DelayClocks = true
	add := func(name string, window int, p Profile, compat ...string) {
		p.Name, p.WindowSize, p.Compatible = name, window, compat
		p.TxFIFO = txFIFOBytes
		profiles[name] = p
	}
	add("imx6q", 0x4000, Profile{Gigabit: true, EnhancedBD: true, Checksum: true, RACC: true,
		ERR006358: true, ClearSetupMII: true, MDIOC45: true, DBSWP: true, NonCoherent: true},
		"fsl,imx6q-fec")
	add("imx6sx", 0x4000, imx6sx, "fsl,imx6sx-fec")
	add("imx6ul", 0x4000, Profile{Gigabit: true, EnhancedBD: true, Checksum: true, RACC: true,
		Coalesce: true, ERR007885: true, ClearSetupMII: true, MDIOC45: true, DBSWP: true, NonCoherent: true},
		"fsl,imx6ul-fec", "fsl,imx6q-fec")
	add("imx7d", 0x10000, imx7d, "fsl,imx7d-fec", "fsl,imx6sx-fec")
	add("imx8mq", 0x10000, imx8mq, "fsl,imx8mq-fec", "fsl,imx6sx-fec")
	add("imx8mp", 0x10000, imx8mq, "fsl,imx8mp-fec", "fsl,imx8mq-fec", "fsl,imx6sx-fec")
	add("imx93", 0x10000, imx8mq, "fsl,imx93-fec", "fsl,imx8mq-fec", "fsl,imx6sx-fec")
	add("imx8qm", 0x10000, imx8qm, "fsl,imx8qm-fec", "fsl,imx6sx-fec")
}

// Profiles returns the names of the known SoC profiles, sorted.
func Profiles() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupProfile returns the profile of a SoC ("" gives DefaultSoC).
func LookupProfile(soc string) (Profile, bool) {
	if soc == "" {
		soc = DefaultSoC
	}
	p, ok := profiles[strings.ToLower(soc)]
	if ok {
		p.Compatible = append([]string(nil), p.Compatible...)
	}
	return p, ok
}

// has reports whether a register marked with quirk q exists on p.
func (p *Profile) has(q string) bool {
	switch q {
	case "":
		return true
	case "multi-queue":
		return p.MultiQueue
	case "coalesce":
		return p.Coalesce
	case "eee":
		return p.EEE
	}
	return false
}

// rings is the number of RX and TX rings.
func (p *Profile) rings() int {
	if p.MultiQueue {
		return 3
	}
	return 1
}

package fec

// Quirks are the per-SoC differences of the FEC/ENET block (docs/hardware-fec.md §6).
type quirks uint32

const (
	qENETMAC       quirks = 1 << iota // ENET generation (i.MX28/i.MX6+): DBSWP, TFWR.STRFWD, MSCR formula
	qGBIT                             // 1000 Mb/s capable: ECR.SPEED
	qBufDescEx                        // enhanced 32-byte descriptors (ECR.EN1588)
	qAVB                              // three RX and TX rings (RDSR1/2, TDSR1/2, ...)
	qERR006358                        // TDAR lost when a transmission saw R=0: re-kick in reclaim
	qERR007885                        // TDAR write racing the uDMA's clear: read TDAR before writing
	qRACC                             // RX accelerator: RACC.SHIFT16, FTRL
	qClearSetupMII                    // MII event on MSCR write: MMFR=0 first
	qSwapFrame                        // frame data big-endian per 32-bit word (i.MX28)
	qNoHardReset                      // do not pulse ECR.RESET (i.MX28)
	qMultiQueues                      // reset with ECR=0 instead of ECR.RESET; 64-byte RX buffer alignment
	qCoherent                         // DMA snoops the CPU caches (no i.MX part is known to)
	qJumbo                            // takes frames past 1984 bytes, sent cut-through (Linux FEC_QUIRK_JUMBO_FRAME)
	qDelayClocks                      // ECR.TXC_DLY/RXC_DLY: the MAC's own RGMII clock delays (Linux FEC_QUIRK_DELAYED_CLKS_SUPPORT)
	qCoalesce                         // TXICn/RXICn interrupt coalescing registers (HAS_COALESCE)
)

// profile is the quirk set of one compatible string.
type profile struct {
	compatible string
	quirks     quirks
	// phyMode is the MAC-PHY interface the reference boards use: "rgmii",
	// "rmii" or "mii" (option phy-mode= overrides it).
	phyMode string
}

func (p *profile) has(q quirks) bool { return p.quirks&q != 0 }

// maxQueues is how many RX and TX rings the part has.
func (p *profile) maxQueues() int {
	if p.has(qAVB) {
		return 3
	}
	return 1
}

// rxAlign is the RX buffer start alignment, as a mask (§4.1).
func (p *profile) rxAlign() uint64 {
	if p.has(qMultiQueues) {
		return 63
	}
	return 15
}

// txAlign is the TX buffer start alignment, as a mask (§4.1): none on
// multi-queue parts.
func (p *profile) txAlign() uint64 {
	if p.has(qMultiQueues) {
		return 0
	}
	return 15
}

// maxFrame is the longest frame (headers, one VLAN tag and FCS) the part
// sends (§4.1): 1984 bytes (Linux PKT_MAXBUF_SIZE) everywhere but the
// jumbo parts, whose limit is RCR.MAX_FL's 14 bits.
func (p *profile) maxFrame() int {
	if p.has(qJumbo) {
		return maxFLLimit
	}
	return storeFwdMax
}

const (
	qImx6 = qENETMAC | qGBIT | qBufDescEx | qRACC | qClearSetupMII
	qImx8 = qImx6 | qAVB | qMultiQueues | qERR007885 | qCoalesce
)

// profiles maps DT compatible strings to quirk sets (docs/hardware-fec.md §6, Linux's
// fec_devinfo). Parts Linux binds through a fallback compatible get that
// entry's quirks under their own name.
var profiles = []profile{
	{"fsl,imx25-fec", 0, "rmii"},
	{"fsl,imx27-fec", 0, "mii"},
	{"fsl,imx28-fec", qENETMAC | qRACC | qSwapFrame | qClearSetupMII | qNoHardReset, "rmii"},
	{"fsl,imx6q-fec", qImx6 | qERR006358, "rgmii"},
	{"fsl,imx6sx-fec", qImx8, "rgmii"},
	{"fsl,imx6ul-fec", qImx6 | qERR007885 | qCoalesce, "rmii"},
	{"fsl,imx7d-fec", qImx8, "rgmii"},
	{"fsl,imx8mq-fec", qImx8, "rgmii"},
	{"fsl,imx8mm-fec", qImx8, "rgmii"},
	{"fsl,imx8mn-fec", qImx8, "rgmii"},
	{"fsl,imx8mp-fec", qImx8, "rgmii"},
	{"fsl,imx93-fec", qImx8, "rgmii"},
	{"fsl,imx8qm-fec", qImx8 | qJumbo | qDelayClocks, "rgmii"},
	{"fsl,imx8ulp-fec", qImx6 | qERR007885 | qCoalesce, "rmii"},
	{"fsl,mvf600-fec", qENETMAC | qRACC, "rmii"},
	{"fsl,s32v234-fec", qENETMAC | qGBIT | qBufDescEx | qAVB | qERR007885, "rgmii"},
}

// lookupProfile picks the profile of the first compatible string (most
// specific first, as in the device tree) that the driver knows.
func lookupProfile(compat []string) (*profile, bool) {
	for _, c := range compat {
		for i := range profiles {
			if profiles[i].compatible == c {
				return &profiles[i], true
			}
		}
	}
	return nil, false
}

// ringIRQOrder is, for parts whose rings 1 and 2 raise their own MAC
// lines int1 and int2 (§1, §4.8), which of the device tree's interrupts
// each ring's line is when the node names none (no interrupt-names): the
// i.MX8M and i.MX93 trees list int1, int2, int0, pps (so ring 0's line is
// interrupt 2), the i.MX7D and i.MX8QM trees int0, int1, int2. Parts not
// listed have one line, interrupt 0, for every ring.
var ringIRQOrder = map[string][3]int{
	"fsl,imx7d-fec":  {0, 1, 2},
	"fsl,imx8mq-fec": {2, 0, 1},
	"fsl,imx8mm-fec": {2, 0, 1},
	"fsl,imx8mn-fec": {2, 0, 1},
	"fsl,imx8mp-fec": {2, 0, 1},
	"fsl,imx93-fec":  {2, 0, 1},
	"fsl,imx8qm-fec": {0, 1, 2},
}

// ringLines reports whether rings 1 and 2 have lines of their own and
// which device-tree interrupt each ring's line is without interrupt-names.
func (p *profile) ringLines() (order [3]int, split bool) {
	order, split = ringIRQOrder[p.compatible]
	return order, split
}

package enetc

// Register offsets and bits of the LS1028A ENETC, named as the hardware
// reference (docs: shared/hw/enetc.md §2) names them. Names and numbers only:
// no logic lives here. Offsets are bytes from the start of BAR0.

// BAR0 blocks (§1.3).
const (
	siBase     = 0x00000 // station interface, PF and VF
	portBase   = 0x10000 // port registers, PF only
	globalBase = 0x20000 // IP global registers, PF only

	// vfBAR0Min is the smallest BAR0 a VF can have: the SI block.
	vfBAR0Min = 0x10000
	// pfBAR0Min is the length BAR0 of a PF must exceed: SI, port and global blocks.
	pfBAR0Min = 0x20000
)

// PCI identity (§1.1).
const (
	pciVendorFreescale = 0x1957
	pciDevicePF        = 0xe100
	pciDeviceVF        = 0xef00
)

// SI registers (§2.1).
const (
	SIMR     = 0x000
	SICTR0   = 0x018
	SICTR1   = 0x01C
	SIPCAPR0 = 0x020
	SIPCAPR1 = 0x024
	SIRBGCR  = 0x038
	SICAR0   = 0x040
	SICAR1   = 0x044
	SICAR2   = 0x048
	SIPMAR0  = 0x080
	SIPMAR1  = 0x084
	SICAPR0  = 0x900
	SICAPR1  = 0x904
	SIRXIDR  = 0xA28
	SITXIDR  = 0xA18

	SIRFSCAPR = 0x1200
	SIRSSCAPR = 0x1600
)

// SIMR bits.
const (
	SIMR_EN   = 1 << 31
	SIMR_RSSE = 1 << 0
)

// SIPCAPR0 bits.
const (
	SIPCAPR0_RFS = 1 << 2
	SIPCAPR0_QBU = 1 << 3
	SIPCAPR0_QBV = 1 << 4
	SIPCAPR0_RSS = 1 << 8
)

// SICAPR0 fields: ring counts owned by this SI.
const (
	SICAPR0_TXBDR_SHIFT = 0
	SICAPR0_RXBDR_SHIFT = 16
	SICAPR0_BDR_MASK    = 0xFF
)

// Cache attribute values (§2.1): reads and writes snoop without allocating.
const (
	SICAR0_VALUE = 0x2B2B6727
	SICAR1_VALUE = 0x00300030
	SICAR2_VALUE = 0x2B2B6727
)

// SI statistics counters (§2.8), 64-bit.
const (
	SIROCT = 0x300
	SIRFRM = 0x308
	SIRUCA = 0x310
	SIRMCA = 0x318
	SITOCT = 0x320
	SITFRM = 0x328
	SITUCA = 0x330
	SITMCA = 0x338
)

// Control BD ring registers (§2.5).
const (
	SICBDRMR   = 0x800
	SICBDRSR   = 0x804
	SICBDRBAR0 = 0x810
	SICBDRBAR1 = 0x814
	SICBDRPIR  = 0x818
	SICBDRCIR  = 0x81C
	SICBDRLENR = 0x820

	SICBDRMR_EN = 1 << 31
)

// BD ring register blocks (§2.2): 0x8000 + type*0x100 + ring*0x200 + reg.
const (
	bdrBase   = 0x8000
	bdrStride = 0x200
	bdrTypeRx = 0x100
)

// TX ring registers, relative to the ring's block.
const (
	TBMR   = 0x00
	TBSR   = 0x04
	TBBAR0 = 0x10
	TBBAR1 = 0x14
	TBPIR  = 0x18
	TBCIR  = 0x1C
	TBLENR = 0x20
	TBIER  = 0xA0
	TBIDR  = 0xA4
	TBICR0 = 0xA8
	TBICR1 = 0xAC

	TBMR_EN       = 1 << 31
	TBMR_VIH      = 1 << 9
	TBSR_BUSY     = 1 << 0
	TBCIR_IDX_MSK = 0xFFFF
)

// RX ring registers, relative to the ring's block.
const (
	RBMR   = 0x00
	RBSR   = 0x04
	RBBSR  = 0x08
	RBCIR  = 0x0C
	RBBAR0 = 0x10
	RBBAR1 = 0x14
	RBPIR  = 0x18
	RBLENR = 0x20
	RBDCR  = 0x80
	RBIER  = 0xA0
	RBIDR  = 0xA4
	RBICR0 = 0xA8
	RBICR1 = 0xAC

	RBMR_EN  = 1 << 31
	RBMR_VTE = 1 << 5
	RBMR_CM  = 1 << 4
	RBMR_BDS = 1 << 2

	// RBBSR_MAX is the largest RX buffer size the 16-bit field holds.
	RBBSR_MAX = 0xFFFF
)

// txRingReg is the BAR0 offset of register reg of TX ring n.
func txRingReg(n int, reg uint32) uint32 { return bdrBase + uint32(n)*bdrStride + reg }

// rxRingReg is the BAR0 offset of register reg of RX ring n.
func rxRingReg(n int, reg uint32) uint32 {
	return bdrBase + bdrTypeRx + uint32(n)*bdrStride + reg
}

// Port registers (§2.3), absolute BAR0 offsets.
const (
	PMR      = portBase + 0x0000
	PSR      = portBase + 0x0004
	PSIPMR   = portBase + 0x0018
	PSIPVMR  = portBase + 0x001C
	PVCLCTR  = portBase + 0x0208
	PTXMBAR  = portBase + 0x0608
	PBFDSIR  = portBase + 0x0810
	PFDMSAPR = portBase + 0x0814
	PCAPR0   = portBase + 0x0900
	PCAPR1   = portBase + 0x0904
	PRSSCAPR = portBase + 0x1404
	UFDMF    = portBase + 0x1680
	MFDMF    = portBase + 0x1684
	PRFSMR   = portBase + 0x1800
	PRFSCAPR = portBase + 0x1804
	PFPMR    = portBase + 0x1900
	EMDIO    = portBase + 0x1C00
	PAR_PORT = portBase + 0x3050
)

// PSIPMAR0/1(n), PSICFGR0(n), PRSSK(n), PTCMSDUR(n), PICDR(n).
func psipmar0(n int) uint32 { return portBase + 0x0100 + 8*uint32(n) }
func psipmar1(n int) uint32 { return portBase + 0x0104 + 8*uint32(n) }
func psicfgr0(n int) uint32 { return portBase + 0x0940 + 0xC*uint32(n) }
func prssk(n int) uint32    { return portBase + 0x1410 + 4*uint32(n) }
func ptcmsdur(n int) uint32 { return portBase + 0x2020 + 4*uint32(n) }
func picdr(n int) uint32    { return portBase + 0x0700 + 8*uint32(n) }

// PMR bits: one enable per SI in bits 18:16.
const (
	PMR_EN = 0x7 << 16
)

// PSIPMR bits: unicast promiscuous for SI n at bit n, multicast at 16+n.
func psipmrUP(si int) uint32 { return 1 << uint(si) }
func psipmrMP(si int) uint32 { return 1 << uint(16+si) }

// PCAPR0 fields.
const (
	PCAPR0_RXBDR_SHIFT = 24
	PCAPR0_TXBDR_SHIFT = 16
	PCAPR0_IMDIO       = 1 << 11 // port has internal MDIO/PCS
)

// PSICFGR0 fields.
const (
	PSICFGR0_TXBDR_SHIFT = 0
	PSICFGR0_RXBDR_SHIFT = 16
)

// PRSSK_WORDS is the number of 32-bit words of the RSS key (40 bytes).
const PRSSK_WORDS = 10

// MaxFrame is the largest frame the MAC takes, FCS included (§4.1).
const MaxFrame = 9600

// Port MAC registers (§2.4), absolute BAR0 offsets. PM1 = PM0 + 0x1000.
const (
	PM0_CMD_CFG      = portBase + 0x8008
	PM1_CMD_CFG      = portBase + 0x9008
	PM0_MAXFRM       = portBase + 0x8014
	PM0_RX_FIFO      = portBase + 0x801C
	IMDIO            = portBase + 0x8030
	PM0_PAUSE_QUANTA = portBase + 0x8054
	PM0_PAUSE_THRESH = portBase + 0x8064
	PM0_STAT_CONFIG  = portBase + 0x80E0
	PM0_IF_MODE      = portBase + 0x8300
	PM1_IF_MODE      = portBase + 0x9300
	PM0_STATUS       = portBase + 0x8304
)

// PM0_CMD_CFG bits.
const (
	PM_CMD_CFG_TX_EN     = 1 << 0
	PM_CMD_CFG_RX_EN     = 1 << 1
	PM_CMD_CFG_PROMIS    = 1 << 4
	PM_CMD_CFG_CRC_FWD   = 1 << 6
	PM_CMD_CFG_PAUSE_IGN = 1 << 8
	PM_CMD_CFG_XGLP      = 1 << 10
	PM_CMD_CFG_TXP       = 1 << 11
	PM_CMD_CFG_PHY_TX_EN = 1 << 15
)

// PM0_RX_FIFO_VALUE is the value the RX FIFO erratum requires (§5.4).
const PM0_RX_FIFO_VALUE = 1

// PM0_STATUS bits (DPDK only, UNVERIFIED in the reference).
const (
	PM0_STATUS_LINK = 1 << 16
)

// Port MAC counters (§2.8), absolute BAR0 offsets, 8-byte stride.
const (
	PM0_REOCT  = portBase + 0x8100
	PM0_RALN   = portBase + 0x8110
	PM0_RXPF   = portBase + 0x8118
	PM0_RFRM   = portBase + 0x8120
	PM0_RFCS   = portBase + 0x8128
	PM0_RVLAN  = portBase + 0x8130
	PM0_RERR   = portBase + 0x8138
	PM0_RUCA   = portBase + 0x8140
	PM0_RMCA   = portBase + 0x8148
	PM0_RBCA   = portBase + 0x8150
	PM0_RDRP   = portBase + 0x8158
	PM0_RPKT   = portBase + 0x8160
	PM0_RUND   = portBase + 0x8168
	PM0_ROVR   = portBase + 0x81A8
	PM0_RJBR   = portBase + 0x81B0
	PM0_RFRG   = portBase + 0x81B8
	PM0_RCNP   = portBase + 0x81C0
	PM0_RDRNTP = portBase + 0x81C8
	PM0_TEOCT  = portBase + 0x8200
	PM0_TOCT   = portBase + 0x8208
	PM0_TCRSE  = portBase + 0x8210
	PM0_TXPF   = portBase + 0x8218
	PM0_TFRM   = portBase + 0x8220
	PM0_TFCS   = portBase + 0x8228
	PM0_TVLAN  = portBase + 0x8230
	PM0_TERR   = portBase + 0x8238
	PM0_TUCA   = portBase + 0x8240
	PM0_TMCA   = portBase + 0x8248
	PM0_TBCA   = portBase + 0x8250
	PM0_TPKT   = portBase + 0x8260
	PM0_TUND   = portBase + 0x8268
	PM0_TCNP   = portBase + 0x82C0
)

// MDIO controller registers (§2.9), relative to EMDIO or IMDIO.
const (
	MDIO_CFG  = 0x0
	MDIO_CTL  = 0x4
	MDIO_DATA = 0x8
	MDIO_ADDR = 0xC

	MDIO_CFG_BSY    = 1 << 0
	MDIO_CFG_RD_ER  = 1 << 1
	MDIO_CFG_ENC45  = 1 << 6
	MDIO_CFG_NEG    = 1 << 23
	MDIO_CTL_READ   = 1 << 15
	MDIO_DATA_MASK  = 0xFFFF
	MDIO_CTL_DEVAD  = 0x1F
	MDIO_CTL_PORT   = 5 // PORT_ADDR shift
	mdioCfgHold     = 2 << 2
	mdioCfgClkdiv   = (258 >> 1) << 8
	MDIO_CFG_VALUE  = mdioCfgHold | mdioCfgClkdiv | MDIO_CFG_NEG // 0x00808108
	MDIO_CFG_VALC45 = MDIO_CFG_VALUE | MDIO_CFG_ENC45
)

// Global registers (§2.6).
const (
	G_EIPBRR0 = globalBase + 0x0BF8
	G_EIPBRR1 = globalBase + 0x0BFC
)

// Control BD classes and commands (§2.5).
const (
	cbdClassRSS = 3
	cbdCmdSet   = 1
	cbdSize     = 32
	// cbdStatusErrMask: low 4 bits of the status byte are the error status.
	cbdStatusErrMask = 0x0F
)

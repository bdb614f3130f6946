package enetc

// Register offsets and bits of the LS1028A ENETC, named as the ENETC_*
// macros of Linux's drivers/net/ethernet/freescale/enetc/enetc_hw.h and
// DPDK's drivers/net/enetc/base/enetc_hw.h name them. Names and numbers only:
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
	regSIMR     = 0x000
	regSICTR0   = 0x018
	regSICTR1   = 0x01C
	regSIPCAPR0 = 0x020
	regSIPCAPR1 = 0x024
	regSIRBGCR  = 0x038
	regSICAR0   = 0x040
	regSICAR1   = 0x044
	regSICAR2   = 0x048
	regSIPMAR0  = 0x080
	regSIPMAR1  = 0x084
	regSICAPR0  = 0x900
	regSICAPR1  = 0x904
	regSIRXIDR  = 0xA28
	regSITXIDR  = 0xA18

	regSIRFSCAPR = 0x1200
	regSIRSSCAPR = 0x1600
)

// SIMR bits.
const (
	simr_EN   = 1 << 31
	simr_RSSE = 1 << 0
)

// SIPCAPR0 bits.
const (
	sipcapr0_RFS = 1 << 2
	sipcapr0_QBU = 1 << 3
	sipcapr0_QBV = 1 << 4
	sipcapr0_RSS = 1 << 8
)

// SICAPR0 fields: ring counts owned by this SI.
const (
	sicapr0_TXBDR_SHIFT = 0
	sicapr0_RXBDR_SHIFT = 16
	sicapr0_BDR_MASK    = 0xFF
)

// Cache attribute values (§2.1): reads and writes snoop without allocating;
// SICAR1, the attributes of the SI's MSI-X message writes, says device
// memory, no snoop, no allocate (Linux enetc_configure_si and FreeBSD
// enetc_init_hw write it before the SI is enabled).
const (
	sicar0_VALUE = 0x2B2B6727
	sicar1_VALUE = 0x00300030
	sicar2_VALUE = 0x2B2B6727
)

// SI statistics counters (§2.8), 64-bit.
const (
	regSIROCT = 0x300
	regSIRFRM = 0x308
	regSIRUCA = 0x310
	regSIRMCA = 0x318
	regSITOCT = 0x320
	regSITFRM = 0x328
	regSITUCA = 0x330
	regSITMCA = 0x338
)

// Control BD ring registers (§2.5).
const (
	regSICBDRMR   = 0x800
	regSICBDRSR   = 0x804
	regSICBDRBAR0 = 0x810
	regSICBDRBAR1 = 0x814
	regSICBDRPIR  = 0x818
	regSICBDRCIR  = 0x81C
	regSICBDRLENR = 0x820

	sicbdrmr_EN = 1 << 31
)

// BD ring register blocks (§2.2): 0x8000 + type*0x100 + ring*0x200 + reg.
const (
	bdrBase   = 0x8000
	bdrStride = 0x200
	bdrTypeRx = 0x100
)

// TX ring registers, relative to the ring's block.
const (
	regTBMR   = 0x00
	regTBSR   = 0x04
	regTBBAR0 = 0x10
	regTBBAR1 = 0x14
	regTBPIR  = 0x18
	regTBCIR  = 0x1C
	regTBLENR = 0x20
	regTBIER  = 0xA0
	regTBIDR  = 0xA4
	regTBICR0 = 0xA8
	regTBICR1 = 0xAC

	tbmr_EN       = 1 << 31
	tbmr_VIH      = 1 << 9
	tbsr_BUSY     = 1 << 0
	tbcir_IDX_MSK = 0xFFFF
)

// RX ring registers, relative to the ring's block.
const (
	regRBMR   = 0x00
	regRBSR   = 0x04
	regRBBSR  = 0x08
	regRBCIR  = 0x0C
	regRBBAR0 = 0x10
	regRBBAR1 = 0x14
	regRBPIR  = 0x18
	regRBLENR = 0x20
	regRBDCR  = 0x80
	regRBIER  = 0xA0
	regRBIDR  = 0xA4
	regRBICR0 = 0xA8
	regRBICR1 = 0xAC

	rbmr_EN  = 1 << 31
	rbmr_VTE = 1 << 5
	rbmr_CM  = 1 << 4
	rbmr_BDS = 1 << 2

	// RBBSR_MAX is the largest RX buffer size the 16-bit field holds.
	rbbsr_MAX = 0xFFFF
)

// txRingReg is the BAR0 offset of register reg of TX ring n.
func txRingReg(n int, reg uint32) uint32 { return bdrBase + uint32(n)*bdrStride + reg }

// rxRingReg is the BAR0 offset of register reg of RX ring n.
func rxRingReg(n int, reg uint32) uint32 {
	return bdrBase + bdrTypeRx + uint32(n)*bdrStride + reg
}

// Port registers (§2.3), absolute BAR0 offsets.
const (
	regPMR      = portBase + 0x0000
	regPSR      = portBase + 0x0004
	regPSIPMR   = portBase + 0x0018
	regPSIPVMR  = portBase + 0x001C
	regPVCLCTR  = portBase + 0x0208
	regPTXMBAR  = portBase + 0x0608
	regPBFDSIR  = portBase + 0x0810
	regPFDMSAPR = portBase + 0x0814
	regPCAPR0   = portBase + 0x0900
	regPCAPR1   = portBase + 0x0904
	regPRSSCAPR = portBase + 0x1404
	regUFDMF    = portBase + 0x1680
	regMFDMF    = portBase + 0x1684
	regPRFSMR   = portBase + 0x1800
	regPRFSCAPR = portBase + 0x1804
	regPFPMR    = portBase + 0x1900
	regEMDIO    = portBase + 0x1C00
	// SI 0's unicast and multicast MAC hash filters (64 buckets, two words
	// each); on revision 1 the two "0" words trade places (multicast.go).
	regPSIUMHFR0 = portBase + 0x1D00
	regPSIUMHFR1 = portBase + 0x1D04
	regPSIMMHFR0 = portBase + 0x1D08
	regPSIMMHFR1 = portBase + 0x1D0C
	regPAR_PORT  = portBase + 0x3050
)

// PSIPMAR0/1(n), PSICFGR0(n), PRSSK(n), PTCMSDUR(n), PICDR(n).
func regPSIPMAR0(n int) uint32 { return portBase + 0x0100 + 8*uint32(n) }
func regPSIPMAR1(n int) uint32 { return portBase + 0x0104 + 8*uint32(n) }
func regPSICFGR0(n int) uint32 { return portBase + 0x0940 + 0xC*uint32(n) }
func regPRSSK(n int) uint32    { return portBase + 0x1410 + 4*uint32(n) }
func regPTCMSDUR(n int) uint32 { return portBase + 0x2020 + 4*uint32(n) }
func regPICDR(n int) uint32    { return portBase + 0x0700 + 8*uint32(n) }

// PMR bits: one enable per SI in bits 18:16.
const (
	pmr_EN = 0x7 << 16
)

// PSIPMR bits: unicast promiscuous for SI n at bit n, multicast at 16+n.
func psipmr_UP(si int) uint32 { return 1 << uint(si) }
func psipmr_MP(si int) uint32 { return 1 << uint(16+si) }

// PCAPR0 fields.
const (
	pcapr0_RXBDR_SHIFT = 24
	pcapr0_TXBDR_SHIFT = 16
	pcapr0_IMDIO       = 1 << 11 // port has internal MDIO/PCS
)

// PSICFGR0 fields.
const (
	psicfgr0_TXBDR_SHIFT = 0
	psicfgr0_RXBDR_SHIFT = 16
)

// PRSSK_WORDS is the number of 32-bit words of the RSS key (40 bytes).
const prssk_WORDS = 10

// MaxFrame is the largest frame the MAC takes, FCS included (§4.1).
const MaxFrame = 9600

// Port MAC registers (§2.4), absolute BAR0 offsets. PM1 = PM0 + 0x1000.
const (
	regPM0_CMD_CFG      = portBase + 0x8008
	regPM1_CMD_CFG      = portBase + 0x9008
	regPM0_MAXFRM       = portBase + 0x8014
	regPM0_RX_FIFO      = portBase + 0x801C
	regIMDIO            = portBase + 0x8030
	regPM0_PAUSE_QUANTA = portBase + 0x8054
	regPM0_PAUSE_THRESH = portBase + 0x8064
	regPM0_STAT_CONFIG  = portBase + 0x80E0
	regPM0_IF_MODE      = portBase + 0x8300
	regPM1_IF_MODE      = portBase + 0x9300
	regPM0_STATUS       = portBase + 0x8304
)

// PM0_CMD_CFG bits.
const (
	pm_cmd_cfg_TX_EN     = 1 << 0
	pm_cmd_cfg_RX_EN     = 1 << 1
	pm_cmd_cfg_PROMIS    = 1 << 4
	pm_cmd_cfg_CRC_FWD   = 1 << 6
	pm_cmd_cfg_PAUSE_IGN = 1 << 8
	pm_cmd_cfg_XGLP      = 1 << 10
	pm_cmd_cfg_TXP       = 1 << 11
	pm_cmd_cfg_PHY_TX_EN = 1 << 15
)

// PM0_RX_FIFO_VALUE is the value the RX FIFO erratum requires (§5.4).
const pm0_rx_fifo_VALUE = 1

// PM0_STATUS bits (DPDK only, UNVERIFIED in the reference).
const (
	pm0_status_LINK = 1 << 16
)

// Port MAC counters (§2.8), absolute BAR0 offsets, 8-byte stride.
const (
	regPM0_REOCT  = portBase + 0x8100
	regPM0_RALN   = portBase + 0x8110
	regPM0_RXPF   = portBase + 0x8118
	regPM0_RFRM   = portBase + 0x8120
	regPM0_RFCS   = portBase + 0x8128
	regPM0_RVLAN  = portBase + 0x8130
	regPM0_RERR   = portBase + 0x8138
	regPM0_RUCA   = portBase + 0x8140
	regPM0_RMCA   = portBase + 0x8148
	regPM0_RBCA   = portBase + 0x8150
	regPM0_RDRP   = portBase + 0x8158
	regPM0_RPKT   = portBase + 0x8160
	regPM0_RUND   = portBase + 0x8168
	regPM0_ROVR   = portBase + 0x81A8
	regPM0_RJBR   = portBase + 0x81B0
	regPM0_RFRG   = portBase + 0x81B8
	regPM0_RCNP   = portBase + 0x81C0
	regPM0_RDRNTP = portBase + 0x81C8
	regPM0_TEOCT  = portBase + 0x8200
	regPM0_TOCT   = portBase + 0x8208
	regPM0_TCRSE  = portBase + 0x8210
	regPM0_TXPF   = portBase + 0x8218
	regPM0_TFRM   = portBase + 0x8220
	regPM0_TFCS   = portBase + 0x8228
	regPM0_TVLAN  = portBase + 0x8230
	regPM0_TERR   = portBase + 0x8238
	regPM0_TUCA   = portBase + 0x8240
	regPM0_TMCA   = portBase + 0x8248
	regPM0_TBCA   = portBase + 0x8250
	regPM0_TPKT   = portBase + 0x8260
	regPM0_TUND   = portBase + 0x8268
	regPM0_TCNP   = portBase + 0x82C0
)

// MDIO controller registers (§2.9), relative to EMDIO or IMDIO.
const (
	regMDIO_CFG  = 0x0
	regMDIO_CTL  = 0x4
	regMDIO_DATA = 0x8
	regMDIO_ADDR = 0xC

	mdio_cfg_BSY    = 1 << 0
	mdio_cfg_RD_ER  = 1 << 1
	mdio_cfg_ENC45  = 1 << 6
	mdio_cfg_NEG    = 1 << 23
	mdio_ctl_READ   = 1 << 15
	mdio_data_MASK  = 0xFFFF
	mdio_ctl_DEVAD  = 0x1F
	mdio_ctl_PORT   = 5 // PORT_ADDR shift
	mdioCfgHold     = 2 << 2
	mdioCfgClkdiv   = (258 >> 1) << 8
	mdio_cfg_VALUE  = mdioCfgHold | mdioCfgClkdiv | mdio_cfg_NEG // 0x00808108
	mdio_cfg_VALC45 = mdio_cfg_VALUE | mdio_cfg_ENC45
)

// Global registers (§2.6).
const (
	regG_EIPBRR0 = globalBase + 0x0BF8
	regG_EIPBRR1 = globalBase + 0x0BFC
)

// Control BD classes and commands (§2.5).
const (
	cbdClassRSS = 3
	cbdClassRFS = 4
	cbdCmdSet   = 1
	// rfsEntrySize is one RFS entry's data (Linux struct enetc_cmd_rfse).
	rfsEntrySize = 116
	cbdSize      = 32
	// cbdStatusErrMask: low 4 bits of the status byte are the error status.
	cbdStatusErrMask = 0x0F
)

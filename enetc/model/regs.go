package model

// Register names, offsets and bits of the ENETC (LS1028A, v1) as the public
// Linux and DPDK enetc_hw.h headers name them (their ENETC_* macros),
// transcribed for the model.
// The driver keeps its own transcription; a test compares the two.

// BAR0 sizes (§1.2).
const (
	// PFBAR0Size is a PF's BAR0: SI, port and global blocks.
	PFBAR0Size = 256 << 10
	// VFBAR0Size is a VF's BAR0: the SI block only.
	VFBAR0Size = 64 << 10
)

// Blocks of BAR0 (§1.3).
const (
	PortBase   = 0x10000 // port registers, PF only
	GlobalBase = 0x20000 // IP global registers, PF only
)

// SI registers (§2.1).
const (
	regSIMR      = 0x000
	regSICTR0    = 0x018
	regSICTR1    = 0x01C
	regSIPCAPR0  = 0x020
	regSIPCAPR1  = 0x024
	regSITGTGR   = 0x030
	regSIRBGCR   = 0x038
	regSICAR0    = 0x040
	regSICAR1    = 0x044
	regSICAR2    = 0x048
	regSIPMAR0   = 0x080
	regSIPMAR1   = 0x084
	regPSIMSGRR  = 0x204
	regSICAPR0   = 0x900
	regSICAPR1   = 0x904
	regPSIIER    = 0xA00
	regPSIIDR    = 0xA08
	regSITXIDR   = 0xA18
	regSIRXIDR   = 0xA28
	regSIMSIVR   = 0xA30
	regSIUEFDCR  = 0xE28
	regSIRFSCAPR = 0x1200
	regSIRSSCAPR = 0x1600

	// PSIVMSGRCVAR0 is PSIVMSGRCVAR0(n) at +8n (VF view: VSIMSGSNDAR0).
	regPSIVMSGRCVAR0 = 0x210
	// PSIVMSGRCVAR1 is PSIVMSGRCVAR1(n) at +8n (VF view: VSIMSGSNDAR1).
	regPSIVMSGRCVAR1 = 0x214
	// SIMSITRV is SIMSITRV(n) at +4n: MSI-X entry of TX ring n.
	regSIMSITRV = 0xB00
	// SIMSIRRV is SIMSIRRV(n) at +4n: MSI-X entry of RX ring n.
	regSIMSIRRV = 0xB80
)

// SIMR bits.
const (
	simr_EN   = 1 << 31
	simr_RSSE = 1 << 0
)

// SIPCAPR0 bits.
const (
	sipcapr0_RSS = 1 << 8
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

// Control BD ring (§2.5).
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

// BD-ring register blocks (§2.2): ring block address is
// RingBase + type*RingTypeStride + ring*RingStride + reg.
const (
	RingBase       = 0x8000
	RingTypeStride = 0x100 // type 0 = TX, 1 = RX
	RingStride     = 0x200
	// MaxRings is the most rings per direction the register map has room
	// for in the model (ethtool enumerates RBDCR up to ring 15).
	MaxRings = 16
)

// TX ring registers, ring 0 (absolute; add RingStride*n for ring n).
const (
	regTBMR   = 0x8000
	regTBSR   = 0x8004
	regTBBAR0 = 0x8010
	regTBBAR1 = 0x8014
	regTBPIR  = 0x8018
	regTBCIR  = 0x801C
	regTBLENR = 0x8020
	regTBIER  = 0x80A0
	regTBIDR  = 0x80A4
	regTBICR0 = 0x80A8
	regTBICR1 = 0x80AC
)

// RX ring registers, ring 0 (absolute; add RingStride*n for ring n).
const (
	regRBMR   = 0x8100
	regRBSR   = 0x8104
	regRBBSR  = 0x8108
	regRBCIR  = 0x810C
	regRBBAR0 = 0x8110
	regRBBAR1 = 0x8114
	regRBPIR  = 0x8118
	regRBLENR = 0x8120
	regRBDCR  = 0x8180
	regRBIER  = 0x81A0
	regRBIDR  = 0x81A4
	regRBICR0 = 0x81A8
	regRBICR1 = 0x81AC
)

// Ring register bits.
const (
	tbmr_EN        = 1 << 31
	tbsr_BUSY      = 1 << 0
	tbcir_IDX_MASK = 0xFFFF
	rbmr_EN        = 1 << 31
	rbmr_VTE       = 1 << 5
	rbmr_CM        = 1 << 4
	rbmr_BDS       = 1 << 2
	rbbsr_MASK     = 0xFFFF
	RingAlign      = 128 // BD ring base alignment (TX, RX, CBDR)
	RingLenAlign   = 8   // ring lengths are multiples of 8
)

// Port registers (§2.3), absolute BAR0 offsets.
const (
	regPMR          = 0x10000
	regPSR          = 0x10004
	regPSIPMR       = 0x10018
	regPSIPVMR      = 0x1001C
	regPSIPMAR0     = 0x10100 // PSIPMAR0(n) at +PSIPMARStride*n
	regPSIPMAR1     = 0x10104
	regPVCLCTR      = 0x10208
	regPCVLANR1     = 0x10210
	regPCVLANR2     = 0x10214
	regPSIVLANR     = 0x10240 // PSIVLANR(n) at +4n
	regPPAUONTR     = 0x10410
	regPPAUOFFTR    = 0x10414
	regPTXMBAR      = 0x10608
	regPICDR        = 0x10700 // PICDR(n) at +8n, n = 0..3
	regPBFDSIR      = 0x10810
	regPFDMSAPR     = 0x10814
	regPCAPR0       = 0x10900
	regPCAPR1       = 0x10904
	regPSICFGR0     = 0x10940 // PSICFGR0(n) at +PSICFGR0Stride*n
	regPRSSCAPR     = 0x11404
	regPRSSK        = 0x11410 // PRSSK(n) at +4n, n = 0..9
	regUFDMF        = 0x11680
	regMFDMF        = 0x11684
	regPSIVLANFMR   = 0x11700
	regPUFDVFR      = 0x11780
	regPMFDVFR      = 0x11784
	regPBFDVFR      = 0x11788
	regPRFSMR       = 0x11800
	regPRFSCAPR     = 0x11804
	regPSIRFSCFGR   = 0x11814 // PSIRFSCFGR(n) at +4n
	regPFPMR        = 0x11900
	regPSIUMHFR0    = 0x11D00
	regPSIUMHFR1    = 0x11D04
	regPSIMMHFR0    = 0x11D08
	regPSIMMHFR1    = 0x11D0C
	regPSIVHFR0     = 0x11E00
	regPSIVHFR1     = 0x11E04
	regMMCSR        = 0x11F00
	regPTCMSDUR     = 0x12020 // PTCMSDUR(n) at +4n, n = 0..7
	regPAR_PORT_CFG = 0x13050

	PSIPMARStride  = 8
	PSICFGR0Stride = 0xC
)

// PAR_PORT_CFG bits (§2.3): a set bit turns that check of the port's
// parser off (DPDK's L3_CKSUM / L4_CKSUM; FreeBSD's header swaps the two,
// §8).
const (
	par_L3CD = 1 << 0
	par_L4CD = 1 << 1
)

// parL3CD is the PAR_PORT_CFG bit that turns the IPv4 header checksum
// check off: DPDK's bit 0, or FreeBSD's bit 1 (Config.PARBitsFreeBSD).
func (d *Device) parL3CD() uint32 {
	if d.cfg.PARBitsFreeBSD {
		return par_L4CD
	}
	return par_L3CD
}

// Port register bits.
const (
	pmr_SI0EN    = 1 << 16
	pmr_EN       = 7 << 16
	psipmr_UP0   = 1 << 0  // unicast promiscuous, SI0
	psipmr_MP0   = 1 << 16 // multicast promiscuous, SI0
	pcapr0_IMDIO = 1 << 11
)

// MAC (PM0) registers (§2.4), absolute; PM1 (pMAC) = PM0 + PM1Offset.
const (
	regPM0_CMD_CFG      = 0x18008
	regPM0_MAXFRM       = 0x18014
	regPM0_RX_FIFO      = 0x1801C
	regPM0_PAUSE_QUANTA = 0x18054
	regPM0_PAUSE_THRESH = 0x18064
	regPM0_SINGLE_STEP  = 0x180C0
	regPM0_STAT_CONFIG  = 0x180E0
	regPM0_IF_MODE      = 0x18300
	regPM0_STATUS       = 0x18304
	regPM1_CMD_CFG      = 0x19008
	regPM1_IF_MODE      = 0x19300

	PM1Offset = 0x1000
)

// PM0_CMD_CFG and friends.
const (
	pm_cmd_cfg_TX_EN     = 1 << 0
	pm_cmd_cfg_RX_EN     = 1 << 1
	pm_cmd_cfg_PROMIS    = 1 << 4
	pm_cmd_cfg_CRC_FWD   = 1 << 6
	pm_cmd_cfg_PAUSE_IGN = 1 << 8
	pm_cmd_cfg_XGLP      = 1 << 10
	pm_cmd_cfg_TXP       = 1 << 11
	pm_cmd_cfg_PHY_TX_EN = 1 << 15

	pm0_stat_config_CLEAR = 1 << 2

	pm0_status_LINK   = 1 << 16
	pm0_status_SPEED  = 3 << 17 // 0 = 10M, 1 = 100M, 2 = 1G
	pm0_status_FULLDX = 1 << 19

	pm0_maxfrm_MASK = 0xFFFF
	// MaxFrame is the largest frame the MAC takes (ENETC_MAC_MAXFRM_SIZE).
	MaxFrame = 9600
)

// MDIO controllers (§2.9): four registers at each base.
const (
	EMDIOBase = 0x11C00 // port external MDIO
	IMDIOBase = 0x18030 // port internal MDIO (SerDes PCS)

	regMDIO_CFG  = 0x0
	regMDIO_CTL  = 0x4
	regMDIO_DATA = 0x8
	regMDIO_ADDR = 0xC

	mdio_cfg_BSY   = 1 << 0
	mdio_cfg_RD_ER = 1 << 1
	mdio_cfg_ENC45 = 1 << 6
	mdio_ctl_READ  = 1 << 15
)

// Global registers (§2.6).
const (
	regG_EIPBRR0 = 0x20BF8
	regG_EIPBRR1 = 0x20BFC
	regG_EPFBLPR = 0x20D00 // G_EPFBLPR(n) at +4n
)

// MAC counters (§2.8), absolute, 64-bit with 8-byte stride.
const (
	regPM0_REOCT  = 0x18100
	regPM0_RALN   = 0x18110
	regPM0_RXPF   = 0x18118
	regPM0_RFRM   = 0x18120
	regPM0_RFCS   = 0x18128
	regPM0_RVLAN  = 0x18130
	regPM0_RERR   = 0x18138
	regPM0_RUCA   = 0x18140
	regPM0_RMCA   = 0x18148
	regPM0_RBCA   = 0x18150
	regPM0_RDRP   = 0x18158
	regPM0_RPKT   = 0x18160
	regPM0_RUND   = 0x18168
	regPM0_R64    = 0x18170
	regPM0_R127   = 0x18178
	regPM0_R255   = 0x18180
	regPM0_R511   = 0x18188
	regPM0_R1023  = 0x18190
	regPM0_R1522  = 0x18198
	regPM0_R1523X = 0x181A0
	regPM0_ROVR   = 0x181A8
	regPM0_RJBR   = 0x181B0
	regPM0_RFRG   = 0x181B8
	regPM0_RCNP   = 0x181C0
	regPM0_RDRNTP = 0x181C8
	regPM0_TEOCT  = 0x18200
	regPM0_TOCT   = 0x18208
	regPM0_TCRSE  = 0x18210
	regPM0_TXPF   = 0x18218
	regPM0_TFRM   = 0x18220
	regPM0_TFCS   = 0x18228
	regPM0_TVLAN  = 0x18230
	regPM0_TERR   = 0x18238
	regPM0_TUCA   = 0x18240
	regPM0_TMCA   = 0x18248
	regPM0_TBCA   = 0x18250
	regPM0_TPKT   = 0x18260
	regPM0_TUND   = 0x18268
	regPM0_T64    = 0x18270
	regPM0_T127   = 0x18278
	regPM0_T255   = 0x18280
	regPM0_T511   = 0x18288
	regPM0_T1023  = 0x18290
	regPM0_T1522  = 0x18298
	regPM0_T1523X = 0x182A0
	regPM0_TCNP   = 0x182C0
	regPM0_TDFR   = 0x182D0
	regPM0_TMCOL  = 0x182D8
	regPM0_TSCOL  = 0x182E0
	regPM0_TLCOL  = 0x182E8
	regPM0_TECOL  = 0x182F0
)

// Buffer descriptors (§3).
const (
	BDSize    = 16
	BDSizeExt = 32 // RBMR.BDS

	TxFlagF  = 1 << 7 // byte 15: final BD of frame
	TxFlagEX = 1 << 6 // byte 15: next BD is an extension BD
	TxFlagW  = 1 << 2

	TxEFlagTwoStep = 1 << 2  // extension BD byte 14: write the transmit time back into the first BD
	RxFlagTSTMP    = 1 << 10 // RX write-back flags: the extension holds a timestamp

	// RX write-back lstatus (bytes 12–15 as LE32).
	RxStatusR      = 1 << 30
	RxStatusF      = 1 << 31
	RxFlagVLAN     = 1 << 9
	RxErrShift     = 16
	MinFrame       = 60 // shortest frame on the wire without FCS
	CBDSize        = 32
	CBDClassMAC    = 1
	CBDClassRSS    = 3
	CBDClassRFS    = 4
	CBDCmdRSSSet   = 1
	CBDCmdRSSQuery = 2
)

// RX error byte bits written by the model. The reference leaves the real
// assignments UNVERIFIED (§10); drivers treat any non-zero error byte as a
// bad frame, which is all the model promises.
const (
	RxErrCRC      = 1 << 0 // frame check sequence error
	RxErrOversize = 1 << 1 // longer than PM0_MAXFRM: truncated
	RxErrDMA      = 1 << 2 // the frame could not be written (DMA fault)
)

// RX parse_summary values (§3.7).
const (
	ParseL2Only  = 0x0060
	ParseIPv4    = 0x0000
	ParseIPv6    = 0x0020
	ParseIPv6Ext = 0x0080
	ParseTCP     = 0x0010
	ParseUDP     = 0x0011
	ParseSCTP    = 0x0013
	ParseICMP    = 0x0003
	ParseESP     = 0x0005
	ParseFrag    = 0x0001
	ParseError   = 0x8000
)

// RSS table (SIRSSCAPR/PRSSCAPR = 1: 32 << 1 = 64 buckets).
const (
	RSSCapField = 1
	RSSTableLen = 32 << RSSCapField
	// RFSEntries is the port's RFS memory: PRFSCAPR = 0, (0 + 1) · 16
	// entries (Linux ENETC_PRFSCAPR_GET_NUM_RFS; the count is the model's).
	RFSEntries = 16
	// RFSEntrySize is the length of one RFS entry's data (Linux struct
	// enetc_cmd_rfse).
	RFSEntrySize = 116
	RSSKeyLen    = 40
	// MACFilterEntries is the exact-match MAC filter table size (CBDR class 1).
	MACFilterEntries = 16
)

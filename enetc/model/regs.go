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
	SIMR      = 0x000
	SICTR0    = 0x018
	SICTR1    = 0x01C
	SIPCAPR0  = 0x020
	SIPCAPR1  = 0x024
	SITGTGR   = 0x030
	SIRBGCR   = 0x038
	SICAR0    = 0x040
	SICAR1    = 0x044
	SICAR2    = 0x048
	SIPMAR0   = 0x080
	SIPMAR1   = 0x084
	PSIMSGRR  = 0x204
	SICAPR0   = 0x900
	SICAPR1   = 0x904
	PSIIER    = 0xA00
	PSIIDR    = 0xA08
	SITXIDR   = 0xA18
	SIRXIDR   = 0xA28
	SIMSIVR   = 0xA30
	SIUEFDCR  = 0xE28
	SIRFSCAPR = 0x1200
	SIRSSCAPR = 0x1600

	// PSIVMSGRCVAR0 is PSIVMSGRCVAR0(n) at +8n (VF view: VSIMSGSNDAR0).
	PSIVMSGRCVAR0 = 0x210
	// PSIVMSGRCVAR1 is PSIVMSGRCVAR1(n) at +8n (VF view: VSIMSGSNDAR1).
	PSIVMSGRCVAR1 = 0x214
	// SIMSITRV is SIMSITRV(n) at +4n: MSI-X entry of TX ring n.
	SIMSITRV = 0xB00
	// SIMSIRRV is SIMSIRRV(n) at +4n: MSI-X entry of RX ring n.
	SIMSIRRV = 0xB80
)

// SIMR bits.
const (
	SIMR_EN   = 1 << 31
	SIMR_RSSE = 1 << 0
)

// SIPCAPR0 bits.
const (
	SIPCAPR0_RSS = 1 << 8
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

// Control BD ring (§2.5).
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
	TBMR   = 0x8000
	TBSR   = 0x8004
	TBBAR0 = 0x8010
	TBBAR1 = 0x8014
	TBPIR  = 0x8018
	TBCIR  = 0x801C
	TBLENR = 0x8020
	TBIER  = 0x80A0
	TBIDR  = 0x80A4
	TBICR0 = 0x80A8
	TBICR1 = 0x80AC
)

// RX ring registers, ring 0 (absolute; add RingStride*n for ring n).
const (
	RBMR   = 0x8100
	RBSR   = 0x8104
	RBBSR  = 0x8108
	RBCIR  = 0x810C
	RBBAR0 = 0x8110
	RBBAR1 = 0x8114
	RBPIR  = 0x8118
	RBLENR = 0x8120
	RBDCR  = 0x8180
	RBIER  = 0x81A0
	RBIDR  = 0x81A4
	RBICR0 = 0x81A8
	RBICR1 = 0x81AC
)

// Ring register bits.
const (
	TBMR_EN      = 1 << 31
	TBSR_BUSY    = 1 << 0
	TBCIR_IDX    = 0xFFFF
	RBMR_EN      = 1 << 31
	RBMR_VTE     = 1 << 5
	RBMR_CM      = 1 << 4
	RBMR_BDS     = 1 << 2
	RBBSR_MASK   = 0xFFFF
	RingAlign    = 128 // BD ring base alignment (TX, RX, CBDR)
	RingLenAlign = 8   // ring lengths are multiples of 8
)

// Port registers (§2.3), absolute BAR0 offsets.
const (
	PMR          = 0x10000
	PSR          = 0x10004
	PSIPMR       = 0x10018
	PSIPVMR      = 0x1001C
	PSIPMAR0     = 0x10100 // PSIPMAR0(n) at +PSIPMARStride*n
	PSIPMAR1     = 0x10104
	PVCLCTR      = 0x10208
	PCVLANR1     = 0x10210
	PCVLANR2     = 0x10214
	PSIVLANR     = 0x10240 // PSIVLANR(n) at +4n
	PPAUONTR     = 0x10410
	PPAUOFFTR    = 0x10414
	PTXMBAR      = 0x10608
	PICDR        = 0x10700 // PICDR(n) at +8n, n = 0..3
	PBFDSIR      = 0x10810
	PFDMSAPR     = 0x10814
	PCAPR0       = 0x10900
	PCAPR1       = 0x10904
	PSICFGR0     = 0x10940 // PSICFGR0(n) at +PSICFGR0Stride*n
	PRSSCAPR     = 0x11404
	PRSSK        = 0x11410 // PRSSK(n) at +4n, n = 0..9
	UFDMF        = 0x11680
	MFDMF        = 0x11684
	PSIVLANFMR   = 0x11700
	PUFDVFR      = 0x11780
	PMFDVFR      = 0x11784
	PBFDVFR      = 0x11788
	PRFSMR       = 0x11800
	PRFSCAPR     = 0x11804
	PSIRFSCFGR   = 0x11814 // PSIRFSCFGR(n) at +4n
	PFPMR        = 0x11900
	PSIUMHFR0    = 0x11D00
	PSIUMHFR1    = 0x11D04
	PSIMMHFR0    = 0x11D08
	PSIMMHFR1    = 0x11D0C
	PSIVHFR0     = 0x11E00
	PSIVHFR1     = 0x11E04
	MMCSR        = 0x11F00
	PTCMSDUR     = 0x12020 // PTCMSDUR(n) at +4n, n = 0..7
	PAR_PORT_CFG = 0x13050

	PSIPMARStride  = 8
	PSICFGR0Stride = 0xC
)

// Port register bits.
const (
	PMR_SI0EN    = 1 << 16
	PMR_EN       = 7 << 16
	PSIPMR_UP0   = 1 << 0  // unicast promiscuous, SI0
	PSIPMR_MP0   = 1 << 16 // multicast promiscuous, SI0
	PCAPR0_IMDIO = 1 << 11
)

// MAC (PM0) registers (§2.4), absolute; PM1 (pMAC) = PM0 + PM1Offset.
const (
	PM0_CMD_CFG      = 0x18008
	PM0_MAXFRM       = 0x18014
	PM0_RX_FIFO      = 0x1801C
	PM0_PAUSE_QUANTA = 0x18054
	PM0_PAUSE_THRESH = 0x18064
	PM0_SINGLE_STEP  = 0x180C0
	PM0_STAT_CONFIG  = 0x180E0
	PM0_IF_MODE      = 0x18300
	PM0_STATUS       = 0x18304
	PM1_CMD_CFG      = 0x19008
	PM1_IF_MODE      = 0x19300

	PM1Offset = 0x1000
)

// PM0_CMD_CFG and friends.
const (
	CMD_CFG_TX_EN     = 1 << 0
	CMD_CFG_RX_EN     = 1 << 1
	CMD_CFG_PROMIS    = 1 << 4
	CMD_CFG_CRC_FWD   = 1 << 6
	CMD_CFG_PAUSE_IGN = 1 << 8
	CMD_CFG_XGLP      = 1 << 10
	CMD_CFG_TXP       = 1 << 11
	CMD_CFG_PHY_TX_EN = 1 << 15

	STAT_CONFIG_CLEAR = 1 << 2

	STATUS_LINK   = 1 << 16
	STATUS_SPEED  = 3 << 17 // 0 = 10M, 1 = 100M, 2 = 1G
	STATUS_FULLDX = 1 << 19

	MAXFRM_MASK = 0xFFFF
	// MaxFrame is the largest frame the MAC takes (ENETC_MAC_MAXFRM_SIZE).
	MaxFrame = 9600
)

// MDIO controllers (§2.9): four registers at each base.
const (
	EMDIOBase = 0x11C00 // port external MDIO
	IMDIOBase = 0x18030 // port internal MDIO (SerDes PCS)

	MDIO_CFG  = 0x0
	MDIO_CTL  = 0x4
	MDIO_DATA = 0x8
	MDIO_ADDR = 0xC

	MDIO_CFG_BSY   = 1 << 0
	MDIO_CFG_RD_ER = 1 << 1
	MDIO_CFG_ENC45 = 1 << 6
	MDIO_CTL_READ  = 1 << 15
)

// Global registers (§2.6).
const (
	G_EIPBRR0 = 0x20BF8
	G_EIPBRR1 = 0x20BFC
	G_EPFBLPR = 0x20D00 // G_EPFBLPR(n) at +4n
)

// MAC counters (§2.8), absolute, 64-bit with 8-byte stride.
const (
	REOCT  = 0x18100
	RALN   = 0x18110
	RXPF   = 0x18118
	RFRM   = 0x18120
	RFCS   = 0x18128
	RVLAN  = 0x18130
	RERR   = 0x18138
	RUCA   = 0x18140
	RMCA   = 0x18148
	RBCA   = 0x18150
	RDRP   = 0x18158
	RPKT   = 0x18160
	RUND   = 0x18168
	R64    = 0x18170
	R127   = 0x18178
	R255   = 0x18180
	R511   = 0x18188
	R1023  = 0x18190
	R1522  = 0x18198
	R1523X = 0x181A0
	ROVR   = 0x181A8
	RJBR   = 0x181B0
	RFRG   = 0x181B8
	RCNP   = 0x181C0
	RDRNTP = 0x181C8
	TEOCT  = 0x18200
	TOCT   = 0x18208
	TCRSE  = 0x18210
	TXPF   = 0x18218
	TFRM   = 0x18220
	TFCS   = 0x18228
	TVLAN  = 0x18230
	TERR   = 0x18238
	TUCA   = 0x18240
	TMCA   = 0x18248
	TBCA   = 0x18250
	TPKT   = 0x18260
	TUND   = 0x18268
	T64    = 0x18270
	T127   = 0x18278
	T255   = 0x18280
	T511   = 0x18288
	T1023  = 0x18290
	T1522  = 0x18298
	T1523X = 0x182A0
	TCNP   = 0x182C0
	TDFR   = 0x182D0
	TMCOL  = 0x182D8
	TSCOL  = 0x182E0
	TLCOL  = 0x182E8
	TECOL  = 0x182F0
)

// Buffer descriptors (§3).
const (
	BDSize    = 16
	BDSizeExt = 32 // RBMR.BDS

	TxFlagF  = 1 << 7 // byte 15: final BD of frame
	TxFlagEX = 1 << 6 // byte 15: next BD is an extension BD
	TxFlagW  = 1 << 2

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
	RSSKeyLen   = 40
	// MACFilterEntries is the exact-match MAC filter table size (CBDR class 1).
	MACFilterEntries = 16
)

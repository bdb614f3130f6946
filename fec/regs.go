package fec

// Register offsets and bits of the FEC/ENET MAC, named as the reference
// manual names them (docs/hardware-fec.md §2), and the register map a
// tool dumps. Names and numbers only: driver logic lives in port.go,
// rx.go, tx.go and mdio.go.

import "github.com/gopmd/gopmd/driver"

// Register offsets from the instance base (ARM/ENET layout).
const (
	regEIR         = 0x004 // interrupt events, write-1-to-clear
	regEIMR        = 0x008 // interrupt mask
	regRDAR        = 0x010 // RX descriptor active, ring 0
	regTDAR        = 0x014 // TX descriptor active, ring 0
	regECR         = 0x024 // Ethernet control
	regMMFR        = 0x040 // MDIO management frame
	regMSCR        = 0x044 // MDC divider and hold time
	regMIBC        = 0x064 // MIB control/status
	regRCR         = 0x084 // receive control
	regTCR         = 0x0C4 // transmit control
	regPALR        = 0x0E4 // MAC bytes 0..3
	regPAUR        = 0x0E8 // MAC bytes 4..5 in [31:16]
	regOPD         = 0x0EC // opcode / pause duration
	regTXIC0       = 0x0F0 // TX interrupt coalescing, rings 0..2 at +4n
	regRXIC0       = 0x100 // RX interrupt coalescing, rings 0..2 at +4n
	regIAUR        = 0x118 // individual hash [63:32]
	regIALR        = 0x11C // individual hash [31:0]
	regGAUR        = 0x120 // group hash [63:32]
	regGALR        = 0x124 // group hash [31:0]
	regTFWR        = 0x144 // TX FIFO watermark
	regFRBR        = 0x14C // FIFO receive bound (old FEC)
	regFRSR        = 0x150 // FIFO receive start (old FEC)
	regRDSR1       = 0x160 // RX ring 1 base
	regTDSR1       = 0x164 // TX ring 1 base
	regMRBR1       = 0x168 // RX buffer size ring 1
	regRDSR2       = 0x16C // RX ring 2 base
	regTDSR2       = 0x170 // TX ring 2 base
	regMRBR2       = 0x174 // RX buffer size ring 2
	regRDSR        = 0x180 // RX ring 0 base (ERDSR)
	regTDSR        = 0x184 // TX ring 0 base (ETDSR)
	regMRBR        = 0x188 // max RX buffer size ring 0 (EMRBR)
	regRSFL        = 0x190 // RX FIFO section full threshold
	regRSEM        = 0x194 // RX FIFO section empty threshold
	regRAEM        = 0x198 // RX FIFO almost empty
	regRAFL        = 0x19C // RX FIFO almost full
	regTSEM        = 0x1A0 // TX FIFO section empty
	regTAEM        = 0x1A4 // TX FIFO almost empty
	regTAFL        = 0x1A8 // TX FIFO almost full
	regTIPG        = 0x1AC // TX inter-packet gap
	regFTRL        = 0x1B0 // RX frame truncation length
	regTACC        = 0x1C0 // TX accelerator config
	regRACC        = 0x1C4 // RX accelerator config
	regRCMR1       = 0x1C8 // RX classification match ring 1
	regRCMR2       = 0x1CC // RX classification match ring 2
	regDMA1CFG     = 0x1D8 // DMA class config ring 1
	regDMA2CFG     = 0x1DC // DMA class config ring 2
	regRDAR1       = 0x1E0 // RX ring 1 active
	regTDAR1       = 0x1E4 // TX ring 1 active
	regRDAR2       = 0x1E8 // RX ring 2 active
	regTDAR2       = 0x1EC // TX ring 2 active
	regQOS         = 0x1F0 // multi-queue QoS scheme
	regLPI_SLEEP   = 0x1F4 // EEE sleep time
	regLPI_WAKE    = 0x1F8 // EEE wake time
	regMIB         = 0x200 // first MIB counter (RMON_T_DROP)
	regMIBEnd      = 0x2E4 // one past the last MIB counter (IEEE_R_OCTETS_OK)
	regMIIGSK_CFGR = 0x300 // MII gasket config
	regMIIGSK_ENR  = 0x308 // MII gasket enable
	regATCR        = 0x400 // 1588 timer control
	regATVR        = 0x404
	regATOFF       = 0x408
	regATPER       = 0x40C
	regATCOR       = 0x410
	regATINC       = 0x414
	regATSTMP      = 0x418
	regTGSR        = 0x604 // timer global status
	regTCSR0       = 0x608 // timer channel n control at +8n
	regTCCR0       = 0x60C // timer channel n compare at +8n

	// minWindow is the smallest register window the driver accepts: it
	// reaches the MIB counters (0x200-0x2E0).
	minWindow = 0x300
)

// Per-ring register offsets, indexed by ring (0..2).
var (
	regRDSRn = [3]uint32{regRDSR, regRDSR1, regRDSR2}
	regTDSRn = [3]uint32{regTDSR, regTDSR1, regTDSR2}
	regMRBRn = [3]uint32{regMRBR, regMRBR1, regMRBR2}
	regRDARn = [3]uint32{regRDAR, regRDAR1, regRDAR2}
	regTDARn = [3]uint32{regTDAR, regTDAR1, regTDAR2}
)

// EIR / EIMR bits (§2.1).
const (
	eir_HBERR = 1 << 31
	eir_BABR  = 1 << 30
	eir_BABT  = 1 << 29
	eir_GRA   = 1 << 28
	eir_TXF   = 1 << 27
	eir_TXB   = 1 << 26
	eir_RXF   = 1 << 25
	eir_RXB   = 1 << 24
	eir_MII   = 1 << 23
	eir_EBERR = 1 << 22
	eir_LC    = 1 << 21
	eir_RL    = 1 << 20
	eir_UN    = 1 << 19
	eir_PLR   = 1 << 18
	eir_TXF2  = 1 << 7
	eir_TXB2  = 1 << 6
	eir_RXF2  = 1 << 5
	eir_RXB2  = 1 << 4
	eir_TXF1  = 1 << 3
	eir_TXB1  = 1 << 2
	eir_RXF1  = 1 << 1
	eir_RXB1  = 1 << 0
)

// RXICn / TXICn interrupt coalescing fields (§2.11).
const (
	ic_ICEN       = 1 << 31
	ic_ICCS       = 1 << 30 // the ENET system clock counts ICTT
	ic_ICFT_SHIFT = 20      // ICFT[27:20]: frame threshold
	ic_ICFT_MAX   = 0xFF
	ic_ICTT_MAX   = 0xFFFF // ICTT[15:0]: timer threshold, units of 64 clock cycles
)

// ECR bits (§2.2).
const (
	ecr_RESET   = 1 << 0
	ecr_ETHEREN = 1 << 1
	ecr_MAGICEN = 1 << 2
	ecr_SLEEP   = 1 << 3
	ecr_EN1588  = 1 << 4
	ecr_SPEED   = 1 << 5
	ecr_DBGEN   = 1 << 6
	ecr_STOPEN  = 1 << 7
	ecr_DBSWP   = 1 << 8
	ecr_TXC_DLY = 1 << 16 // i.MX8QM: the MAC adds 2 ns to the RGMII TX clock (fec.h FEC_ENET_TXC_DLY)
	ecr_RXC_DLY = 1 << 17 // i.MX8QM: the MAC adds 2 ns to the RGMII RX clock (fec.h FEC_ENET_RXC_DLY)
)

// MMFR fields (§2.3): ST[31:30] OP[29:28] PA[27:23] RA[22:18] TA[17:16] DATA[15:0].
const (
	mmfr_ST_C22    = 1 << 30 // clause 22 start
	mmfr_OP_WRITE  = 1 << 28
	mmfr_OP_READ   = 2 << 28
	mmfr_TA        = 2 << 16
	mmfr_PA_SHIFT  = 23
	mmfr_RA_SHIFT  = 18
	mmfr_DATA_MASK = 0xFFFF
)

// MSCR fields (§2.3).
const (
	mscr_MII_SPEED_SHIFT = 1 // MII_SPEED[6:1]
	mscr_DIS_PRE         = 1 << 7
	mscr_HOLDTIME_SHIFT  = 8 // HOLDTIME[10:8]
)

// RCR bits (§2.5).
const (
	rcr_LOOP         = 1 << 0
	rcr_DRT          = 1 << 1
	rcr_MII_MODE     = 1 << 2
	rcr_PROM         = 1 << 3
	rcr_BC_REJ       = 1 << 4
	rcr_FCE          = 1 << 5
	rcr_RGMII_EN     = 1 << 6
	rcr_RMII_MODE    = 1 << 8
	rcr_RMII_10T     = 1 << 9
	rcr_PADEN        = 1 << 12
	rcr_PAUFWD       = 1 << 13
	rcr_CRCFWD       = 1 << 14
	rcr_CFEN         = 1 << 15
	rcr_MAX_FL_SHIFT = 16 // MAX_FL[29:16]
	rcr_MAX_FL_MASK  = 0x3FFF
	rcr_NLC          = 1 << 30
	rcr_GRS          = 1 << 31
)

// TCR bits (§2.6).
const (
	tcr_GTS  = 1 << 0
	tcr_FDEN = 1 << 2
)

// TFWR bits (§2.8).
const tfwr_STRFWD = 1 << 8

// RACC / TACC bits (§2.9).
const (
	racc_PADREM  = 1 << 0
	racc_IPDIS   = 1 << 1
	racc_PRODIS  = 1 << 2
	racc_LINEDIS = 1 << 6
	racc_SHIFT16 = 1 << 7
	tacc_SHIFT16 = 1 << 0
	tacc_IPCHK   = 1 << 3
	tacc_PROCHK  = 1 << 4
)

// Multi-queue (AVB) classification and shaping (§2.10).
const (
	rcmr_MATCHEN           = 1 << 16
	dmacfg_DMA_CLASS_EN    = 1 << 16
	dmacfg_IDLE_SLOPE_HALF = 0x200 // half the bandwidth, as Linux programs it
)

// RDAR/TDAR active flag (§4.3).
const dar_ACTIVE = 1 << 24

// mibNames are the MIB counters from RMON_T_DROP (0x200) on, one per 4
// bytes; "" marks reserved words (§2.12).
var mibNames = [...]string{
	"RMON_T_DROP", "RMON_T_PACKETS", "RMON_T_BC_PKT", "RMON_T_MC_PKT",
	"RMON_T_CRC_ALIGN", "RMON_T_UNDERSIZE", "RMON_T_OVERSIZE", "RMON_T_FRAG",
	"RMON_T_JAB", "RMON_T_COL", "RMON_T_P64", "RMON_T_P65TO127",
	"RMON_T_P128TO255", "RMON_T_P256TO511", "RMON_T_P512TO1023", "RMON_T_P1024TO2047",
	"RMON_T_P_GTE2048", "RMON_T_OCTETS", "IEEE_T_DROP", "IEEE_T_FRAME_OK",
	"IEEE_T_1COL", "IEEE_T_MCOL", "IEEE_T_DEF", "IEEE_T_LCOL",
	"IEEE_T_EXCOL", "IEEE_T_MACERR", "IEEE_T_CSERR", "IEEE_T_SQE",
	"IEEE_T_FDXFC", "IEEE_T_OCTETS_OK", "", "",
	"RMON_R_DROP", "RMON_R_PACKETS", "RMON_R_BC_PKT", "RMON_R_MC_PKT",
	"RMON_R_CRC_ALIGN", "RMON_R_UNDERSIZE", "RMON_R_OVERSIZE", "RMON_R_FRAG",
	"RMON_R_JAB", "RMON_R_RESVD_0", "RMON_R_P64", "RMON_R_P65TO127",
	"RMON_R_P128TO255", "RMON_R_P256TO511", "RMON_R_P512TO1023", "RMON_R_P1024TO2047",
	"RMON_R_P_GTE2048", "RMON_R_OCTETS", "IEEE_R_DROP", "IEEE_R_FRAME_OK",
	"IEEE_R_CRC", "IEEE_R_ALIGN", "IEEE_R_MACERR", "IEEE_R_FDXFC",
	"IEEE_R_OCTETS_OK",
}

// f is bits lo..hi of a register; bit is the one bit n.
func f(name string, lo, hi uint) driver.RegField { return driver.RegField{Name: name, Lo: lo, Hi: hi} }

func bit(name string, n uint) driver.RegField { return f(name, n, n) }

// desc describes one register: the reference manual's name, the offset
// from the instance base, the block it lies in (blockOf) and its fields.
func desc(name string, off uint32, fs ...driver.RegField) driver.RegDesc {
	return driver.RegDesc{Name: name, Offset: off, Block: blockOf(off), Fields: fs}
}

var eirFields = []driver.RegField{
	bit("HBERR", 31), bit("BABR", 30), bit("BABT", 29), bit("GRA", 28), bit("TXF", 27),
	bit("TXB", 26), bit("RXF", 25), bit("RXB", 24), bit("MII", 23), bit("EBERR", 22),
	bit("LC", 21), bit("RL", 20), bit("UN", 19), bit("PLR", 18), bit("WAKEUP", 17),
	bit("TS_AVAIL", 16), bit("TS_TIMER", 15), bit("TXF2", 7), bit("TXB2", 6), bit("RXF2", 5),
	bit("RXB2", 4), bit("TXF1", 3), bit("TXB1", 2), bit("RXF1", 1), bit("RXB1", 0),
}

// RegisterMap lists the registers the driver knows, with their fields, in
// offset order, under the reference manual's names (docs/hardware-fec.md §2).
func RegisterMap() []driver.RegDesc {
	dar := []driver.RegField{bit("ACTIVE", 24)}
	ic := []driver.RegField{bit("ICEN", 31), bit("ICCS", 30), f("ICFT", 20, 27), f("ICTT", 0, 15)}
	rcmr := []driver.RegField{bit("MATCHEN", 16), f("CMP3", 12, 14), f("CMP2", 8, 10), f("CMP1", 4, 6), f("CMP0", 0, 2)}
	dmacfg := []driver.RegField{bit("DMA_CLASS_EN", 16), f("IDLE_SLOPE", 0, 15)}
	m := []driver.RegDesc{
		desc("EIR", regEIR, eirFields...),
		desc("EIMR", regEIMR, eirFields...),
		desc("RDAR", regRDAR, dar...),
		desc("TDAR", regTDAR, dar...),
		desc("ECR", regECR, bit("RESET", 0), bit("ETHEREN", 1), bit("MAGICEN", 2), bit("SLEEP", 3),
			bit("EN1588", 4), bit("SPEED", 5), bit("DBGEN", 6), bit("STOPEN", 7), bit("DBSWP", 8),
			bit("TXC_DLY", 16), bit("RXC_DLY", 17)),
		desc("MMFR", regMMFR, f("ST", 30, 31), f("OP", 28, 29), f("PA", 23, 27), f("RA", 18, 22), f("TA", 16, 17), f("DATA", 0, 15)),
		desc("MSCR", regMSCR, f("MII_SPEED", 1, 6), bit("DIS_PRE", 7), f("HOLDTIME", 8, 10)),
		desc("MIBC", regMIBC, bit("MIB_DIS", 31), bit("MIB_IDLE", 30), bit("MIB_CLEAR", 29)),
		desc("RCR", regRCR, bit("LOOP", 0), bit("DRT", 1), bit("MII_MODE", 2), bit("PROM", 3),
			bit("BC_REJ", 4), bit("FCE", 5), bit("RGMII_EN", 6), bit("RMII_MODE", 8), bit("RMII_10T", 9),
			bit("PADEN", 12), bit("PAUFWD", 13), bit("CRCFWD", 14), bit("CFEN", 15), f("MAX_FL", 16, 29),
			bit("NLC", 30), bit("GRS", 31)),
		desc("TCR", regTCR, bit("GTS", 0), bit("HBC", 1), bit("FDEN", 2), bit("TFC_PAUSE", 3),
			bit("RFC_PAUSE", 4), f("ADDSEL", 5, 7), bit("CRCFWD", 9)),
		desc("PALR", regPALR, f("PADDR1", 0, 31)),
		desc("PAUR", regPAUR, f("PADDR2", 16, 31), f("TYPE", 0, 15)),
		desc("OPD", regOPD, f("OPCODE", 16, 31), f("PAUSE_DUR", 0, 15)),
		desc("TXIC0", regTXIC0, ic...), desc("TXIC1", regTXIC0+4, ic...), desc("TXIC2", regTXIC0+8, ic...),
		desc("RXIC0", regRXIC0, ic...), desc("RXIC1", regRXIC0+4, ic...), desc("RXIC2", regRXIC0+8, ic...),
		desc("IAUR", regIAUR), desc("IALR", regIALR), desc("GAUR", regGAUR), desc("GALR", regGALR),
		desc("TFWR", regTFWR, f("TFWR", 0, 5), bit("STRFWD", 8)),
		desc("FRBR", regFRBR), desc("FRSR", regFRSR),
		desc("RDSR1", regRDSR1), desc("TDSR1", regTDSR1), desc("MRBR1", regMRBR1, f("R_BUF_SIZE", 4, 13)),
		desc("RDSR2", regRDSR2), desc("TDSR2", regTDSR2), desc("MRBR2", regMRBR2, f("R_BUF_SIZE", 4, 13)),
		desc("RDSR", regRDSR), desc("TDSR", regTDSR), desc("MRBR", regMRBR, f("R_BUF_SIZE", 4, 13)),
		desc("RSFL", regRSFL), desc("RSEM", regRSEM), desc("RAEM", regRAEM), desc("RAFL", regRAFL),
		desc("TSEM", regTSEM), desc("TAEM", regTAEM), desc("TAFL", regTAFL), desc("TIPG", regTIPG),
		desc("FTRL", regFTRL, f("TRUNC_FL", 0, 13)),
		desc("TACC", regTACC, bit("SHIFT16", 0), bit("IPCHK", 3), bit("PROCHK", 4)),
		desc("RACC", regRACC, bit("PADREM", 0), bit("IPDIS", 1), bit("PRODIS", 2), bit("LINEDIS", 6), bit("SHIFT16", 7)),
		desc("RCMR1", regRCMR1, rcmr...), desc("RCMR2", regRCMR2, rcmr...),
		desc("DMA1CFG", regDMA1CFG, dmacfg...), desc("DMA2CFG", regDMA2CFG, dmacfg...),
		desc("RDAR1", regRDAR1, dar...), desc("TDAR1", regTDAR1, dar...), desc("RDAR2", regRDAR2, dar...), desc("TDAR2", regTDAR2, dar...),
		desc("QOS", regQOS), desc("LPI_SLEEP", regLPI_SLEEP), desc("LPI_WAKE", regLPI_WAKE),
	}
	for i, n := range mibNames {
		if n != "" {
			m = append(m, desc(n, regMIB+uint32(4*i)))
		}
	}
	m = append(m,
		desc("MIIGSK_CFGR", regMIIGSK_CFGR),
		desc("MIIGSK_ENR", regMIIGSK_ENR, bit("EN", 1), bit("READY", 2)),
		desc("ATCR", regATCR), desc("ATVR", regATVR), desc("ATOFF", regATOFF),
		desc("ATPER", regATPER), desc("ATCOR", regATCOR), desc("ATINC", regATINC),
		desc("ATSTMP", regATSTMP), desc("TGSR", regTGSR),
	)
	for n := uint32(0); n < 4; n++ {
		m = append(m,
			desc("TCSR"+string(rune('0'+n)), regTCSR0+8*n),
			desc("TCCR"+string(rune('0'+n)), regTCCR0+8*n))
	}
	return m
}

// blockOf is the part of the register map offset off lies in, as the
// reference lays the map out: "mac" (control and DMA, below the MIB
// counters), "mib" (statistics), "gasket" (the MII gasket) or "ptp" (the
// 1588 timer). A tool groups its dumps by it (driver.RegDesc.Block).
func blockOf(off uint32) string {
	switch {
	case off < regMIB:
		return "mac"
	case off < regMIIGSK_CFGR:
		return "mib"
	case off < regATCR:
		return "gasket"
	default:
		return "ptp"
	}
}

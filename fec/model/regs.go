package model

// Register offsets from the instance base (docs/hardware-fec.md §2, ENET layout).
const (
	regEIR      = 0x004
	regEIMR     = 0x008
	regRDAR     = 0x010
	regTDAR     = 0x014
	regECR      = 0x024
	regMMFR     = 0x040
	regMSCR     = 0x044
	regMIBC     = 0x064
	regRCR      = 0x084
	regTCR      = 0x0C4
	regPALR     = 0x0E4
	regPAUR     = 0x0E8
	regOPD      = 0x0EC
	regTXIC0    = 0x0F0
	regRXIC0    = 0x100
	regIAUR     = 0x118
	regIALR     = 0x11C
	regGAUR     = 0x120
	regGALR     = 0x124
	regTFWR     = 0x144
	regFRBR     = 0x14C
	regFRSR     = 0x150
	regRDSR1    = 0x160
	regTDSR1    = 0x164
	regMRBR1    = 0x168
	regRDSR2    = 0x16C
	regTDSR2    = 0x170
	regMRBR2    = 0x174
	regRDSR     = 0x180
	regTDSR     = 0x184
	regMRBR     = 0x188
	regRSFL     = 0x190
	regRSEM     = 0x194
	regRAEM     = 0x198
	regRAFL     = 0x19C
	regTSEM     = 0x1A0
	regTAEM     = 0x1A4
	regTAFL     = 0x1A8
	regTIPG     = 0x1AC
	regFTRL     = 0x1B0
	regTACC     = 0x1C0
	regRACC     = 0x1C4
	regRCMR1    = 0x1C8
	regRCMR2    = 0x1CC
	regDMA1CFG  = 0x1D8
	regDMA2CFG  = 0x1DC
	regRDAR1    = 0x1E0
	regTDAR1    = 0x1E4
	regRDAR2    = 0x1E8
	regTDAR2    = 0x1EC
	regQOS      = 0x1F0
	regLPISleep = 0x1F4
	regLPIWake  = 0x1F8
	regMIBFirst = 0x200
	regMIBLast  = 0x2E0
	regMIIGSKC  = 0x300
	regMIIGSKE  = 0x308
	regATCR     = 0x400
	regTGSR     = 0x604
	regTCSR0    = 0x608

	// regSpan is the part of the window that holds registers; the rest of
	// the window reads 0 and is recorded as unimplemented.
	regSpan = 0x800
)

// MIB counter offsets the model counts (docs/hardware-fec.md §2.12).
const (
	mibTDrop     = 0x200
	mibTPackets  = 0x204
	mibTBC       = 0x208
	mibTMC       = 0x20C
	mibTP64      = 0x228
	mibTOctets   = 0x244
	mibTFrameOK  = 0x24C
	mibTOctetsOK = 0x274
	mibRDrop     = 0x280
	mibRPackets  = 0x284
	mibRBC       = 0x288
	mibRMC       = 0x28C
	mibRCRCAlign = 0x290
	mibRUndersz  = 0x294
	mibROversize = 0x298
	mibRP64      = 0x2A8
	mibROctets   = 0x2C4
	mibRIEEEDrop = 0x2C8
	mibRFrameOK  = 0x2CC
	mibRCRC      = 0x2D0
	mibRMACErr   = 0x2D8
	mibROctetsOK = 0x2E0
)

// EIR/EIMR bits (docs/hardware-fec.md §2.1).
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
	eir_TXF2  = 1 << 7
	eir_TXB2  = 1 << 6
	eir_RXF2  = 1 << 5
	eir_RXB2  = 1 << 4
	eir_TXF1  = 1 << 3
	eir_TXB1  = 1 << 2
	eir_RXF1  = 1 << 1
	eir_RXB1  = 1 << 0
	activeBit = 1 << 24 // RDAR/TDAR "descriptor active"
)

// ECR bits (§2.2).
const (
	ecr_RESET   = 1 << 0
	ecr_ETHEREN = 1 << 1
	ecr_EN1588  = 1 << 4
	ecr_SPEED   = 1 << 5
	ecr_DBSWP   = 1 << 8
	ecr_TXC_DLY = 1 << 16 // i.MX8QM: the MAC delays the RGMII TX clock
	ecr_RXC_DLY = 1 << 17 // i.MX8QM: the MAC delays the RGMII RX clock
)

// RCR bits (§2.5).
const (
	rcr_LOOP         = 1 << 0
	rcr_PROM         = 1 << 3
	rcr_BC_REJ       = 1 << 4
	rcr_DRT          = 1 << 1
	rcr_RGMII_EN     = 1 << 6
	rcr_RMII_10T     = 1 << 9
	rcr_MAX_FL_SHIFT = 16
	rcr_MAX_FL_MASK  = 0x3FFF
)

// TCR, MIBC, RACC, TACC bits.
const (
	tcr_GTS        = 1 << 0
	tcr_FDEN       = 1 << 2
	tfwr_STRFWD    = 1 << 8
	mibc_MIB_DIS   = 1 << 31
	mibc_MIB_IDLE  = 1 << 30
	mibc_MIB_CLEAR = 1 << 29
	racc_SHIFT16   = 1 << 7
	racc_IPDIS     = 1 << 1
	racc_PRODIS    = 1 << 2
	tacc_SHIFT16   = 1 << 0
	tacc_IPCHK     = 1 << 3
	tacc_PROCHK    = 1 << 4
	rcmr_MATCHEN   = 1 << 16
)

// RegInfo describes one register of the model's register table.
type RegInfo struct {
	// Name is the reference-manual name (docs/hardware-fec.md §2).
	Name string
	// Alias is a second name the reference gives (ERDSR for RDSR), or "".
	Alias string
	// Offset is the byte offset from the instance base.
	Offset uint32
	// Access is "rw", "ro", "w1c" or "trigger".
	Access string
	// Only names the quirk a part needs for the register to exist:
	// "" (every ENET part), "multi-queue", "coalesce", "eee" or "fec" (old
	// FEC blocks only: not present on any profile of this model).
	Only string
}

// regDef is a RegInfo with the model's reset value and writable bits.
type regDef struct {
	RegInfo
	reset uint32
	mask  uint32
}

func rd(name string, off uint32, access string, reset, mask uint32) regDef {
	return regDef{RegInfo: RegInfo{Name: name, Offset: off, Access: access}, reset: reset, mask: mask}
}

func (r regDef) only(q string) regDef  { r.Only = q; return r }
func (r regDef) alias(a string) regDef { r.Alias = a; return r }

// regTable is the register map transcribed from docs/hardware-fec.md §2.
var regTable = buildRegTable()

func buildRegTable() []regDef {
	t := []regDef{
		rd("EIR", regEIR, "w1c", 0, 0xFFFF80FF),
		rd("EIMR", regEIMR, "rw", 0, 0xFFFF80FF),
		rd("RDAR", regRDAR, "trigger", 0, 0),
		rd("TDAR", regTDAR, "trigger", 0, 0),
		rd("ECR", regECR, "rw", 0xF0000000, 0xF00301FE),
		rd("MMFR", regMMFR, "rw", 0, 0xFFFFFFFF),
		rd("MSCR", regMSCR, "rw", 0, 0x7FE),
		rd("MIBC", regMIBC, "rw", mibc_MIB_DIS|mibc_MIB_IDLE, mibc_MIB_DIS|mibc_MIB_CLEAR),
		rd("RCR", regRCR, "rw", 0x05EE0001, 0x7FFFF37F),
		rd("TCR", regTCR, "rw", 0, 0x2EF),
		rd("PALR", regPALR, "rw", 0, 0xFFFFFFFF),
		rd("PAUR", regPAUR, "rw", 0x8808, 0xFFFF0000),
		rd("OPD", regOPD, "rw", 0x00010000, 0xFFFF),
		rd("TXIC0", regTXIC0, "rw", 0, 0xCFF0FFFF).only("coalesce"),
		rd("TXIC1", regTXIC0+4, "rw", 0, 0xCFF0FFFF).only("coalesce"),
		rd("TXIC2", regTXIC0+8, "rw", 0, 0xCFF0FFFF).only("coalesce"),
		rd("RXIC0", regRXIC0, "rw", 0, 0xCFF0FFFF).only("coalesce"),
		rd("RXIC1", regRXIC0+4, "rw", 0, 0xCFF0FFFF).only("coalesce"),
		rd("RXIC2", regRXIC0+8, "rw", 0, 0xCFF0FFFF).only("coalesce"),
		rd("IAUR", regIAUR, "rw", 0, 0xFFFFFFFF),
		rd("IALR", regIALR, "rw", 0, 0xFFFFFFFF),
		rd("GAUR", regGAUR, "rw", 0, 0xFFFFFFFF),
		rd("GALR", regGALR, "rw", 0, 0xFFFFFFFF),
		rd("TFWR", regTFWR, "rw", 0, 0x13F),
		rd("FRBR", regFRBR, "ro", 0, 0).only("fec"),
		rd("FRSR", regFRSR, "rw", 0, 0x3FC).only("fec"),
		rd("RDSR1", regRDSR1, "rw", 0, 0xFFFFFFF8).only("multi-queue"),
		rd("TDSR1", regTDSR1, "rw", 0, 0xFFFFFFF8).only("multi-queue"),
		rd("MRBR1", regMRBR1, "rw", 0, 0x3FF0).only("multi-queue"),
		rd("RDSR2", regRDSR2, "rw", 0, 0xFFFFFFF8).only("multi-queue"),
		rd("TDSR2", regTDSR2, "rw", 0, 0xFFFFFFF8).only("multi-queue"),
		rd("MRBR2", regMRBR2, "rw", 0, 0x3FF0).only("multi-queue"),
		rd("RDSR", regRDSR, "rw", 0, 0xFFFFFFF8).alias("ERDSR"),
		rd("TDSR", regTDSR, "rw", 0, 0xFFFFFFF8).alias("ETDSR"),
		rd("MRBR", regMRBR, "rw", 0, 0x3FF0).alias("EMRBR"),
		rd("RSFL", regRSFL, "rw", 0, 0x3FF),
		rd("RSEM", regRSEM, "rw", 0, 0x3FF),
		rd("RAEM", regRAEM, "rw", 4, 0x3FF),
		rd("RAFL", regRAFL, "rw", 4, 0x3FF),
		rd("TSEM", regTSEM, "rw", 0, 0x3FF),
		rd("TAEM", regTAEM, "rw", 4, 0x3FF),
		rd("TAFL", regTAFL, "rw", 8, 0x3FF),
		rd("TIPG", regTIPG, "rw", 12, 0x1F),
		rd("FTRL", regFTRL, "rw", 0x7FF, 0x3FFF),
		rd("TACC", regTACC, "rw", 0, 0x19),
		rd("RACC", regRACC, "rw", 0, 0xC7),
		rd("RCMR1", regRCMR1, "rw", 0, 0x17777).only("multi-queue"),
		rd("RCMR2", regRCMR2, "rw", 0, 0x17777).only("multi-queue"),
		rd("DMA1CFG", regDMA1CFG, "rw", 0, 0x1FFFF).only("multi-queue"),
		rd("DMA2CFG", regDMA2CFG, "rw", 0, 0x1FFFF).only("multi-queue"),
		rd("RDAR1", regRDAR1, "trigger", 0, 0).only("multi-queue"),
		rd("TDAR1", regTDAR1, "trigger", 0, 0).only("multi-queue"),
		rd("RDAR2", regRDAR2, "trigger", 0, 0).only("multi-queue"),
		rd("TDAR2", regTDAR2, "trigger", 0, 0).only("multi-queue"),
		rd("QOS", regQOS, "rw", 0, 0xFFFFFFFF).only("multi-queue"),
		rd("LPI_SLEEP", regLPISleep, "rw", 0, 0xFFFFFFFF).only("eee"),
		rd("LPI_WAKE", regLPIWake, "rw", 0, 0xFFFFFFFF).only("eee"),
		rd("MIIGSK_CFGR", regMIIGSKC, "rw", 0, 0x7F).only("fec"),
		rd("MIIGSK_ENR", regMIIGSKE, "rw", 0, 0x2).only("fec"),
		rd("ATCR", regATCR, "rw", 0, 0xFFFFFFFF),
		rd("ATVR", regATCR+0x04, "rw", 0, 0xFFFFFFFF),
		rd("ATOFF", regATCR+0x08, "rw", 0, 0xFFFFFFFF),
		rd("ATPER", regATCR+0x0C, "rw", 0, 0xFFFFFFFF),
		rd("ATCOR", regATCR+0x10, "rw", 0, 0xFFFFFFFF),
		rd("ATINC", regATCR+0x14, "rw", 0, 0xFFFFFFFF),
		rd("ATSTMP", regATCR+0x18, "ro", 0, 0),
		rd("TGSR", regTGSR, "w1c", 0, 0xF),
	}
	for n := uint32(0); n < 4; n++ {
		t = append(t,
			rd("TCSR"+string(rune('0'+n)), regTCSR0+8*n, "rw", 0, 0xFFFFFFFF),
			rd("TCCR"+string(rune('0'+n)), regTCSR0+4+8*n, "rw", 0, 0xFFFFFFFF))
	}
	for i, name := range mibNames {
		if name == "" {
			continue
		}
		t = append(t, rd(name, regMIBFirst+4*uint32(i), "ro", 0, 0xFFFFFFFF))
	}
	return t
}

// mibNames are the MIB counters from 0x200 upward, "" for reserved words.
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

// Registers returns the model's register table, transcribed from the
// hardware reference (docs/hardware-fec.md §2): every register of the ENET map with
// its reference name, offset and access kind. Registers whose Only field
// names a quirk exist only on parts with it; on other parts they behave as
// unimplemented (read 0, access recorded).
func Registers() []RegInfo {
	out := make([]RegInfo, len(regTable))
	for i, r := range regTable {
		out[i] = r.RegInfo
	}
	return out
}

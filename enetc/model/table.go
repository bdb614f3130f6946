package model

import "fmt"

// RegInfo is one register of the model's table.
type RegInfo struct {
	// Name is the reference's name; indexed families (PSIPMAR0(n),
	// SIMSITRV(n), PRSSK(n), ...) appear as their n = 0 instance under the
	// bare family name, ring registers as ring 0 (add RingStride·n). The
	// MDIO blocks are EMDIO_* (port external, 0x11C00) and IMDIO_* (internal,
	// 0x18030); pMAC copies of the MAC counters are PM1_<name>.
	Name string
	// Offset is the byte offset in BAR0.
	Offset uint32
	// Access is "rw", "ro" (writes ignored and recorded as a model error),
	// "w1c" (write 1 to clear a bit) or "trigger" (a write starts an action:
	// MDIO cycles, counter clear). Doorbells (TBPIR, RBCIR, SICBDRPIR) are
	// "rw": they read back what was written and kick the DMA engine.
	Access string
	// Count and Stride describe an indexed register: instance n (n <
	// Count) is at Offset + n*Stride. Ring registers have MaxRings
	// instances RingStride apart. Count is 1 (Stride 0) for the others.
	Count  int
	Stride uint32
}

// Access kinds in the decode table.
const (
	accNone uint8 = iota // unimplemented
	accRW
	accRO
	accW1C
	accTrigger
)

var accNames = [...]string{"", "rw", "ro", "w1c", "trigger"}

type regDef struct {
	name string
	off  uint32
	acc  uint8
}

var siRegs = []regDef{
	{"SIMR", regSIMR, accRW}, {"SICTR0", regSICTR0, accRO}, {"SICTR1", regSICTR1, accRO},
	{"SIPCAPR0", regSIPCAPR0, accRO}, {"SIPCAPR1", regSIPCAPR1, accRO}, {"SITGTGR", regSITGTGR, accRW},
	{"SIRBGCR", regSIRBGCR, accRW}, {"SICAR0", regSICAR0, accRW}, {"SICAR1", regSICAR1, accRW},
	{"SICAR2", regSICAR2, accRW}, {"SIPMAR0", regSIPMAR0, accRW}, {"SIPMAR1", regSIPMAR1, accRW},
	{"PSIMSGRR", regPSIMSGRR, accW1C},
	{"PSIVMSGRCVAR0", regPSIVMSGRCVAR0, accRW}, {"PSIVMSGRCVAR1", regPSIVMSGRCVAR1, accRW},
	{"SIROCT", regSIROCT, accRO}, {"SIRFRM", regSIRFRM, accRO}, {"SIRUCA", regSIRUCA, accRO},
	{"SIRMCA", regSIRMCA, accRO}, {"SITOCT", regSITOCT, accRO}, {"SITFRM", regSITFRM, accRO},
	{"SITUCA", regSITUCA, accRO}, {"SITMCA", regSITMCA, accRO},
	{"SICBDRMR", regSICBDRMR, accRW}, {"SICBDRSR", regSICBDRSR, accRO},
	{"SICBDRBAR0", regSICBDRBAR0, accRW}, {"SICBDRBAR1", regSICBDRBAR1, accRW},
	{"SICBDRPIR", regSICBDRPIR, accRW}, {"SICBDRCIR", regSICBDRCIR, accRW},
	{"SICBDRLENR", regSICBDRLENR, accRW},
	{"SICAPR0", regSICAPR0, accRO}, {"SICAPR1", regSICAPR1, accRO},
	{"PSIIER", regPSIIER, accRW}, {"PSIIDR", regPSIIDR, accW1C}, {"SITXIDR", regSITXIDR, accW1C},
	{"SIRXIDR", regSIRXIDR, accW1C}, {"SIMSIVR", regSIMSIVR, accRW},
	{"SIMSITRV", regSIMSITRV, accRW}, {"SIMSIRRV", regSIMSIRRV, accRW},
	{"SIUEFDCR", regSIUEFDCR, accRO}, {"SIRFSCAPR", regSIRFSCAPR, accRO}, {"SIRSSCAPR", regSIRSSCAPR, accRO},
}

var ringRegs = []regDef{
	{"TBMR", regTBMR, accRW}, {"TBSR", regTBSR, accRO}, {"TBBAR0", regTBBAR0, accRW},
	{"TBBAR1", regTBBAR1, accRW}, {"TBPIR", regTBPIR, accRW}, {"TBCIR", regTBCIR, accRO},
	{"TBLENR", regTBLENR, accRW}, {"TBIER", regTBIER, accRW}, {"TBIDR", regTBIDR, accW1C},
	{"TBICR0", regTBICR0, accRW}, {"TBICR1", regTBICR1, accRW},
	{"RBMR", regRBMR, accRW}, {"RBSR", regRBSR, accRO}, {"RBBSR", regRBBSR, accRW},
	{"RBCIR", regRBCIR, accRW}, {"RBBAR0", regRBBAR0, accRW}, {"RBBAR1", regRBBAR1, accRW},
	{"RBPIR", regRBPIR, accRW}, {"RBLENR", regRBLENR, accRW}, {"RBDCR", regRBDCR, accRO},
	{"RBIER", regRBIER, accRW}, {"RBIDR", regRBIDR, accW1C}, {"RBICR0", regRBICR0, accRW},
	{"RBICR1", regRBICR1, accRW},
}

var portRegs = []regDef{
	{"PMR", regPMR, accRW}, {"PSR", regPSR, accRO}, {"PSIPMR", regPSIPMR, accRW}, {"PSIPVMR", regPSIPVMR, accRW},
	{"PSIPMAR0", regPSIPMAR0, accRW}, {"PSIPMAR1", regPSIPMAR1, accRW},
	{"PVCLCTR", regPVCLCTR, accRW}, {"PCVLANR1", regPCVLANR1, accRW}, {"PCVLANR2", regPCVLANR2, accRW},
	{"PSIVLANR", regPSIVLANR, accRW}, {"PPAUONTR", regPPAUONTR, accRW}, {"PPAUOFFTR", regPPAUOFFTR, accRW},
	{"PTXMBAR", regPTXMBAR, accRW}, {"PICDR", regPICDR, accRO}, {"PBFDSIR", regPBFDSIR, accRO},
	{"PFDMSAPR", regPFDMSAPR, accRO}, {"PCAPR0", regPCAPR0, accRO}, {"PCAPR1", regPCAPR1, accRO},
	{"PSICFGR0", regPSICFGR0, accRW}, {"PRSSCAPR", regPRSSCAPR, accRO}, {"PRSSK", regPRSSK, accRW},
	{"UFDMF", regUFDMF, accRO}, {"MFDMF", regMFDMF, accRO}, {"PSIVLANFMR", regPSIVLANFMR, accRW},
	{"PUFDVFR", regPUFDVFR, accRO}, {"PMFDVFR", regPMFDVFR, accRO}, {"PBFDVFR", regPBFDVFR, accRO},
	{"PRFSMR", regPRFSMR, accRW}, {"PRFSCAPR", regPRFSCAPR, accRO}, {"PSIRFSCFGR", regPSIRFSCFGR, accRW},
	{"PFPMR", regPFPMR, accRW},
	{"EMDIO_CFG", EMDIOBase + regMDIO_CFG, accRW}, {"EMDIO_CTL", EMDIOBase + regMDIO_CTL, accTrigger},
	{"EMDIO_DATA", EMDIOBase + regMDIO_DATA, accTrigger}, {"EMDIO_ADDR", EMDIOBase + regMDIO_ADDR, accRW},
	{"PSIUMHFR0", regPSIUMHFR0, accRW}, {"PSIUMHFR1", regPSIUMHFR1, accRW},
	{"PSIMMHFR0", regPSIMMHFR0, accRW}, {"PSIMMHFR1", regPSIMMHFR1, accRW},
	{"PSIVHFR0", regPSIVHFR0, accRW}, {"PSIVHFR1", regPSIVHFR1, accRW}, {"MMCSR", regMMCSR, accRW},
	{"PTCMSDUR", regPTCMSDUR, accRW}, {"PAR_PORT_CFG", regPAR_PORT_CFG, accRW},
	{"PTCCBSR0", regPTCCBSR0, accRW}, {"PTCCBSR1", regPTCCBSR1, accRW},
	{"PTGCR", regPTGCR, accRW}, {"PTGCAPR", regPTGCAPR, accRO}, {"PTCFPR", regPTCFPR, accRW},
	{"PPSFPMR", regPPSFPMR, accRW}, {"PSIDCAPR", regPSIDCAPR, accRO}, {"PSFCAPR", regPSFCAPR, accRO},
	{"PSGCAPR", regPSGCAPR, accRO}, {"PFMCAPR", regPFMCAPR, accRO},
	{"MMFAECR", regMMFAECR, accRO}, {"MMFSECR", regMMFSECR, accRO}, {"MMFAOCR", regMMFAOCR, accRO},
	{"MMFCRXR", regMMFCRXR, accRO}, {"MMFCTXR", regMMFCTXR, accRO}, {"MMHCR", regMMHCR, accRO},
	{"PM0_CMD_CFG", regPM0_CMD_CFG, accRW}, {"PM0_MAXFRM", regPM0_MAXFRM, accRW},
	{"PM0_RX_FIFO", regPM0_RX_FIFO, accRW},
	{"IMDIO_CFG", IMDIOBase + regMDIO_CFG, accRW}, {"IMDIO_CTL", IMDIOBase + regMDIO_CTL, accTrigger},
	{"IMDIO_DATA", IMDIOBase + regMDIO_DATA, accTrigger}, {"IMDIO_ADDR", IMDIOBase + regMDIO_ADDR, accRW},
	{"PM0_PAUSE_QUANTA", regPM0_PAUSE_QUANTA, accRW}, {"PM0_PAUSE_THRESH", regPM0_PAUSE_THRESH, accRW},
	{"PM0_SINGLE_STEP", regPM0_SINGLE_STEP, accRW}, {"PM0_STAT_CONFIG", regPM0_STAT_CONFIG, accTrigger},
	{"PM0_IF_MODE", regPM0_IF_MODE, accRW}, {"PM0_STATUS", regPM0_STATUS, accRO},
	{"PM1_CMD_CFG", regPM1_CMD_CFG, accRW}, {"PM1_IF_MODE", regPM1_IF_MODE, accRW},
	{"G_EIPBRR0", regG_EIPBRR0, accRO}, {"G_EIPBRR1", regG_EIPBRR1, accRO}, {"G_EPFBLPR", regG_EPFBLPR, accRO},
}

// macCounters lists the eMAC counters in order; each is 64-bit at its offset.
var macCounters = []regDef{
	{"REOCT", regPM0_REOCT, accRO}, {"RALN", regPM0_RALN, accRO}, {"RXPF", regPM0_RXPF, accRO}, {"RFRM", regPM0_RFRM, accRO},
	{"RFCS", regPM0_RFCS, accRO}, {"RVLAN", regPM0_RVLAN, accRO}, {"RERR", regPM0_RERR, accRO}, {"RUCA", regPM0_RUCA, accRO},
	{"RMCA", regPM0_RMCA, accRO}, {"RBCA", regPM0_RBCA, accRO}, {"RDRP", regPM0_RDRP, accRO}, {"RPKT", regPM0_RPKT, accRO},
	{"RUND", regPM0_RUND, accRO}, {"R64", regPM0_R64, accRO}, {"R127", regPM0_R127, accRO}, {"R255", regPM0_R255, accRO},
	{"R511", regPM0_R511, accRO}, {"R1023", regPM0_R1023, accRO}, {"R1522", regPM0_R1522, accRO}, {"R1523X", regPM0_R1523X, accRO},
	{"ROVR", regPM0_ROVR, accRO}, {"RJBR", regPM0_RJBR, accRO}, {"RFRG", regPM0_RFRG, accRO}, {"RCNP", regPM0_RCNP, accRO},
	{"RDRNTP", regPM0_RDRNTP, accRO},
	{"TEOCT", regPM0_TEOCT, accRO}, {"TOCT", regPM0_TOCT, accRO}, {"TCRSE", regPM0_TCRSE, accRO}, {"TXPF", regPM0_TXPF, accRO},
	{"TFRM", regPM0_TFRM, accRO}, {"TFCS", regPM0_TFCS, accRO}, {"TVLAN", regPM0_TVLAN, accRO}, {"TERR", regPM0_TERR, accRO},
	{"TUCA", regPM0_TUCA, accRO}, {"TMCA", regPM0_TMCA, accRO}, {"TBCA", regPM0_TBCA, accRO}, {"TPKT", regPM0_TPKT, accRO},
	{"TUND", regPM0_TUND, accRO}, {"T64", regPM0_T64, accRO}, {"T127", regPM0_T127, accRO}, {"T255", regPM0_T255, accRO},
	{"T511", regPM0_T511, accRO}, {"T1023", regPM0_T1023, accRO}, {"T1522", regPM0_T1522, accRO}, {"T1523X", regPM0_T1523X, accRO},
	{"TCNP", regPM0_TCNP, accRO}, {"TDFR", regPM0_TDFR, accRO}, {"TMCOL", regPM0_TMCOL, accRO}, {"TSCOL", regPM0_TSCOL, accRO},
	{"TLCOL", regPM0_TLCOL, accRO}, {"TECOL", regPM0_TECOL, accRO},
}

// Indexed register families: first instance, count, stride. The table
// lists the first; the decoder knows them all.
var families = []struct {
	off, stride uint32
	n           int
	acc         uint8
}{
	{regPSIVMSGRCVAR0, 8, 2, accRW}, {regPSIVMSGRCVAR1, 8, 2, accRW},
	{regSIMSITRV, 4, MaxRings, accRW}, {regSIMSIRRV, 4, MaxRings, accRW},
	{regPSIPMAR0, PSIPMARStride, 3, accRW}, {regPSIPMAR1, PSIPMARStride, 3, accRW},
	{regPSIVLANR, 4, 3, accRW}, {regPICDR, 8, 4, accRO}, {regPSICFGR0, PSICFGR0Stride, 3, accRW},
	{regPRSSK, 4, RSSKeyLen / 4, accRW}, {regPSIRFSCFGR, 4, 3, accRW}, {regPTCMSDUR, 4, 8, accRW},
	{regPTCCBSR0, 8, TrafficClasses, accRW}, {regPTCCBSR1, 8, TrafficClasses, accRW},
	{regPTCFPR, 4, TrafficClasses, accRW},
	{regG_EPFBLPR, 4, 4, accRO},
	{regPSIUMHFR0, 0x10, 3, accRW}, {regPSIUMHFR1, 0x10, 3, accRW},
	{regPSIMMHFR0, 0x10, 3, accRW}, {regPSIMMHFR1, 0x10, 3, accRW},
	{regPSIVHFR0, 8, 3, accRW}, {regPSIVHFR1, 8, 3, accRW},
}

// Registers returns the model's register table: every register it
// implements, by the reference's names (see RegInfo for the conventions).
func Registers() []RegInfo {
	var out []RegInfo
	add := func(defs []regDef, prefix string, delta uint32, count int, stride uint32) {
		for _, d := range defs {
			r := RegInfo{Name: prefix + d.name, Offset: d.off + delta, Access: accNames[d.acc], Count: count, Stride: stride}
			for _, f := range families {
				if f.off == r.Offset {
					r.Count, r.Stride = f.n, f.stride
				}
			}
			out = append(out, r)
		}
	}
	add(siRegs, "", 0, 1, 0)
	add(ringRegs, "", 0, MaxRings, RingStride)
	add(portRegs, "", 0, 1, 0)
	add(macCounters, "", 0, 1, 0)
	add(macCounters, "PM1_", PM1Offset, 1, 0)
	return out
}

// decode is the access kind of every 32-bit word of a PF's BAR0, built once.
var decode [PFBAR0Size / 4]uint8

// counterIdx maps a word of a 64-bit counter to its index in Device.mac (or
// -1); macWord tells low (0) from high (1) half.
var (
	counterIdx [(regPM0_RDRNTP - regPM0_REOCT + 8) / 4]int8
	txCounter  [(regPM0_TECOL - regPM0_TEOCT + 8) / 4]int8
)

func init() {
	set := func(off uint32, acc uint8) {
		if decode[off>>2] != accNone {
			panic(fmt.Sprintf("enetc model: register %#x defined twice", off))
		}
		decode[off>>2] = acc
	}
	for _, d := range siRegs {
		if d.off >= 0xB00 && d.off < 0xC00 || d.off == regPSIVMSGRCVAR0 || d.off == regPSIVMSGRCVAR1 {
			continue // families below
		}
		if d.off >= regSIROCT && d.off <= regSITMCA {
			set(d.off, d.acc)
			set(d.off+4, d.acc)
			continue
		}
		set(d.off, d.acc)
	}
	for r := uint32(0); r < MaxRings; r++ {
		for _, d := range ringRegs {
			set(d.off+r*RingStride, d.acc)
		}
	}
	for _, d := range portRegs {
		switch d.off {
		case regPSIPMAR0, regPSIPMAR1, regPSIVLANR, regPICDR, regPSICFGR0, regPRSSK, regPSIRFSCFGR, regPTCMSDUR, regG_EPFBLPR,
			regPSIUMHFR0, regPSIUMHFR1, regPSIMMHFR0, regPSIMMHFR1, regPSIVHFR0, regPSIVHFR1, regPTCCBSR0, regPTCCBSR1, regPTCFPR:
			continue // families below
		}
		set(d.off, d.acc)
	}
	for _, f := range families {
		for i := 0; i < f.n; i++ {
			set(f.off+uint32(i)*f.stride, f.acc)
		}
	}
	for _, d := range macCounters {
		for _, base := range []uint32{0, PM1Offset} {
			set(d.off+base, accRO)
			set(d.off+base+4, accRO)
		}
	}
	for i := range counterIdx {
		counterIdx[i] = -1
	}
	for i := range txCounter {
		txCounter[i] = -1
	}
	for i, d := range macCounters {
		if d.off < regPM0_TEOCT {
			counterIdx[(d.off-regPM0_REOCT)/4] = int8(i)
		} else {
			txCounter[(d.off-regPM0_TEOCT)/4] = int8(i)
		}
	}
}

// macCounterIndex returns the index in macCounters of the counter whose low
// word is at off (eMAC block), or -1.
func macCounterIndex(off uint32) int {
	switch {
	case off >= regPM0_REOCT && off <= regPM0_RDRNTP:
		return int(counterIdx[(off-regPM0_REOCT)/4])
	case off >= regPM0_TEOCT && off <= regPM0_TECOL:
		return int(txCounter[(off-regPM0_TEOCT)/4])
	}
	return -1
}

// Lookup returns the table entry of the register with the given name (as
// Registers lists it), or false.
func Lookup(name string) (RegInfo, bool) {
	for _, r := range Registers() {
		if r.Name == name {
			return r, true
		}
	}
	return RegInfo{}, false
}

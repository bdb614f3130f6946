package enetc

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
)

// pfOnly reports whether register d lies outside the SI block (a VF's
// BAR0 has only the SI block).
func pfOnly(d driver.RegDesc) bool { return d.Offset >= portBase }

// desc describes one 32-bit register of BAR0 by the hardware reference's
// name. Its block is "si", "cbdr", "si-stats", "tx-ring", "rx-ring",
// "port", "mac", "mac-stats", "mdio" or "global"; port, MAC, MDIO and
// global registers exist on a PF only.
func desc(name string, off uint32, block string, fs ...driver.RegField) driver.RegDesc {
	return driver.RegDesc{Name: name, Offset: off, Block: block, Fields: fs}
}

// field is bits lo..hi of a register; bit is the one bit b.
func field(name string, lo, hi uint) driver.RegField {
	return driver.RegField{Name: name, Lo: lo, Hi: hi}
}

func bit(name string, b uint) driver.RegField { return field(name, b, b) }

// RegisterMap lists the registers the driver knows, with the per-ring
// registers of txRings TX and rxRings RX rings. Indexed registers are named
// NAME(n) as the reference writes them (TBMR(0), PSIPMAR0(0), PRSSK(3)).
// The bring-up tool dumps it; a test checks it against the device model's
// own transcription of the reference.
func RegisterMap(txRings, rxRings int) []driver.RegDesc {
	m := []driver.RegDesc{
		desc("SIMR", regSIMR, "si", bit("RSSE", 0), bit("EN", 31)),
		desc("SICTR0", regSICTR0, "si"),
		desc("SICTR1", regSICTR1, "si"),
		desc("SIPCAPR0", regSIPCAPR0, "si", bit("RFS", 2), bit("QBU", 3), bit("QBV", 4), bit("RSS", 8), bit("PSFP", 9)),
		desc("SIPCAPR1", regSIPCAPR1, "si"),
		desc("SIRBGCR", regSIRBGCR, "si"),
		desc("SICAR0", regSICAR0, "si"),
		desc("SICAR1", regSICAR1, "si"),
		desc("SICAR2", regSICAR2, "si"),
		desc("SIPMAR0", regSIPMAR0, "si"),
		desc("SIPMAR1", regSIPMAR1, "si", field("ADDR", 0, 15)),
		desc("SICAPR0", regSICAPR0, "si", field("NUM_TX_BDR", 0, 7), field("NUM_RX_BDR", 16, 23)),
		desc("SICAPR1", regSICAPR1, "si"),
		desc("SITXIDR", regSITXIDR, "si"),
		desc("SIRXIDR", regSIRXIDR, "si"),
		desc("SIRFSCAPR", regSIRFSCAPR, "si", field("NUM_RFS", 0, 6)),
		desc("SIRSSCAPR", regSIRSSCAPR, "si", field("SIZE", 0, 3)),

		desc("SICBDRMR", regSICBDRMR, "cbdr", bit("EN", 31)),
		desc("SICBDRSR", regSICBDRSR, "cbdr"),
		desc("SICBDRBAR0", regSICBDRBAR0, "cbdr"),
		desc("SICBDRBAR1", regSICBDRBAR1, "cbdr"),
		desc("SICBDRPIR", regSICBDRPIR, "cbdr"),
		desc("SICBDRCIR", regSICBDRCIR, "cbdr"),
		desc("SICBDRLENR", regSICBDRLENR, "cbdr"),
	}
	for _, c := range []struct {
		n   string
		off uint32
	}{{"SIROCT", regSIROCT}, {"SIRFRM", regSIRFRM}, {"SIRUCA", regSIRUCA}, {"SIRMCA", regSIRMCA},
		{"SITOCT", regSITOCT}, {"SITFRM", regSITFRM}, {"SITUCA", regSITUCA}, {"SITMCA", regSITMCA}} {
		m = append(m, desc(c.n, c.off, "si-stats"))
	}
	for n := 0; n < txRings; n++ {
		for _, r := range []struct {
			name string
			off  uint32
			f    []driver.RegField
		}{
			{"TBMR", regTBMR, []driver.RegField{field("PRIO", 0, 2), bit("VIH", 9), bit("EN", 31)}},
			{"TBSR", regTBSR, []driver.RegField{bit("BUSY", 0)}},
			{"TBBAR0", regTBBAR0, nil}, {"TBBAR1", regTBBAR1, nil},
			{"TBPIR", regTBPIR, []driver.RegField{field("INDEX", 0, 15)}},
			{"TBCIR", regTBCIR, []driver.RegField{field("INDEX", 0, 15)}},
			{"TBLENR", regTBLENR, nil},
			{"TBIER", regTBIER, []driver.RegField{bit("TXTIE", 0)}},
			{"TBIDR", regTBIDR, nil},
			{"TBICR0", regTBICR0, []driver.RegField{field("ICPT", 0, 3), bit("ICEN", 31)}},
			{"TBICR1", regTBICR1, nil},
		} {
			m = append(m, desc(fmt.Sprintf("%s(%d)", r.name, n), txRingReg(n, r.off), "tx-ring", r.f...))
		}
	}
	for n := 0; n < rxRings; n++ {
		for _, r := range []struct {
			name string
			off  uint32
			f    []driver.RegField
		}{
			{"RBMR", regRBMR, []driver.RegField{bit("BDS", 2), bit("CM", 4), bit("VTE", 5), bit("EN", 31)}},
			{"RBSR", regRBSR, nil},
			{"RBBSR", regRBBSR, []driver.RegField{field("SIZE", 0, 15)}},
			{"RBCIR", regRBCIR, []driver.RegField{field("INDEX", 0, 15)}},
			{"RBBAR0", regRBBAR0, nil}, {"RBBAR1", regRBBAR1, nil},
			{"RBPIR", regRBPIR, []driver.RegField{field("INDEX", 0, 15)}},
			{"RBLENR", regRBLENR, nil},
			{"RBDCR", regRBDCR, nil},
			{"RBIER", regRBIER, []driver.RegField{bit("RXTIE", 0)}},
			{"RBIDR", regRBIDR, nil},
			{"RBICR0", regRBICR0, []driver.RegField{field("ICPT", 0, 8), bit("ICEN", 31)}},
			{"RBICR1", regRBICR1, nil},
		} {
			m = append(m, desc(fmt.Sprintf("%s(%d)", r.name, n), rxRingReg(n, r.off), "rx-ring", r.f...))
		}
	}
	m = append(m,
		desc("PMR", regPMR, "port", field("PSPEED", 8, 11), field("EN", 16, 18)),
		desc("PSR", regPSR, "port"),
		desc("PSIPMR", regPSIPMR, "port", field("UP", 0, 2), field("MP", 16, 18)),
		desc("PSIPVMR", regPSIPVMR, "port", field("VP", 0, 2), field("VUTA", 16, 18)),
		desc("PVCLCTR", regPVCLCTR, "port"),
		desc("PTXMBAR", regPTXMBAR, "port"),
		desc("PBFDSIR", regPBFDSIR, "port"),
		desc("PFDMSAPR", regPFDMSAPR, "port"),
		desc("PCAPR0", regPCAPR0, "port", bit("IMDIO", 11), field("NUM_TX_BDR", 16, 23), field("NUM_RX_BDR", 24, 31)),
		desc("PCAPR1", regPCAPR1, "port"),
		desc("PRSSCAPR", regPRSSCAPR, "port", field("SIZE", 0, 3)),
		desc("UFDMF", regUFDMF, "port"),
		desc("MFDMF", regMFDMF, "port"),
		desc("PRFSMR", regPRFSMR, "port", bit("RFSE", 31)),
		desc("PRFSCAPR", regPRFSCAPR, "port"),
		desc("PFPMR", regPFPMR, "port", bit("MWLM", 0), bit("PMACE", 1)),
		desc("PAR_PORT_CFG", regPAR_PORT, "port", bit("L3CKSUM", 0), bit("L4CKSUM", 1)),
		desc("PTGCR", regPTGCR, "port", bit("TGPE", 30), bit("TGE", 31)),
		desc("PTGCAPR", regPTGCAPR, "port", field("MAX_GCL_LEN", 0, 15)),
		desc("MMCSR", regMMCSR, "port", bit("LPS", 0), bit("LPE", 1), bit("LPA", 2), field("RAFS", 8, 9), bit("ME", 16), bit("VDIS", 17), field("VSTS", 18, 20), field("TXSTS", 21, 22), field("VT", 23, 29), bit("LINK_FAIL", 31)),
		desc("MMFAECR", regMMFAECR, "port"),
		desc("MMFSECR", regMMFAECR+4, "port"),
		desc("MMFAOCR", regMMFAECR+8, "port"),
		desc("MMFCRXR", regMMFAECR+12, "port"),
		desc("MMFCTXR", regMMFAECR+16, "port"),
		desc("MMHCR", regMMFAECR+20, "port"),
		desc("PPSFPMR", regPPSFPMR, "port", bit("PSFPEN", 0), bit("VS", 1), bit("PVC", 2), bit("PVZC", 3)),
		desc("PSIDCAPR", regPSIDCAPR, "port", field("NUM", 0, 15)),
		desc("PSFCAPR", regPSFCAPR, "port", field("NUM", 0, 15)),
		desc("PSGCAPR", regPSGCAPR, "port", field("SGIT", 0, 15), field("GCL", 16, 18)),
		desc("PFMCAPR", regPFMCAPR, "port", field("NUM", 0, 15)),
	)
	for n := 0; n < 3; n++ {
		m = append(m,
			desc(fmt.Sprintf("PSIPMAR0(%d)", n), regPSIPMAR0(n), "port"),
			desc(fmt.Sprintf("PSIPMAR1(%d)", n), regPSIPMAR1(n), "port", field("ADDR", 0, 15)),
			desc(fmt.Sprintf("PSICFGR0(%d)", n), regPSICFGR0(n), "port", field("NUM_TX_BDR", 0, 7), bit("VTE", 12), bit("SIVIE", 14), bit("ASE", 15), field("NUM_RX_BDR", 16, 23), field("SIVC", 24, 31)),
		)
	}
	for n := 0; n < 4; n++ {
		m = append(m, desc(fmt.Sprintf("PICDR(%d)", n), regPICDR(n), "port"))
	}
	for n := 0; n < prssk_WORDS; n++ {
		m = append(m, desc(fmt.Sprintf("PRSSK(%d)", n), regPRSSK(n), "port"))
	}
	for n := 0; n < 8; n++ {
		m = append(m, desc(fmt.Sprintf("PTCMSDUR(%d)", n), regPTCMSDUR(n), "port"))
	}
	for n := 0; n < tsnTrafficClasses; n++ {
		m = append(m,
			desc(fmt.Sprintf("PTCCBSR0(%d)", n), regPTCCBSR0(n), "port", field("BW", 0, 6), bit("CBSE", 31)),
			desc(fmt.Sprintf("PTCCBSR1(%d)", n), regPTCCBSR1(n), "port"),
			desc(fmt.Sprintf("PTCFPR(%d)", n), regPTCFPR(n), "port", bit("FPE", 31)),
		)
	}
	cmd := []driver.RegField{bit("TX_EN", 0), bit("RX_EN", 1), bit("PROMIS", 4), bit("CRC_FWD", 6), bit("PAUSE_IGN", 8), bit("XGLP", 10), bit("TXP", 11), bit("PHY_TX_EN", 15)}
	ifm := []driver.RegField{field("IFMODE", 0, 1), bit("RG", 2), bit("FULL_DPX", 12), field("SSP", 13, 14), bit("EN_AUTO", 15)}
	m = append(m,
		desc("PM0_CMD_CFG", regPM0_CMD_CFG, "mac", cmd...),
		desc("PM1_CMD_CFG", regPM1_CMD_CFG, "mac", cmd...),
		desc("PM0_MAXFRM", regPM0_MAXFRM, "mac", field("MAXFRM", 0, 15)),
		desc("PM0_RX_FIFO", regPM0_RX_FIFO, "mac"),
		desc("PM0_PAUSE_QUANTA", regPM0_PAUSE_QUANTA, "mac"),
		desc("PM0_PAUSE_THRESH", regPM0_PAUSE_THRESH, "mac"),
		desc("PM0_STAT_CONFIG", regPM0_STAT_CONFIG, "mac"),
		desc("PM0_IF_MODE", regPM0_IF_MODE, "mac", ifm...),
		desc("PM1_IF_MODE", regPM1_IF_MODE, "mac", ifm...),
		desc("PM0_STATUS", regPM0_STATUS, "mac", bit("LINK", 16), field("SPEED", 17, 18), bit("DUPLEX", 19)),
	)
	for _, c := range macCounters {
		m = append(m, desc(c.name, c.off, "mac-stats"))
	}
	mdioCfg := []driver.RegField{bit("BSY", 0), bit("RD_ER", 1), field("HOLD", 2, 4), bit("ENC45", 6), field("CLKDIV", 8, 15), bit("NEG", 23)}
	mdioCtl := []driver.RegField{field("DEV_ADDR", 0, 4), field("PORT_ADDR", 5, 9), bit("READ", 15)}
	for _, b := range []struct {
		prefix string
		base   uint32
	}{{"EMDIO", regEMDIO}, {"IMDIO", regIMDIO}} {
		m = append(m,
			desc(b.prefix+"_CFG", b.base+regMDIO_CFG, "mdio", mdioCfg...),
			desc(b.prefix+"_CTL", b.base+regMDIO_CTL, "mdio", mdioCtl...),
			desc(b.prefix+"_DATA", b.base+regMDIO_DATA, "mdio", field("DATA", 0, 15)),
			desc(b.prefix+"_ADDR", b.base+regMDIO_ADDR, "mdio", field("ADDR", 0, 15)),
		)
	}
	m = append(m,
		desc("G_EIPBRR0", regG_EIPBRR0, "global"),
		desc("G_EIPBRR1", regG_EIPBRR1, "global"),
	)
	return m
}

// macCounters are the eMAC (PM0) counters by reference name (§2.8).
var macCounters = []struct {
	name string
	off  uint32
}{
	{"REOCT", regPM0_REOCT}, {"RALN", regPM0_RALN}, {"RXPF", regPM0_RXPF}, {"RFRM", regPM0_RFRM},
	{"RFCS", regPM0_RFCS}, {"RVLAN", regPM0_RVLAN}, {"RERR", regPM0_RERR}, {"RUCA", regPM0_RUCA},
	{"RMCA", regPM0_RMCA}, {"RBCA", regPM0_RBCA}, {"RDRP", regPM0_RDRP}, {"RPKT", regPM0_RPKT},
	{"RUND", regPM0_RUND}, {"ROVR", regPM0_ROVR}, {"RJBR", regPM0_RJBR}, {"RFRG", regPM0_RFRG},
	{"RCNP", regPM0_RCNP}, {"RDRNTP", regPM0_RDRNTP},
	{"TEOCT", regPM0_TEOCT}, {"TOCT", regPM0_TOCT}, {"TCRSE", regPM0_TCRSE}, {"TXPF", regPM0_TXPF},
	{"TFRM", regPM0_TFRM}, {"TFCS", regPM0_TFCS}, {"TVLAN", regPM0_TVLAN}, {"TERR", regPM0_TERR},
	{"TUCA", regPM0_TUCA}, {"TMCA", regPM0_TMCA}, {"TBCA", regPM0_TBCA}, {"TPKT", regPM0_TPKT},
	{"TUND", regPM0_TUND}, {"TCNP", regPM0_TCNP},
}

// siCounters are the SI counters by reference name (64-bit).
var siCounters = []struct {
	name string
	off  uint32
}{
	{"SIROCT", regSIROCT}, {"SIRFRM", regSIRFRM}, {"SIRUCA", regSIRUCA}, {"SIRMCA", regSIRMCA},
	{"SITOCT", regSITOCT}, {"SITFRM", regSITFRM}, {"SITUCA", regSITUCA}, {"SITMCA", regSITMCA},
}

// ProbeRegisterMap is RegisterMap for a device no driver has opened, read
// through w (BAR0): the ring counts come from SICAPR0, a VF (a BAR0 of the
// SI block only) gets no PF-only registers, and the MDIO block is left out
// (reading MDIO_DATA may start a transaction). Every register it lists can
// be read once without changing the device.
func ProbeRegisterMap(w driver.Regs) []driver.RegDesc {
	capr := w.Read32(regSICAPR0)
	tx := int(capr >> sicapr0_TXBDR_SHIFT & sicapr0_BDR_MASK)
	rx := int(capr >> sicapr0_RXBDR_SHIFT & sicapr0_BDR_MASK)
	pf := w.Size() > vfBAR0Min
	var out []driver.RegDesc
	for _, r := range RegisterMap(tx, rx) {
		if (pfOnly(r) && !pf) || r.Block == "mdio" {
			continue
		}
		out = append(out, r)
	}
	return out
}

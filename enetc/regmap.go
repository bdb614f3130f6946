package enetc

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
)

// RegDesc describes one 32-bit register of BAR0 by the hardware reference's
// name: where it is, which block it belongs to, and its known fields.
type RegDesc struct {
	Name   string
	Offset uint32
	// Block is "si", "cbdr", "si-stats", "tx-ring", "rx-ring", "port",
	// "mac", "mac-stats", "mdio" or "global". Port, MAC, MDIO and global
	// registers exist on a PF only.
	Block  string
	Fields []Field
}

// Field is a bit field [Lo, Hi] of a register.
type Field struct {
	Name   string
	Lo, Hi uint
}

// PFOnly reports whether the register lies outside the SI block (a VF's
// BAR0 has only the SI block).
func (d RegDesc) PFOnly() bool { return d.Offset >= portBase }

func bit(name string, b uint) Field { return Field{name, b, b} }

// RegisterMap lists the registers the driver knows, with the per-ring
// registers of txRings TX and rxRings RX rings. Indexed registers are named
// NAME(n) as the reference writes them (TBMR(0), PSIPMAR0(0), PRSSK(3)).
// The bring-up tool dumps it; a test checks it against the device model's
// own transcription of the reference.
func RegisterMap(txRings, rxRings int) []RegDesc {
	m := []RegDesc{
		{"SIMR", regSIMR, "si", []Field{bit("RSSE", 0), bit("EN", 31)}},
		{"SICTR0", regSICTR0, "si", nil},
		{"SICTR1", regSICTR1, "si", nil},
		{"SIPCAPR0", regSIPCAPR0, "si", []Field{bit("RFS", 2), bit("QBU", 3), bit("QBV", 4), bit("RSS", 8), bit("PSFP", 9)}},
		{"SIPCAPR1", regSIPCAPR1, "si", nil},
		{"SIRBGCR", regSIRBGCR, "si", nil},
		{"SICAR0", regSICAR0, "si", nil},
		{"SICAR1", regSICAR1, "si", nil},
		{"SICAR2", regSICAR2, "si", nil},
		{"SIPMAR0", regSIPMAR0, "si", nil},
		{"SIPMAR1", regSIPMAR1, "si", []Field{{"ADDR", 0, 15}}},
		{"SICAPR0", regSICAPR0, "si", []Field{{"NUM_TX_BDR", 0, 7}, {"NUM_RX_BDR", 16, 23}}},
		{"SICAPR1", regSICAPR1, "si", nil},
		{"SITXIDR", regSITXIDR, "si", nil},
		{"SIRXIDR", regSIRXIDR, "si", nil},
		{"SIRFSCAPR", regSIRFSCAPR, "si", []Field{{"NUM_RFS", 0, 6}}},
		{"SIRSSCAPR", regSIRSSCAPR, "si", []Field{{"SIZE", 0, 3}}},

		{"SICBDRMR", regSICBDRMR, "cbdr", []Field{bit("EN", 31)}},
		{"SICBDRSR", regSICBDRSR, "cbdr", nil},
		{"SICBDRBAR0", regSICBDRBAR0, "cbdr", nil},
		{"SICBDRBAR1", regSICBDRBAR1, "cbdr", nil},
		{"SICBDRPIR", regSICBDRPIR, "cbdr", nil},
		{"SICBDRCIR", regSICBDRCIR, "cbdr", nil},
		{"SICBDRLENR", regSICBDRLENR, "cbdr", nil},
	}
	for _, c := range []struct {
		n   string
		off uint32
	}{{"SIROCT", regSIROCT}, {"SIRFRM", regSIRFRM}, {"SIRUCA", regSIRUCA}, {"SIRMCA", regSIRMCA},
		{"SITOCT", regSITOCT}, {"SITFRM", regSITFRM}, {"SITUCA", regSITUCA}, {"SITMCA", regSITMCA}} {
		m = append(m, RegDesc{c.n, c.off, "si-stats", nil})
	}
	for n := 0; n < txRings; n++ {
		for _, r := range []struct {
			name string
			off  uint32
			f    []Field
		}{
			{"TBMR", regTBMR, []Field{{"PRIO", 0, 2}, bit("VIH", 9), bit("EN", 31)}},
			{"TBSR", regTBSR, []Field{bit("BUSY", 0)}},
			{"TBBAR0", regTBBAR0, nil}, {"TBBAR1", regTBBAR1, nil},
			{"TBPIR", regTBPIR, []Field{{"INDEX", 0, 15}}},
			{"TBCIR", regTBCIR, []Field{{"INDEX", 0, 15}}},
			{"TBLENR", regTBLENR, nil},
			{"TBIER", regTBIER, []Field{bit("TXTIE", 0)}},
			{"TBIDR", regTBIDR, nil},
			{"TBICR0", regTBICR0, []Field{{"ICPT", 0, 3}, bit("ICEN", 31)}},
			{"TBICR1", regTBICR1, nil},
		} {
			m = append(m, RegDesc{fmt.Sprintf("%s(%d)", r.name, n), txRingReg(n, r.off), "tx-ring", r.f})
		}
	}
	for n := 0; n < rxRings; n++ {
		for _, r := range []struct {
			name string
			off  uint32
			f    []Field
		}{
			{"RBMR", regRBMR, []Field{bit("BDS", 2), bit("CM", 4), bit("VTE", 5), bit("EN", 31)}},
			{"RBSR", regRBSR, nil},
			{"RBBSR", regRBBSR, []Field{{"SIZE", 0, 15}}},
			{"RBCIR", regRBCIR, []Field{{"INDEX", 0, 15}}},
			{"RBBAR0", regRBBAR0, nil}, {"RBBAR1", regRBBAR1, nil},
			{"RBPIR", regRBPIR, []Field{{"INDEX", 0, 15}}},
			{"RBLENR", regRBLENR, nil},
			{"RBDCR", regRBDCR, nil},
			{"RBIER", regRBIER, []Field{bit("RXTIE", 0)}},
			{"RBIDR", regRBIDR, nil},
			{"RBICR0", regRBICR0, []Field{{"ICPT", 0, 8}, bit("ICEN", 31)}},
			{"RBICR1", regRBICR1, nil},
		} {
			m = append(m, RegDesc{fmt.Sprintf("%s(%d)", r.name, n), rxRingReg(n, r.off), "rx-ring", r.f})
		}
	}
	m = append(m,
		RegDesc{"PMR", regPMR, "port", []Field{{"PSPEED", 8, 11}, {"EN", 16, 18}}},
		RegDesc{"PSR", regPSR, "port", nil},
		RegDesc{"PSIPMR", regPSIPMR, "port", []Field{{"UP", 0, 2}, {"MP", 16, 18}}},
		RegDesc{"PSIPVMR", regPSIPVMR, "port", []Field{{"VP", 0, 2}, {"VUTA", 16, 18}}},
		RegDesc{"PVCLCTR", regPVCLCTR, "port", nil},
		RegDesc{"PTXMBAR", regPTXMBAR, "port", nil},
		RegDesc{"PBFDSIR", regPBFDSIR, "port", nil},
		RegDesc{"PFDMSAPR", regPFDMSAPR, "port", nil},
		RegDesc{"PCAPR0", regPCAPR0, "port", []Field{bit("IMDIO", 11), {"NUM_TX_BDR", 16, 23}, {"NUM_RX_BDR", 24, 31}}},
		RegDesc{"PCAPR1", regPCAPR1, "port", nil},
		RegDesc{"PRSSCAPR", regPRSSCAPR, "port", []Field{{"SIZE", 0, 3}}},
		RegDesc{"UFDMF", regUFDMF, "port", nil},
		RegDesc{"MFDMF", regMFDMF, "port", nil},
		RegDesc{"PRFSMR", regPRFSMR, "port", []Field{bit("RFSE", 31)}},
		RegDesc{"PRFSCAPR", regPRFSCAPR, "port", nil},
		RegDesc{"PFPMR", regPFPMR, "port", []Field{bit("MWLM", 0), bit("PMACE", 1)}},
		RegDesc{"PAR_PORT_CFG", regPAR_PORT, "port", []Field{bit("L3CKSUM", 0), bit("L4CKSUM", 1)}},
		RegDesc{"PTGCR", regPTGCR, "port", []Field{bit("TGPE", 30), bit("TGE", 31)}},
		RegDesc{"PTGCAPR", regPTGCAPR, "port", []Field{{"MAX_GCL_LEN", 0, 15}}},
		RegDesc{"MMCSR", regMMCSR, "port", []Field{bit("LPS", 0), bit("LPE", 1), bit("LPA", 2), {"RAFS", 8, 9}, bit("ME", 16), bit("VDIS", 17), {"VSTS", 18, 20}, {"TXSTS", 21, 22}, {"VT", 23, 29}, bit("LINK_FAIL", 31)}},
		RegDesc{"MMFAECR", regMMFAECR, "port", nil},
		RegDesc{"MMFSECR", regMMFAECR + 4, "port", nil},
		RegDesc{"MMFAOCR", regMMFAECR + 8, "port", nil},
		RegDesc{"MMFCRXR", regMMFAECR + 12, "port", nil},
		RegDesc{"MMFCTXR", regMMFAECR + 16, "port", nil},
		RegDesc{"MMHCR", regMMFAECR + 20, "port", nil},
	)
	for n := 0; n < 3; n++ {
		m = append(m,
			RegDesc{fmt.Sprintf("PSIPMAR0(%d)", n), regPSIPMAR0(n), "port", nil},
			RegDesc{fmt.Sprintf("PSIPMAR1(%d)", n), regPSIPMAR1(n), "port", []Field{{"ADDR", 0, 15}}},
			RegDesc{fmt.Sprintf("PSICFGR0(%d)", n), regPSICFGR0(n), "port", []Field{{"NUM_TX_BDR", 0, 7}, bit("VTE", 12), bit("SIVIE", 14), bit("ASE", 15), {"NUM_RX_BDR", 16, 23}, {"SIVC", 24, 31}}},
		)
	}
	for n := 0; n < 4; n++ {
		m = append(m, RegDesc{fmt.Sprintf("PICDR(%d)", n), regPICDR(n), "port", nil})
	}
	for n := 0; n < prssk_WORDS; n++ {
		m = append(m, RegDesc{fmt.Sprintf("PRSSK(%d)", n), regPRSSK(n), "port", nil})
	}
	for n := 0; n < 8; n++ {
		m = append(m, RegDesc{fmt.Sprintf("PTCMSDUR(%d)", n), regPTCMSDUR(n), "port", nil})
	}
	for n := 0; n < tsnTrafficClasses; n++ {
		m = append(m,
			RegDesc{fmt.Sprintf("PTCCBSR0(%d)", n), regPTCCBSR0(n), "port", []Field{{"BW", 0, 6}, bit("CBSE", 31)}},
			RegDesc{fmt.Sprintf("PTCCBSR1(%d)", n), regPTCCBSR1(n), "port", nil},
			RegDesc{fmt.Sprintf("PTCFPR(%d)", n), regPTCFPR(n), "port", []Field{bit("FPE", 31)}},
		)
	}
	cmd := []Field{bit("TX_EN", 0), bit("RX_EN", 1), bit("PROMIS", 4), bit("CRC_FWD", 6), bit("PAUSE_IGN", 8), bit("XGLP", 10), bit("TXP", 11), bit("PHY_TX_EN", 15)}
	ifm := []Field{{"IFMODE", 0, 1}, bit("RG", 2), bit("FULL_DPX", 12), {"SSP", 13, 14}, bit("EN_AUTO", 15)}
	m = append(m,
		RegDesc{"PM0_CMD_CFG", regPM0_CMD_CFG, "mac", cmd},
		RegDesc{"PM1_CMD_CFG", regPM1_CMD_CFG, "mac", cmd},
		RegDesc{"PM0_MAXFRM", regPM0_MAXFRM, "mac", []Field{{"MAXFRM", 0, 15}}},
		RegDesc{"PM0_RX_FIFO", regPM0_RX_FIFO, "mac", nil},
		RegDesc{"PM0_PAUSE_QUANTA", regPM0_PAUSE_QUANTA, "mac", nil},
		RegDesc{"PM0_PAUSE_THRESH", regPM0_PAUSE_THRESH, "mac", nil},
		RegDesc{"PM0_STAT_CONFIG", regPM0_STAT_CONFIG, "mac", nil},
		RegDesc{"PM0_IF_MODE", regPM0_IF_MODE, "mac", ifm},
		RegDesc{"PM1_IF_MODE", regPM1_IF_MODE, "mac", ifm},
		RegDesc{"PM0_STATUS", regPM0_STATUS, "mac", []Field{bit("LINK", 16), {"SPEED", 17, 18}, bit("DUPLEX", 19)}},
	)
	for _, c := range macCounters {
		m = append(m, RegDesc{c.name, c.off, "mac-stats", nil})
	}
	mdioCfg := []Field{bit("BSY", 0), bit("RD_ER", 1), {"HOLD", 2, 4}, bit("ENC45", 6), {"CLKDIV", 8, 15}, bit("NEG", 23)}
	mdioCtl := []Field{{"DEV_ADDR", 0, 4}, {"PORT_ADDR", 5, 9}, bit("READ", 15)}
	for _, b := range []struct {
		prefix string
		base   uint32
	}{{"EMDIO", regEMDIO}, {"IMDIO", regIMDIO}} {
		m = append(m,
			RegDesc{b.prefix + "_CFG", b.base + regMDIO_CFG, "mdio", mdioCfg},
			RegDesc{b.prefix + "_CTL", b.base + regMDIO_CTL, "mdio", mdioCtl},
			RegDesc{b.prefix + "_DATA", b.base + regMDIO_DATA, "mdio", []Field{{"DATA", 0, 15}}},
			RegDesc{b.prefix + "_ADDR", b.base + regMDIO_ADDR, "mdio", []Field{{"ADDR", 0, 15}}},
		)
	}
	m = append(m,
		RegDesc{"G_EIPBRR0", regG_EIPBRR0, "global", nil},
		RegDesc{"G_EIPBRR1", regG_EIPBRR1, "global", nil},
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
func ProbeRegisterMap(w driver.Regs) []RegDesc {
	capr := w.Read32(regSICAPR0)
	tx := int(capr >> sicapr0_TXBDR_SHIFT & sicapr0_BDR_MASK)
	rx := int(capr >> sicapr0_RXBDR_SHIFT & sicapr0_BDR_MASK)
	pf := w.Size() > vfBAR0Min
	var out []RegDesc
	for _, r := range RegisterMap(tx, rx) {
		if (r.PFOnly() && !pf) || r.Block == "mdio" {
			continue
		}
		out = append(out, r)
	}
	return out
}

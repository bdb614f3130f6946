package enetc

import "fmt"

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
		{"SIMR", SIMR, "si", []Field{bit("RSSE", 0), bit("EN", 31)}},
		{"SICTR0", SICTR0, "si", nil},
		{"SICTR1", SICTR1, "si", nil},
		{"SIPCAPR0", SIPCAPR0, "si", []Field{bit("RFS", 2), bit("QBU", 3), bit("QBV", 4), bit("RSS", 8), bit("PSFP", 9)}},
		{"SIPCAPR1", SIPCAPR1, "si", nil},
		{"SIRBGCR", SIRBGCR, "si", nil},
		{"SICAR0", SICAR0, "si", nil},
		{"SICAR1", SICAR1, "si", nil},
		{"SICAR2", SICAR2, "si", nil},
		{"SIPMAR0", SIPMAR0, "si", nil},
		{"SIPMAR1", SIPMAR1, "si", []Field{{"ADDR", 0, 15}}},
		{"SICAPR0", SICAPR0, "si", []Field{{"NUM_TX_BDR", 0, 7}, {"NUM_RX_BDR", 16, 23}}},
		{"SICAPR1", SICAPR1, "si", nil},
		{"SITXIDR", SITXIDR, "si", nil},
		{"SIRXIDR", SIRXIDR, "si", nil},
		{"SIRFSCAPR", SIRFSCAPR, "si", []Field{{"NUM_RFS", 0, 6}}},
		{"SIRSSCAPR", SIRSSCAPR, "si", []Field{{"SIZE", 0, 3}}},

		{"SICBDRMR", SICBDRMR, "cbdr", []Field{bit("EN", 31)}},
		{"SICBDRSR", SICBDRSR, "cbdr", nil},
		{"SICBDRBAR0", SICBDRBAR0, "cbdr", nil},
		{"SICBDRBAR1", SICBDRBAR1, "cbdr", nil},
		{"SICBDRPIR", SICBDRPIR, "cbdr", nil},
		{"SICBDRCIR", SICBDRCIR, "cbdr", nil},
		{"SICBDRLENR", SICBDRLENR, "cbdr", nil},
	}
	for _, c := range []struct {
		n   string
		off uint32
	}{{"SIROCT", SIROCT}, {"SIRFRM", SIRFRM}, {"SIRUCA", SIRUCA}, {"SIRMCA", SIRMCA},
		{"SITOCT", SITOCT}, {"SITFRM", SITFRM}, {"SITUCA", SITUCA}, {"SITMCA", SITMCA}} {
		m = append(m, RegDesc{c.n, c.off, "si-stats", nil})
	}
	for n := 0; n < txRings; n++ {
		for _, r := range []struct {
			name string
			off  uint32
			f    []Field
		}{
			{"TBMR", TBMR, []Field{{"PRIO", 0, 2}, bit("VIH", 9), bit("EN", 31)}},
			{"TBSR", TBSR, []Field{bit("BUSY", 0)}},
			{"TBBAR0", TBBAR0, nil}, {"TBBAR1", TBBAR1, nil},
			{"TBPIR", TBPIR, []Field{{"INDEX", 0, 15}}},
			{"TBCIR", TBCIR, []Field{{"INDEX", 0, 15}}},
			{"TBLENR", TBLENR, nil},
			{"TBIER", TBIER, []Field{bit("TXTIE", 0)}},
			{"TBIDR", TBIDR, nil},
			{"TBICR0", TBICR0, []Field{{"ICPT", 0, 3}, bit("ICEN", 31)}},
			{"TBICR1", TBICR1, nil},
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
			{"RBMR", RBMR, []Field{bit("BDS", 2), bit("CM", 4), bit("VTE", 5), bit("EN", 31)}},
			{"RBSR", RBSR, nil},
			{"RBBSR", RBBSR, []Field{{"SIZE", 0, 15}}},
			{"RBCIR", RBCIR, []Field{{"INDEX", 0, 15}}},
			{"RBBAR0", RBBAR0, nil}, {"RBBAR1", RBBAR1, nil},
			{"RBPIR", RBPIR, []Field{{"INDEX", 0, 15}}},
			{"RBLENR", RBLENR, nil},
			{"RBDCR", RBDCR, nil},
			{"RBIER", RBIER, []Field{bit("RXTIE", 0)}},
			{"RBIDR", RBIDR, nil},
			{"RBICR0", RBICR0, []Field{{"ICPT", 0, 8}, bit("ICEN", 31)}},
			{"RBICR1", RBICR1, nil},
		} {
			m = append(m, RegDesc{fmt.Sprintf("%s(%d)", r.name, n), rxRingReg(n, r.off), "rx-ring", r.f})
		}
	}
	m = append(m,
		RegDesc{"PMR", PMR, "port", []Field{{"PSPEED", 8, 11}, {"EN", 16, 18}}},
		RegDesc{"PSR", PSR, "port", nil},
		RegDesc{"PSIPMR", PSIPMR, "port", []Field{{"UP", 0, 2}, {"MP", 16, 18}}},
		RegDesc{"PSIPVMR", PSIPVMR, "port", []Field{{"VP", 0, 2}, {"VUTA", 16, 18}}},
		RegDesc{"PVCLCTR", PVCLCTR, "port", nil},
		RegDesc{"PTXMBAR", PTXMBAR, "port", nil},
		RegDesc{"PBFDSIR", PBFDSIR, "port", nil},
		RegDesc{"PFDMSAPR", PFDMSAPR, "port", nil},
		RegDesc{"PCAPR0", PCAPR0, "port", []Field{bit("IMDIO", 11), {"NUM_TX_BDR", 16, 23}, {"NUM_RX_BDR", 24, 31}}},
		RegDesc{"PCAPR1", PCAPR1, "port", nil},
		RegDesc{"PRSSCAPR", PRSSCAPR, "port", []Field{{"SIZE", 0, 3}}},
		RegDesc{"UFDMF", UFDMF, "port", nil},
		RegDesc{"MFDMF", MFDMF, "port", nil},
		RegDesc{"PRFSMR", PRFSMR, "port", []Field{bit("RFSE", 31)}},
		RegDesc{"PRFSCAPR", PRFSCAPR, "port", nil},
		RegDesc{"PFPMR", PFPMR, "port", []Field{bit("MWLM", 0), bit("PMACE", 1)}},
		RegDesc{"PAR_PORT_CFG", PAR_PORT, "port", []Field{bit("L3CKSUM", 0), bit("L4CKSUM", 1)}},
	)
	for n := 0; n < 3; n++ {
		m = append(m,
			RegDesc{fmt.Sprintf("PSIPMAR0(%d)", n), psipmar0(n), "port", nil},
			RegDesc{fmt.Sprintf("PSIPMAR1(%d)", n), psipmar1(n), "port", []Field{{"ADDR", 0, 15}}},
			RegDesc{fmt.Sprintf("PSICFGR0(%d)", n), psicfgr0(n), "port", []Field{{"NUM_TX_BDR", 0, 7}, bit("VTE", 12), bit("SIVIE", 14), bit("ASE", 15), {"NUM_RX_BDR", 16, 23}, {"SIVC", 24, 31}}},
		)
	}
	for n := 0; n < 4; n++ {
		m = append(m, RegDesc{fmt.Sprintf("PICDR(%d)", n), picdr(n), "port", nil})
	}
	for n := 0; n < PRSSK_WORDS; n++ {
		m = append(m, RegDesc{fmt.Sprintf("PRSSK(%d)", n), prssk(n), "port", nil})
	}
	for n := 0; n < 8; n++ {
		m = append(m, RegDesc{fmt.Sprintf("PTCMSDUR(%d)", n), ptcmsdur(n), "port", nil})
	}
	cmd := []Field{bit("TX_EN", 0), bit("RX_EN", 1), bit("PROMIS", 4), bit("CRC_FWD", 6), bit("PAUSE_IGN", 8), bit("XGLP", 10), bit("TXP", 11), bit("PHY_TX_EN", 15)}
	ifm := []Field{{"IFMODE", 0, 1}, bit("RG", 2), bit("FULL_DPX", 12), {"SSP", 13, 14}, bit("EN_AUTO", 15)}
	m = append(m,
		RegDesc{"PM0_CMD_CFG", PM0_CMD_CFG, "mac", cmd},
		RegDesc{"PM1_CMD_CFG", PM1_CMD_CFG, "mac", cmd},
		RegDesc{"PM0_MAXFRM", PM0_MAXFRM, "mac", []Field{{"MAXFRM", 0, 15}}},
		RegDesc{"PM0_RX_FIFO", PM0_RX_FIFO, "mac", nil},
		RegDesc{"PM0_PAUSE_QUANTA", PM0_PAUSE_QUANTA, "mac", nil},
		RegDesc{"PM0_PAUSE_THRESH", PM0_PAUSE_THRESH, "mac", nil},
		RegDesc{"PM0_STAT_CONFIG", PM0_STAT_CONFIG, "mac", nil},
		RegDesc{"PM0_IF_MODE", PM0_IF_MODE, "mac", ifm},
		RegDesc{"PM1_IF_MODE", PM1_IF_MODE, "mac", ifm},
		RegDesc{"PM0_STATUS", PM0_STATUS, "mac", []Field{bit("LINK", 16), {"SPEED", 17, 18}, bit("DUPLEX", 19)}},
	)
	for _, c := range macCounters {
		m = append(m, RegDesc{c.name, c.off, "mac-stats", nil})
	}
	mdioCfg := []Field{bit("BSY", 0), bit("RD_ER", 1), {"HOLD", 2, 4}, bit("ENC45", 6), {"CLKDIV", 8, 15}, bit("NEG", 23)}
	mdioCtl := []Field{{"DEV_ADDR", 0, 4}, {"PORT_ADDR", 5, 9}, bit("READ", 15)}
	for _, b := range []struct {
		prefix string
		base   uint32
	}{{"EMDIO", EMDIO}, {"IMDIO", IMDIO}} {
		m = append(m,
			RegDesc{b.prefix + "_CFG", b.base + MDIO_CFG, "mdio", mdioCfg},
			RegDesc{b.prefix + "_CTL", b.base + MDIO_CTL, "mdio", mdioCtl},
			RegDesc{b.prefix + "_DATA", b.base + MDIO_DATA, "mdio", []Field{{"DATA", 0, 15}}},
			RegDesc{b.prefix + "_ADDR", b.base + MDIO_ADDR, "mdio", []Field{{"ADDR", 0, 15}}},
		)
	}
	m = append(m,
		RegDesc{"G_EIPBRR0", G_EIPBRR0, "global", nil},
		RegDesc{"G_EIPBRR1", G_EIPBRR1, "global", nil},
	)
	return m
}

// macCounters are the eMAC (PM0) counters by reference name (§2.8).
var macCounters = []struct {
	name string
	off  uint32
}{
	{"REOCT", PM0_REOCT}, {"RALN", PM0_RALN}, {"RXPF", PM0_RXPF}, {"RFRM", PM0_RFRM},
	{"RFCS", PM0_RFCS}, {"RVLAN", PM0_RVLAN}, {"RERR", PM0_RERR}, {"RUCA", PM0_RUCA},
	{"RMCA", PM0_RMCA}, {"RBCA", PM0_RBCA}, {"RDRP", PM0_RDRP}, {"RPKT", PM0_RPKT},
	{"RUND", PM0_RUND}, {"ROVR", PM0_ROVR}, {"RJBR", PM0_RJBR}, {"RFRG", PM0_RFRG},
	{"RCNP", PM0_RCNP}, {"RDRNTP", PM0_RDRNTP},
	{"TEOCT", PM0_TEOCT}, {"TOCT", PM0_TOCT}, {"TCRSE", PM0_TCRSE}, {"TXPF", PM0_TXPF},
	{"TFRM", PM0_TFRM}, {"TFCS", PM0_TFCS}, {"TVLAN", PM0_TVLAN}, {"TERR", PM0_TERR},
	{"TUCA", PM0_TUCA}, {"TMCA", PM0_TMCA}, {"TBCA", PM0_TBCA}, {"TPKT", PM0_TPKT},
	{"TUND", PM0_TUND}, {"TCNP", PM0_TCNP},
}

// siCounters are the SI counters by reference name (64-bit).
var siCounters = []struct {
	name string
	off  uint32
}{
	{"SIROCT", SIROCT}, {"SIRFRM", SIRFRM}, {"SIRUCA", SIRUCA}, {"SIRMCA", SIRMCA},
	{"SITOCT", SITOCT}, {"SITFRM", SITFRM}, {"SITUCA", SITUCA}, {"SITMCA", SITMCA},
}

package model

// Field returns a register bit or field mask of the model's transcription by
// the reference's name, REGISTER.FIELD ("SIMR.EN", "PM0_CMD_CFG.TX_EN",
// "MDIO_CFG.BSY" for both MDIO blocks), so that a driver's tests can compare
// their own transcription with the model's without the model exporting its
// constants; ok is false for a name the model does not define.
func Field(name string) (v uint64, ok bool) {
	v, ok = fields[name]
	return v, ok
}

var fields = map[string]uint64{
	"SIMR.EN":               simr_EN,
	"SIMR.RSSE":             simr_RSSE,
	"SIPCAPR0.RSS":          sipcapr0_RSS,
	"SICBDRMR.EN":           sicbdrmr_EN,
	"TBMR.EN":               tbmr_EN,
	"TBSR.BUSY":             tbsr_BUSY,
	"TBCIR.INDEX":           tbcir_IDX_MASK,
	"RBMR.EN":               rbmr_EN,
	"RBMR.VTE":              rbmr_VTE,
	"RBMR.CM":               rbmr_CM,
	"RBMR.BDS":              rbmr_BDS,
	"RBBSR.SIZE":            rbbsr_MASK,
	"PMR.SI0EN":             pmr_SI0EN,
	"PMR.EN":                pmr_EN,
	"PSIPMR.UP0":            psipmr_UP0,
	"PSIPMR.MP0":            psipmr_MP0,
	"PCAPR0.IMDIO":          pcapr0_IMDIO,
	"PM0_STAT_CONFIG.CLEAR": pm0_stat_config_CLEAR,
	"PM0_STATUS.LINK":       pm0_status_LINK,
	"PM0_STATUS.SPEED":      pm0_status_SPEED,
	"PM0_STATUS.DUPLEX":     pm0_status_FULLDX,
	"PM0_MAXFRM.MAXFRM":     pm0_maxfrm_MASK,
	"MDIO_CFG.BSY":          mdio_cfg_BSY,
	"MDIO_CFG.RD_ER":        mdio_cfg_RD_ER,
	"MDIO_CFG.ENC45":        mdio_cfg_ENC45,
	"MDIO_CTL.READ":         mdio_ctl_READ,
	"PM0_CMD_CFG.TX_EN":     pm_cmd_cfg_TX_EN,
	"PM0_CMD_CFG.RX_EN":     pm_cmd_cfg_RX_EN,
	"PM0_CMD_CFG.PROMIS":    pm_cmd_cfg_PROMIS,
	"PM0_CMD_CFG.CRC_FWD":   pm_cmd_cfg_CRC_FWD,
	"PM0_CMD_CFG.PAUSE_IGN": pm_cmd_cfg_PAUSE_IGN,
	"PM0_CMD_CFG.XGLP":      pm_cmd_cfg_XGLP,
	"PM0_CMD_CFG.TXP":       pm_cmd_cfg_TXP,
	"PM0_CMD_CFG.PHY_TX_EN": pm_cmd_cfg_PHY_TX_EN,
}

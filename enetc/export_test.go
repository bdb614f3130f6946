package enetc

// Unexported layout constants, for the tests in package enetc_test that
// compare the driver's transcription of the reference with the model's.
const (
	BDSize      = bdSize
	BDRingAlign = bdRingAlign
	CBDSize     = cbdSize
	CBDClassRSS = cbdClassRSS
	CBDCmdSet   = cbdCmdSet
)

// PSIPMRUP and PSIPMRMP are the promiscuous bits of SI si in PSIPMR.
func PSIPMRUP(si int) uint32 { return psipmr_UP(si) }
func PSIPMRMP(si int) uint32 { return psipmr_MP(si) }

// Register and BD bits under the reference's names, for the tests in package
// enetc_test that compare the driver's transcription with the model's.
const (
	PCAPR0_IMDIO           = pcapr0_IMDIO
	PMR_EN                 = pmr_EN
	RBBSR_MAX              = rbbsr_MAX
	RBMR_BDS               = rbmr_BDS
	RBMR_CM                = rbmr_CM
	RBMR_EN                = rbmr_EN
	RBMR_VTE               = rbmr_VTE
	MDIO_ADDR              = regMDIO_ADDR
	MDIO_CFG               = regMDIO_CFG
	MDIO_CTL               = regMDIO_CTL
	MDIO_DATA              = regMDIO_DATA
	RXBD_FLAG_VLAN         = rxbd_FLAG_VLAN
	RXBD_LSTATUS_ERR_SHIFT = rxbd_LSTATUS_ERR_SHIFT
	RXBD_LSTATUS_F         = rxbd_LSTATUS_F
	RXBD_LSTATUS_R         = rxbd_LSTATUS_R
	RXBD_PARSE_ERROR       = rxbd_PARSE_ERROR
	SICBDRMR_EN            = sicbdrmr_EN
	SIMR_EN                = simr_EN
	SIMR_RSSE              = simr_RSSE
	SIPCAPR0_RSS           = sipcapr0_RSS
	TBCIR_IDX_MSK          = tbcir_IDX_MSK
	TBMR_EN                = tbmr_EN
	TBSR_BUSY              = tbsr_BUSY
	TXBD_FLAGS_EX          = txbd_FLAGS_EX
	TXBD_FLAGS_F           = txbd_FLAGS_F
	TXBD_FLAGS_W           = txbd_FLAGS_W
)
const (
	MDIO_CFG_BSY         = mdio_cfg_BSY
	MDIO_CFG_ENC45       = mdio_cfg_ENC45
	MDIO_CFG_RD_ER       = mdio_cfg_RD_ER
	MDIO_CTL_READ        = mdio_ctl_READ
	PM0_STATUS_LINK      = pm0_status_LINK
	PM_CMD_CFG_CRC_FWD   = pm_cmd_cfg_CRC_FWD
	PM_CMD_CFG_PAUSE_IGN = pm_cmd_cfg_PAUSE_IGN
	PM_CMD_CFG_PHY_TX_EN = pm_cmd_cfg_PHY_TX_EN
	PM_CMD_CFG_PROMIS    = pm_cmd_cfg_PROMIS
	PM_CMD_CFG_RX_EN     = pm_cmd_cfg_RX_EN
	PM_CMD_CFG_TXP       = pm_cmd_cfg_TXP
	PM_CMD_CFG_TX_EN     = pm_cmd_cfg_TX_EN
	PM_CMD_CFG_XGLP      = pm_cmd_cfg_XGLP
)

// MACHashBucket is the MAC hash filter's bucket of an address.
func MACHashBucket(addr []byte) uint { return macHashBucket(addr) }

// ConfigurePHY runs the PHY set-up New ran, again (a test changes the
// PHY behind the port first, as a boot loader would before New).
func ConfigurePHY(p *Port) error { return p.configurePHY() }

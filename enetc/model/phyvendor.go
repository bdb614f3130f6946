package model

// The AR8031/AR8033's vendor registers (the LS1028A-RDB's SGMII PHY,
// DefaultPHYID), the model's own transcription from the public driver
// (Linux drivers/net/phy/qcom/at803x.c, at803x.c before 6.8):
//   - register 31, chip configuration: bit 15 selects the copper page
//     (set) or the fiber/SGMII page (clear) for the standard registers;
//     bits 3..0 the strapped mode, 1 = copper to SGMII. On the fiber
//     page BMSR is the fiber side's, which carries no link on the RDB
//     (at8031_config_init: "some bootloaders leave the fiber page
//     selected", so Linux selects the copper page).
//   - registers 29 and 30: the address and data of a debug register;
//     debug 0 bit 15 is the RGMII RX clock delay (on after a hardware
//     reset), debug 5 bit 8 the TX clock delay (off after a reset), as
//     the driver's comment on their defaults says. A BMCR software
//     reset keeps them (the same comment: the TX delay "retains the
//     value before reset"), so only power-on loads them.

const (
	arChipCfgReg  = 31
	arCopperPage  = 1 << 15
	arModeSGMII   = 1
	arDebugAddr   = 29
	arDebugData   = 30
	arDebugRegs   = 32
	arDbgRxDelay  = 0
	arDbgRxBit    = 1 << 15
	arDbgTxDelay  = 5
	arDbgTxBit    = 1 << 8
	arDebugAddrMs = arDebugRegs - 1
)

func (p *phy) vendorReset() {
	p.chipCfg.Store(arCopperPage | arModeSGMII)
	p.dbgAddr.Store(0)
	for i := range p.dbg {
		p.dbg[i].Store(0)
	}
	p.dbg[arDbgRxDelay].Store(arDbgRxBit)
}

// copperPage reports whether the standard registers are the copper
// side's.
func (p *phy) copperPage() bool { return p.chipCfg.Load()&arCopperPage != 0 }

// vendor answers registers 29..31; ok is false for the others.
func (p *phy) vendor(reg int, write bool, v uint16) (uint16, bool) {
	switch reg {
	case arChipCfgReg:
		if write {
			p.chipCfg.Store(uint32(v))
		}
		return uint16(p.chipCfg.Load()), true
	case arDebugAddr:
		if write {
			p.dbgAddr.Store(uint32(v))
		}
		return uint16(p.dbgAddr.Load()), true
	case arDebugData:
		r := &p.dbg[p.dbgAddr.Load()&arDebugAddrMs]
		if write {
			r.Store(uint32(v))
		}
		return uint16(r.Load()), true
	}
	return 0, false
}

// PHYRGMIIDelays are the RGMII clock delays the PHY adds (its debug
// registers 0 and 5).
func (d *Device) PHYRGMIIDelays() (rx, tx bool) {
	return d.phy.dbg[arDbgRxDelay].Load()&arDbgRxBit != 0, d.phy.dbg[arDbgTxDelay].Load()&arDbgTxBit != 0
}

package model

// Vendor registers of the PHYs on the i.MX reference boards, each model's
// own transcription from the public PHY drivers (Linux
// drivers/net/phy/realtek, micrel.c; docs/hardware.md names the boards):
//   - RTL8211F (ids 0x001cc916 and 0x001cc878, i.MX93-EVK and
//     i.MX8MP-EVK): register 31 selects the page registers 16..30 sit
//     on; page 0xd08 holds the RGMII clock delays, register 17 bit 8 for
//     TX and register 21 bit 3 for RX. Their reset value follows the
//     part's strap pins (Config.RGMIIStrapDelays).
//   - KSZ8081 (id 0x0022156x, i.MX6UL-EVK): register 31 (PHY control 2)
//     bit 7 selects the RMII reference clock mode; reset value 0.
// Any other id keeps registers 16..31 as plain storage.

const (
	idRTL8211F   = 0x001cc916
	idRTL8211FVD = 0x001cc878
	idKSZ8081    = 0x00221560
	idKSZ8081Msk = 0x00fffff0

	rtlPageReg    = 31
	rtlDelayPage  = 0xd08
	rtlTxDelayReg = 17
	rtlTxDelayBit = 1 << 8
	rtlRxDelayReg = 21
	rtlRxDelayBit = 1 << 3
	rtlPagedFirst = 16
	rtlPagedLast  = 30

	kszCtrl2Reg    = 31
	kszRMIIClk50   = 1 << 7
	defaultPHYID   = uint32(phyIDHigh)<<16 | phyIDLow
	rtlPagedRegsNr = rtlPagedLast - rtlPagedFirst + 1
)

func (p *phy) isRTL8211F() bool { return p.id == idRTL8211F || p.id == idRTL8211FVD }

// vendorReset loads the vendor registers' reset values (p.mu held or not
// yet shared).
func (p *phy) vendorReset() {
	p.paged = map[uint32]*[rtlPagedRegsNr]uint16{}
	if p.isRTL8211F() && p.strapDelays {
		pg := p.page(rtlDelayPage)
		pg[rtlTxDelayReg-rtlPagedFirst] |= rtlTxDelayBit
		pg[rtlRxDelayReg-rtlPagedFirst] |= rtlRxDelayBit
	}
}

func (p *phy) page(n uint16) *[rtlPagedRegsNr]uint16 {
	pg := p.paged[uint32(n)]
	if pg == nil {
		pg = new([rtlPagedRegsNr]uint16)
		p.paged[uint32(n)] = pg
	}
	return pg
}

// vendorRead answers a vendor register; ok is false for a standard one
// (p.mu held).
func (p *phy) vendorRead(reg int) (uint16, bool) {
	if p.isRTL8211F() && reg >= rtlPagedFirst && reg <= rtlPagedLast {
		return p.page(p.regs[rtlPageReg])[reg-rtlPagedFirst], true
	}
	return 0, false
}

// vendorWrite takes a write to a vendor register; ok is false for a
// standard one (p.mu held).
func (p *phy) vendorWrite(reg int, v uint16) bool {
	if p.isRTL8211F() && reg >= rtlPagedFirst && reg <= rtlPagedLast {
		p.page(p.regs[rtlPageReg])[reg-rtlPagedFirst] = v
		return true
	}
	return false
}

// PHYRGMIIDelays are the RGMII clock delays the port's PHY adds (an
// RTL8211F: page 0xd08's delay bits); ok is false for another PHY.
func (d *Device) PHYRGMIIDelays() (rx, tx, ok bool) {
	p := &d.phy
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isRTL8211F() {
		return false, false, false
	}
	pg := p.page(rtlDelayPage)
	return pg[rtlRxDelayReg-rtlPagedFirst]&rtlRxDelayBit != 0, pg[rtlTxDelayReg-rtlPagedFirst]&rtlTxDelayBit != 0, true
}

// PHYRMII50MHz reports a KSZ8081's RMII reference clock select bit; ok is
// false for another PHY.
func (d *Device) PHYRMII50MHz() (set, ok bool) {
	p := &d.phy
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.id&idKSZ8081Msk != idKSZ8081 {
		return false, false
	}
	return p.regs[kszCtrl2Reg]&kszRMIIClk50 != 0, true
}

// HoldPHYReset drives the port's PHY's reset pin: while held the PHY
// answers no management frame; on release it starts
// from its reset values, whatever a boot loader had written into it.
// (The MAC's link follows the link partner, not this pin.)
func (d *Device) HoldPHYReset(held bool) {
	p := &d.phy
	p.mu.Lock()
	was := p.inReset
	p.inReset = held
	if was && !held {
		p.reset()
	}
	p.mu.Unlock()
}

// MACClockDelays are the RGMII clock delays the MAC itself adds (ECR
// TXC_DLY, RXC_DLY: the i.MX8QM only, Profile.DelayClocks).
func (d *Device) MACClockDelays() (tx, rx bool) {
	v := d.reg(regECR)
	return v&ecr_TXC_DLY != 0, v&ecr_RXC_DLY != 0
}

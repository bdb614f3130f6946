package enetc

import (
	"errors"
	"fmt"

	"github.com/gopmd/gopmd/internal/mii"
)

// PHY set-up (docs/hardware.md, "The PHY"): once selectPHY has chosen the
// port's PHY, it is named by its id and given what the kernel's driver
// for it programs for the port's phy-mode (mii.Configure): on the
// LS1028A-RDB's AR8033, the copper page (a boot loader may leave the
// fiber page selected); on an RGMII board, the PHY's clock delays for
// rgmii-id, -rxid, -txid or rgmii. gopmd drives no PHY reset line on the
// ENETC: the RDB's tree gives none (docs/hardware.md).

// PHYSetup is what the driver did to the port's PHY at bring-up.
func (p *Port) PHYSetup() mii.Report {
	p.lock()
	defer p.unlock()
	return p.phySetup
}

// configurePHY names the port's PHY and programs it (called from New
// after selectPHY, PF only).
func (p *Port) configurePHY() error {
	p.lock()
	defer p.unlock()
	if p.phyAddr < 0 {
		p.phySetup.Left = "no PHY"
		return nil
	}
	read := func(reg int) (uint16, error) { return p.mdioRead22(p.phyAddr, reg) }
	id1, err1 := read(mii.PHYID1)
	id2, err2 := read(mii.PHYID2)
	if err := errors.Join(err1, err2); err != nil {
		// The link poll says the same; nothing is written to a PHY
		// that does not answer.
		p.phySetup.Name = fmt.Sprintf("no answer at MDIO address %d", p.phyAddr)
		p.phySetup.Left = "its id could not be read (" + err.Error() + "): nothing programmed"
		return nil
	}
	id := uint32(id1)<<16 | uint32(id2)
	p.phySetup.ID, p.phySetup.Name = id, mii.Describe(id)
	rw := mii.RW{Read: read, Write: func(reg int, v uint16) error { return p.mdioWrite22(p.phyAddr, reg, v) }}
	done, err := mii.Configure(rw, id, mii.Setup{Mode: p.phyModeName})
	p.phySetup.Programmed = done
	if err != nil {
		return fmt.Errorf("set up %s: %w", p.phySetup.Name, err)
	}
	if len(done) == 0 {
		p.phySetup.Left = "the device tree asks nothing of this part; left as the boot loader set it"
		if _, ok := mii.Identify(id); !ok {
			p.phySetup.Left = "an unknown part: left as the boot loader set it"
		}
	}
	return nil
}

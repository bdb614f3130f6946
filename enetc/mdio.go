package enetc

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// MDIO on the PF's external MDIO controller (EMDIO, §2.9), clause 22 and 45,
// under the ERR050089 rule: see the package documentation for how the data
// path is kept off the registers during each MDIO register access.

// mdioTimeout bounds each busy-wait (the reference: 10 ms).
const mdioTimeout = 10 * time.Millisecond

// ErrMDIOTimeout is wrapped when the MDIO controller stays busy.
var ErrMDIOTimeout = errors.New("MDIO controller stayed busy")

// ErrMDIONoResponse is wrapped when a read finds no PHY answering (RD_ER).
var ErrMDIONoResponse = errors.New("no PHY answered the MDIO read")

func (p *Port) mdioWait() error { return p.mdioWaitAt(regEMDIO) }

// mdioPollGap is how long the busy-wait leaves between two reads of
// MDIO_CFG: each read holds every port's data path off (ERR050089), the
// frame on the MDIO wire does not, and it lasts about 26 µs at 2.5 MHz.
// Linux polls every 10 µs (enetc_mdio_wait_complete).
const mdioPollGap = 5 * time.Microsecond

// mdioWaitAt busy-waits for the MDIO controller at base (EMDIO or IMDIO),
// reading MDIO_CFG as one ERR050089 access each time; between reads the
// data path runs.
func (p *Port) mdioWaitAt(base uint32) error {
	deadline := time.Now().Add(mdioTimeout)
	for i := 0; ; i++ {
		if p.mdioRd(base+regMDIO_CFG)&mdio_cfg_BSY == 0 {
			return nil
		}
		now := time.Now()
		if i > 16 && !now.Before(deadline) {
			return fmt.Errorf("MDIO_CFG.BSY still set after %v: %w (is the port's MDIO clocked?)", mdioTimeout, ErrMDIOTimeout)
		}
		// Spin with the gates open, do not sleep: a timer sleep lasts far
		// longer than the frame; yield, so that the data path (or whatever
		// moves the frame on) gets a processor.
		for time.Since(now) < mdioPollGap {
			runtime.Gosched()
		}
	}
}

func checkMDIOArgs(phy, reg, regMax int) error {
	if phy < 0 || phy > 31 {
		return fmt.Errorf("MDIO PHY address %d must be in [0, 31]", phy)
	}
	if reg < 0 || reg > regMax {
		return fmt.Errorf("MDIO register %d must be in [0, %d]", reg, regMax)
	}
	return nil
}

// MDIORead reads clause-22 register reg of the PHY at address phy on the
// port's MDIO bus. PF only.
func (p *Port) MDIORead(phy, reg int) (uint16, error) {
	if !p.pf {
		return 0, ErrNotPF
	}
	if err := checkMDIOArgs(phy, reg, 31); err != nil {
		return 0, err
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return 0, p.errClosed()
	}
	return p.mdioRead22(phy, reg)
}

// MDIOWrite writes clause-22 register reg of the PHY at address phy. PF only.
func (p *Port) MDIOWrite(phy, reg int, v uint16) error {
	if !p.pf {
		return ErrNotPF
	}
	if err := checkMDIOArgs(phy, reg, 31); err != nil {
		return err
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	return p.mdioWrite22(phy, reg, v)
}

// MDIORead45 reads clause-45 register reg of MMD devad of the PHY at phy.
// PF only.
func (p *Port) MDIORead45(phy, devad, reg int) (uint16, error) {
	if !p.pf {
		return 0, ErrNotPF
	}
	if err := checkMDIOArgs(phy, reg, 0xFFFF); err != nil {
		return 0, err
	}
	if devad < 0 || devad > 31 {
		return 0, fmt.Errorf("MDIO MMD %d must be in [0, 31]", devad)
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return 0, p.errClosed()
	}
	if err := p.mdioSetup45(phy, devad, reg); err != nil {
		return 0, err
	}
	return p.mdioReadCycle(uint32(phy)<<mdio_ctl_PORT | uint32(devad))
}

// MDIOWrite45 writes clause-45 register reg of MMD devad of the PHY at phy.
// PF only.
func (p *Port) MDIOWrite45(phy, devad, reg int, v uint16) error {
	if !p.pf {
		return ErrNotPF
	}
	if err := checkMDIOArgs(phy, reg, 0xFFFF); err != nil {
		return err
	}
	if devad < 0 || devad > 31 {
		return fmt.Errorf("MDIO MMD %d must be in [0, 31]", devad)
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	if err := p.mdioSetup45(phy, devad, reg); err != nil {
		return err
	}
	p.mdioWr(regEMDIO+regMDIO_DATA, uint32(v)) // starts the write cycle
	return p.mdioWait()
}

// mdioSetup45: CFG with ENC45, wait, CTL = phy|devad, ADDR = reg, wait.
func (p *Port) mdioSetup45(phy, devad, reg int) error {
	p.mdioWr(regEMDIO+regMDIO_CFG, mdio_cfg_VALC45)
	if err := p.mdioWait(); err != nil {
		return err
	}
	p.mdioWr(regEMDIO+regMDIO_CTL, uint32(phy)<<mdio_ctl_PORT|uint32(devad))
	p.mdioWr(regEMDIO+regMDIO_ADDR, uint32(reg)) // starts the address cycle
	return p.mdioWait()
}

// mdioReadCycle starts a read with CTL|READ, waits, checks RD_ER, reads DATA.
func (p *Port) mdioReadCycle(ctl uint32) (uint16, error) { return p.mdioReadCycleAt(regEMDIO, ctl) }

// mdioReadCycleAt is mdioReadCycle on the controller at base.
func (p *Port) mdioReadCycleAt(base, ctl uint32) (uint16, error) {
	p.mdioWr(base+regMDIO_CTL, ctl|mdio_ctl_READ)
	if err := p.mdioWaitAt(base); err != nil {
		return 0xFFFF, err
	}
	if p.mdioRd(base+regMDIO_CFG)&mdio_cfg_RD_ER != 0 {
		return 0xFFFF, fmt.Errorf("MDIO read (CTL %#x): %w", ctl, ErrMDIONoResponse)
	}
	return uint16(p.mdioRd(base+regMDIO_DATA) & mdio_data_MASK), nil
}

// mdioRead22 is a clause-22 read (§2.9) on the port's EMDIO. Caller holds
// ctl.
func (p *Port) mdioRead22(phy, reg int) (uint16, error) {
	return p.mdioRead22At(regEMDIO, phy, reg)
}

// mdioRead22At is a clause-22 read on the controller at base (EMDIO, or
// IMDIO for the PCS), every register access of it one ERR050089 access.
// Caller holds ctl.
func (p *Port) mdioRead22At(base uint32, phy, reg int) (uint16, error) {
	p.mdioWr(base+regMDIO_CFG, mdio_cfg_VALUE)
	if err := p.mdioWaitAt(base); err != nil {
		return 0xFFFF, err
	}
	ctl := uint32(phy)<<mdio_ctl_PORT | uint32(reg)
	p.mdioWr(base+regMDIO_CTL, ctl)
	return p.mdioReadCycleAt(base, ctl)
}

// mdioWrite22At is a clause-22 write on the controller at base, every
// register access of it one ERR050089 access. Caller holds ctl.
func (p *Port) mdioWrite22At(base uint32, phy, reg int, v uint16) error {
	p.mdioWr(base+regMDIO_CFG, mdio_cfg_VALUE)
	if err := p.mdioWaitAt(base); err != nil {
		return err
	}
	p.mdioWr(base+regMDIO_CTL, uint32(phy)<<mdio_ctl_PORT|uint32(reg))
	p.mdioWr(base+regMDIO_DATA, uint32(v)) // starts the write cycle
	return p.mdioWaitAt(base)
}

// mdioWrite22 is a clause-22 write (§2.9) on the port's EMDIO. Caller
// holds ctl.
func (p *Port) mdioWrite22(phy, reg int, v uint16) error {
	return p.mdioWrite22At(regEMDIO, phy, reg, v)
}

package fec

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
	"github.com/gopmd/gopmd/internal/gpio"
	"github.com/gopmd/gopmd/internal/mii"
)

// PHY bring-up (docs/hardware.md, "The PHY"): what the kernel's PHY layer
// does on the reference boards, where the device tree asks for it. Before
// the PHY is chosen, its reset line (the PHY node's reset-gpios, or the
// MAC node's older phy-reset-gpios) is pulsed with the tree's timings
// through the GPIO character device; once it is chosen, the PHY's driver
// settings for the tree's phy-mode and clocks are programmed
// (mii.Configure: RGMII delays, the KSZ8081's RMII clock select, the
// AR8031's copper page). A PHY the kernel reaches (MDIOPath kernel) is the
// kernel's: neither is done to it.

// gpioOpen opens a GPIO controller's chip (tests replace it).
var gpioOpen gpio.Opener = gpio.OpenNode

// PHYSetup is what the driver did to the port's PHY at bring-up.
func (p *Port) PHYSetup() mii.Report { return p.phySetup }

// parsePHYReset reads option phy-reset=keep: leave the PHY's reset line
// alone (its holder, or the boot loader, set the PHY up).
func (p *Port) parsePHYReset(get func(string) (string, bool)) error {
	v, ok := get("phy-reset")
	if !ok {
		return nil
	}
	switch v {
	case "keep":
		p.phyResetKeep = true
	case "pulse":
	default:
		return driver.BadOption("phy-reset", v, "not a reset choice", "pulse (the default: reset the PHY through the device tree's reset line) or keep (leave it as it is)")
	}
	return nil
}

// resetPHY pulses the PHY's reset line, if the device tree names one and
// phy-reset=keep was not given. A line someone else holds is refused,
// except when the PHY sits on another MAC's MDIO bus: then its holder
// may be the kernel driver that owns that bus, which selectPHY finds out
// (checkPHYReset).
func (p *Port) resetPHY() error {
	p.phySetup.Reset = "no reset line in the device tree"
	if !p.dev.Node.Exists() || p.fixedOpt.speed > 0 || (p.phySet && p.phyAddr == phyFixed) {
		if !p.dev.Node.Exists() {
			p.phySetup.Reset = "no device tree node"
		}
		return nil
	}
	dt, err := p.dev.Node.ReadPHY()
	var node devtree.Node
	if err == nil && dt.Found && !dt.Fixed {
		node = dt.Node
	}
	r, ok, err := gpio.ReadReset(node, p.dev.Node)
	if err != nil {
		return fmt.Errorf("%w; give phy-reset=keep to leave the PHY as it is", err)
	}
	if !ok {
		return nil
	}
	if p.phyResetKeep {
		p.phySetup.Reset = "not driven (phy-reset=keep): " + r.String()
		return nil
	}
	if err := r.Pulse(gpioOpen, "gopmd "+p.name, time.Sleep); err != nil {
		var busy *gpio.BusyError
		if errors.As(err, &busy) && dt.Bus.Exists() && !dt.Bus.Same(p.dev.Node) {
			p.phyResetBusy = err
			p.phySetup.Reset = "not driven: " + err.Error()
			return nil
		}
		return fmt.Errorf("%w; unbind what holds it, or give phy-reset=keep to leave the PHY as its holder set it up", err)
	}
	p.phySetup.Reset = "pulsed: " + r.String()
	return nil
}

// checkPHYReset refuses a reset line held by someone else when the PHY
// is not the kernel's after all (selectPHY found its bus).
func (p *Port) checkPHYReset() error {
	if p.phyResetBusy == nil || p.phyAddr < 0 || p.bus.path().Kind == "kernel" {
		return nil
	}
	return fmt.Errorf("%w; the PHY's bus is reached by gopmd (%s), so the kernel does not manage this PHY: unbind what holds the line, or give phy-reset=keep", p.phyResetBusy, p.bus.path())
}

// configurePHY names the PHY and programs what its driver in the kernel
// programs for the device tree's phy-mode and clocks (mii.Configure).
func (p *Port) configurePHY() error {
	if p.phyAddr < 0 {
		p.phySetup.Left = "no PHY"
		return nil
	}
	id1, err1 := p.MDIORead(p.phyAddr, mii.PHYID1)
	id2, err2 := p.MDIORead(p.phyAddr, mii.PHYID2)
	if err := errors.Join(err1, err2); err != nil {
		// The link poll says the same; nothing is written to a PHY
		// that does not answer.
		p.phySetup.Name = fmt.Sprintf("no answer at MDIO address %d", p.phyAddr)
		p.phySetup.Left = "its id could not be read (" + err.Error() + "): nothing programmed"
		return nil
	}
	id := uint32(id1)<<16 | uint32(id2)
	p.phySetup.ID, p.phySetup.Name = id, mii.Describe(id)
	if p.bus.path().Kind == "kernel" {
		p.phySetup.Left = "the kernel's PHY driver set it up (its MDIO bus is the kernel's)"
		return nil
	}
	s := mii.Setup{Mode: p.phyModeName}
	if dt, err := p.dev.Node.ReadPHY(); err == nil && dt.Found && !dt.Fixed && dt.Addr == p.phyAddr {
		for _, c := range dt.Node.Strings("clock-names") {
			s.RMIIRef = s.RMIIRef || c == "rmii-ref"
		}
		s.RMIIRef25Sel = dt.Node.Has("micrel,rmii-reference-clock-select-25-mhz")
	}
	rw := mii.RW{
		Read:  func(reg int) (uint16, error) { return p.MDIORead(p.phyAddr, reg) },
		Write: func(reg int, v uint16) error { return p.MDIOWrite(p.phyAddr, reg, v) },
	}
	done, err := mii.Configure(rw, id, s)
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

// readDTPhyMode is the device tree's phy-mode (or the older
// phy-connection-type) of the port's node, "" when it has none.
func (p *Port) readDTPhyMode() string {
	for _, name := range []string{"phy-mode", "phy-connection-type"} {
		if s := p.dev.Node.Strings(name); len(s) > 0 {
			return s[0]
		}
	}
	return ""
}

// macDelayPs is the one RGMII clock delay the i.MX8QM's MAC adds, in
// picoseconds: Linux fec_enet_parse_rgmii_delay takes 0 or 2000 for
// tx-internal-delay-ps and rx-internal-delay-ps and refuses the rest.
const macDelayPs = 2000

// readMACDelays reads the node's tx-internal-delay-ps and
// rx-internal-delay-ps (ethernet-controller.yaml): 2000 sets ECR.TXC_DLY
// or RXC_DLY on a part that has them (the i.MX8QM; Linux fec_restart), 0
// or absent leaves them clear. Any other value, or 2000 on a part without
// them, is refused: the board needs a delay this MAC cannot add.
func (p *Port) readMACDelays() error {
	for _, d := range []struct {
		prop string
		bit  uint32
	}{{"tx-internal-delay-ps", ecr_TXC_DLY}, {"rx-internal-delay-ps", ecr_RXC_DLY}} {
		v, err := p.dev.Node.U32(d.prop)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("device tree %s: %w", d.prop, err)
		}
		switch {
		case v == 0:
		case v != macDelayPs:
			return fmt.Errorf("device tree %s = %d: the MAC adds 0 or %d ps, nothing else; fix the tree (or let the PHY add the delay: phy-mode rgmii-id)", d.prop, v, macDelayPs)
		case !p.prof.has(qDelayClocks):
			return fmt.Errorf("device tree %s = %d, but the MAC of %s adds no clock delay of its own (only the i.MX8QM's does): let the PHY add it (phy-mode rgmii-id, or -txid/-rxid) and drop the property", d.prop, v, p.prof.compatible)
		default:
			p.ecrDelays |= d.bit
		}
	}
	return nil
}

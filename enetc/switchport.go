package enetc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
)

// The LS1028A's Felix switch (PCI 00:00.5) reaches the host through an
// ENETC port: on the RDB, PF2 (ethernet@0,2) is its CPU port, named by the
// switch port's ethernet = <&enetc_port2> (the DSA binding). With that
// function on vfio-pci nothing configures the switch, and where the
// kernel's switch driver runs the frames carry its tags; gopmd would show
// the internal link up at 2500 Mb/s either way. So a PF that an enabled
// switch port names as its ethernet is refused unless
// switch-cpu-port=take says to take it (nicctl: --force).

// ErrSwitchCPUPort is wrapped when the device tree makes the function a
// switch's CPU port and switch-cpu-port=take was not given.
var ErrSwitchCPUPort = errors.New("the function is a switch's CPU port")

// SwitchLink describes the enabled switch ports whose ethernet property
// names the ENETC function at node ("" when none does, or node is the zero
// Node): the LS1028A-RDB's PF2 is the Felix switch's CPU port.
func SwitchLink(node devtree.Node) (string, error) {
	if !node.Exists() {
		return "", nil
	}
	refs, err := node.Referrers("ethernet")
	if err != nil {
		return "", err
	}
	var on []string
	for _, r := range refs {
		sw, inSwitch := switchOf(r)
		if !r.Enabled() || (inSwitch && !sw.Enabled()) {
			continue // a disabled switch port does not use the function
		}
		d := r.Path()
		if inSwitch {
			d = fmt.Sprintf("%s of %s", r.Name(), sw)
		}
		on = append(on, d)
	}
	if len(on) == 0 {
		return "", nil
	}
	return fmt.Sprintf("the CPU port of switch port %s (ethernet = <&%s>)", strings.Join(on, ", "), node.Name()), nil
}

// switchOf is the switch node a port node sits in (ports/port@N or
// ethernet-ports/ethernet-port@N); ok is false when the layout is another.
func switchOf(port devtree.Node) (sw devtree.Node, ok bool) {
	if b := port.Parent().Name(); b == "ports" || b == "ethernet-ports" {
		return port.Parent().Parent(), true
	}
	return devtree.Node{}, false
}

// checkSwitchLink refuses a PF the device tree makes a switch's CPU port,
// unless switch-cpu-port=take; it records the link for SwitchLink either
// way. Called from New before any register is written.
func (p *Port) checkSwitchLink() error {
	if !p.pf || !p.dev.Node.Exists() {
		return nil
	}
	l, err := SwitchLink(p.dev.Node)
	if err != nil {
		return fmt.Errorf("reading the device tree for a switch link: %w", err)
	}
	p.switchLink = l
	if l == "" || p.takeCPUPort {
		return nil
	}
	return fmt.Errorf("the device tree makes this function %s: %w. On the LS1028A-RDB PF2 carries the Felix switch's traffic to the host; with the function here nothing configures the switch, and where the kernel's switch driver runs its frames carry switch tags, yet the internal link would show up at 2500 Mb/s either way. "+
		"Use PF0 or PF1 for untagged traffic on a front port; give switch-cpu-port=take (nicctl: --force) to drive this function anyway, as an internal link to whatever the switch's setup lets through",
		l, ErrSwitchCPUPort)
}

// parseSwitchOption reads switch-cpu-port=take.
func (p *Port) parseSwitchOption() error {
	o := p.dev.Spec.Options
	if o == nil || !o.Has("switch-cpu-port") {
		return nil
	}
	v := o.Get("switch-cpu-port")
	if v != "take" {
		return driver.BadOption("switch-cpu-port", v, "not take", "take: drive a function the device tree makes a switch's CPU port (the LS1028A-RDB's PF2)")
	}
	if !p.pf {
		return driver.BadOption("switch-cpu-port", v, "a VF is no switch's CPU port", "no switch-cpu-port= on a VF")
	}
	p.takeCPUPort = true
	return nil
}

// SwitchCPUPortLink is what the device tree says about the function as a
// switch's CPU port ("" when nothing; nicctl info prints it).
func (p *Port) SwitchCPUPortLink() string { return p.switchLink }

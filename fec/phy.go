package fec

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/gopmd/gopmd/internal/devtree"
	"github.com/gopmd/gopmd/internal/mii"
)

// PHY selection (docs/hardware-fec.md §5.5): phy= first, then the device
// tree's phy-handle, then a scan of the port's own MDIO bus that must find
// exactly one PHY. A shared bus (i.MX6UL/7D boards: one ENET's MDIO
// carries both ENETs' PHYs) answers at two addresses, and the lowest one
// may belong to the other MAC: the scan refuses to guess.

// phyFixed is phyAddr for phy=none and for a fixed-link node: no PHY, the
// link is taken as up at the part's top speed.
const phyFixed = -1

// selectPHY sets phyAddr: phy=N or none (already parsed), else the device
// tree (not with phy=scan), else the one PHY that answers on the port's
// MDIO bus. It refuses a
// phy-handle on another MAC's bus and a bus where several PHYs answer.
func (p *Port) selectPHY() error {
	if p.phySet {
		return nil // phy=N or phy=none
	}
	node := p.dev.OFNode
	if p.phyScan {
		node = "" // phy=scan
	}
	dt, err := devtree.ReadPHY(node)
	if err != nil {
		return fmt.Errorf("fec %s: %w; give phy=N (the PHY's MDIO address) or phy=none (fixed link) to choose by hand", p.name, err)
	}
	if dt.Found {
		if dt.Fixed {
			p.phyAddr = phyFixed
			return nil
		}
		own := filepath.Clean(p.dev.OFNode)
		if dt.Bus != "" && filepath.Clean(dt.Bus) != own {
			return fmt.Errorf("fec %s: the device tree's phy-handle points to %s (address %d) on the MDIO bus of %s, which this port's MDIO registers do not drive (a shared MDIO bus, as on i.MX6UL/7D boards): give phy=none to run it as a fixed link, or phy=scan (or phy=N) if this port's own MDIO pins reach a PHY of its own (QEMU 7.2 gives each ENET one)",
				p.name, dt.Node, dt.Addr, dt.Bus)
		}
		p.phyAddr = dt.Addr
		return nil
	}
	var answered []int
	for a := 0; a < 32; a++ {
		id1, err := p.MDIORead(a, mii.PHYID1)
		if err != nil {
			return nil // no MDIO at all: link is assumed up
		}
		if id1 != 0xFFFF && id1 != 0 {
			answered = append(answered, a)
		}
	}
	switch len(answered) {
	case 0:
		p.phyAddr = phyFixed
	case 1:
		p.phyAddr = answered[0]
	default:
		sort.Ints(answered)
		return fmt.Errorf("fec %s: PHYs answer at MDIO addresses %v and the device tree names none (no phy-handle): on a shared MDIO bus one of them belongs to another MAC; give phy=N with this port's PHY address",
			p.name, answered)
	}
	return nil
}

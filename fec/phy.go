package fec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
	"github.com/gopmd/gopmd/internal/mii"
)

// PHY selection (docs/hardware-fec.md §5.5): phy= first, then the device
// tree's phy-handle, then a scan of the port's own MDIO bus that must find
// exactly one PHY. A shared bus (i.MX6UL/7D boards: one ENET's MDIO
// carries both ENETs' PHYs) answers at two addresses, and the lowest one
// may belong to the other MAC: the scan refuses to guess. A phy-handle
// under another MAC's mdio node is reached through that MAC's bus
// (mdiobus.go).

// phyFixed is phyAddr for phy=none and for a fixed-link node: no PHY, the
// link is taken as up at the fixed link's speed (fixedLink).
const phyFixed = -1

// fixedLinkOpt is what option fixed-link=SPEED[,full|,half] asked for
// (speed 0: not given).
type fixedLinkOpt struct {
	speed int
	full  bool
}

// parseFixedLink reads option fixed-link=: a link without a PHY at SPEED
// Mb/s (10, 100 or 1000), full duplex unless ",half" follows.
func (p *Port) parseFixedLink(get func(string) (string, bool)) error {
	v, ok := get("fixed-link")
	if !ok {
		return nil
	}
	sp, dup, _ := strings.Cut(v, ",")
	n, err := strconv.Atoi(sp)
	if err != nil || (n != 10 && n != 100 && n != 1000) || (dup != "" && dup != "full" && dup != "half") {
		return driver.BadOption("fixed-link", v, "not a fixed link", "SPEED[,full|,half] with SPEED 10, 100 or 1000 Mb/s, such as fixed-link=100 (full duplex) or fixed-link=10,half")
	}
	p.fixedOpt = fixedLinkOpt{speed: n, full: dup != "half"}
	return nil
}

// phyModeTopSpeed is the fastest link the MAC can run over its MAC-PHY
// interface: RMII and MII carry 10 and 100 Mb/s, RGMII 1000 Mb/s on a
// gigabit part (ECR.SPEED, quirk qGBIT), 100 Mb/s otherwise.
func (p *Port) phyModeTopSpeed() int {
	if p.phyMode == "rgmii" && p.prof.has(qGBIT) {
		return 1000
	}
	return 100
}

// setFixedLink sets the link a port without a PHY runs at: option
// fixed-link=, else the device tree's fixed-link (dtSpeed > 0), else the
// top speed of the MAC-PHY interface, full duplex. A speed the interface
// cannot carry is refused: ECR.SPEED with RCR.RMII_MODE passes no frame.
func (p *Port) setFixedLink(dtSpeed int, dtFull bool) error {
	l := driver.Link{Up: true, SpeedMbps: p.phyModeTopSpeed(), FullDuplex: true}
	from := "the top speed of phy-mode " + p.phyMode
	switch {
	case p.fixedOpt.speed > 0:
		l.SpeedMbps, l.FullDuplex = p.fixedOpt.speed, p.fixedOpt.full
		from = "option fixed-link="
	case dtSpeed > 0:
		l.SpeedMbps, l.FullDuplex = dtSpeed, dtFull
		from = "the device tree's fixed-link"
	}
	if l.SpeedMbps != 10 && l.SpeedMbps != 100 && l.SpeedMbps != 1000 {
		return fmt.Errorf("fixed link at %d Mb/s (%s): the MAC runs at 10, 100 or 1000 Mb/s; give fixed-link=SPEED with one of them", l.SpeedMbps, from)
	}
	if top := p.phyModeTopSpeed(); l.SpeedMbps > top {
		return fmt.Errorf("fixed link at %d Mb/s (%s), but phy-mode %s on %s carries at most %d Mb/s: give fixed-link=%d (or fixed-link=10), or phy-mode=rgmii if the board wires RGMII",
			l.SpeedMbps, from, p.phyMode, p.prof.compatible, top, top)
	}
	p.fixedLink, p.fixedFrom = l, from
	return nil
}

// FixedLink is the link the port runs at without a PHY and where that
// setting came from (option fixed-link=, the device tree's fixed-link, or
// the top speed of the MAC-PHY interface); ok is false when the port has
// a PHY.
func (p *Port) FixedLink() (l driver.Link, from string, ok bool) {
	if p.phyAddr >= 0 {
		return driver.Link{}, "", false
	}
	return p.fixedLink, p.fixedFrom, true
}

// selectPHY sets phyAddr and, for a port without a PHY, the fixed link
// (setFixedLink).
func (p *Port) selectPHY() error {
	dtSpeed, dtFull, err := p.selectPHYAddr()
	if err != nil {
		return err
	}
	if p.phyAddr != phyFixed {
		return nil
	}
	return p.setFixedLink(dtSpeed, dtFull)
}

// selectPHYAddr sets phyAddr: fixed-link= or phy=N or none (already
// parsed), else the device tree (not with phy=scan), else the one PHY
// that answers on the port's MDIO bus. It refuses a phy-handle on another
// MAC's bus and a bus where several PHYs answer. It returns the device
// tree's fixed-link speed and duplex (speed 0: the tree gives none).
func (p *Port) selectPHYAddr() (dtSpeed int, dtFull bool, err error) {
	if p.fixedOpt.speed > 0 {
		if p.phySet && p.phyAddr != phyFixed {
			return 0, false, driver.BadOption("fixed-link", strconv.Itoa(p.fixedOpt.speed), "runs the port without a PHY, but phy="+strconv.Itoa(p.phyAddr)+" names one", "leave out phy= (or give phy=none)")
		}
		p.phyAddr, p.phySet = phyFixed, true
		return 0, false, nil
	}
	if p.phySet {
		if p.phyAddr == phyFixed {
			l, ok, err := p.dev.Node.FixedLink()
			if err != nil {
				return 0, false, fmt.Errorf("%w; give fixed-link=SPEED to set the speed by hand", err)
			}
			if ok {
				return l.Speed, l.Full, nil
			}
		}
		return 0, false, nil // phy=N or phy=none
	}
	node := p.dev.Node
	if p.phyScan {
		node = devtree.Node{} // phy=scan
	}
	dt, err := node.ReadPHY()
	if err != nil {
		return 0, false, fmt.Errorf("%w; give phy=N (the PHY's MDIO address) or phy=none (fixed link) to choose by hand", err)
	}
	if dt.Found {
		if dt.Fixed {
			p.phyAddr = phyFixed
			return dt.Link.Speed, dt.Link.Full, nil
		}
		if dt.Bus.Exists() && !dt.Bus.Same(p.dev.Node) {
			// A shared MDIO bus (i.MX6UL/7D boards): another MAC's
			// registers drive it (mdiobus.go).
			if err := p.attachPHYBus(dt.Bus, dt.Node, dt.Addr); err != nil {
				return 0, false, err
			}
		}
		p.phyAddr = dt.Addr
		return 0, false, nil
	}
	var answered []int
	for a := 0; a < 32; a++ {
		id1, err := p.MDIORead(a, mii.PHYID1)
		if err != nil {
			return 0, false, nil // no MDIO at all: a fixed link
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
		return 0, false, fmt.Errorf("PHYs answer at MDIO addresses %v and the device tree names none (no phy-handle): on a shared MDIO bus one of them belongs to another MAC; give phy=N with this port's PHY address",
			answered)
	}
	return 0, false, nil
}

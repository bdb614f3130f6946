package enetc

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/internal/mii"
)

// selectPHY picks the PHY: option phy=N or phy=none; else the device
// tree's phy-handle when it names a PHY on the port's own MDIO bus (a PHY
// on the LS1028A's central MDIO function, 00:00.3, where mainline puts the
// RDB's PHYs since 2021, is refused with what to do: gopmd does not drive
// that function); else the first address whose ID registers answer.
// Without one the link is fixed (an internal port). It records why in
// phyWhy (PHYChoice). Called from New.
func (p *Port) selectPHY() error {
	p.lock()
	defer p.unlock()
	p.phyAddr = -1
	if o := p.dev.Spec.Options; o != nil && o.Has("phy") {
		v := o.Get("phy")
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < 32 {
			p.phyAddr = n
			p.phyWhy = fmt.Sprintf("phy=%d: address %d on the port's own MDIO bus, as the option says", n, n)
		} else {
			p.phyWhy = "phy=none: no PHY, a fixed link (with a PCS, the link is the PCS's)"
		}
		return nil
	}
	if p.phyMode == modeInternal {
		p.phyWhy = "none: an internal port, a fixed link inside the SoC"
		return nil // a fixed link inside the SoC: no PHY to look for
	}
	dt, err := p.dev.Node.ReadPHY()
	if err != nil {
		return fmt.Errorf("%w; give phy=N (the PHY's address on the port's MDIO bus) or phy=none (fixed link) to choose by hand", err)
	}
	if dt.Found {
		return p.phyFromDT(dt)
	}
	for a := 0; a < 32; a++ {
		id1, err1 := p.mdioRead22(a, mii.PHYID1)
		id2, err2 := p.mdioRead22(a, mii.PHYID2)
		if err1 != nil || err2 != nil {
			if errors.Is(err1, ErrMDIOTimeout) || errors.Is(err2, ErrMDIOTimeout) {
				p.phyWhy = "none: the port's MDIO controller stayed busy, so no PHY could be read; a fixed link"
				return nil // no working MDIO: fixed link
			}
			continue
		}
		if (id1 == 0xFFFF && id1 == id2) || (id1 == 0 && id2 == 0) {
			continue
		}
		p.phyAddr = a
		p.phyWhy = fmt.Sprintf("address %d, the first on the port's own MDIO bus whose ID registers answer (ID %#08x): the device tree names no PHY", a, uint32(id1)<<16|uint32(id2))
		return nil
	}
	p.phyWhy = "none: the device tree names no PHY and none answers on the port's own MDIO bus; a fixed link"
	return nil
}

// phyFromDT takes the PHY the device tree names (caller holds p.lock).
func (p *Port) phyFromDT(dt devtree.PHY) error {
	if dt.Fixed {
		p.phyWhy = "none: the device tree's fixed-link, no PHY"
		return nil
	}
	switch {
	case dt.Bus.Same(p.dev.Node):
		p.phyAddr = dt.Addr
		p.phyWhy = fmt.Sprintf("address %d on the port's own MDIO bus: the device tree's %s names %s", dt.Addr, dt.Prop, dt.Node)
		return nil
	case dt.Parent.CentralMDIO():
		return fmt.Errorf("the device tree's %s names %s, address %d on the LS1028A's central MDIO function (%s, PCI 00:00.3, 1957:ee01; mainline's RDB tree puts its PHYs there since 2021), which gopmd does not drive: "+
			"give phy=none to take the link from the Lynx PCS alone (SGMII or 2500BASE-X; the PHY keeps what the bootloader or kernel set), "+
			"or phy=%d to reach it through this port's own MDIO controller where the board wires that one to the PHY (NXP calls MDIO through the port defeatured on the LS1028A)",
			dt.Prop, dt.Node, dt.Addr, dt.Parent, dt.Addr)
	default:
		return fmt.Errorf("the device tree's %s names %s, address %d on the MDIO bus of %s, which this port's MDIO registers do not drive: give phy=none (fixed link, or the PCS's link) or phy=N if this port's own MDIO reaches a PHY",
			dt.Prop, dt.Node, dt.Addr, dt.Parent)
	}
}

// PHYChoice says which PHY the port uses and why: the option, the device
// tree's phy-handle, a scan, or none (nicctl info prints it).
func (p *Port) PHYChoice() string {
	p.lock()
	defer p.unlock()
	if !p.pf {
		return "none: a VF has no MDIO bus; the PF owns the PHY"
	}
	return p.phyWhy
}

// PHYAddr is the MDIO address of the port's PHY, or -1 when the port runs
// as a fixed link (a VF, an internal port, or no PHY answered).
func (p *Port) PHYAddr() int {
	p.lock()
	defer p.unlock()
	return p.phyAddr
}

// readPHYLink reads link, speed and duplex from the PHY's clause-22
// registers (mii.ReadLink; the eMAC runs at 1000 Mb/s) and, for SGMII and
// 2500BASE-X, the PCS (pcs.go). Each MDIO register access holds the data
// path off for itself only (ERR050089). With a PCS the link is up when the
// PCS and the PHY (if any) are, at the PCS's speed and duplex. Caller
// holds ctl.
func (p *Port) readPHYLink() (driver.Link, error) {
	var l driver.Link
	if a := p.phyAddr; a >= 0 {
		var err error
		l, err = mii.ReadLink(func(reg int) (uint16, error) { return p.mdioRead22(a, reg) }, true)
		if err != nil || !p.hasPCS() {
			return l, err
		}
		if !l.Up {
			return driver.Link{}, nil
		}
		if err := p.followPCS(l); err != nil {
			return driver.Link{}, err
		}
	}
	pl, err := p.readPCSLink()
	if err != nil || !pl.Up || p.phyMode != modeSGMII || p.inband || p.phyAddr < 0 {
		return pl, err
	}
	return l, nil // out of band: the PHY's speed and duplex
}

// hasPCS reports whether the port runs through the SerDes PCS.
func (p *Port) hasPCS() bool { return p.phyMode == modeSGMII || p.phyMode == mode2500BaseX }

// updateLinkLocked refreshes the link state and follows it: MAC TX/RX enabled
// and TX accepted while up; MAC disabled and TX refused while down (§6,
// §9 step 5). Caller holds ctl.
func (p *Port) updateLinkLocked() driver.Link {
	l := driver.Link{Up: true, SpeedMbps: p.fixedSpeed, FullDuplex: true} // VF and fixed links
	if p.pf && (p.phyAddr >= 0 || p.hasPCS()) {
		nl, err := p.readPHYLink()
		if err != nil {
			nl = driver.Link{} // a PHY that cannot be read is no link to send on
		}
		l = nl
	}
	if p.pf {
		p.followRGMII(l) // before the MAC is enabled at the new speed
		p.followPSPEED(l)
	}
	p.linkEv.Note(p.name, p.link, l)
	p.link = l
	p.linkValue.Store(&l)
	if !p.started {
		return l
	}
	if p.pf {
		v := p.regs.Read32(regPM0_CMD_CFG)
		nv := v &^ (pm_cmd_cfg_TX_EN | pm_cmd_cfg_RX_EN)
		if l.Up {
			nv |= pm_cmd_cfg_TX_EN | pm_cmd_cfg_RX_EN
			if v&(pm_cmd_cfg_TX_EN|pm_cmd_cfg_RX_EN) != pm_cmd_cfg_TX_EN|pm_cmd_cfg_RX_EN {
				nv = p.applyPauseLocked(nv) // as the link comes up, before the MAC is enabled
			}
		}
		if nv != v {
			p.regs.Write32(regPM0_CMD_CFG, nv)
			p.regs.Write32(regPM1_CMD_CFG, nv)
		}
	}
	if l.Up {
		p.gate.Open(gate.LinkDown)
	} else {
		p.gate.Close(gate.LinkDown)
	}
	return l
}

// Link is the last link state read from the PHY (UpdateLink reads it; the
// link watcher, option link-poll=, calls UpdateLink once a second). It
// takes no lock and touches no register: any goroutine may call it.
// A closed port reports the zero Link (down).
func (p *Port) Link() driver.Link {
	if p.shut.Load() {
		return driver.Link{}
	}
	return *p.linkValue.Load()
}

// OnLinkChange implements driver.Port: fn sees every change the link
// watcher (link-poll=), Start and UpdateLink find. On a closed port it
// does nothing and returns a no-op cancel.
func (p *Port) OnLinkChange(fn func(driver.LinkEvent)) (cancel func()) {
	if p.shut.Load() {
		return func() {}
	}
	return p.linkEv.Subscribe(fn)
}

// UpdateLink reads the link state now: on a PF with a PHY it polls the PHY
// over MDIO and a started port follows a change (MAC enabled and TX
// accepted while up); VFs and fixed links report up.
func (p *Port) UpdateLink() driver.Link {
	p.lock()
	defer p.unlock()
	if p.closed {
		return driver.Link{}
	}
	return p.updateLinkLocked()
}

// watch is a started PF's housekeeping goroutine until stop closes: it
// polls the link every linkEvery (0: never) and accumulates the 32-bit
// counters every counterPoll. It sleeps between ticks.
func (p *Port) watch(stop, done chan struct{}, linkEvery time.Duration) {
	defer close(done)
	var linkTick <-chan time.Time
	if linkEvery > 0 {
		t := time.NewTicker(linkEvery)
		defer t.Stop()
		linkTick = t.C
	}
	ct := time.NewTicker(counterPoll)
	defer ct.Stop()
	mt := time.NewTicker(vfMsgPoll)
	defer mt.Stop()
	for {
		select {
		case <-stop:
			return
		case <-mt.C:
			p.lock()
			if p.started {
				p.serveVFMessagesLocked()
			}
			p.unlock()
		case <-linkTick:
			p.lock()
			if p.started {
				p.updateLinkLocked()
			}
			p.unlock()
		case <-ct.C:
			p.lock()
			p.accumulateLocked()
			p.unlock()
		}
	}
}

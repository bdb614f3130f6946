package fec

import (
	"fmt"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/internal/mii"
)

// mdioTimeout bounds one MDIO frame (Linux waits 30 ms).
const mdioTimeout = 30 * time.Millisecond

// setupMDIO programs the MDC clock (§2.3): MMFR=0 first on parts that
// raise an MII event on the MSCR write, then MSCR, then clear EIR.MII.
func (p *Port) setupMDIO() {
	if p.prof.has(qClearSetupMII) {
		p.regs.Write32(regMMFR, 0)
	}
	p.regs.Write32(regMSCR, mscrValue(p.prof.has(qENETMAC), ipgHzBound))
	p.regs.Write32(regEIR, eir_MII)
}

// mscrValue is the MSCR for an ipg clock of ipgHz: MDC at most 2.5 MHz,
// at least 10 ns of hold time.
func mscrValue(enetMAC bool, ipgHz int) uint32 {
	speed := (ipgHz + 2*mdcHz - 1) / (2 * mdcHz)
	if enetMAC {
		speed-- // MDC = clk / ((MII_SPEED+1)*2) on ENET-MAC parts
	}
	speed = min(max(speed, 1), 63)
	hold := (ipgHz+100_000_000-1)/100_000_000 - 1
	hold = min(max(hold, 0), 7)
	return uint32(speed)<<mscr_MII_SPEED_SHIFT | uint32(hold)<<mscr_HOLDTIME_SHIFT
}

// mdioRead and mdioWrite are the clause-22 management frames.
func mdioRead(phy, reg int) uint32 {
	return mmfr_ST_C22 | mmfr_OP_READ | uint32(phy)<<mmfr_PA_SHIFT | uint32(reg)<<mmfr_RA_SHIFT | mmfr_TA
}

func mdioWrite(phy, reg int, v uint16) uint32 {
	return mmfr_ST_C22 | mmfr_OP_WRITE | uint32(phy)<<mmfr_PA_SHIFT | uint32(reg)<<mmfr_RA_SHIFT | mmfr_TA | uint32(v)
}

// frame runs one management frame on the bus's MAC and waits for
// EIR.MII, under the bus's lock (every port sharing the bus takes it).
func (b *mdioBus) frame(frame uint32) (uint32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.owner
	if p == nil {
		return 0, fmt.Errorf("fec %s: the port driving this MDIO bus (%s) is closed: %w", b.name, b.node, driver.ErrClosed)
	}
	r := p.regs
	r.Write32(regEIR, eir_MII) // a stale event would end the wait early
	r.Write32(regMMFR, frame)
	deadline := time.Now().Add(mdioTimeout)
	for r.Read32(regEIR)&eir_MII == 0 {
		if !time.Now().Before(deadline) {
			return 0, fmt.Errorf("fec %s: MDIO frame %#08x: no completion (EIR.MII) in %v; is the MDC clock (MSCR=%#x) running and the ENET clocked?", b.name, frame, mdioTimeout, r.Read32(regMSCR))
		}
		time.Sleep(2 * time.Microsecond)
	}
	r.Write32(regEIR, eir_MII)
	return r.Read32(regMMFR) & mmfr_DATA_MASK, r.Err()
}

// checkMDIOArgs refuses a clause-22 PHY address or register number out of
// range.
func checkMDIOArgs(phy, reg int) error {
	if phy < 0 || phy > 31 {
		return fmt.Errorf("MDIO PHY address %d must be in [0, 31]", phy)
	}
	if reg < 0 || reg > 31 {
		return fmt.Errorf("MDIO register %d must be in [0, 31]", reg)
	}
	return nil
}

// MDIORead reads clause-22 register reg of the PHY at address phy on the
// bus the port's PHY sits on (MDIOPath: its own, another port's, or the
// kernel's through its MII ioctls).
func (p *Port) MDIORead(phy, reg int) (uint16, error) {
	if err := checkMDIOArgs(phy, reg); err != nil {
		return 0, err
	}
	if p.shut.Load() {
		return 0, p.errClosed()
	}
	return p.bus.read(phy, reg)
}

// MDIOWrite writes clause-22 register reg of the PHY at address phy on
// the bus the port's PHY sits on (MDIOPath).
func (p *Port) MDIOWrite(phy, reg int, v uint16) error {
	if err := checkMDIOArgs(phy, reg); err != nil {
		return err
	}
	if p.shut.Load() {
		return p.errClosed()
	}
	return p.bus.write(phy, reg, v)
}

// PHYAddr is the MDIO address of the port's PHY, or -1 when the port runs
// as a fixed link (no PHY answered, phy=none, or a fixed-link node).
func (p *Port) PHYAddr() int { return p.phyAddr }

// Link is the link frames pass on: the state the PHY last reported
// (UpdateLink and the link watcher read it) once the MAC's speed and
// duplex bits match it. A speed or duplex change restarts the MAC (§5.6);
// until that restart succeeds Link reports down, as the gate treats the
// port (TX counts frames as link_down), and MACRestartFailures counts
// each try that ran out of time. The zero Link (down) once the port is
// closed.
func (p *Port) Link() driver.Link {
	if p.shut.Load() {
		return driver.Link{}
	}
	p.linkMu.Lock()
	defer p.linkMu.Unlock()
	return p.link
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

// UpdateLink reads the PHY over MDIO and resolves speed and duplex from
// the advertised and link-partner abilities (§5.4). Without a PHY the link
// is reported up at the fixed link's speed and duplex (FixedLink). On a
// started port a change restarts the MAC gracefully (§5.6: bursts
// return 0 meanwhile, no frame is dropped; MACRestarts counts the
// restarts). A restart that cannot finish within Config.StopTimeout is
// counted (MACRestartFailures) and tried again at the next call; until
// one succeeds the link is reported down (see Link). The link watcher
// (option link-poll=) calls it once a second; call it directly to see a
// change sooner.
func (p *Port) UpdateLink() driver.Link {
	defer p.linkEv.Flush() // runs after ctl is released
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return driver.Link{} // the device is released: no link to report
	}
	return p.updateLinkLocked()
}

// watch runs until stop is closed. Every interval (0: never) it reads the
// PHY, so that a renegotiated speed or duplex reaches ECR/RCR/TCR without
// anyone asking, and on ERR006358 parts it is the stall detector the
// erratum asks for (txStallCheck); every counterPoll it accumulates the
// MIB counters so none wraps unseen. While frames flow it reads the PHY
// every fastLinkPoll instead: the MAC does not sense the link, so frames
// it sends between a cable pull and the poll that sees it go nowhere,
// uncounted; the faster poll bounds them to fastLinkPoll's worth. Whether
// frames flow it looks every idleLook (two atomic loads per queue, no
// MDIO).
func (p *Port) watch(stop, done chan struct{}, interval time.Duration) {
	defer close(done)
	var tick <-chan time.Time
	var period time.Duration
	var t *time.Ticker
	if interval > 0 {
		period = min(interval, idleLook)
		t = time.NewTicker(period)
		defer t.Stop()
		tick = t.C
	}
	ct := time.NewTicker(counterPoll)
	defer ct.Stop()
	mark, lastRead := p.trafficMark(), time.Now()
	for {
		select {
		case <-stop:
			return
		case <-ct.C:
			p.statsMu.Lock()
			if !p.shut.Load() {
				p.accumulateLocked()
				p.busErrorLocked()
			}
			p.statsMu.Unlock()
		case now := <-tick:
			m := p.trafficMark()
			busy := m != mark
			mark = m
			np := min(interval, idleLook)
			if busy {
				np = min(interval, fastLinkPoll)
			}
			if np != period {
				period = np
				t.Reset(period)
			}
			if !busy && now.Sub(lastRead) < interval {
				continue // idle, and the PHY was read within interval
			}
			lastRead = now
			p.ctl.Lock()
			if p.started {
				p.statsMu.Lock()
				p.busErrorLocked()
				p.statsMu.Unlock()
				if p.phyAddr >= 0 || p.macHeld {
					p.updateLinkLocked()
				}
				if p.prof.has(qERR006358) && p.phyLink.Up { // down: queued frames wait for the link
					for _, q := range p.tx {
						q.stallCheck()
					}
				}
			}
			p.ctl.Unlock()
			p.linkEv.Flush()
		}
	}
}

// The link watcher's pace: it reads the PHY every fastLinkPoll while
// frames flow (a few MDIO frames of ~25 µs each: some 1 % of the MDIO
// bus), every link-poll= interval otherwise, and looks whether frames flow
// every idleLook.
const (
	fastLinkPoll = 10 * time.Millisecond
	idleLook     = 100 * time.Millisecond
)

// trafficMark moves whenever a queue hands the MAC buffers or frames (its
// RDAR and TDAR writes): the watcher compares two marks to tell whether
// frames flow.
func (p *Port) trafficMark() uint64 {
	var n uint64
	for _, q := range p.rx {
		n += q.doorbells.Load()
	}
	for _, q := range p.tx {
		n += q.doorbells.Load()
	}
	return n
}

// stopWatcher ends the watcher goroutine, if one runs, and waits for it.
// The caller must not hold ctl.
func (p *Port) stopWatcher() {
	p.ctl.Lock()
	stop, done := p.watchStop, p.watchDone
	p.watchStop, p.watchDone = nil, nil
	p.ctl.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// updateLinkLocked is UpdateLink with ctl held: it reads the PHY, brings
// a started MAC in line with it (restartMAC; a failure is counted and the
// next call tries again) and publishes the result (publishLinkLocked).
func (p *Port) updateLinkLocked() driver.Link {
	l := p.fixedLink
	if p.phyAddr >= 0 {
		l = p.readPHYLink()
	}
	p.phyLink = l
	if p.started && (l != p.macLink || p.macHeld) {
		if err := p.restartMAC(l); err != nil {
			p.restartFails.Add(1)
		}
	}
	return p.publishLinkLocked()
}

// publishLinkLocked sets what Link reports and what the gate lets through
// (ctl held): the PHY's link, once a started MAC runs for it; down while
// the MAC's speed and duplex bits differ from the PHY's (a restart that
// failed: frames would not pass, so TX counts them as link_down) or a
// restart holds the MAC disabled.
func (p *Port) publishLinkLocked() driver.Link {
	l := p.phyLink
	if p.started && (l != p.macLink || p.macHeld) {
		l = driver.Link{}
	}
	p.linkMu.Lock()
	old := p.link
	p.link = l
	p.linkMu.Unlock()
	p.linkEv.Note(p.name, old, l)
	if l.Up {
		p.gate.Open(gate.LinkDown)
	} else {
		p.gate.Close(gate.LinkDown)
	}
	return l
}

// readPHYLink reads link, speed and duplex from the PHY's clause-22
// registers (mii.ReadLink; 1000 Mb/s only where the MAC can run it,
// maxSpeed). A PHY that cannot be read, or one forced to a speed the MAC's
// interface cannot carry, is no link to send on.
func (p *Port) readPHYLink() driver.Link {
	a := p.phyAddr
	l, err := mii.ReadLink(func(reg int) (uint16, error) { return p.MDIORead(a, reg) }, p.maxSpeed() == 1000)
	if err != nil || l.SpeedMbps > p.maxSpeed() {
		return driver.Link{}
	}
	return l
}

// maxSpeed is the fastest the MAC runs in Mb/s: 1000 on a gigabit part
// over RGMII, else 100. MII and RMII carry 10 and 100 Mb/s only (Linux's
// phylink gives PHY_INTERFACE_MODE_MII and _RMII the MAC_10 and MAC_100
// capabilities alone, phylink_get_capabilities; docs/hardware-fec.md §5.4).
func (p *Port) maxSpeed() int {
	if p.prof.has(qGBIT) && p.phyMode == "rgmii" {
		return 1000
	}
	return 100
}

// capPHYAdvertisement takes the 1000BASE-T modes out of a gigabit PHY's
// advertisement (CTRL1000) when the MAC cannot run 1000 Mb/s (maxSpeed)
// and restarts auto-negotiation, so the PHY and its partner settle on a
// speed the MAC can carry instead of 1000 Mb/s, which no frame would
// pass at. New calls it once the PHY is known.
func (p *Port) capPHYAdvertisement() error {
	a := p.phyAddr
	if a < 0 || p.maxSpeed() == 1000 {
		return nil
	}
	bmsr, err := p.MDIORead(a, mii.BMSR)
	if err != nil || bmsr&mii.BMSR_ESTATUS == 0 {
		return nil // no MDIO (the link is assumed), or a 10/100 PHY
	}
	const gig = mii.CTRL1000_1000FULL | mii.CTRL1000_1000HALF
	ctrl, err := p.MDIORead(a, mii.CTRL1000)
	if err == nil && ctrl&gig != 0 {
		if err = p.MDIOWrite(a, mii.CTRL1000, ctrl&^gig); err == nil {
			var bmcr uint16
			if bmcr, err = p.MDIORead(a, mii.BMCR); err == nil && bmcr&mii.BMCR_ANENABLE != 0 {
				err = p.MDIOWrite(a, mii.BMCR, bmcr|mii.BMCR_ANRESTART)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("the PHY at MDIO address %d is gigabit and phy-mode=%s carries 100 Mb/s at most: taking 1000BASE-T out of its advertisement (CTRL1000) failed: %w; give phy-mode=rgmii if the board wires RGMII, or phy=none for a fixed link", a, p.phyMode, err)
	}
	return nil
}

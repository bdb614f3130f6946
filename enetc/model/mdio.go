package model

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/sim/simphy"
)

// mdioBus is one MDIO controller's registers (§2.9), and the model time at
// which the MDIO frame it runs ends (with a Clock; 0: none in flight).
type mdioBus struct {
	cfg, ctl, data, addr atomic.Uint32
	busyUntil            atomic.Int64
}

// MDIOFrameTime is how long one MDIO frame (32-bit preamble, 32-bit frame:
// IEEE 802.3 clause 22.2.4.5) keeps the bus busy at 2.5 MHz, the clause-22
// maximum MDC rate (22.2.2.13): on a Clock, MDIO_CFG.BSY stays set that
// long after a cycle starts.
const MDIOFrameTime = 25600 * time.Nanosecond

// Clock is model time for what the model times on its own: with a Clock
// (SetClock), an MDIO cycle keeps MDIO_CFG.BSY set for MDIOFrameTime of
// it, and only Advance moves it on, never the wall clock. Without one an
// MDIO cycle ends as it starts (BSY is never seen set).
type Clock struct{ now atomic.Int64 }

// NewClock returns a clock at model time 0.
func NewClock() *Clock { return &Clock{} }

// Now is the model time.
func (c *Clock) Now() time.Duration { return time.Duration(c.now.Load()) }

// Advance moves model time on by d.
func (c *Clock) Advance(d time.Duration) { c.now.Add(int64(d)) }

// SetClock times the function's MDIO cycles on c (nil: they end at once).
func (d *Device) SetClock(c *Clock) { d.clock.Store(c) }

// MDIOBusyUntil is the model time at which the MDIO frame in flight on
// either of the function's MDIO controllers ends, and whether one is in
// flight (never without a Clock).
func (d *Device) MDIOBusyUntil() (time.Duration, bool) {
	c := d.clock.Load()
	if c == nil {
		return 0, false
	}
	end := max(d.emdio.busyUntil.Load(), d.imdio.busyUntil.Load())
	return time.Duration(end), end > c.now.Load()
}

// MDIOAccessing reports whether an MDIO register access to a function of
// the device's chip is under way (the ERR050089 window). On a Clock such an
// access takes no model time: a harness that moves the clock on keeps still
// while one is under way.
func (d *Device) MDIOAccessing() bool { return d.chip.mdio.Load() != nil }

// startFrame puts one MDIO frame on bus b: it keeps the bus busy for
// MDIOFrameTime of model time, if the function has a Clock.
func (d *Device) startFrame(b *mdioBus) {
	d.st.mdioFrames.Add(1)
	if c := d.clock.Load(); c != nil {
		b.busyUntil.Store(c.now.Load() + int64(MDIOFrameTime))
	}
}

// busy reports whether bus b's frame is still on the wire.
func (d *Device) busy(b *mdioBus) bool {
	c := d.clock.Load()
	return c != nil && c.now.Load() < b.busyUntil.Load()
}

// PHYSSR is the PHY's vendor status register, laid out as the AR8031's
// PHY-specific status (Linux at803x.c AT803X_SPECIFIC_STATUS): bits 15:14
// speed (0 = 10M, 1 = 100M, 2 = 1G), bit 13 full duplex, bit 11 speed and
// duplex resolved, bit 10 link. The standard clause-22 registers are
// the models' own transcription, sim/simphy.
const phySSR = 0x11

// bmsrCaps is what the PHY can do: 100/10 full and half duplex, extended
// status (gigabit), auto-negotiation, extended capabilities.
const bmsrCaps = simphy.BMSR_100FULL | simphy.BMSR_100HALF | simphy.BMSR_10FULL | simphy.BMSR_10HALF |
	simphy.BMSR_ESTATUS | simphy.BMSR_ANCAPABLE | simphy.BMSR_EXTCAP

// Clause-45 devices of the simulated PHY.
const (
	MMDPMAPMD = 1
	MMDPCS    = 3
	MMDAN     = 7
	// MMDStatus is the status register (reg 1) of every MMD: bit 2 link.
	MMDStatus = 1
)

// phy is the external PHY on the port MDIO bus.
type phy struct {
	addr             int
	bmcr, anar, gbcr atomic.Uint32
	// The AR8031/AR8033's vendor registers (phyvendor.go).
	chipCfg, dbgAddr atomic.Uint32
	dbg              [arDebugRegs]atomic.Uint32
}

func (p *phy) reset() {
	p.bmcr.Store(simphy.BMCR_ANENABLE | simphy.BMCR_FULLDUPLEX | simphy.BMCR_SPEED_MSB)
	p.anar.Store(simphy.ANAR_100FULL | simphy.ANAR_100HALF | simphy.ANAR_10FULL | simphy.ANAR_10HALF | simphy.ANAR_CSMA)
	p.gbcr.Store(simphy.CTRL1000_1000FULL | simphy.CTRL1000_1000HALF)
}

// err050089 records a register access made while an MDIO register access
// of function m of the chip (d itself, or another function) is under way.
func (d *Device) err050089(off uint32, m *Device) {
	d.st.err050089.Add(1)
	where := ""
	if m != d {
		where = " on " + m.name
	}
	d.recordErr("ERR050089: access to %s (%#x) during an MDIO register access%s: on LS1028A either may be dropped or corrupted; serialise every MDIO register access against all other register accesses of every ENETC function", regName(off), off, where)
}

// mdioWindow opens the ERR050089 window of one MDIO register access and
// returns the function that closes it. The window is the access, not the
// transaction: Linux takes its erratum lock for writing around each MDIO
// register access (enetc_hw.h enetc_port_rd_mdio/enetc_port_wr_mdio) and
// lets every other access run while a cycle is on the MDIO wire, so that is
// what the erratum allows. Inside the window the model yields its processor
// once, so that an unserialised access from another goroutine has a chance
// to land in it and be recorded.
func (d *Device) mdioWindow() (end func()) {
	if !d.chip.mdio.CompareAndSwap(nil, d) {
		return func() {} // another MDIO access is under way: recorded by the caller's check
	}
	if h := d.chip.inWindow; h != nil {
		h()
	} else {
		runtime.Gosched()
	}
	return d.endWindow
}

func (d *Device) endWindow() { d.chip.mdio.CompareAndSwap(d, nil) }

// mdioRead reads an MDIO controller register. CFG shows BSY while the
// frame a cycle started is on the wire (on a Clock; else never).
func (d *Device) mdioRead(b *mdioBus, reg uint32) uint32 {
	defer d.mdioWindow()()
	switch reg {
	case regMDIO_CFG:
		v := b.cfg.Load() &^ mdio_cfg_BSY
		if d.busy(b) {
			v |= mdio_cfg_BSY
		}
		return v
	case regMDIO_CTL:
		return b.ctl.Load()
	case regMDIO_DATA:
		return b.data.Load()
	}
	return b.addr.Load()
}

// mdioWrite writes an MDIO controller register; CTL with READ set starts a
// read cycle, DATA starts a write cycle, ADDR (clause 45) an address cycle.
func (d *Device) mdioWrite(b *mdioBus, reg uint32, v uint32) {
	defer d.mdioWindow()()
	switch reg {
	case regMDIO_CFG:
		b.cfg.Store(v &^ (mdio_cfg_BSY | mdio_cfg_RD_ER))
		return
	case regMDIO_ADDR:
		b.addr.Store(v & 0xFFFF)
		d.startFrame(b) // the clause-45 address frame
		return
	case regMDIO_CTL:
		b.ctl.Store(v &^ mdio_ctl_READ)
		if v&mdio_ctl_READ == 0 {
			return
		}
		d.startFrame(b)
		val, ok := d.mdioAccess(b, false, 0)
		cfg := b.cfg.Load() &^ mdio_cfg_RD_ER
		if !ok {
			cfg |= mdio_cfg_RD_ER // nobody answered
			val = 0xFFFF
		}
		b.cfg.Store(cfg)
		b.data.Store(uint32(val))
		return
	case regMDIO_DATA:
		b.data.Store(v & 0xFFFF)
		d.startFrame(b)
		d.mdioAccess(b, true, uint16(v))
	}
}

// mdioAccess performs one clause-22 or clause-45 cycle on bus b.
func (d *Device) mdioAccess(b *mdioBus, write bool, v uint16) (uint16, bool) {
	ctl := b.ctl.Load()
	port := int(ctl >> 5 & 0x1F)
	dev := int(ctl & 0x1F)
	c45 := b.cfg.Load()&mdio_cfg_ENC45 != 0
	if b == &d.imdio {
		if port != 0 {
			return 0, false
		}
		return d.pcsAccess(c45, dev, int(b.addr.Load()), write, v), true
	}
	if port != d.phy.addr {
		return 0, false
	}
	if c45 {
		return d.phyC45(dev, int(b.addr.Load()), write, v), true
	}
	return d.phyC22(dev, write, v), true
}

// linkBit returns the link state as a status register shows it; the first
// read after a link loss shows it down (latched low).
func (d *Device) linkBit() bool {
	if d.latchDown.Swap(false) {
		return false
	}
	return d.link.Load()
}

func (d *Device) speedCode() uint32 {
	switch d.speedMbps() {
	case 10:
		return 0
	case 100:
		return 1
	}
	return 2
}

func (d *Device) phyC22(reg int, write bool, v uint16) uint16 {
	p := &d.phy
	if r, ok := p.vendor(reg, write, v); ok {
		return r
	}
	if write {
		switch reg {
		case simphy.BMCR:
			p.bmcr.Store(uint32(v &^ simphy.BMCR_RESET)) // reset completes at once
			if v&simphy.BMCR_RESET != 0 {
				p.reset()
			}
		case simphy.ANAR:
			p.anar.Store(uint32(v))
		case simphy.CTRL1000:
			p.gbcr.Store(uint32(v))
		}
		return 0
	}
	up := d.link.Load()
	anlpar, stat1000 := simphy.Partner(d.speedMbps())
	switch reg {
	case simphy.BMCR:
		return uint16(p.bmcr.Load())
	case simphy.BMSR:
		s := uint16(bmsrCaps)
		if d.linkBit() && p.copperPage() {
			s |= simphy.BMSR_LINK | simphy.BMSR_ANCOMPLETE
		}
		return s
	case simphy.PHYID1:
		return uint16(d.cfg.PHYID >> 16)
	case simphy.PHYID2:
		return uint16(d.cfg.PHYID)
	case simphy.ANAR:
		return uint16(p.anar.Load())
	case simphy.ANLPAR:
		if !up {
			return 0
		}
		return anlpar
	case simphy.CTRL1000:
		return uint16(p.gbcr.Load())
	case simphy.STAT1000:
		if !up {
			return 0
		}
		return stat1000
	case simphy.ESTATUS:
		return simphy.ESTATUS_1000T_FULL | simphy.ESTATUS_1000T_HALF
	case phySSR:
		if !up {
			return 0
		}
		return uint16(d.speedCode()<<14 | 1<<13 | 1<<11 | 1<<10)
	}
	return 0
}

func (d *Device) phyC45(mmd, reg int, write bool, v uint16) uint16 {
	if write {
		return 0
	}
	switch mmd {
	case MMDPMAPMD, MMDPCS, MMDAN:
	default:
		return 0
	}
	switch reg {
	case MMDStatus:
		var s uint16
		if d.linkBit() {
			s |= simphy.BMSR_LINK // an MMD status register has BMSR's link bit
		}
		if mmd == MMDAN && d.link.Load() {
			s |= simphy.BMSR_ANCOMPLETE // and the AN MMD its AN-complete bit
		}
		return s
	case 2:
		return uint16(d.cfg.PHYID >> 16)
	case 3:
		return uint16(d.cfg.PHYID)
	case 5:
		return 1<<MMDPMAPMD | 1<<MMDPCS | 1<<MMDAN // devices in package
	}
	return 0
}

// macStatus is PM0_STATUS (DPDK's reading of it: bit 16 link, bits 18:17
// speed, bit 19 full duplex).
func (d *Device) macStatus() uint32 {
	if !d.carrier() {
		return 0
	}
	return pm0_status_LINK | d.speedCode()<<17 | pm0_status_FULLDX
}

// SetMACLoopback sets or clears the eMAC's loopback bit (PM0_CMD_CFG.XGLP)
// with a register write, as a driver would, and reports whether it was set.
// Only a PF has the eMAC.
func (d *Device) SetMACLoopback(on bool) (was bool) {
	v := d.Read32(regPM0_CMD_CFG)
	nv := v &^ pm_cmd_cfg_XGLP
	if on {
		nv |= pm_cmd_cfg_XGLP
	}
	d.Write32(regPM0_CMD_CFG, nv)
	return v&pm_cmd_cfg_XGLP != 0
}

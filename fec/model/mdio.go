package model

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/sim/simphy"
)

// MMFR fields (docs/hardware-fec.md §2.3).
const (
	mmfr_ST_SHIFT = 30
	mmfr_OP_SHIFT = 28
	mmfr_PA_SHIFT = 23
	mmfr_RA_SHIFT = 18
	mmfr_TA_SHIFT = 16
)

// The PHY's identity and abilities; its registers and bits are the
// models' own clause-22 transcription, sim/simphy.
const (
	phyIDHigh = 0x0022
	phyIDLow  = 0x1622
	// bmsrBase100 is a 10/100 PHY: 100/10 full and half duplex,
	// preamble suppression, auto-negotiation, extended capabilities.
	bmsrBase100 = simphy.BMSR_100FULL | simphy.BMSR_100HALF | simphy.BMSR_10FULL | simphy.BMSR_10HALF |
		simphy.BMSR_PREAMBLE_SUPPRESS | simphy.BMSR_ANCAPABLE | simphy.BMSR_EXTCAP
	// bmsrBase is a gigabit PHY: the same and extended status.
	bmsrBase = bmsrBase100 | simphy.BMSR_ESTATUS
)

// phy is a generic clause-22 PHY whose link partner offers every mode up
// to the configured speed, full and half duplex (simphy.Partner).
// Auto-negotiation completes at once and resolves, as IEEE 802.3 28B.3
// does (simphy.Resolve), to the best mode both ends advertise: a driver
// that takes the 1000BASE-T modes out of CTRL1000 (a MAC that cannot run
// 1000 Mb/s) and restarts auto-negotiation gets 100 Mb/s from a gigabit
// partner. With auto-negotiation off the link runs at the partner's speed.
type phy struct {
	mu       sync.Mutex
	addr     int
	partner  int          // the link partner's top speed in Mb/s
	speed    atomic.Int32 // resolved speed in Mb/s; read by the MAC per frame
	gigabit  bool
	up       bool
	latchLow bool // link went down since BMSR was last read
	regs     [32]uint16
	// id is the PHY identifier (Config.PHYID); strapDelays the RGMII
	// delays an RTL8211F starts with; paged its paged registers
	// (phyvendor.go); inReset: the reset pin is held (HoldPHYReset).
	id          uint32
	strapDelays bool
	paged       map[uint32]*[rtlPagedRegsNr]uint16
	inReset     bool
}

func (p *phy) init(addr, speed int, gigabit bool, id uint32, strapDelays bool) {
	p.addr, p.gigabit, p.partner = addr, gigabit, speed
	p.id, p.strapDelays = id, strapDelays
	if p.id == 0 {
		p.id = defaultPHYID
	}
	p.reset()
}

// setPartner gives the link partner top speed speed and renegotiates.
func (p *phy) setPartner(speed int) {
	p.mu.Lock()
	p.partner = speed
	p.resolve()
	p.mu.Unlock()
}

// resolve sets the resolved speed from the advertisement and the
// partner's abilities (p.mu held or not yet shared).
func (p *phy) resolve() {
	if p.regs[simphy.BMCR]&simphy.BMCR_ANENABLE == 0 {
		p.speed.Store(int32(p.partner))
		return
	}
	anlpar, stat1000 := simphy.Partner(p.partner)
	l := simphy.Resolve(p.regs[simphy.BMCR], simphy.BMSR_LINK|simphy.BMSR_ANCOMPLETE|simphy.BMSR_ESTATUS,
		p.regs[simphy.ANAR], anlpar, p.regs[simphy.CTRL1000], stat1000, p.gigabit)
	p.speed.Store(int32(l.SpeedMbps))
}

// reset loads the PHY's reset values (p.mu held or not yet shared).
func (p *phy) reset() {
	p.regs = [32]uint16{}
	p.regs[simphy.BMCR] = simphy.BMCR_ANENABLE | simphy.BMCR_FULLDUPLEX
	if p.gigabit {
		p.regs[simphy.BMCR] |= simphy.BMCR_SPEED_MSB
		p.regs[simphy.CTRL1000] = simphy.CTRL1000_1000FULL | simphy.CTRL1000_1000HALF
		p.regs[simphy.ESTATUS] = simphy.ESTATUS_1000T_FULL | simphy.ESTATUS_1000T_HALF
	}
	p.regs[simphy.PHYID1], p.regs[simphy.PHYID2] = uint16(p.id>>16), uint16(p.id)
	p.regs[simphy.ANAR] = simphy.ANAR_100FULL | simphy.ANAR_100HALF | simphy.ANAR_10FULL | simphy.ANAR_10HALF | simphy.ANAR_CSMA
	p.vendorReset()
	p.resolve()
}

func (p *phy) setLink(up bool) {
	p.mu.Lock()
	if p.up && !up {
		p.latchLow = true
	}
	p.up = up
	p.mu.Unlock()
}

func (p *phy) read(reg int) uint16 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inReset {
		return 0xFFFF // nobody drives the bus
	}
	if v, ok := p.vendorRead(reg); ok {
		return v
	}
	anlpar, stat1000 := simphy.Partner(p.partner)
	switch reg {
	case simphy.BMSR:
		v := uint16(bmsrBase100)
		if p.gigabit {
			v = bmsrBase
		}
		if p.up {
			v |= simphy.BMSR_ANCOMPLETE
			if !p.latchLow {
				v |= simphy.BMSR_LINK
			}
		}
		p.latchLow = false // latched-low link status clears on read
		return v
	case simphy.ANLPAR:
		if !p.up {
			return 0
		}
		return anlpar
	case simphy.ANER:
		if p.up {
			return simphy.ANER_LP_AN_ABLE
		}
		return 0
	case simphy.STAT1000:
		if !p.up {
			return 0
		}
		return stat1000
	}
	return p.regs[reg&31]
}

func (p *phy) write(reg int, v uint16) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inReset || p.vendorWrite(reg, v) {
		return
	}
	switch reg {
	case simphy.BMCR:
		if v&simphy.BMCR_RESET != 0 {
			p.reset()
			return
		}
		p.regs[simphy.BMCR] = v &^ simphy.BMCR_ANRESTART // restart completes at once
		if v&simphy.BMCR_ANRESTART != 0 || v&simphy.BMCR_ANENABLE == 0 {
			p.renegotiate()
		}
	case simphy.BMSR, simphy.PHYID1, simphy.PHYID2, simphy.ANLPAR, simphy.ANER, simphy.STAT1000, simphy.ESTATUS:
		// read-only
	default:
		p.regs[reg&31] = v
	}
}

// renegotiate resolves the link again (p.mu held): a new speed takes the
// link down once, latched low in BMSR, as a real renegotiation does.
func (p *phy) renegotiate() {
	old := p.speed.Load()
	p.resolve()
	if p.up && p.speed.Load() != old {
		p.latchLow = true
	}
}

func (d *Device) mmfrWrite(v uint32) {
	d.regs[regMMFR/4].Store(v)
	if d.reg(regMSCR)&0xFF == 0 {
		return // no MDC: the frame waits until MSCR is set
	}
	d.mdioStart(v)
}

// mdioStart begins a management frame: at once, or after Config.MDIOTime
// (then it completes on the first EIR or MMFR read after that time).
func (d *Device) mdioStart(v uint32) {
	if d.mdioTime <= 0 {
		d.mdioExec(v)
		return
	}
	d.mdioFrame.Store(v)
	d.mdioDue.Store(time.Now().Add(d.mdioTime).UnixNano())
}

// mdioPoll completes a timed management frame whose time has come.
func (d *Device) mdioPoll() {
	due := d.mdioDue.Load()
	if due == 0 || time.Now().UnixNano() < due {
		return
	}
	if d.mdioDue.CompareAndSwap(due, 0) {
		d.mdioExec(d.mdioFrame.Load())
	}
}

func (d *Device) mscrWrite(v uint32) {
	v &= d.defs[regMSCR/4].mask
	old := d.reg(regMSCR)
	d.regs[regMSCR/4].Store(v)
	if d.prof.ClearSetupMII && old&0xFF == 0 && v&0xFF != 0 {
		if m := d.reg(regMMFR); m != 0 {
			d.mdioStart(m)
		}
	}
}

// mdioExec runs one management frame and raises EIR.MII.
func (d *Device) mdioExec(v uint32) {
	d.st.mdioFrames.Add(1)
	st, op := v>>mmfr_ST_SHIFT&3, v>>mmfr_OP_SHIFT&3
	pa, ra, ta := int(v>>mmfr_PA_SHIFT&31), int(v>>mmfr_RA_SHIFT&31), v>>mmfr_TA_SHIFT&3
	res := v
	switch {
	case st == 1 && ta == 2 && op == 2: // clause-22 read
		val := uint16(0xFFFF) // nobody drives the bus
		if ph := d.phyAt(pa); ph != nil {
			val = ph.read(ra)
		}
		res = v&^0xFFFF | uint32(val)
	case st == 1 && ta == 2 && op == 1: // clause-22 write
		if ph := d.phyAt(pa); ph != nil {
			ph.write(ra, uint16(v))
		}
	case st == 0 && d.prof.MDIOC45 && (op == 2 || op == 3):
		res = v | 0xFFFF // no clause-45 device answers
	case st == 1 || st == 0 && d.prof.MDIOC45:
		if op&2 != 0 {
			res = v | 0xFFFF // malformed read frame: the bus floats high
		}
	}
	d.regs[regMMFR/4].Store(res)
	d.setEIR(eir_MII)
}

// phyAt is the PHY answering at MDIO address a, nil for none.
func (d *Device) phyAt(a int) *phy {
	d.busMu.Lock()
	defer d.busMu.Unlock()
	return d.phyAtLocked(a)
}

func (d *Device) phyAtLocked(a int) *phy {
	if a == d.phy.addr && !d.phyElsewhere {
		return &d.phy
	}
	for _, o := range d.others {
		if o.addr == a {
			return o
		}
	}
	return nil
}

// PHYAddr is the simulated PHY's MDIO address.
func (d *Device) PHYAddr() int { return d.phy.addr }

// SetMACLoopback sets or clears the MAC's loopback bit (RCR.LOOP) with a
// register write, as a driver would, and reports whether it was set.
func (d *Device) SetMACLoopback(on bool) (was bool) {
	v := d.Read32(regRCR)
	nv := v &^ rcr_LOOP
	if on {
		nv |= rcr_LOOP
	}
	d.Write32(regRCR, nv)
	return v&rcr_LOOP != 0
}

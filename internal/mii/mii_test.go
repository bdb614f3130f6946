package mii

import (
	"errors"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

const (
	anOn   = BMCR_ANENABLE | BMCR_FULLDUPLEX | BMCR_SPEED_MSB
	up     = BMSR_LINK | BMSR_ANCOMPLETE | BMSR_ESTATUS
	all100 = ANAR_100FULL | ANAR_100HALF | ANAR_10FULL | ANAR_10HALF | ANAR_CSMA
	gig    = CTRL1000_1000FULL | CTRL1000_1000HALF
)

func TestResolve(t *testing.T) {
	lp100, _ := Partner(100)
	lp1000, st1000 := Partner(1000)
	lp10, _ := Partner(10)
	for _, c := range []struct {
		name    string
		r       Regs
		gigabit bool
		want    driver.Link
	}{
		{"link down", Regs{BMCR: anOn, BMSR: up &^ BMSR_LINK, ANAR: all100, ANLPAR: lp100}, true, driver.Link{}},
		{"AN not complete", Regs{BMCR: anOn, BMSR: BMSR_LINK, ANAR: all100, ANLPAR: lp100}, true, driver.Link{}},
		{"1000 full", Regs{anOn, up, all100, lp1000, gig, st1000}, true, driver.Link{Up: true, SpeedMbps: 1000, FullDuplex: true}},
		{"1000 half only", Regs{anOn, up, all100, lp1000, CTRL1000_1000HALF, st1000}, true, driver.Link{Up: true, SpeedMbps: 1000}},
		{"MAC not gigabit", Regs{anOn, up, all100, lp1000, gig, st1000}, false, driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}},
		{"PHY without ESTATUS", Regs{anOn, up &^ BMSR_ESTATUS, all100, lp1000, gig, st1000}, true, driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}},
		{"100 full", Regs{anOn, up, all100, lp100, gig, 0}, true, driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}},
		{"100 half", Regs{anOn, up, ANAR_100HALF | ANAR_10FULL | ANAR_CSMA, lp100, 0, 0}, true, driver.Link{Up: true, SpeedMbps: 100}},
		{"10 full", Regs{anOn, up, all100, lp10, gig, 0}, true, driver.Link{Up: true, SpeedMbps: 10, FullDuplex: true}},
		{"nothing shared", Regs{anOn, up, ANAR_100FULL | ANAR_CSMA, ANAR_10HALF | ANAR_CSMA, 0, 0}, true, driver.Link{Up: true, SpeedMbps: 10}},
		{"forced 100 full", Regs{BMCR: BMCR_SPEED_LSB | BMCR_FULLDUPLEX, BMSR: BMSR_LINK}, true, driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}},
		{"forced 1000 half", Regs{BMCR: BMCR_SPEED_MSB, BMSR: BMSR_LINK}, true, driver.Link{Up: true, SpeedMbps: 1000}},
		{"forced 10 half", Regs{BMCR: 0, BMSR: BMSR_LINK}, true, driver.Link{Up: true, SpeedMbps: 10}},
	} {
		if got := Resolve(c.r, c.gigabit); got != c.want {
			t.Errorf("%s: Resolve = %v, want %v", c.name, got, c.want)
		}
	}
}

// fakePHY is a register file whose BMSR link bit latches low once.
type fakePHY struct {
	regs    [32]uint16
	latched bool
	fail    int // register whose read fails, -1 for none
	reads   []int
}

func (p *fakePHY) read(reg int) (uint16, error) {
	p.reads = append(p.reads, reg)
	if reg == p.fail {
		return 0, errors.New("no answer")
	}
	v := p.regs[reg]
	if reg == BMSR && p.latched {
		p.latched = false
		v &^= BMSR_LINK
	}
	return v, nil
}

func TestReadLink(t *testing.T) {
	lp, st := Partner(1000)
	p := &fakePHY{fail: -1, latched: true}
	p.regs[BMCR], p.regs[BMSR], p.regs[ANAR], p.regs[ANLPAR], p.regs[CTRL1000], p.regs[STAT1000] = anOn, up, all100, lp, gig, st
	l, err := ReadLink(p.read, true)
	if err != nil || l != (driver.Link{Up: true, SpeedMbps: 1000, FullDuplex: true}) {
		t.Fatalf("ReadLink after a latched loss = %v, %v; want the current state, up 1000 full", l, err)
	}
	if p.reads[0] != BMSR || p.reads[1] != BMSR {
		t.Errorf("reads %v: BMSR must be read twice first", p.reads)
	}
	for _, r := range p.reads {
		if r == ANAR || r == ANLPAR {
			t.Errorf("reads %v: a 1000BASE-T link needs no ANAR/ANLPAR", p.reads)
		}
	}
	p = &fakePHY{fail: ANLPAR}
	p.regs[BMCR], p.regs[BMSR] = anOn, up
	if l, err := ReadLink(p.read, true); err == nil || l.Up {
		t.Errorf("ReadLink with ANLPAR unreadable = %v, %v; want an error and no link", l, err)
	}
	p = &fakePHY{fail: -1}
	p.regs[BMCR], p.regs[BMSR] = anOn, up&^BMSR_LINK
	if l, err := ReadLink(p.read, true); err != nil || l.Up || len(p.reads) != 2 {
		t.Errorf("ReadLink with the link down = %v, %v after reads %v; want down after two BMSR reads", l, err, p.reads)
	}
}

func TestPartner(t *testing.T) {
	for _, c := range []struct {
		speed          int
		anlpar, stat1k uint16
	}{{10, 0x4061, 0}, {100, 0x41E1, 0}, {1000, 0x41E1, 0x3C00}} {
		a, s := Partner(c.speed)
		if a != c.anlpar || s != c.stat1k {
			t.Errorf("Partner(%d) = %#04x, %#04x; want %#04x, %#04x", c.speed, a, s, c.anlpar, c.stat1k)
		}
	}
}

// TestBitNames: the dump table and the constants name the same bits.
func TestBitNames(t *testing.T) {
	for _, c := range []struct {
		reg  int
		name string
		bit  uint16
	}{
		{BMCR, "ANENABLE", BMCR_ANENABLE}, {BMCR, "SPEED_MSB", BMCR_SPEED_MSB}, {BMCR, "FULLDUPLEX", BMCR_FULLDUPLEX},
		{BMSR, "LINK", BMSR_LINK}, {BMSR, "ANCOMPLETE", BMSR_ANCOMPLETE}, {BMSR, "ESTATUS", BMSR_ESTATUS},
		{ANAR, "100FULL", ANAR_100FULL}, {ANLPAR, "10HALF", ANAR_10HALF}, {CTRL1000, "1000FULL", CTRL1000_1000FULL},
		{STAT1000, "LP_1000FULL", STAT1000_LP_1000FULL}, {ESTATUS, "1000T_FULL", ESTATUS_1000T_FULL},
	} {
		found := false
		for _, b := range Bits(c.reg) {
			if b.Name == c.name {
				found = true
				if 1<<b.Bit != c.bit {
					t.Errorf("%s.%s: table says bit %d, constant is %#04x", Name(c.reg), c.name, b.Bit, c.bit)
				}
			}
		}
		if !found {
			t.Errorf("%s.%s missing from the bit table", Name(c.reg), c.name)
		}
	}
	if Name(ANLPAR) != "ANLPAR" || Name(20) != "" {
		t.Errorf("Name(ANLPAR) = %q, Name(20) = %q", Name(ANLPAR), Name(20))
	}
}

// Partner is what a link partner that auto-negotiated a link at speedMbps
// (10, 100 or 1000), full duplex, shows in ANLPAR and STAT1000: every mode
// up to its speed, full and half duplex, acknowledged; a 1000 Mb/s partner
// also reports both receivers OK: the partner these tests give a PHY.
// The models' own is sim/simphy's, which TestModelPHYBehaviour checks
// against this one.
func Partner(speedMbps int) (anlpar, stat1000 uint16) {
	anlpar = ANAR_ACK | ANAR_10FULL | ANAR_10HALF | ANAR_CSMA
	if speedMbps >= 100 {
		anlpar |= ANAR_100FULL | ANAR_100HALF
	}
	if speedMbps >= 1000 {
		stat1000 = STAT1000_LOCAL_RX_OK | STAT1000_REMOTE_RX_OK | STAT1000_LP_1000FULL | STAT1000_LP_1000HALF
	}
	return anlpar, stat1000
}

package mii_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/internal/mii"
	"github.com/gopmd/gopmd/sim/simphy"
)

// TestModelPHYTranscription cross-checks the two clause-22
// transcriptions, the drivers' (this package) and the models'
// (sim/simphy), as the ENETC and FEC register tables are: every register
// and bit the models name has the drivers' number and value, and every
// bit the drivers name of a register the models model is transcribed.
func TestModelPHYTranscription(t *testing.T) {
	byName := map[string]int{}
	for reg := 0; reg < 32; reg++ {
		if n := mii.Name(reg); n != "" {
			byName[n] = reg
		}
	}
	names := simphy.Regs()
	sort.Strings(names)
	for _, n := range []string{"BMCR", "BMSR", "PHYID1", "PHYID2", "ANAR", "ANLPAR", "CTRL1000", "STAT1000", "ESTATUS"} {
		if _, ok := simphy.Reg(n); !ok {
			t.Errorf("sim/simphy has no register %s", n)
		}
	}
	for _, n := range names {
		got, _ := simphy.Reg(n)
		want, ok := byName[n]
		if !ok {
			t.Errorf("sim/simphy register %s: internal/mii has no register of that name", n)
			continue
		}
		if got != want {
			t.Errorf("register %s: sim/simphy 0x%02x, internal/mii 0x%02x", n, got, want)
		}
		for _, b := range mii.Bits(want) {
			f := n + "." + b.Name
			v, ok := simphy.Field(f)
			if !ok {
				t.Errorf("sim/simphy has no field %s (internal/mii: bit %d)", f, b.Bit)
				continue
			}
			if v != 1<<b.Bit {
				t.Errorf("field %s: sim/simphy %#04x, internal/mii bit %d (%#04x)", f, v, b.Bit, 1<<b.Bit)
			}
		}
	}
	for _, f := range simphy.Fields() {
		reg, bit, _ := strings.Cut(f, ".")
		r, ok := byName[reg]
		if !ok {
			t.Errorf("sim/simphy field %s: internal/mii has no register %s", f, reg)
			continue
		}
		found := false
		for _, b := range mii.Bits(r) {
			found = found || b.Name == bit
		}
		if !found {
			t.Errorf("sim/simphy field %s: internal/mii names no such bit", f)
		}
	}
	// The multi-bit and selector values the registers share.
	if simphy.ANAR_CSMA != mii.ANAR_CSMA {
		t.Errorf("ANAR selector of IEEE 802.3: sim/simphy %#x, internal/mii %#x", simphy.ANAR_CSMA, mii.ANAR_CSMA)
	}
}

// TestModelPHYBehaviour cross-checks what the two transcriptions do with
// the registers: a model PHY's link partner (Partner) and the link a PHY
// resolves (Resolve), over every combination of the bits resolution looks
// at.
func TestModelPHYBehaviour(t *testing.T) {
	for _, speed := range []int{10, 100, 1000} {
		a1, s1 := simphy.Partner(speed)
		a2, s2 := mii.Partner(speed)
		if a1 != a2 || s1 != s2 {
			t.Errorf("partner at %d Mb/s: sim/simphy ANLPAR %#04x STAT1000 %#04x, internal/mii %#04x %#04x", speed, a1, s1, a2, s2)
		}
	}
	bmcrs := []uint16{0, mii.BMCR_SPEED_LSB, mii.BMCR_SPEED_MSB, mii.BMCR_FULLDUPLEX | mii.BMCR_SPEED_LSB,
		mii.BMCR_FULLDUPLEX | mii.BMCR_SPEED_MSB, mii.BMCR_ANENABLE, mii.BMCR_ANENABLE | mii.BMCR_SPEED_MSB | mii.BMCR_FULLDUPLEX}
	bmsrs := []uint16{0, mii.BMSR_LINK, mii.BMSR_LINK | mii.BMSR_ANCOMPLETE, mii.BMSR_LINK | mii.BMSR_ANCOMPLETE | mii.BMSR_ESTATUS}
	modes := []uint16{mii.ANAR_10HALF, mii.ANAR_10FULL, mii.ANAR_100HALF, mii.ANAR_100BASE_T4, mii.ANAR_100FULL}
	gigs := []uint16{0, mii.CTRL1000_1000HALF, mii.CTRL1000_1000FULL, mii.CTRL1000_1000HALF | mii.CTRL1000_1000FULL}
	checked := 0
	for _, bmcr := range bmcrs {
		for _, bmsr := range bmsrs {
			for anar := uint16(0); anar < 1<<len(modes); anar++ {
				for _, lp := range []uint16{0, 0x3, 0x7, 0x1f, 0x15} {
					for _, ctrl := range gigs {
						for _, lpg := range gigs {
							for _, gigabit := range []bool{false, true} {
								r := mii.Regs{BMCR: bmcr, BMSR: bmsr, ANAR: bitsOf(anar, modes) | mii.ANAR_CSMA,
									ANLPAR: bitsOf(lp, modes) | mii.ANAR_CSMA, CTRL1000: ctrl, STAT1000: lpg << 2}
								want := mii.Resolve(r, gigabit)
								got := simphy.Resolve(r.BMCR, r.BMSR, r.ANAR, r.ANLPAR, r.CTRL1000, r.STAT1000, gigabit)
								checked++
								if got.Up != want.Up || got.SpeedMbps != want.SpeedMbps || got.FullDuplex != want.FullDuplex {
									t.Fatalf("%+v gigabit=%v: sim/simphy resolves %+v, internal/mii %+v", r, gigabit, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no combination checked")
	}
}

// bitsOf sets the modes whose index bits are set in sel.
func bitsOf(sel uint16, modes []uint16) uint16 {
	var v uint16
	for i, m := range modes {
		if sel&(1<<i) != 0 {
			v |= m
		}
	}
	return v
}

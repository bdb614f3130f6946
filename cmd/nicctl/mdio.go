package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/mii"
)

func init() {
	var devad int
	register(&command{
		name: "mdio", args: "DEV read|write PHY[.DEVAD] REG [VAL]", min: 4, max: 5, force: true,
		summary: "read or write a PHY register, clause 22 (PHY) or 45 (PHY.DEVAD or --devad)",
		flags: func(fs *flag.FlagSet) func() error {
			fs.IntVar(&devad, "devad", -1, "clause-45 MMD `DEVAD` (the same as PHY.DEVAD)")
			return nil
		},
		run: func(e *env, a []string) (any, error) { return mdioCmd(e, a, devad) },
	})
	var phyAddr int
	register(&command{
		name: "phy", args: "DEV", min: 1, max: 1,
		summary: "the PHY by its ID, what the driver set up in it at open (reset line, delays, quirks), and the standard registers decoded (BMCR, BMSR, ANAR, ANLPAR, 1000BASE-T)",
		flags: func(fs *flag.FlagSet) func() error {
			fs.IntVar(&phyAddr, "phy", -1, "MDIO `ADDRESS` of the PHY (default: the one the driver found)")
			return nil
		},
		run: func(e *env, a []string) (any, error) { return phyCmd(e, a[0], phyAddr) },
	})
}

// setBits lists the names of the set bits of a standard register.
func setBits(reg int, v uint16) []string {
	out := []string{}
	for _, b := range mii.Bits(reg) {
		if v>>b.Bit&1 != 0 {
			out = append(out, b.Name)
		}
	}
	return out
}

// parseNum parses a number in Go syntax (0x.. hex) within [0, max].
func parseNum(what, s string, max uint64) (int, error) {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil || v > max {
		return 0, badInput("%s %q: give a number from 0 to %d (%#x), decimal or 0x hex", what, s, max, max)
	}
	return int(v), nil
}

// mdioResult is one MDIO access.
type mdioResult struct {
	Op    string   `json:"op"`
	PHY   int      `json:"phy"`
	DevAd *int     `json:"devad,omitempty"` // clause 45
	Reg   int      `json:"reg"`
	Name  string   `json:"name,omitempty"` // clause-22 register name
	Value uint16   `json:"value"`
	Bits  []string `json:"bits,omitempty"`
}

func (r *mdioResult) text(w io.Writer) {
	where := fmt.Sprintf("phy %d reg %#x", r.PHY, r.Reg)
	if r.DevAd != nil {
		where = fmt.Sprintf("phy %d devad %d reg %#x", r.PHY, *r.DevAd, r.Reg)
	}
	if r.Name != "" {
		where += " (" + r.Name + ")"
	}
	verb := "="
	if r.Op == "write" {
		verb = "<-"
	}
	fmt.Fprintf(w, "%s %s 0x%04x", where, verb, r.Value)
	if len(r.Bits) > 0 {
		fmt.Fprintf(w, "  %s", strings.Join(r.Bits, " "))
	}
	fmt.Fprintln(w)
}

func mdioCmd(e *env, a []string, devadFlag int) (any, error) {
	dev, op := a[0], a[1]
	if op != "read" && op != "write" {
		return nil, badInput("unknown MDIO operation %q: use read or write", op)
	}
	if op == "read" && len(a) != 4 {
		return nil, badInput("mdio read takes DEV read PHY REG, no value")
	}
	if op == "write" && len(a) != 5 {
		return nil, badInput("mdio write needs a value: DEV write PHY REG VAL")
	}
	phyS, devS, c45 := strings.Cut(a[2], ".")
	phy, err := parseNum("PHY address", phyS, 31)
	if err != nil {
		return nil, err
	}
	devad := -1
	if c45 {
		if devad, err = parseNum("clause-45 DEVAD", devS, 31); err != nil {
			return nil, err
		}
	}
	if devadFlag >= 0 {
		if c45 && devadFlag != devad {
			return nil, badInput("DEVAD given twice (%d in %s and --devad %d): give one", devad, a[2], devadFlag)
		}
		if devadFlag > 31 {
			return nil, badInput("--devad %d: give a number from 0 to 31", devadFlag)
		}
		devad = devadFlag
	}
	regMax := uint64(31)
	if devad >= 0 {
		regMax = 0xffff
	}
	reg, err := parseNum("register", a[3], regMax)
	if err != nil {
		return nil, err
	}
	var val int
	if op == "write" {
		if val, err = parseNum("value", a[4], 0xffff); err != nil {
			return nil, err
		}
		if !e.force {
			return nil, badInput("mdio write changes the PHY: add --force to do it")
		}
	}
	p, _, err := openPort(e, dev, driver.Config{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	r := &mdioResult{Op: op, PHY: phy, Reg: reg, Value: uint16(val)}
	if devad >= 0 {
		r.DevAd = &devad
		m, ok := p.(mdio45)
		if !ok {
			return nil, fmt.Errorf("%s: the %s driver has no clause-45 MDIO; use clause 22 (PHY without .DEVAD)", dev, p.Info().Driver)
		}
		if op == "read" {
			r.Value, err = m.MDIORead45(phy, devad, reg)
		} else {
			err = m.MDIOWrite45(phy, devad, reg, uint16(val))
		}
	} else {
		m, ok := p.(mdio22)
		if !ok {
			return nil, fmt.Errorf("%s: the %s driver has no MDIO access", dev, p.Info().Driver)
		}
		r.Name = mii.Name(reg)
		if op == "read" {
			r.Value, err = m.MDIORead(phy, reg)
		} else {
			err = m.MDIOWrite(phy, reg, uint16(val))
		}
		r.Bits = setBits(reg, r.Value)
		if len(r.Bits) == 0 {
			r.Bits = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: mdio %s: %w%s", dev, op, err, mdioHint(err))
	}
	return r, nil
}

// mdioHint says what to try when an MDIO access fails.
func mdioHint(err error) string {
	if errors.Is(err, driver.ErrNeedsPF) {
		return " (a VF has no MDIO: use the PF's spec)"
	}
	return " (check the PHY address with nicctl phy DEV, and the PHY's power and reset)"
}

// phyRegister is one standard register in the phy report.
type phyRegister struct {
	Name  string   `json:"name"`
	Reg   int      `json:"reg"`
	Value uint16   `json:"value"`
	Bits  []string `json:"bits"`
}

// phyResult is the phy report.
type phyResult struct {
	Dev   string `json:"dev"`
	PHY   int    `json:"phy"`
	ID    uint32 `json:"id"`
	OUI   uint32 `json:"oui"`
	Model uint8  `json:"model"`
	Rev   uint8  `json:"rev"`
	// LinkLatched is BMSR.LINK as first read (latched low: 0 if the link
	// dropped since the last read); Link is the second read.
	LinkLatched bool          `json:"link_latched"`
	Link        bool          `json:"link"`
	ANComplete  bool          `json:"an_complete"`
	Resolved    string        `json:"resolved"` // "1000full", "100half", ..., "" when none
	Registers   []phyRegister `json:"registers"`
	// Name names the part by its id (mii.Describe); Setup is what the
	// driver did to the port's PHY at open (nil for another address, or
	// a driver that reports none).
	Name  string      `json:"name"`
	Setup *mii.Report `json:"setup,omitempty"`
}

// phySetupReporter is a port that says what it did to its PHY at open.
type phySetupReporter interface{ PHYSetup() mii.Report }

func (r *phyResult) text(w io.Writer) {
	fmt.Fprintf(w, "%s: PHY at MDIO address %d, ID 0x%08x (OUI 0x%06x, model %#x, rev %d): %s\n", r.Dev, r.PHY, r.ID, r.OUI, r.Model, r.Rev, r.Name)
	if s := r.Setup; s != nil {
		if s.Reset != "" {
			fmt.Fprintf(w, "reset line: %s\n", s.Reset)
		}
		for _, l := range s.Programmed {
			fmt.Fprintf(w, "programmed: %s\n", l)
		}
		if s.Left != "" {
			fmt.Fprintf(w, "programmed: nothing: %s\n", s.Left)
		}
	}
	link := "down"
	if r.Link {
		link = "up"
	}
	if r.Link != r.LinkLatched {
		link += " (latched " + map[bool]string{true: "up", false: "down: it dropped since the last read"}[r.LinkLatched] + ")"
	}
	an := "not complete"
	if r.ANComplete {
		an = "complete"
	}
	res := r.Resolved
	if res == "" {
		res = "none"
	}
	fmt.Fprintf(w, "link %s, autonegotiation %s, resolved %s\n", link, an, res)
	for _, g := range r.Registers {
		fmt.Fprintf(w, "  %-9s (%2d) 0x%04x  %s\n", g.Name, g.Reg, g.Value, strings.Join(g.Bits, " "))
	}
}

// resolve picks the best mode both ends advertise (IEEE 802.3 annex 28B
// priority), "" when there is none.
func resolve(anar, anlpar, ctrl1000, stat1000 uint16) string {
	modes := uint16(mii.ANAR_100BASE_T4 | mii.ANAR_100FULL | mii.ANAR_100HALF | mii.ANAR_10FULL | mii.ANAR_10HALF)
	gig := ctrl1000&mii.CTRL1000_1000FULL != 0 && stat1000&mii.STAT1000_LP_1000FULL != 0 ||
		ctrl1000&mii.CTRL1000_1000HALF != 0 && stat1000&mii.STAT1000_LP_1000HALF != 0
	if anar&anlpar&modes == 0 && !gig {
		return "" // the two ends share no mode
	}
	l := mii.Resolve(mii.Regs{BMCR: mii.BMCR_ANENABLE, BMSR: mii.BMSR_LINK | mii.BMSR_ANCOMPLETE | mii.BMSR_ESTATUS,
		ANAR: anar, ANLPAR: anlpar, CTRL1000: ctrl1000, STAT1000: stat1000}, true)
	if l.FullDuplex {
		return fmt.Sprintf("%dfull", l.SpeedMbps)
	}
	return fmt.Sprintf("%dhalf", l.SpeedMbps)
}

func phyCmd(e *env, dev string, addr int) (any, error) {
	if addr > 31 {
		return nil, badInput("--phy %d: give an MDIO address from 0 to 31", addr)
	}
	p, _, err := openPort(e, dev, driver.Config{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	m, ok := p.(mdio22)
	if !ok {
		return nil, fmt.Errorf("%s: the %s driver has no MDIO access", dev, p.Info().Driver)
	}
	if addr < 0 {
		a, known := phyAddress(p)
		if !known || a < 0 {
			return nil, fmt.Errorf("%s: no PHY: the port runs as a fixed link (a VF, an internal port, or no PHY answered); give --phy ADDRESS to read one anyway", dev)
		}
		addr = a
	}
	read := func(reg int) (uint16, error) {
		v, err := m.MDIORead(addr, reg)
		if err != nil {
			return 0, fmt.Errorf("%s: read PHY %d register %d (%s): %w%s", dev, addr, reg, mii.Name(reg), err, mdioHint(err))
		}
		return v, nil
	}
	r := &phyResult{Dev: dev, PHY: addr}
	vals := map[int]uint16{}
	latched, err := read(mii.BMSR)
	if err != nil {
		return nil, err
	}
	for _, reg := range []int{mii.BMCR, mii.BMSR, mii.PHYID1, mii.PHYID2, mii.ANAR, mii.ANLPAR, mii.ANER, mii.CTRL1000, mii.STAT1000, mii.ESTATUS} {
		v, err := read(reg)
		if err != nil {
			return nil, err
		}
		vals[reg] = v
	}
	id1, id2 := vals[mii.PHYID1], vals[mii.PHYID2]
	r.ID = uint32(id1)<<16 | uint32(id2)
	r.OUI, r.Model, r.Rev = mii.PHYID(id1, id2)
	r.Name = "a part gopmd does not know (by OUI and model above)"
	if m, ok := mii.Identify(r.ID); ok {
		r.Name = m.Name
	}
	if sr, ok := p.(phySetupReporter); ok {
		if a, known := phyAddress(p); known && a == addr {
			s := sr.PHYSetup()
			r.Setup = &s
		}
	}
	r.LinkLatched, r.Link = latched&mii.BMSR_LINK != 0, vals[mii.BMSR]&mii.BMSR_LINK != 0
	r.ANComplete = vals[mii.BMSR]&mii.BMSR_ANCOMPLETE != 0
	gig := vals[mii.BMSR]&mii.BMSR_ESTATUS != 0 // extended status: a gigabit PHY has CTRL1000/STAT1000
	c1000, s1000 := vals[mii.CTRL1000], vals[mii.STAT1000]
	if !gig {
		c1000, s1000 = 0, 0
	}
	if r.ANComplete {
		r.Resolved = resolve(vals[mii.ANAR], vals[mii.ANLPAR], c1000, s1000)
	}
	for _, reg := range []int{mii.BMCR, mii.BMSR, mii.ANAR, mii.ANLPAR, mii.ANER, mii.CTRL1000, mii.STAT1000, mii.ESTATUS} {
		if !gig && (reg == mii.CTRL1000 || reg == mii.STAT1000 || reg == mii.ESTATUS) {
			continue
		}
		bits := setBits(reg, vals[reg])
		switch reg {
		case mii.ANAR, mii.ANLPAR:
			bits = append(bits, fmt.Sprintf("SELECTOR=%d", vals[reg]&mii.ANAR_SELECTOR))
		case mii.STAT1000:
			bits = append(bits, fmt.Sprintf("IDLE_ERRORS=%d", vals[reg]&mii.STAT1000_IDLE_ERRORS))
		case mii.BMCR:
			bits = append(bits, "speed="+bmcrSpeed(vals[reg]))
		}
		r.Registers = append(r.Registers, phyRegister{Name: mii.Name(reg), Reg: reg, Value: vals[reg], Bits: bits})
	}
	return r, nil
}

// bmcrSpeed decodes BMCR's two speed bits (forced mode).
func bmcrSpeed(v uint16) string {
	switch v & (mii.BMCR_SPEED_MSB | mii.BMCR_SPEED_LSB) {
	case 0:
		return "10"
	case mii.BMCR_SPEED_LSB:
		return "100"
	case mii.BMCR_SPEED_MSB:
		return "1000"
	}
	return "reserved"
}

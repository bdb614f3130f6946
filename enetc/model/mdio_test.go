package model

import (
	"strings"
	"testing"

	"github.com/gopmd/gopmd/internal/mii"
)

// mdioBusT runs MDIO cycles as §2.9 describes (Linux's sequence).
type mdioBusT struct {
	d    *Device
	base uint32
}

func (m mdioBusT) wait() {
	for m.d.Read32(m.base+regMDIO_CFG)&mdio_cfg_BSY != 0 {
	}
}

const mdioCfg = 0x00808108 // HOLD(2) | CLKDIV | NEG, as Linux programs it

func (m mdioBusT) read22(phy, reg int) (uint16, bool) {
	m.d.Write32(m.base+regMDIO_CFG, mdioCfg)
	m.wait()
	m.d.Write32(m.base+regMDIO_CTL, uint32(phy<<5|reg))
	m.d.Write32(m.base+regMDIO_CTL, uint32(phy<<5|reg)|mdio_ctl_READ)
	m.wait()
	if m.d.Read32(m.base+regMDIO_CFG)&mdio_cfg_RD_ER != 0 {
		return 0xFFFF, false
	}
	return uint16(m.d.Read32(m.base + regMDIO_DATA)), true
}

func (m mdioBusT) write22(phy, reg int, v uint16) {
	m.d.Write32(m.base+regMDIO_CFG, mdioCfg)
	m.wait()
	m.d.Write32(m.base+regMDIO_CTL, uint32(phy<<5|reg))
	m.d.Write32(m.base+regMDIO_DATA, uint32(v))
	m.wait()
}

func (m mdioBusT) read45(phy, mmd, reg int) (uint16, bool) {
	m.d.Write32(m.base+regMDIO_CFG, mdioCfg|mdio_cfg_ENC45)
	m.wait()
	m.d.Write32(m.base+regMDIO_CTL, uint32(phy<<5|mmd))
	m.d.Write32(m.base+regMDIO_ADDR, uint32(reg))
	m.wait()
	m.d.Write32(m.base+regMDIO_CTL, uint32(phy<<5|mmd)|mdio_ctl_READ)
	m.wait()
	if m.d.Read32(m.base+regMDIO_CFG)&mdio_cfg_RD_ER != 0 {
		return 0xFFFF, false
	}
	return uint16(m.d.Read32(m.base + regMDIO_DATA)), true
}

func TestMDIOPHY(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, PHYAddr: 2, PHYID: 0x01410DD1, SpeedMbps: 1000})
	ext := mdioBusT{h.d, EMDIOBase}
	for _, c := range []struct {
		name         string
		c45          bool
		phy, mmd, rg int
		want         uint16
		ok           bool
	}{
		{"C22 PHYID1", false, 2, 0, mii.PHYID1, 0x0141, true},
		{"C22 PHYID2", false, 2, 0, mii.PHYID2, 0x0DD1, true},
		{"C22 BMSR link up", false, 2, 0, mii.BMSR, bmsrCaps | mii.BMSR_LINK | mii.BMSR_ANCOMPLETE, true},
		{"C22 BMCR", false, 2, 0, mii.BMCR, 0x1140, true},
		{"C22 1000BASE-T status", false, 2, 0, mii.STAT1000, 0x3C00, true},
		{"C22 speed/link", false, 2, 0, phySSR, 2<<14 | 1<<13 | 1<<11 | 1<<10, true},
		{"C22 no PHY at 5", false, 5, 0, mii.PHYID1, 0xFFFF, false},
		{"C45 PMA/PMD ID1", true, 2, MMDPMAPMD, 2, 0x0141, true},
		{"C45 PMA/PMD ID2", true, 2, MMDPMAPMD, 3, 0x0DD1, true},
		{"C45 PCS status link", true, 2, MMDPCS, MMDStatus, mii.BMSR_LINK, true},
		{"C45 AN status", true, 2, MMDAN, MMDStatus, mii.BMSR_LINK | mii.BMSR_ANCOMPLETE, true},
		{"C45 no PHY at 9", true, 9, MMDPMAPMD, 2, 0xFFFF, false},
	} {
		var got uint16
		var ok bool
		if c.c45 {
			got, ok = ext.read45(c.phy, c.mmd, c.rg)
		} else {
			got, ok = ext.read22(c.phy, c.rg)
		}
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %#04x ok %v, want %#04x ok %v", c.name, got, ok, c.want, c.ok)
		}
	}
	// Link loss is latched low in BMSR: the first read after a flap shows
	// it even though the link is back.
	h.d.FlapLink(1)
	if v, _ := ext.read22(2, mii.BMSR); v&mii.BMSR_LINK != 0 {
		t.Error("BMSR did not latch the link loss")
	}
	if v, _ := ext.read22(2, mii.BMSR); v&mii.BMSR_LINK == 0 {
		t.Error("BMSR link still down on the second read")
	}
	h.d.SetLink(false)
	if v, _ := ext.read22(2, phySSR); v != 0 {
		t.Errorf("PHY status %#x with link down", v)
	}
	if h.d.Read32(regPM0_STATUS)&pm0_status_LINK != 0 {
		t.Error("PM0_STATUS link with link down")
	}
	// Writes reach the PHY; BMCR reset self-clears.
	ext.write22(2, mii.ANAR, 0x0061)
	if v, _ := ext.read22(2, mii.ANAR); v != 0x0061 {
		t.Errorf("ANAR %#x after write", v)
	}
	ext.write22(2, mii.BMCR, mii.BMCR_RESET)
	if v, _ := ext.read22(2, mii.BMCR); v != 0x1140 {
		t.Errorf("BMCR %#x after reset", v)
	}
	h.noModelErrors()
}

func TestMDIOInternalPCS(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	in := mdioBusT{h.d, IMDIOBase}
	in.write22(0, 0x14, 0x0003) // IF_MODE = SGMII_EN | SGMII_AN
	if v, _ := in.read22(0, 0x14); v != 3 {
		t.Errorf("PCS IF_MODE %#x", v)
	}
	if v, _ := in.read22(0, mii.BMSR); v&mii.BMSR_LINK == 0 {
		t.Errorf("PCS BMSR %#x without link", v)
	}
	if _, ok := in.read22(1, mii.BMSR); ok {
		t.Error("answer from address 1 of the internal bus")
	}
	if h.d.Read32(regPCAPR0)&pcapr0_IMDIO == 0 {
		t.Error("PCAPR0 does not announce the internal MDIO")
	}
}

// TestERR050089Detected: the window is one MDIO register access, as Linux
// holds its erratum lock for writing around each (enetc_hw.h
// enetc_port_rd_mdio): an access that lands inside one is recorded; accesses
// between the MDIO register accesses of a transaction, while its frame is
// on the MDIO wire, are not.
func TestERR050089Detected(t *testing.T) {
	t.Parallel()
	chip := NewChip()
	d := newHarness(t, Config{PF: true, PHYAddr: 1, Chip: chip}).d
	d.Write32(EMDIOBase+regMDIO_CFG, mdioCfg)
	d.Write32(EMDIOBase+regMDIO_CTL, 1<<5|mii.BMSR|mdio_ctl_READ)
	d.Read32(regSIMR)                            // between two MDIO register accesses: allowed
	chip.inWindow = func() { d.Read32(regSIMR) } // lands inside the next access
	d.Read32(EMDIOBase + regMDIO_CFG)
	chip.inWindow = nil
	d.Read32(regSIMR)
	if s := d.Stats(); s.ERR050089 != 1 {
		t.Fatalf("ERR050089 count %d, want 1", s.ERR050089)
	}
	if e := d.ModelErrors(); len(e) != 1 || !strings.Contains(e[0], "ERR050089") || !strings.Contains(e[0], "SIMR") {
		t.Fatalf("model errors %q", e)
	}
}

// TestERR050089AcrossFunctions: the window spans every function of a chip.
// An access to another function's registers during one function's MDIO
// register access is recorded by the function accessed; functions of
// another chip are not concerned.
func TestERR050089AcrossFunctions(t *testing.T) {
	t.Parallel()
	chip := NewChip()
	a := newHarness(t, Config{PF: true, PHYAddr: 1, Chip: chip}).d
	b := newHarness(t, Config{PF: true, Chip: chip, Name: "enetc1"}).d
	other := newHarness(t, Config{PF: true, Name: "enetc9"}).d
	a.Write32(EMDIOBase+regMDIO_CFG, mdioCfg)
	chip.inWindow = func() {
		b.Read32(regTBCIR)                    // another function of the chip: a violation
		b.Read32(EMDIOBase + regMDIO_CFG)     // its MDIO block too
		other.Write32(regTBPIR+RingStride, 0) // another chip: fine
	}
	a.Write32(EMDIOBase+regMDIO_CTL, 1<<5|mii.BMSR|mdio_ctl_READ)
	chip.inWindow = nil
	b.Read32(regTBCIR) // fine now
	if s := b.Stats(); s.ERR050089 != 2 {
		t.Errorf("function b: ERR050089 count %d, want 2", s.ERR050089)
	}
	if e := b.ModelErrors(); len(e) == 0 || !strings.Contains(e[0], "TBCIR") || !strings.Contains(e[0], "on enetc") {
		t.Errorf("function b: model errors %q", e)
	}
	if s := a.Stats(); s.ERR050089 != 0 {
		t.Errorf("function a: ERR050089 count %d, want 0", s.ERR050089)
	}
	if s := other.Stats(); s.ERR050089 != 0 {
		t.Errorf("another chip: ERR050089 count %d, want 0", s.ERR050089)
	}
}

// TestMDIOFrameOnClock: with a Clock, a cycle keeps MDIO_CFG.BSY set for
// one MDIO frame of model time, and only the clock moves it on.
func TestMDIOFrameOnClock(t *testing.T) {
	t.Parallel()
	d := newHarness(t, Config{PF: true, PHYAddr: 1}).d
	c := NewClock()
	d.SetClock(c)
	d.Write32(EMDIOBase+regMDIO_CFG, mdioCfg)
	d.Write32(EMDIOBase+regMDIO_CTL, 1<<5|mii.BMSR|mdio_ctl_READ)
	if end, busy := d.MDIOBusyUntil(); !busy || end != MDIOFrameTime {
		t.Fatalf("MDIOBusyUntil %v, %v; want %v, true", end, busy, MDIOFrameTime)
	}
	if d.Read32(EMDIOBase+regMDIO_CFG)&mdio_cfg_BSY == 0 {
		t.Fatal("BSY clear at model time 0")
	}
	c.Advance(MDIOFrameTime - 1)
	if d.Read32(EMDIOBase+regMDIO_CFG)&mdio_cfg_BSY == 0 {
		t.Fatal("BSY clear before the frame's end")
	}
	c.Advance(1)
	if d.Read32(EMDIOBase+regMDIO_CFG)&mdio_cfg_BSY != 0 {
		t.Fatal("BSY still set at the frame's end")
	}
	if _, busy := d.MDIOBusyUntil(); busy {
		t.Fatal("a frame still in flight")
	}
	if n := d.Stats().MDIOFrames; n != 1 {
		t.Fatalf("MDIOFrames %d, want 1", n)
	}
}

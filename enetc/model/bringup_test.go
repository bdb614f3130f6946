package model

import (
	"testing"

	"github.com/gopmd/gopmd/internal/mii"
)

// The public drivers' bring-up sequences, replayed register by register
// from what each source does (docs/hardware-enetc.md §6.1), on the reset
// values the model gives a port of each wiring. Each must pass frames both
// ways, or bring the PCS's link up, as it does on silicon.

// pcsModify is a read-modify-write of a PCS register over the internal
// MDIO bus (Linux mdiodev_modify).
func pcsModify(in mdioBusT, reg int, mask, set uint16) {
	v, _ := in.read22(0, reg)
	in.write22(0, reg, v&^mask|set)
}

// bringUp builds a port of the given wiring and speed with its rings set
// up, runs the sequence and reports whether frames pass both ways.
func bringUp(t *testing.T, cfg Config, seq func(h *harness, in mdioBusT)) (*harness, bool) {
	t.Helper()
	cfg.PF = true
	h := newHarness(t, cfg)
	h.up()
	h.setupRx(0, 16, 2048, 0)
	h.setupTx(0, 16)
	seq(h, mdioBusT{h.d, IMDIOBase})
	return h, passes(t, h)
}

// TestLinuxBringUp replays Linux's sequences: the ENETC PF driver's
// mac_config and mac_link_up (drivers/net/ethernet/freescale/enetc/
// enetc_pf.c enetc_mac_config, enetc_force_rgmii_mac) and the Lynx PCS
// driver's pcs_config and pcs_link_up (drivers/net/pcs/pcs-lynx.c
// lynx_pcs_config_giga with drivers/net/phy/phylink.c
// phylink_mii_c22_pcs_config, lynx_pcs_link_up_sgmii,
// lynx_pcs_link_up_2500basex). Linux never writes PM0_IF_MODE for SGMII or
// 2500BASE-X.
func TestLinuxBringUp(t *testing.T) {
	t.Parallel()
	// lynx_pcs_link_up_2500basex: IF_MODE speed 1000 (the lane's PLL
	// makes it 2500), full duplex; nothing else.
	linkUp2500 := func(in mdioBusT) { pcsModify(in, PCSIfMode, pcsIfHalf|pcsIfSpeedMask, 2<<pcsIfSpeedSh) }
	for _, c := range []struct {
		name  string
		mode  string
		speed int
		seq   func(h *harness, in mdioBusT)
	}{
		{"SGMII in-band (managed = in-band-status, the RDB's PF0)", PHYModeSGMII, 1000, func(h *harness, in mdioBusT) {
			in.write22(0, PCSLinkTimerLo, 0x0D40) // 1.6 ms in 8 ns steps
			in.write22(0, PCSLinkTimerHi, 0x0003)
			pcsModify(in, PCSIfMode, pcsIfSGMIIEn|pcsIfSGMIIAN, pcsIfSGMIIEn|pcsIfSGMIIAN)
			in.write22(0, PCSDevAbility, 0x0001) // ADVERTISE_SGMII
			pcsModify(in, mii.BMCR, mii.BMCR_ANENABLE, mii.BMCR_ANENABLE)
			pcsModify(in, mii.BMCR, 0, mii.BMCR_ANRESTART) // lynx_pcs_an_restart
		}},
		{"SGMII out of band at 100", PHYModeSGMII, 100, func(h *harness, in mdioBusT) {
			in.write22(0, PCSLinkTimerLo, 0x0D40)
			in.write22(0, PCSLinkTimerHi, 0x0003)
			pcsModify(in, PCSIfMode, pcsIfSGMIIEn|pcsIfSGMIIAN, pcsIfSGMIIEn)
			in.write22(0, PCSDevAbility, 0x0001)
			pcsModify(in, mii.BMCR, mii.BMCR_ANENABLE, 0)
			pcsModify(in, PCSIfMode, pcsIfHalf|pcsIfSpeedMask, 1<<pcsIfSpeedSh) // link up at 100 full
		}},
		{"2500BASE-X before NXP's 2025 change (BMCR never written)", PHYMode2500BaseX, 1000, func(h *harness, in mdioBusT) {
			linkUp2500(in)
		}},
		{"2500BASE-X with NXP's 2025 change, out of band", PHYMode2500BaseX, 1000, func(h *harness, in mdioBusT) {
			in.write22(0, PCSLinkTimerLo, 0x12D0) // 10 ms, the 1000BASE-X/2500BASE-X timer
			in.write22(0, PCSLinkTimerHi, 0x0013)
			pcsModify(in, PCSIfMode, pcsIfSGMIIEn|pcsIfSGMIIAN, 0) // IF_MODE = 0
			in.write22(0, PCSDevAbility, 0x01A0)                   // 1000BASE-X full duplex, pause
			pcsModify(in, mii.BMCR, mii.BMCR_ANENABLE, 0)
			linkUp2500(in)
		}},
		{"2500BASE-X with NXP's 2025 change, in band (clause 37)", PHYMode2500BaseX, 1000, func(h *harness, in mdioBusT) {
			in.write22(0, PCSLinkTimerLo, 0x12D0)
			in.write22(0, PCSLinkTimerHi, 0x0013)
			pcsModify(in, PCSIfMode, pcsIfSGMIIEn|pcsIfSGMIIAN, 0)
			in.write22(0, PCSDevAbility, 0x01A0)
			pcsModify(in, mii.BMCR, mii.BMCR_ANENABLE, mii.BMCR_ANENABLE)
			pcsModify(in, mii.BMCR, 0, mii.BMCR_ANRESTART)
		}},
		{"RGMII at 100", PHYModeRGMII, 100, func(h *harness, in mdioBusT) {
			v := h.d.Read32(regPM0_IF_MODE) &^ (ifm_EN_AUTO | ifm_IFMODE_MASK)
			h.d.Write32(regPM0_IF_MODE, v|ifm_IFMODE_GMII|ifm_RG) // enetc_mac_config
			v = h.d.Read32(regPM0_IF_MODE) &^ (ifm_SSP_MASK | ifm_FULL_DPX)
			h.d.Write32(regPM0_IF_MODE, v|0<<ifm_SSP_SHIFT|ifm_FULL_DPX) // enetc_force_rgmii_mac
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, ok := bringUp(t, Config{PHYMode: c.mode, SpeedMbps: c.speed}, c.seq)
			if !ok {
				t.Fatalf("no frames pass (PM0_IF_MODE %#x, PCS IF_MODE %#x, BMCR %#x)",
					h.d.Read32(regPM0_IF_MODE), h.d.pcs.regs[PCSIfMode].Load(), h.d.pcs.regs[mii.BMCR].Load())
			}
			in := mdioBusT{h.d, IMDIOBase}
			if c.mode != PHYModeRGMII {
				in.read22(0, mii.BMSR)
				if bmsr, _ := in.read22(0, mii.BMSR); bmsr&mii.BMSR_LINK == 0 {
					t.Fatalf("PCS BMSR %#x: no link", bmsr)
				}
			}
			h.noModelErrors()
		})
	}
}

// TestLinux2500BaseXInbandResult: with NXP's 2025 change Linux may run
// clause-37 AN on a 2500BASE-X lane (IF_MODE 0, AN on); the PCS reports AN
// complete and the partner's base page (full duplex, acknowledge), which
// phylink decodes as 2500 full duplex. With AN off it reports link only.
func TestLinux2500BaseXInbandResult(t *testing.T) {
	t.Parallel()
	for _, an := range []bool{false, true} {
		h := newHarness(t, Config{PF: true, PHYMode: PHYMode2500BaseX})
		in := mdioBusT{h.d, IMDIOBase}
		pcsModify(in, PCSIfMode, pcsIfSGMIIEn|pcsIfSGMIIAN, 0)
		bmcr := uint16(0)
		if an {
			bmcr = mii.BMCR_ANENABLE
		}
		pcsModify(in, mii.BMCR, mii.BMCR_ANENABLE, bmcr)
		bmsr, _ := in.read22(0, mii.BMSR)
		lpa, _ := in.read22(0, PCSPartner)
		if bmsr&mii.BMSR_LINK == 0 || (bmsr&mii.BMSR_ANCOMPLETE != 0) != an {
			t.Fatalf("AN %v: BMSR %#x", an, bmsr)
		}
		if want := map[bool]uint16{false: 0, true: 1<<14 | 1<<5}[an]; lpa != want {
			t.Fatalf("AN %v: partner word %#x, want %#x", an, lpa, want)
		}
	}
}

// TestUBootBringUp replays U-Boot's ENETC driver (drivers/net/fsl_enetc.c):
// enetc_probe programs the PCS (enetc_start_pcs, enetc_init_sgmii), then
// every enetc_start does a function-level reset before it sets up the
// rings and the MAC; enetc_setup_mac_iface touches PM0_IF_MODE only for
// RGMII (enetc_init_rgmii: EN_AUTO cleared, SSP and FULL_DPX forced).
func TestUBootBringUp(t *testing.T) {
	t.Parallel()
	// enetc_init_sgmii: IF_MODE, DEV_ABILITY, link timer, then BMCR:
	// 0x0140 with AN restart (0x1200) for SGMII, with reset (0x8000) for
	// 2500BASE-X.
	initSGMII := func(in mdioBusT, is2500 bool) {
		ifm, cr := uint16(pcsIfSGMIIEn|pcsIfSGMIIAN), uint16(0x0140|0x1200)
		if is2500 {
			ifm, cr = pcsIfSGMIIEn|2<<pcsIfSpeedSh, 0x0140|0x8000
		}
		in.write22(0, PCSIfMode, ifm)
		in.write22(0, PCSDevAbility, 0x4001)
		in.write22(0, PCSLinkTimerLo, 0x06A0)
		in.write22(0, PCSLinkTimerHi, 0x0003)
		in.write22(0, mii.BMCR, cr)
	}
	for _, c := range []struct {
		name  string
		mode  string
		speed int
		probe func(h *harness, in mdioBusT)
		start func(h *harness, in mdioBusT)
	}{
		{"SGMII", PHYModeSGMII, 1000, func(h *harness, in mdioBusT) { initSGMII(in, false) }, nil},
		{"SGMII at 100", PHYModeSGMII, 100, func(h *harness, in mdioBusT) { initSGMII(in, false) }, nil},
		{"2500BASE-X", PHYMode2500BaseX, 1000, func(h *harness, in mdioBusT) { initSGMII(in, true) }, nil},
		{"RGMII at 1000", PHYModeRGMII, 1000, nil, func(h *harness, in mdioBusT) {
			v := h.d.Read32(regPM0_IF_MODE)&^(ifm_EN_AUTO|ifm_SSP_MASK) | 2<<ifm_SSP_SHIFT | ifm_FULL_DPX
			h.d.Write32(regPM0_IF_MODE, v)
		}},
		{"RGMII at 10", PHYModeRGMII, 10, nil, func(h *harness, in mdioBusT) {
			v := h.d.Read32(regPM0_IF_MODE)&^(ifm_EN_AUTO|ifm_SSP_MASK) | 1<<ifm_SSP_SHIFT | ifm_FULL_DPX
			h.d.Write32(regPM0_IF_MODE, v)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true, PHYMode: c.mode, SpeedMbps: c.speed, PHYAddr: 2})
			in := mdioBusT{h.d, IMDIOBase}
			if c.probe != nil {
				c.probe(h, in)
			}
			for start := 0; start < 2; start++ { // a second start after an enetc_stop
				if err := h.d.Reset(); err != nil { // dm_pci_flr
					t.Fatal(err)
				}
				h.up()
				h.setupRx(0, 16, 2048, 0)
				h.setupTx(0, 16)
				ext := mdioBusT{h.d, EMDIOBase}
				if bmsr, _ := ext.read22(2, mii.BMSR); bmsr&mii.BMSR_LINK == 0 { // phy_startup
					ext.read22(2, mii.BMSR)
				}
				if c.start != nil {
					c.start(h, in)
				}
				if !passes(t, h) {
					t.Fatalf("start %d: no frames pass (PM0_IF_MODE %#x, PCS IF_MODE %#x, BMCR %#x)", start,
						h.d.Read32(regPM0_IF_MODE), h.d.pcs.regs[PCSIfMode].Load(), h.d.pcs.regs[mii.BMCR].Load())
				}
			}
			h.noModelErrors()
		})
	}
}

// TestFLRKeepsPHYAndPCS: a function-level reset puts the ENETC's registers
// back (PM0_IF_MODE to the wiring's reset value) but reaches neither the
// external PHY, a chip of its own, nor the PCS (U-Boot programs the PCS at
// probe and resets the function at every start, §6.1).
func TestFLRKeepsPHYAndPCS(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, PHYMode: PHYModeSGMII, PHYAddr: 2})
	ext, in := mdioBusT{h.d, EMDIOBase}, mdioBusT{h.d, IMDIOBase}
	ext.write22(2, mii.ANAR, mii.ANAR_100FULL|mii.ANAR_CSMA)
	ext.write22(2, mii.CTRL1000, 0)
	in.write22(0, PCSIfMode, pcsIfSGMIIEn|pcsIfSGMIIAN)
	in.write22(0, PCSDevAbility, 0x4001)
	in.write22(0, PCSLinkTimerLo, 0x06A0)
	h.d.Write32(regPM0_IF_MODE, ifm_IFMODE_GMII|ifm_RG)
	if err := h.d.Reset(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name string
		bus  mdioBusT
		addr int
		reg  int
		want uint16
	}{
		{"PHY ANAR", ext, 2, mii.ANAR, mii.ANAR_100FULL | mii.ANAR_CSMA},
		{"PHY CTRL1000", ext, 2, mii.CTRL1000, 0},
		{"PCS IF_MODE", in, 0, PCSIfMode, pcsIfSGMIIEn | pcsIfSGMIIAN},
		{"PCS DEV_ABILITY", in, 0, PCSDevAbility, 0x4001},
		{"PCS LINK_TIMER_LO", in, 0, PCSLinkTimerLo, 0x06A0},
	} {
		if v, _ := r.bus.read22(r.addr, r.reg); v != r.want {
			t.Errorf("%s after FLR: %#x, want %#x", r.name, v, r.want)
		}
	}
	if v := h.d.Read32(regPM0_IF_MODE); v != ifm_IFMODE_GMII {
		t.Errorf("PM0_IF_MODE after FLR: %#x, want the SGMII wiring's %#x", v, ifm_IFMODE_GMII)
	}
}

// TestPCSResetKeepsSettings: the BMCR reset bit restarts the PCS without
// wiping IF_MODE, DEV_ABILITY or the link timer, and BMCR keeps the rest
// of the value written with it (U-Boot writes 0x8140 for 2500BASE-X, AN
// off; Linux's Felix driver once wrote IF_MODE and then BMCR_RESET alone).
func TestPCSResetKeepsSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, PHYMode: PHYMode2500BaseX})
	in := mdioBusT{h.d, IMDIOBase}
	in.write22(0, PCSIfMode, pcsIfSGMIIEn|2<<pcsIfSpeedSh)
	in.write22(0, PCSDevAbility, 0x4001)
	in.write22(0, PCSLinkTimerLo, 0x06A0)
	in.write22(0, PCSLinkTimerHi, 0x0003)
	in.write22(0, mii.BMCR, mii.BMCR_RESET|mii.BMCR_FULLDUPLEX|mii.BMCR_SPEED_MSB)
	for reg, want := range map[int]uint16{
		PCSIfMode: pcsIfSGMIIEn | 2<<pcsIfSpeedSh, PCSDevAbility: 0x4001,
		PCSLinkTimerLo: 0x06A0, PCSLinkTimerHi: 0x0003,
		mii.BMCR: mii.BMCR_FULLDUPLEX | mii.BMCR_SPEED_MSB,
	} {
		if v, _ := in.read22(0, reg); v != want {
			t.Errorf("PCS register %#x after a BMCR reset: %#x, want %#x", reg, v, want)
		}
	}
	if !h.d.InterfaceUp() {
		t.Error("2500BASE-X interface down after U-Boot's reset")
	}
}

// TestStrictIFMode: with StrictIFMode, PM0_IF_MODE resets to 0 and a
// sequence that relies on the reset value (Linux's SGMII one) passes no
// frames until IFMODE is programmed.
func TestStrictIFMode(t *testing.T) {
	t.Parallel()
	seq := func(h *harness, in mdioBusT) { run(h, sgmiiInband[:len(sgmiiInband)-1]) } // no MAC IF_MODE write
	if _, ok := bringUp(t, Config{PHYMode: PHYModeSGMII, StrictIFMode: true}, seq); ok {
		t.Fatal("frames pass with PM0_IF_MODE at 0 (XGMII)")
	}
	if _, ok := bringUp(t, Config{PHYMode: PHYModeSGMII}, seq); !ok {
		t.Fatal("frames do not pass on the RCW's PM0_IF_MODE")
	}
}

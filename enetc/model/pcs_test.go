package model

import (
	"testing"

	"github.com/gopmd/gopmd/internal/mii"
)

// A step of an interface bring-up: a PCS register write or a MAC IF_MODE
// write.
type ifStep struct {
	pcsReg int // -1: IF_MODE write
	v      uint32
}

func pcsW(reg int, v uint16) ifStep { return ifStep{reg, uint32(v)} }
func ifMode(v uint32) ifStep        { return ifStep{-1, v} }

// sgmiiInband is the SGMII in-band bring-up §6.1 gives: link timer 1.6 ms,
// PCS IF_MODE SGMII with AN, SGMII ability, AN enabled and restarted, MAC
// in GMII mode.
var sgmiiInband = []ifStep{
	pcsW(PCSLinkTimerLo, 0x0D40), pcsW(PCSLinkTimerHi, 0x0003),
	pcsW(PCSIfMode, pcsIfSGMIIEn|pcsIfSGMIIAN),
	pcsW(PCSDevAbility, 0x4001),
	pcsW(mii.BMCR, mii.BMCR_ANENABLE|mii.BMCR_ANRESTART|mii.BMCR_FULLDUPLEX|mii.BMCR_SPEED_MSB),
	ifMode(ifm_IFMODE_GMII),
}

func run(h *harness, steps []ifStep) {
	in := mdioBusT{h.d, IMDIOBase}
	for _, s := range steps {
		if s.pcsReg < 0 {
			h.d.Write32(regPM0_IF_MODE, s.v)
			h.d.Write32(regPM1_IF_MODE, s.v)
			continue
		}
		in.write22(0, s.pcsReg, uint16(s.v))
	}
}

func without(steps []ifStep, i int) []ifStep {
	return append(append([]ifStep(nil), steps[:i]...), steps[i+1:]...)
}

func with(steps []ifStep, i int, s ifStep) []ifStep {
	out := append([]ifStep(nil), steps...)
	out[i] = s
	return out
}

// passes reports whether a frame gets through the port both ways.
func passes(t *testing.T, h *harness) bool {
	t.Helper()
	rx := h.d.Receive(sized(64))
	if rx {
		h.recv(0)
	}
	before := len(h.w.get())
	h.send(0, 1, sized(80))
	tx := len(h.w.get()) > before
	if rx != tx {
		t.Fatalf("RX passes %v but TX %v: the interface gates one direction only", rx, tx)
	}
	return rx
}

// TestInterfaceModes checks the model's rules one setting at a time, with
// StrictIFMode so that PM0_IF_MODE counts only as the steps program it
// (bringup_test.go replays the public drivers' sequences on the RCW's
// reset values).
func TestInterfaceModes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		mode  string
		speed int
		steps []ifStep
		want  bool
	}{
		{"SGMII in-band AN", PHYModeSGMII, 1000, sgmiiInband, true},
		{"SGMII in-band AN at 100", PHYModeSGMII, 100, sgmiiInband, true},
		{"SGMII, nothing programmed", PHYModeSGMII, 1000, nil, false},
		{"SGMII without the link timer", PHYModeSGMII, 1000, without(without(sgmiiInband, 0), 0), false},
		{"SGMII without the PCS IF_MODE", PHYModeSGMII, 1000, without(sgmiiInband, 2), false},
		{"SGMII without the SGMII ability", PHYModeSGMII, 1000, without(sgmiiInband, 3), false},
		{"SGMII with AN off", PHYModeSGMII, 1000, with(sgmiiInband, 4, pcsW(mii.BMCR, mii.BMCR_FULLDUPLEX|mii.BMCR_SPEED_MSB)), false},
		{"SGMII with the MAC left in XGMII", PHYModeSGMII, 1000, without(sgmiiInband, 5), false},
		{"SGMII with the MAC in RGMII", PHYModeSGMII, 1000, with(sgmiiInband, 5, ifMode(ifm_IFMODE_GMII|ifm_RG)), false},
		{"SGMII forced 100 (no AN)", PHYModeSGMII, 100, []ifStep{pcsW(PCSIfMode, pcsIfSGMIIEn|1<<pcsIfSpeedSh), pcsW(mii.BMCR, 0), ifMode(ifm_IFMODE_GMII)}, true},
		{"SGMII forced 1000 on a 100 link", PHYModeSGMII, 100, []ifStep{pcsW(PCSIfMode, pcsIfSGMIIEn|2<<pcsIfSpeedSh), pcsW(mii.BMCR, 0), ifMode(ifm_IFMODE_GMII)}, false},
		{"2500BASE-X", PHYMode2500BaseX, 1000, []ifStep{pcsW(PCSIfMode, pcsIfSGMIIEn|2<<pcsIfSpeedSh), pcsW(mii.BMCR, mii.BMCR_FULLDUPLEX|mii.BMCR_SPEED_MSB), ifMode(ifm_IFMODE_GMII)}, true},
		{"2500BASE-X with AN left on", PHYMode2500BaseX, 1000, []ifStep{pcsW(PCSIfMode, pcsIfSGMIIEn|2<<pcsIfSpeedSh), ifMode(ifm_IFMODE_GMII)}, false},
		{"2500BASE-X with SGMII AN", PHYMode2500BaseX, 1000, []ifStep{pcsW(PCSIfMode, pcsIfSGMIIEn|pcsIfSGMIIAN|2<<pcsIfSpeedSh), pcsW(mii.BMCR, 0), ifMode(ifm_IFMODE_GMII)}, false},
		{"2500BASE-X at speed code 100", PHYMode2500BaseX, 1000, []ifStep{pcsW(PCSIfMode, pcsIfSGMIIEn|1<<pcsIfSpeedSh), pcsW(mii.BMCR, 0), ifMode(ifm_IFMODE_GMII)}, false},
		{"RGMII forced 1000", PHYModeRGMII, 1000, []ifStep{ifMode(ifm_IFMODE_GMII | ifm_RG | 2<<ifm_SSP_SHIFT | ifm_FULL_DPX)}, true},
		{"RGMII forced 10", PHYModeRGMII, 10, []ifStep{ifMode(ifm_IFMODE_GMII | ifm_RG | 1<<ifm_SSP_SHIFT | ifm_FULL_DPX)}, true},
		{"RGMII forced 1000 on a 100 link", PHYModeRGMII, 100, []ifStep{ifMode(ifm_IFMODE_GMII | ifm_RG | 2<<ifm_SSP_SHIFT | ifm_FULL_DPX)}, false},
		{"RGMII half duplex on a full-duplex link", PHYModeRGMII, 1000, []ifStep{ifMode(ifm_IFMODE_GMII | ifm_RG | 2<<ifm_SSP_SHIFT)}, false},
		{"RGMII in-band (EN_AUTO)", PHYModeRGMII, 100, []ifStep{ifMode(ifm_EN_AUTO | ifm_IFMODE_GMII | ifm_RG)}, true},
		{"RGMII without RG", PHYModeRGMII, 1000, []ifStep{ifMode(ifm_IFMODE_GMII | 2<<ifm_SSP_SHIFT | ifm_FULL_DPX)}, false},
		{"internal", PHYModeInternal, 1000, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true, PHYMode: c.mode, SpeedMbps: c.speed, StrictIFMode: true})
			h.up()
			h.setupRx(0, 16, 2048, 0)
			h.setupTx(0, 16)
			run(h, c.steps)
			if got := passes(t, h); got != c.want {
				t.Fatalf("frames pass: %v, want %v (IF_MODE %#x)", got, c.want, h.d.Read32(regPM0_IF_MODE))
			}
			if h.d.InterfaceUp() != c.want {
				t.Fatalf("InterfaceUp %v", h.d.InterfaceUp())
			}
			status := h.d.Read32(regPM0_STATUS)&pm0_status_LINK != 0
			if status != c.want {
				t.Fatalf("PM0_STATUS link %v", status)
			}
			h.noModelErrors()
		})
	}
}

// TestSGMIIAutonegResult: after in-band AN the PCS reports link and AN
// complete in BMSR and the PHY's speed and duplex in the partner word;
// before it, neither.
func TestSGMIIAutonegResult(t *testing.T) {
	t.Parallel()
	for _, speed := range []int{10, 100, 1000} {
		h := newHarness(t, Config{PF: true, PHYMode: PHYModeSGMII, SpeedMbps: speed})
		in := mdioBusT{h.d, IMDIOBase}
		if bmsr, _ := in.read22(0, mii.BMSR); bmsr&(mii.BMSR_LINK|mii.BMSR_ANCOMPLETE) != 0 {
			t.Fatalf("unprogrammed PCS: BMSR %#x shows link or AN complete", bmsr)
		}
		if lpa, _ := in.read22(0, PCSPartner); lpa != 0 {
			t.Fatalf("unprogrammed PCS: partner word %#x", lpa)
		}
		run(h, sgmiiInband)
		bmsr, _ := in.read22(0, mii.BMSR)
		if bmsr&mii.BMSR_LINK == 0 || bmsr&mii.BMSR_ANCOMPLETE == 0 {
			t.Fatalf("%d Mb/s: BMSR %#x after AN", speed, bmsr)
		}
		lpa, _ := in.read22(0, PCSPartner)
		if lpa>>15 != 1 || lpa>>12&1 != 1 || uint32(lpa>>10&3) != sgmiiSpeed(speed) {
			t.Fatalf("%d Mb/s: partner word %#x", speed, lpa)
		}
		h.d.SetLink(false)
		if bmsr, _ := in.read22(0, mii.BMSR); bmsr&mii.BMSR_LINK != 0 || h.d.InterfaceUp() {
			t.Fatalf("link down: PCS BMSR %#x, interface up %v", bmsr, h.d.InterfaceUp())
		}
		h.d.SetLink(true)
		if !h.d.InterfaceUp() {
			t.Fatal("the interface did not come back with the link")
		}
	}
}

// TestInterfaceQueuedTXLeavesOnBringUp: frames queued before the interface
// is programmed leave once it is.
func TestInterfaceQueuedTXLeavesOnBringUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, PHYMode: PHYModeRGMII, StrictIFMode: true})
	h.up()
	h.setupTx(0, 16)
	h.send(0, 1, sized(100), sized(101))
	if n := len(h.w.get()); n != 0 {
		t.Fatalf("%d frames left through an unprogrammed interface", n)
	}
	run(h, []ifStep{ifMode(ifm_IFMODE_GMII | ifm_RG | 2<<ifm_SSP_SHIFT | ifm_FULL_DPX)})
	if n := len(h.w.get()); n != 2 {
		t.Fatalf("%d of 2 queued frames left after IF_MODE was programmed", n)
	}
}

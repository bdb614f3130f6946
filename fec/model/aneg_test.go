package model

import (
	"testing"

	"github.com/gopmd/gopmd/internal/mii"
)

// TestPHYResolvesAdvertisement: the PHY resolves the best mode both it and
// its partner advertise: a gigabit partner and CTRL1000 without 1000BASE-T
// give 100 Mb/s once auto-negotiation restarts (the link latched low
// once), and putting 1000BASE-T back gives 1000 again.
func TestPHYResolvesAdvertisement(t *testing.T) {
	t.Parallel()
	d, _ := New(Config{SoC: "imx8mp", PHYAddr: 3})
	d.Write32(regMSCR, 0x1A)
	write := func(ra, v uint32) { d.Write32(regMMFR, 0x50020000|3<<23|ra<<18|v) }
	read := func(ra uint32) uint32 {
		d.Write32(regMMFR, 0x60020000|3<<23|ra<<18)
		return d.Read32(regMMFR) & 0xFFFF
	}
	if d.LinkSpeed() != 1000 {
		t.Fatalf("gigabit PHY, gigabit partner: %d Mb/s", d.LinkSpeed())
	}
	write(mii.CTRL1000, 0)
	if d.LinkSpeed() != 1000 {
		t.Fatalf("CTRL1000 written, no restart: %d Mb/s, want 1000 until auto-negotiation restarts", d.LinkSpeed())
	}
	read(mii.BMSR) // clear any latch
	write(mii.BMCR, mii.BMCR_ANENABLE|mii.BMCR_ANRESTART|mii.BMCR_FULLDUPLEX)
	if d.LinkSpeed() != 100 {
		t.Fatalf("1000BASE-T not advertised: %d Mb/s, want 100", d.LinkSpeed())
	}
	if b1, b2 := read(mii.BMSR), read(mii.BMSR); b1&mii.BMSR_LINK != 0 || b2&mii.BMSR_LINK == 0 {
		t.Fatalf("BMSR %#x then %#x: want the link latched low once, then up", b1, b2)
	}
	write(mii.CTRL1000, mii.CTRL1000_1000FULL)
	write(mii.BMCR, mii.BMCR_ANENABLE|mii.BMCR_ANRESTART|mii.BMCR_FULLDUPLEX)
	if d.LinkSpeed() != 1000 {
		t.Fatalf("1000BASE-T advertised again: %d Mb/s", d.LinkSpeed())
	}
	// A partner at 100 Mb/s: 100 whatever the PHY advertises.
	if err := d.SetLinkSpeed(100); err != nil || d.LinkSpeed() != 100 {
		t.Fatalf("partner at 100 Mb/s: %d Mb/s (%v)", d.LinkSpeed(), err)
	}
}

// TestGigabitNeedsRGMII: ECR.SPEED (1000 Mb/s) passes frames over RGMII
// (RCR.RGMII_EN) only; with RCR.RMII_MODE instead nothing passes and each
// frame is a speed mismatch.
func TestGigabitNeedsRGMII(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp"})
	w := &capture{}
	td.d.SetWire(w)
	td.send(0, testFrame(ourMAC, 60, 1))
	if len(w.get()) != 1 {
		t.Fatal("no frame passed at 1000 Mb/s over RGMII")
	}
	td.d.Write32(regECR, td.d.Read32(regECR)&^ecr_ETHEREN)
	td.d.Write32(regRCR, td.d.Read32(regRCR)&^rcr_RGMII_EN|1<<8) // RMII_MODE
	td.d.Write32(regECR, td.d.Read32(regECR)|ecr_ETHEREN)
	mis := td.d.Stats().SpeedMismatch
	if td.d.Receive(testFrame(ourMAC, 60, 2)) {
		t.Fatal("a frame was received at 1000 Mb/s over RMII")
	}
	if td.d.Stats().SpeedMismatch == mis {
		t.Fatal("the refused frame is not counted as a speed mismatch")
	}
}

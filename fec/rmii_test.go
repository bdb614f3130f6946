package fec_test

import (
	"testing"

	"github.com/gopmd/gopmd/internal/mii"
)

// TestRMIICapsGigabitPHY: a gigabit part wired RMII (phy-mode=rmii, or the
// i.MX6UL's default) to a gigabit PHY whose partner offers 1000 Mb/s runs
// at 100 Mb/s: the driver takes 1000BASE-T out of the PHY's advertisement,
// the PHY resolves 100 full duplex, ECR.SPEED stays clear beside
// RCR.RMII_MODE, and frames pass. The partner renegotiating at 1000 does
// not change that; a PHY forced to 1000 Mb/s (auto-negotiation off) is a
// link down, not a MAC at a speed RMII cannot carry.
func TestRMIICapsGigabitPHY(t *testing.T) {
	t.Parallel()
	for _, opts := range []string{"soc=imx8mp&phy-mode=rmii&link-poll=0", "soc=imx6ul&link-poll=0"} {
		p, m := openSim(t, opts)
		if l := p.Link(); !l.Up || l.SpeedMbps != 100 || !l.FullDuplex {
			t.Fatalf("%s: link %v, want up 100 Mb/s full duplex", opts, l)
		}
		ctrl, err := p.MDIORead(p.PHYAddr(), mii.CTRL1000)
		if err != nil || ctrl&(mii.CTRL1000_1000FULL|mii.CTRL1000_1000HALF) != 0 {
			t.Fatalf("%s: PHY CTRL1000 %#x (%v): still advertises 1000BASE-T", opts, ctrl, err)
		}
		if m.LinkSpeed() != 100 {
			t.Fatalf("%s: the PHY resolved %d Mb/s", opts, m.LinkSpeed())
		}
		if rcr := regValue(t, p, "RCR"); rcr&(1<<8) == 0 || rcr&(1<<6) != 0 {
			t.Fatalf("%s: RCR %#x: want RMII_MODE set, RGMII_EN clear", opts, rcr)
		}
		checkSpeedBits(t, p, m, 100, opts+" at start")
		if err := m.SetLinkSpeed(1000); err != nil {
			t.Fatal(err)
		}
		if l := p.UpdateLink(); l.SpeedMbps != 100 {
			t.Fatalf("%s: partner at 1000 Mb/s: link %v", opts, l)
		}
		checkSpeedBits(t, p, m, 100, opts+" after the partner renegotiated")
		// Auto-negotiation off, 1000 Mb/s forced.
		if err := p.MDIOWrite(p.PHYAddr(), mii.BMCR, mii.BMCR_SPEED_MSB|mii.BMCR_FULLDUPLEX); err != nil {
			t.Fatal(err)
		}
		if l := p.UpdateLink(); l.Up {
			t.Fatalf("%s: PHY forced to 1000 Mb/s: link %v, want down", opts, l)
		}
		if ecr := regValue(t, p, "ECR"); ecr&(1<<5) != 0 {
			t.Fatalf("%s: ECR %#x: SPEED set beside RMII", opts, ecr)
		}
	}
}

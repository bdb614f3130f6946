package enetc_test

import (
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/internal/mii"
	"github.com/gopmd/gopmd/sim"
)

// TestAR8031CopperPage: the LS1028A-RDB's AR8033 (the model's default
// PHY) left on its fiber page by a boot loader shows no link (BMSR is the
// fiber side's); the set-up New runs selects the copper page again, as
// Linux's at8031_config_init does, and the link comes up. nicctl's
// PHYSetup names the part and says what was done.
func TestAR8031CopperPage(t *testing.T) {
	t.Parallel()
	s := openSim(t, "wiring=sgmii", driver.Config{})
	a := sim.ENETCPHYAddr
	set := s.port.PHYSetup()
	if !strings.Contains(set.Name, "AR8031/AR8033") || len(set.Programmed) != 1 || !strings.Contains(set.Programmed[0], "copper page") {
		t.Fatalf("PHY set-up at New: %+v", set)
	}
	cc, err := s.port.MDIORead(a, mii.AR803X_CHIP_CONFIG)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.port.MDIOWrite(a, mii.AR803X_CHIP_CONFIG, cc&^mii.AR803X_BT_BX_REG_SEL); err != nil {
		t.Fatal(err)
	}
	if l := s.port.UpdateLink(); l.Up {
		t.Fatalf("link %v with the fiber page selected: the model's BMSR should be the fiber side's", l)
	}
	if err := enetc.ConfigurePHY(s.port); err != nil {
		t.Fatal(err)
	}
	if l := s.port.UpdateLink(); !l.Up {
		t.Fatalf("link %v after the set-up selected the copper page", l)
	}
	if got := s.port.PHYSetup().Programmed; len(got) != 1 || !strings.Contains(got[0], "the fiber page was") {
		t.Fatalf("programmed %q, want the copper page and that the fiber page was selected", got)
	}
}

// TestAR803xRGMIIDelays: on an RGMII port the AR803x's clock delays follow
// the phy-mode (at803x: debug 0 bit 15 RX, debug 5 bit 8 TX): rgmii-id
// both, rgmii-txid TX only, rgmii neither (its reset value has RX on).
func TestAR803xRGMIIDelays(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode   string
		rx, tx bool
	}{{"rgmii-id", true, true}, {"rgmii-txid", false, true}, {"rgmii", false, false}, {"rgmii-rxid", true, false}} {
		s := openSim(t, "wiring=rgmii&phy-mode="+c.mode, driver.Config{})
		rx, tx := s.model.PHYRGMIIDelays()
		if rx != c.rx || tx != c.tx {
			t.Errorf("phy-mode=%s: PHY delays rx %v tx %v, want rx %v tx %v", c.mode, rx, tx, c.rx, c.tx)
		}
		if got := s.port.PHYSetup().Programmed; len(got) != 2 || !strings.Contains(got[1], "phy-mode "+c.mode) {
			t.Errorf("phy-mode=%s: programmed %q", c.mode, got)
		}
	}
}

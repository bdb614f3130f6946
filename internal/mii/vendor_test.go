package mii

import (
	"strings"
	"testing"
)

// regFile is a PHY's registers with the AR803x's debug window: what
// Configure's writes do to a part, seen register by register.
type regFile struct {
	r   [32]uint16
	dbg [32]uint16
}

func (f *regFile) rw() RW {
	return RW{
		Read: func(reg int) (uint16, error) {
			if reg == AR803X_DEBUG_DATA {
				return f.dbg[f.r[AR803X_DEBUG_ADDR]&31], nil
			}
			return f.r[reg], nil
		},
		Write: func(reg int, v uint16) error {
			if reg == AR803X_DEBUG_DATA {
				f.dbg[f.r[AR803X_DEBUG_ADDR]&31] = v
				return nil
			}
			f.r[reg] = v
			return nil
		},
	}
}

// TestIdentify: the boards' PHYs by id (the public drivers' ids and
// masks), a KSZ8081 of any revision, and an unknown part by its OUI.
func TestIdentify(t *testing.T) {
	for id, want := range map[uint32]string{
		0x001cc916: "RTL8211F", 0x001cc878: "RTL8211F-VD", 0x004dd074: "AR8031/AR8033",
		0x00221561: "KSZ8081", 0x00221622: "KSZ9031", 0x004dd072: "AR8035",
	} {
		if got := Describe(id); !strings.Contains(got, want) {
			t.Errorf("%#08x: %q, want %s", id, got, want)
		}
	}
	if got := Describe(0x01410dd1); !strings.Contains(got, "unknown") || !strings.Contains(got, "OUI") {
		t.Errorf("an unknown part: %q", got)
	}
	if _, ok := Identify(0x001cc917); ok {
		t.Error("0x001cc917 taken for an RTL8211F: its id is matched exactly")
	}
}

// TestConfigureAR803xDelays: debug 0 bit 15 and debug 5 bit 8 follow the
// phy-mode; other bits of the debug registers are kept; an SGMII port's
// delays are not touched.
func TestConfigureAR803xDelays(t *testing.T) {
	f := &regFile{}
	f.dbg[AR803X_DEBUG_REG_0] = AR803X_DEBUG_RX_CLK_DLY | 1 // reset: RX delay on
	f.dbg[AR803X_DEBUG_REG_5] = 0x0040
	f.r[AR803X_CHIP_CONFIG] = AR803X_MODE_BASET_RGMII
	done, err := Configure(f.rw(), 0x004dd074, Setup{Mode: "rgmii-txid"})
	if err != nil {
		t.Fatal(err)
	}
	if f.dbg[AR803X_DEBUG_REG_0] != 1 || f.dbg[AR803X_DEBUG_REG_5] != 0x0040|AR803X_DEBUG_TX_CLK_DLY {
		t.Fatalf("debug 0 %#x, debug 5 %#x", f.dbg[AR803X_DEBUG_REG_0], f.dbg[AR803X_DEBUG_REG_5])
	}
	if f.r[AR803X_CHIP_CONFIG]&AR803X_BT_BX_REG_SEL == 0 || len(done) != 2 || !strings.Contains(done[0], "fiber page was") {
		t.Fatalf("chip config %#x, done %q", f.r[AR803X_CHIP_CONFIG], done)
	}

	g := &regFile{}
	g.dbg[AR803X_DEBUG_REG_0] = AR803X_DEBUG_RX_CLK_DLY
	g.r[AR803X_CHIP_CONFIG] = AR803X_BT_BX_REG_SEL | AR803X_MODE_BASET_SGMII
	if _, err := Configure(g.rw(), 0x004dd074, Setup{Mode: "sgmii"}); err != nil {
		t.Fatal(err)
	}
	if g.dbg[AR803X_DEBUG_REG_0] != AR803X_DEBUG_RX_CLK_DLY {
		t.Fatalf("SGMII: debug 0 %#x, want it untouched", g.dbg[AR803X_DEBUG_REG_0])
	}
	// A part strapped for fiber keeps its page.
	h := &regFile{}
	h.r[AR803X_CHIP_CONFIG] = 0x3
	if done, _ := Configure(h.rw(), 0x004dd074, Setup{Mode: "sgmii"}); h.r[AR803X_CHIP_CONFIG] != 0x3 || len(done) != 0 {
		t.Fatalf("fiber-strapped part: chip config %#x, done %q", h.r[AR803X_CHIP_CONFIG], done)
	}
}

// TestConfigureUnknownLeftAlone: a part not in Models gets no write.
func TestConfigureUnknownLeftAlone(t *testing.T) {
	writes := 0
	rw := RW{Read: func(int) (uint16, error) { return 0, nil }, Write: func(int, uint16) error { writes++; return nil }}
	if done, err := Configure(rw, 0x01410dd1, Setup{Mode: "rgmii-id", RMIIRef: true}); err != nil || len(done) != 0 || writes != 0 {
		t.Fatalf("unknown part: %q %v, %d writes", done, err, writes)
	}
}

package enetc_test

import (
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

// Model offsets of the flow-control registers (Linux enetc_hw.h).
const (
	offPM0CmdCfg     = 0x18008
	offPM0PauseQuant = 0x18054
	offPM0PauseThr   = 0x18064
	offPPAUONTR      = 0x10410
	offPPAUOFFTR     = 0x10414
	offRBMR0         = 0x8100 // RX ring 0's RBMR; ring n at +0x200·n
	bitPauseIgn      = 1 << 8
	bitRBMRCM        = 1 << 4
)

// TestPauseFromFixedLink: an internal port whose device-tree fixed-link
// has the pause property comes up with what Linux's
// enetc_pl_mac_link_up programs for TX and RX pause; without the property,
// with what it programs for none; pause= overrides the device tree one
// direction at a time.
func TestPauseFromFixedLink(t *testing.T) {
	cfg := pcsCfg
	cfg.RxQueues = 2
	withPause := dtNode(t, map[string][]byte{"phy-mode": []byte("internal\x00"), "fixed-link/speed": {0, 0, 0x09, 0xC4}, "fixed-link/full-duplex": nil, "fixed-link/pause": nil})
	noPause := dtNode(t, map[string][]byte{"phy-mode": []byte("internal\x00"), "fixed-link/speed": {0, 0, 0x09, 0xC4}, "fixed-link/full-duplex": nil})
	for _, c := range []struct {
		name, opts     string
		tx, rx         bool
		quanta, thresh uint32
	}{
		{"fixed-link pause", "of-node=" + withPause, true, true, 0xFFFF, 0x7FFF},
		{"fixed-link without pause", "of-node=" + noPause, false, false, 0, 0},
		{"pause=rx", "pause=rx&of-node=" + withPause, false, true, 0, 0},
		{"pause=tx", "pause=tx&of-node=" + noPause, true, false, 0xFFFF, 0x7FFF},
		{"pause=on", "pause=on&of-node=" + noPause, true, true, 0xFFFF, 0x7FFF},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openSim(t, "wiring=internal&"+c.opts, cfg)
			if !s.port.Link().Up {
				t.Fatal("internal port not up")
			}
			m := s.model
			if got := m.Read32(offPM0PauseQuant); got != c.quanta {
				t.Errorf("PM0_PAUSE_QUANTA = %#x, want %#x", got, c.quanta)
			}
			if got := m.Read32(offPM0PauseThr); got != c.thresh {
				t.Errorf("PM0_PAUSE_THRESH = %#x, want %#x", got, c.thresh)
			}
			on, off := uint32(0), uint32(0)
			if c.tx {
				on, off = 3*9600, 9600
			}
			if got := m.Read32(offPPAUONTR); got != on {
				t.Errorf("PPAUONTR = %d, want %d", got, on)
			}
			if got := m.Read32(offPPAUOFFTR); got != off {
				t.Errorf("PPAUOFFTR = %d, want %d", got, off)
			}
			for n := 0; n < cfg.RxQueues; n++ {
				if got := m.Read32(offRBMR0+0x200*uint32(n)) & bitRBMRCM; (got != 0) != c.tx {
					t.Errorf("RX ring %d RBMR.CM = %v, want %v", n, got != 0, c.tx)
				}
			}
			for _, off := range []uint32{offPM0CmdCfg, offPM0CmdCfg + 0x1000} {
				if ign := m.Read32(off)&bitPauseIgn != 0; ign == c.rx {
					t.Errorf("CMD_CFG at %#x: PAUSE_IGN %v with RX pause %v", off, ign, c.rx)
				}
			}
			s.close(false)
		})
	}
}

// TestPauseLeftAloneWithPHY: a port with a PHY and neither pause= nor a
// fixed-link keeps the MAC's PAUSE settings as they were (gopmd does not
// read the PHY's pause resolution).
func TestPauseLeftAloneWithPHY(t *testing.T) {
	s := openSim(t, "", pcsCfg)
	if s.model.Read32(offPM0CmdCfg)&bitPauseIgn != 0 || s.model.Read32(offPM0PauseQuant) != 0 || s.model.Read32(offRBMR0)&bitRBMRCM != 0 {
		t.Fatal("flow control programmed on a PHY port without pause=")
	}
	s.close(false)
}

// TestPauseRefused: a value pause= does not take, pause= on a VF, and a
// device tree whose fixed-link has asym-pause alone are refused by name.
func TestPauseRefused(t *testing.T) {
	_, err := driver.OpenConfig("sim:enetc95?link-poll=0&pause=maybe&chip="+testChip(t), pcsCfg)
	if err == nil || !strings.Contains(err.Error(), "pause") || !strings.Contains(err.Error(), "maybe") || !strings.Contains(err.Error(), "rx (honour only)") {
		t.Errorf("pause=maybe: %v", err)
	}
	_, err = driver.OpenConfig("sim:enetc96?vf=1&link-poll=0&pause=on&chip="+testChip(t), pcsCfg)
	if err == nil || !strings.Contains(err.Error(), "VF") {
		t.Errorf("pause= on a VF: %v", err)
	}
	asym := dtNode(t, map[string][]byte{"phy-mode": []byte("internal\x00"), "fixed-link/speed": {0, 0, 0x09, 0xC4}, "fixed-link/asym-pause": nil})
	_, err = driver.OpenConfig("sim:enetc97?wiring=internal&link-poll=0&of-node="+asym+"&chip="+testChip(t), pcsCfg)
	if err == nil || !strings.Contains(err.Error(), "asym-pause") || !strings.Contains(err.Error(), "pause=") {
		t.Errorf("fixed-link with asym-pause alone: %v", err)
	}
}

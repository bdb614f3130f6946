package enetc_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// passes sends one frame each way through an open port and reports whether
// both got through: the model gates both directions on its interface.
func (s *simPort) passes() bool {
	s.t.Helper()
	frame := udp4(s.t, 100, 9)
	s.model.Port().Receive(frame)
	got := s.rxAll(0, 1, 5)
	for _, p := range got {
		p.Free()
	}
	txq := s.port.TxQueue(0)
	out := s.port.RxQueue(0).Pool().Alloc()
	copy(out.Append(len(frame)), frame)
	before := s.wire.count
	if txq.TxBurst([]*pool.Packet{out}) != 1 {
		out.Free()
	}
	s.wire.mu.Lock()
	tx := s.wire.count > before
	s.wire.mu.Unlock()
	return len(got) == 1 && tx
}

var pcsCfg = driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256}

// TestPHYModes: for each wiring the port programs PM0/PM1_IF_MODE and the
// PCS from phy-mode=, frames pass both ways, and the link reports what the
// PCS's in-band AN or the PHY resolved.
func TestPHYModes(t *testing.T) {
	for _, c := range []struct {
		opts  string
		speed int
		want  driver.Link
	}{
		{"wiring=sgmii&phy-mode=sgmii", 1000, driver.Link{Up: true, SpeedMbps: 1000, FullDuplex: true}},
		{"wiring=sgmii&phy-mode=sgmii&speed=100", 100, driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}},
		{"wiring=sgmii&phy-mode=sgmii&phy=none&speed=10", 10, driver.Link{Up: true, SpeedMbps: 10, FullDuplex: true}},
		{"wiring=2500base-x&phy-mode=2500base-x&phy=none", 1000, driver.Link{Up: true, SpeedMbps: 2500, FullDuplex: true}},
		{"wiring=rgmii&phy-mode=rgmii", 1000, driver.Link{Up: true, SpeedMbps: 1000, FullDuplex: true}},
		{"wiring=rgmii&phy-mode=rgmii-id&speed=100", 100, driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}},
		{"wiring=rgmii&phy-mode=rgmii&speed=10", 10, driver.Link{Up: true, SpeedMbps: 10, FullDuplex: true}},
		{"wiring=internal&phy-mode=internal", 1000, driver.Link{Up: true, SpeedMbps: 1000, FullDuplex: true}},
	} {
		t.Run(c.opts, func(t *testing.T) {
			s := openSim(t, c.opts, pcsCfg)
			if l := s.port.UpdateLink(); l != c.want {
				t.Fatalf("link %+v, want %+v", l, c.want)
			}
			if !s.model.InterfaceUp() || !s.passes() {
				t.Fatalf("frames do not pass (model interface up: %v)", s.model.InterfaceUp())
			}
			if strings.Contains(c.opts, "phy-mode=internal") && s.port.PHYAddr() != -1 {
				t.Errorf("internal port looked for a PHY: address %d", s.port.PHYAddr())
			}
			s.close(false)
		})
	}
}

// closeStuck stops a port whose frames could not leave: Stop says the TX
// ring did not drain and counts the frame, Close resets the function.
func (s *simPort) closeStuck() {
	s.t.Helper()
	if err := s.port.Stop(); err == nil || !strings.Contains(err.Error(), "did not drain") {
		s.t.Errorf("%s: Stop: %v, want the undrained TX ring reported", s.spec, err)
	}
	if err := s.port.Close(); err != nil {
		s.t.Errorf("%s: Close: %v", s.spec, err)
	}
}

// TestPHYModeUnprogrammedInterface: without phy-mode= or a device tree the
// port leaves IF_MODE and the PCS as they are. On an SGMII or RGMII port
// whose bootloader did not program them no frame passes: what phy-mode=
// fixes. A 2500BASE-X lane out of reset passes frames, as Linux before
// NXP's 2025 Lynx change relied on (docs/hardware-enetc.md §6.1).
func TestPHYModeUnprogrammedInterface(t *testing.T) {
	for _, w := range []string{"sgmii", "2500base-x", "rgmii"} {
		s := openSim(t, "wiring="+w, pcsCfg)
		if s.port.PHYMode() != "as left by the bootloader" {
			t.Errorf("%s: PHYMode %q", w, s.port.PHYMode())
		}
		if w == "2500base-x" {
			if !s.passes() {
				t.Errorf("wiring %s: no frames pass on the lane's reset values", w)
			}
			s.close(false)
			continue
		}
		if s.passes() {
			t.Errorf("wiring %s: frames pass with the interface never programmed", w)
		}
		s.closeStuck()
	}
}

// TestPHYModeWrongForWiring: programming one mode on a port wired for
// another gives no traffic (the model's MAC and PCS check the sequence).
// Where the PCS sees no link the port reports the link down and queues
// nothing; where only the PHY answers (RGMII on a SerDes port) the frame
// stays in the ring. (2500BASE-X on an SGMII lane at 1000 Mb/s is the same
// PCS setting as SGMII forced to 1000, §6.1: only the SerDes clock differs.)
func TestPHYModeWrongForWiring(t *testing.T) {
	for _, c := range []struct {
		spec     string
		linkDown bool
	}{
		{"wiring=sgmii&phy-mode=rgmii", false},
		{"wiring=sgmii&phy-mode=2500base-x&phy=none&speed=100", true},
		{"wiring=2500base-x&phy-mode=sgmii&phy=none", true},
		{"wiring=rgmii&phy-mode=sgmii", true},
	} {
		s := openSim(t, c.spec, pcsCfg)
		if l := s.port.UpdateLink(); l.Up == c.linkDown {
			t.Errorf("%s: link %+v", c.spec, l)
		}
		if s.passes() {
			t.Errorf("%s: frames pass", c.spec)
		}
		if c.linkDown {
			st := s.stopCheck()
			if st.Tx.Packets != 0 {
				t.Errorf("%s: %d frames sent with the link down", c.spec, st.Tx.Packets)
			}
			s.port.Close()
		} else {
			s.closeStuck()
		}
	}
}

// TestRGMIIFollowsSpeedChange: when the PHY renegotiates, the next link
// poll forces the MAC's RGMII speed to the new one and traffic resumes.
func TestRGMIIFollowsSpeedChange(t *testing.T) {
	s := openSim(t, "wiring=rgmii&phy-mode=rgmii&speed=100", pcsCfg)
	if !s.passes() {
		t.Fatal("no traffic at 100 Mb/s")
	}
	s.model.SetSpeed(1000)
	if s.passes() {
		t.Fatal("traffic passes with the MAC still forced to 100 Mb/s on a 1000 Mb/s link")
	}
	if l := s.port.UpdateLink(); l.SpeedMbps != 1000 {
		t.Fatalf("link %+v after the speed change", l)
	}
	if !s.passes() {
		t.Fatal("no traffic after the link poll followed the speed change")
	}
	s.close(false)
}

// TestSGMIILinkDownAndBack: the PCS's link follows the cable; the port
// reports it down and stops TX, and recovers on the next poll.
func TestSGMIILinkDownAndBack(t *testing.T) {
	s := openSim(t, "wiring=sgmii&phy-mode=sgmii", pcsCfg)
	s.model.SetLink(false)
	if l := s.port.UpdateLink(); l.Up {
		t.Fatalf("link %+v with the cable pulled", l)
	}
	s.model.SetLink(true)
	if l := s.port.UpdateLink(); !l.Up || l.SpeedMbps != 1000 {
		t.Fatalf("link %+v after the cable came back", l)
	}
	if !s.passes() {
		t.Fatal("no traffic after the link came back")
	}
	s.close(false)
}

// dtNode writes a fake device-tree node with the given properties (string
// values get the NUL terminator the kernel exports).
func dtNode(t *testing.T, props map[string][]byte) string {
	dir := filepath.Join(t.TempDir(), "ethernet@0,0")
	for k, v := range props {
		p := filepath.Join(dir, k)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPHYModeFromDeviceTree: the port's device-tree node gives the mode
// (phy-mode, or phy-connection-type), and an internal port's fixed-link
// speed; phy-mode= overrides the tree; a mode gopmd does not program is an
// error naming the node's file.
func TestPHYModeFromDeviceTree(t *testing.T) {
	sgmii := dtNode(t, map[string][]byte{"phy-connection-type": []byte("sgmii\x00"), "managed": []byte("in-band-status\x00")})
	s := openSim(t, "wiring=sgmii&of-node="+sgmii, pcsCfg)
	if s.port.PHYMode() != "sgmii" || !s.passes() {
		t.Fatalf("PHYMode %q from phy-connection-type; traffic passes: false", s.port.PHYMode())
	}
	s.close(false)

	// Without managed = "in-band-status", SGMII runs out of band, as
	// Linux's phylink does.
	outband := dtNode(t, map[string][]byte{"phy-mode": []byte("sgmii\x00")})
	s = openSim(t, "wiring=sgmii&speed=100&of-node="+outband, pcsCfg)
	if s.port.PHYMode() != "sgmii, out of band" || !s.passes() {
		t.Fatalf("PHYMode %q without managed; traffic passes: false", s.port.PHYMode())
	}
	if l := s.port.UpdateLink(); l.SpeedMbps != 100 {
		t.Fatalf("out-of-band SGMII link %+v", l)
	}
	s.close(false)

	speed := make([]byte, 4)
	binary.BigEndian.PutUint32(speed, 2500)
	internal := dtNode(t, map[string][]byte{"phy-mode": []byte("internal\x00"), "fixed-link/speed": speed, "fixed-link/full-duplex": nil})
	s = openSim(t, "wiring=internal&of-node="+internal, pcsCfg)
	if l := s.port.UpdateLink(); l != (driver.Link{Up: true, SpeedMbps: 2500, FullDuplex: true}) {
		t.Fatalf("internal port with fixed-link speed 2500: link %+v", l)
	}
	s.close(false)

	s = openSim(t, "wiring=rgmii&phy-mode=rgmii&of-node="+sgmii, pcsCfg)
	if s.port.PHYMode() != "rgmii" || !s.passes() {
		t.Fatalf("phy-mode= did not override the device tree: %q", s.port.PHYMode())
	}
	s.close(false)

	usx := dtNode(t, map[string][]byte{"phy-mode": []byte("usxgmii\x00")})
	_, err := driver.OpenConfig("sim:enetc90?link-poll=0&of-node="+usx, pcsCfg)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(usx, "phy-mode")) || !strings.Contains(err.Error(), `"usxgmii"`) || !strings.Contains(err.Error(), "phy-mode=") {
		t.Fatalf("device tree phy-mode usxgmii: %v", err)
	}
}

// TestPHYModeOptionErrors: a mode gopmd does not program, and phy-mode= on
// a VF, are *driver.OptionError naming the option; a SerDes mode on a port
// without a PCS is an error naming PCAPR0.
func TestPHYModeOptionErrors(t *testing.T) {
	for _, c := range []struct{ spec, opt, want string }{
		{"sim:enetc91?phy-mode=usxgmii", "phy-mode", "sgmii, 2500base-x, rgmii"},
		{"sim:enetc92?vf=1&phy-mode=sgmii", "phy-mode", "VF"},
		{"sim:enetc94?phy-mode=2500base-x&in-band=on", "in-band", "only SGMII"},
		{"sim:enetc95?phy-mode=sgmii&in-band=yes", "in-band", "on or off"},
	} {
		_, err := driver.OpenConfig(c.spec, pcsCfg)
		var oe *driver.OptionError
		if !errors.As(err, &oe) || oe.Option != c.opt || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an OptionError for phy-mode saying %q", c.spec, err, c.want)
		}
	}
}

// TestPHYModeOnUnmodelledWiring: phy-mode=sgmii on a model whose interface
// is not modelled (no wiring=) still reads a consistent PCS: link up at the
// PHY's speed.
func TestPHYModeOnUnmodelledWiring(t *testing.T) {
	s := openSim(t, "phy-mode=sgmii&speed=100", pcsCfg)
	if l := s.port.UpdateLink(); l != (driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}) {
		t.Fatalf("link %+v", l)
	}
	if !s.passes() {
		t.Fatal("no traffic")
	}
	s.close(false)
}

// TestSGMIIOutOfBand: with in-band=off the PCS runs without AN and each
// link poll forces the PHY's speed into it: traffic passes at 100 Mb/s,
// stops when the PHY renegotiates to 1000, resumes after the next poll.
func TestSGMIIOutOfBand(t *testing.T) {
	s := openSim(t, "wiring=sgmii&phy-mode=sgmii&in-band=off&speed=100", pcsCfg)
	if l := s.port.UpdateLink(); l != (driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}) {
		t.Fatalf("link %+v", l)
	}
	if !s.passes() {
		t.Fatal("no traffic at 100 Mb/s")
	}
	s.model.SetSpeed(1000)
	if s.passes() {
		t.Fatal("traffic passes with the PCS still forced to 100 Mb/s")
	}
	if l := s.port.UpdateLink(); l.SpeedMbps != 1000 || !s.passes() {
		t.Fatalf("after the poll: link %+v, traffic passes: false", l)
	}
	s.close(false)
}

// TestPCS2500BaseXIfModeZero: on a 2500BASE-X port gopmd programs the PCS
// as Linux does since NXP's 2025 Lynx change ("net: pcs: lynx: accept
// in-band autoneg for 2500base-x"): IF_MODE 0 (no SGMII, no SGMII AN),
// BMCR full duplex with AN off (out of band); the link reports 2500 and
// frames pass.
func TestPCS2500BaseXIfModeZero(t *testing.T) {
	s := openSim(t, "wiring=2500base-x&phy-mode=2500base-x&phy=none", pcsCfg)
	if v := s.model.PCSRegister(0x14); v != 0 {
		t.Errorf("PCS IF_MODE = %#x, want 0", v)
	}
	if v := s.model.PCSRegister(0); v&0x1000 != 0 || v&0x0100 == 0 {
		t.Errorf("PCS BMCR = %#x, want AN off and full duplex", v)
	}
	if l := s.port.UpdateLink(); l != (driver.Link{Up: true, SpeedMbps: 2500, FullDuplex: true}) {
		t.Fatalf("link %+v", l)
	}
	if !s.passes() {
		t.Fatal("frames do not pass")
	}
	s.close(false)
}

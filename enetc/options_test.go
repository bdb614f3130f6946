package enetc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/sim"
)

// TestBadOptions: an option the ENETC driver or the simulated ENETC does
// not take, or a value out of range, is a *driver.OptionError naming the
// option and what is accepted, with the spec named once.
func TestBadOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ spec, option, want string }{
		{"sim:enetc90?phy=99", "phy", "(accepted: 0 to 31, or none for a fixed link)"},
		{"sim:enetc90?phy=-1", "phy", "not a PHY address"},
		{"sim:enetc90?vf=1&phy=1", "phy", "a VF has no MDIO bus"},
		{"sim:enetc90?soc=imx8mp", "soc", "unknown option"},
		{"sim:enetc90?shift16=1", "shift16", "unknown option"},
		{"sim:enetc90?mac=zz", "mac", "not a 6-byte MAC address"},
		{"sim:enetc90?mac=01:00:5e:00:00:01", "mac", "multicast"},
		{"sim:enetc90?mac=ff:ff:ff:ff:ff:ff", "mac", "broadcast"},
		{"sim:enetc90?mac=00:00:00:00:00:00", "mac", "the all-zero address is no station's (accepted: a unicast address other than 00:00:00:00:00:00"},
		{"sim:enetc90?link-poll=-1s", "link-poll", "from 10ms to 1h"},
		{"sim:enetc90?link-poll=1000h", "link-poll", "from 10ms to 1h"},
		{"sim:enetc90?link-poll=1ns", "link-poll", "too often"},
		{"sim:enetc90?link-poll=9ms", "link-poll", "0, or a duration from 10ms to 1h"},
		{"sim:enetc90?gen=1&gen=0", "gen", "given 2 times"},
		{"sim:enetc90?rx-coalesce-frames=0", "rx-coalesce-frames", "1 to 511"},
		{"sim:enetc90?rx-coalesce-frames=512", "rx-coalesce-frames", "1 to 511"},
		{"sim:enetc90?rx-ring=64&rx-coalesce-frames=64", "rx-coalesce-frames", "more than half the 64-slot RX ring"},
		{"sim:enetc90?rx-ring=64&rx-coalesce-frames=33", "rx-coalesce-frames", "(accepted: 1 to 32 with rx-ring=64"},
		{"sim:enetc90?rx-coalesce-ticks=0", "rx-coalesce-ticks", "ENETC clock cycles"},
		{"sim:enetc90?rx-coalesce-ticks=5000000000", "rx-coalesce-ticks", "ENETC clock cycles"},
		{"sim:enetc90?mtu=70000", "mtu", "[68, 65535]"},
		{"sim:enetc90?mtu=20000", "", "MTU 20000 must be in [68, 9578]"},
		{"sim:enetc90?rx-ring=7", "rx-ring", "[8, 65536]"},
		{"sim:enetc90?gen-rate=NaN", "gen-rate", "from 1 to 1G"},
		{"sim:enetc90?gen-rate=5G", "gen-rate", "from 1 to 1G"},
	} {
		p, err := driver.Open(tc.spec)
		if err == nil {
			p.Close()
			t.Errorf("%s: opened", tc.spec)
			continue
		}
		var oe *driver.OptionError
		if tc.option != "" && (!errors.As(err, &oe) || oe.Option != tc.option) {
			t.Errorf("%s: %v is not an *OptionError for %s", tc.spec, err, tc.option)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to say %q", tc.spec, err, tc.want)
		}
		if n := strings.Count(err.Error(), tc.spec); n != 1 {
			t.Errorf("%s: the error names the spec %d times: %v", tc.spec, n, err)
		}
	}
	// The simulated port is free again after every refusal; half the RX
	// ring is a threshold it takes.
	p, err := driver.Open("sim:enetc90?phy=none&rx-ring=64&rx-coalesce-frames=32")
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

// TestJumboNeedsIERB: a PF whose frames exceed the 1536 bytes the IERB's
// power-on FIFO credits are sized for is refused, saying the IERB is out
// of gopmd's reach and how to have Linux prepare it; ierb=prepared takes
// it, MTU 1514 needs nothing, and a bad ierb= value or one on a VF is
// refused by name.
func TestJumboNeedsIERB(t *testing.T) {
	cfg := pcsCfg
	cfg.MTU = 1515
	_, err := driver.OpenConfig("sim:enetc98?link-poll=0&chip="+testChip(t), cfg)
	for _, want := range []string{"MTU 1515", "1537 bytes", "IERB", "no BAR", "fsl-enetc", "ierb=prepared", "at most 1514"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("MTU 1515 without ierb=: %v\nwant it to say %q", err, want)
		}
	}
	s := openSim(t, "ierb=prepared", cfg)
	s.close(false)
	cfg.MTU = 1514
	s = openSim(t, "", cfg)
	if err := s.port.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.port.SetMTU(9000); err == nil || !strings.Contains(err.Error(), "ierb=prepared") {
		t.Errorf("SetMTU(9000) without ierb=: %v", err)
	}
	s.close(false)
	if _, err := driver.OpenConfig("sim:enetc98?link-poll=0&ierb=yes&chip="+testChip(t), cfg); err == nil || !strings.Contains(err.Error(), `ierb="yes"`) {
		t.Errorf("ierb=yes: %v", err)
	}
	if _, err := driver.OpenConfig("sim:enetc98?vf=1&link-poll=0&ierb=prepared&chip="+testChip(t), cfg); err == nil || !strings.Contains(err.Error(), "VF") {
		t.Errorf("ierb= on a VF: %v", err)
	}
}

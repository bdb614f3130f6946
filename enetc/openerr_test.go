package enetc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/sim"
)

// TestOpenErrorsNameTheSpecOnce: whatever refuses a spec (the driver's
// option parser, the device's limits, a size out of range), the error
// Open returns names the spec exactly once, then the driver, then the
// thing refused (option, register, compatible, size): drivers never name
// the spec, OpenConfig does. The FEC driver's twin of this test holds
// it to the same words.
func TestOpenErrorsNameTheSpecOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec   string
		option string // the *OptionError's, "" when the driver refuses no option
		want   []string
	}{
		// A bad option.
		{"sim:enetc890?phy=99", "phy", []string{`option phy="99"`, "0 to 31"}},
		// A device that cannot do what is asked: more queues than it has.
		{"sim:enetc891?queues=64", "", []string{": enetc: ", "64 RX / 64 TX queues", "SICAPR0"}},
		// A size out of the device's range.
		{"sim:enetc892?rx-ring=65536", "", []string{": enetc: ", "rx-ring size 65536", "[64, 32768]"}},
		{"sim:enetc893?mtu=20000", "", []string{": enetc: ", "MTU 20000 must be in [68, 9578]"}},
	} {
		p, err := driver.Open(tc.spec)
		if err == nil {
			p.Close()
			t.Errorf("%s: opened", tc.spec)
			continue
		}
		msg := err.Error()
		if n := strings.Count(msg, tc.spec); n != 1 {
			t.Errorf("%s: the error names the spec %d times: %v", tc.spec, n, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %v, want it to say %q", tc.spec, err, w)
			}
		}
		var oe *driver.OptionError
		if tc.option != "" && (!errors.As(err, &oe) || oe.Option != tc.option) {
			t.Errorf("%s: %v is not an *OptionError for %s", tc.spec, err, tc.option)
		}
		if tc.option == "" && !strings.HasPrefix(msg, tc.spec+": ") {
			t.Errorf("%s: %v does not start with the spec", tc.spec, err)
		}
	}
}

// TestPortErrorsLeaveTheSpecToTheCaller: a port's own methods name the
// operation and the thing, never the spec, which the application that
// opened the port names once; both drivers word the same refusal alike
// (the FEC driver's twin of this test has the same table).
func TestPortErrorsLeaveTheSpecToTheCaller(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"sim:enetc894"} {
		p, err := driver.Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		_, mdioErr := p.(driver.PHYAccess).MDIORead(32, 1)
		for _, c := range []struct {
			call string
			err  error
			want string
		}{
			{"SetMTU(20000)", p.SetMTU(20000), "MTU 20000"},
			{"SetMAC(broadcast)", p.SetMAC([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), "set MAC: "},
			{"MDIORead(32, 1)", mdioErr, "MDIO PHY address 32 must be in [0, 31]"},
			{"MDIOWrite(1, 32)", p.(driver.PHYAccess).MDIOWrite(1, 32, 0), "MDIO register 32 must be in [0, 31]"},
		} {
			if c.err == nil || !strings.Contains(c.err.Error(), c.want) || strings.Contains(c.err.Error(), spec) {
				t.Errorf("%s %s: %v, want an error saying %q without the spec", spec, c.call, c.err, c.want)
			}
		}
		p.Close()
		if err := p.Start(); !errors.Is(err, driver.ErrClosed) || strings.Contains(err.Error(), spec) {
			t.Errorf("%s: Start after Close: %v, want ErrClosed without the spec", spec, err)
		}
	}
}

package drvtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

// SpecErrors are a driver's cases for OpenErrorsNameTheSpecOnce, each a
// spec of a port no other test of the package opens.
type SpecErrors struct {
	// Driver is the driver's name, which the error names after the spec.
	Driver string
	// BadPHY is a spec with phy=99, which the driver's option parser
	// refuses: an *driver.OptionError saying `option phy="99"` and what
	// is accepted, 0 to 31.
	BadPHY string
	// Refused are specs the driver refuses with no *OptionError: the
	// device cannot do what is asked (more queues than it has), or a size
	// is out of its range.
	Refused []Refusal
}

// Refusal is a spec Open refuses and what the error says besides the spec
// and the driver.
type Refusal struct {
	Spec string
	Want []string
}

// OpenErrorsNameTheSpecOnce: whatever refuses a spec (the driver's option
// parser, the device's limits, a size out of range), the error Open
// returns names the spec exactly once, then the driver, then the thing
// refused (option, register, compatible, size): drivers never name the
// spec, OpenConfig does.
func OpenErrorsNameTheSpecOnce(t *testing.T, c SpecErrors) {
	t.Helper()
	type openCase struct {
		spec   string
		option string // the *OptionError's, "" when the driver refuses no option
		want   []string
	}
	cases := []openCase{{c.BadPHY, "phy", []string{`option phy="99"`, "0 to 31"}}}
	for _, r := range c.Refused {
		cases = append(cases, openCase{r.Spec, "", append([]string{": " + c.Driver + ": "}, r.Want...)})
	}
	for _, tc := range cases {
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

// PortErrorsLeaveTheSpecToTheCaller opens spec, a port with MDIO that no
// other test opens: a port's own methods name the operation and the
// thing, never the spec, which the application that opened the port names
// once; every driver words the same refusal alike.
func PortErrorsLeaveTheSpecToTheCaller(t *testing.T, spec string) {
	t.Helper()
	p, err := driver.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	phy, ok := p.(driver.PHYAccess)
	if !ok {
		p.Close()
		t.Fatalf("%s: a %T has no MDIO access (driver.PHYAccess)", spec, p)
	}
	_, mdioErr := phy.MDIORead(32, 1)
	for _, c := range []struct {
		call string
		err  error
		want string
	}{
		{"SetMTU(20000)", p.SetMTU(20000), "MTU 20000"},
		{"SetMAC(broadcast)", p.SetMAC([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), "set MAC: "},
		{"MDIORead(32, 1)", mdioErr, "MDIO PHY address 32 must be in [0, 31]"},
		{"MDIOWrite(1, 32)", phy.MDIOWrite(1, 32, 0), "MDIO register 32 must be in [0, 31]"},
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

package driver

import (
	"strings"
	"testing"
	"time"
)

func TestTimeFormatAndParse(t *testing.T) {
	for _, c := range []struct {
		s    string
		t    Time
		back string
	}{
		{"0", 0, "0.000000000"},
		{"1764655200.5", 1764655200_500000000, "1764655200.500000000"},
		{"100.000000001", 100_000000001, "100.000000001"},
		{"-1.25", -1_250000000, "-1.250000000"}, // Sec rounds down (-2), Nsec is positive
	} {
		got, err := ParseTime(c.s)
		if err != nil || got != c.t {
			t.Errorf("ParseTime(%q) = %d, %v, want %d", c.s, got, err, c.t)
			continue
		}
		if got.String() != c.back {
			t.Errorf("Time(%d).String() = %q, want %q", got, got.String(), c.back)
		}
		if got.Sec()*1e9+got.Nsec() != int64(got) || got.Nsec() < 0 || got.Nsec() >= 1e9 {
			t.Errorf("Time(%d): Sec %d Nsec %d do not add up", got, got.Sec(), got.Nsec())
		}
	}
	for _, bad := range []string{"", ".5", "1.", "1.0000000001", "x", "1e3", "99999999999999"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) took it", bad)
		}
	}
	if d := Time(5e9).Sub(Time(2e9)); d != 3*time.Second {
		t.Errorf("Sub = %v", d)
	}
	if Time(1).Add(time.Second) != Time(1e9+1) {
		t.Error("Add")
	}
}

func TestPPBScaledPPM(t *testing.T) {
	// Linux's adjfine unit: 1 ppm is 65536.
	if got := PPBToScaledPPM(1000); got != 65536 {
		t.Errorf("PPBToScaledPPM(1000) = %d", got)
	}
	if got := ScaledPPMToPPB(-65536); got != -1000 {
		t.Errorf("ScaledPPMToPPB(-65536) = %g", got)
	}
}

func TestOpenClockErrors(t *testing.T) {
	if _, err := OpenClock("nope:x"); err == nil || !strings.Contains(err.Error(), "unknown scheme") {
		t.Errorf("OpenClock of an unknown scheme = %v", err)
	}
	if _, err := OpenClock("sim:enetc-timer0"); err == nil || !strings.Contains(err.Error(), "not linked") {
		t.Errorf("OpenClock without the sim backend linked = %v", err)
	}
}

package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestClockPhcCtlCommands(t *testing.T) {
	for _, dev := range []string{"sim:enetc-timer40?timeline=manual", "sim:fec40?timeline=manual"} {
		t.Run(dev, func(t *testing.T) {
			// Model time stands still (timeline=manual): every value is exact.
			out := mustRun(t, "clock", dev, "set", "100", "get", "adj", "0.5", "get", "adj", "-1.25", "get")
			want := "set clock time to 100.000000000\n" +
				"clock time is 100.000000000\n" +
				"adjusted clock by 0.500000000 seconds\n" +
				"clock time is 100.500000000\n" +
				"adjusted clock by -1.250000000 seconds\n" +
				"clock time is 99.250000000\n"
			if out != want {
				t.Fatalf("clock %s: got\n%s\nwant\n%s", dev, out, want)
			}
			out = mustRun(t, "clock", dev, "freq", "1000", "freq")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "adjusted clock frequency offset to 1000.") || !strings.HasPrefix(lines[1], "clock frequency offset is ") {
				t.Fatalf("freq: %q", out)
			}
			f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(lines[1], "clock frequency offset is "), "ppb"), 64)
			if err != nil || f < 999 || f > 1001 {
				t.Fatalf("freq read back %q (%v), want about 1000 ppb", lines[1], err)
			}
			// cmp against the system clock: the clock was set to 0 s, the
			// system clock is decades later.
			var r clockResult
			if err := json.Unmarshal([]byte(mustRun(t, "clock", dev, "set", "0", "cmp", "caps", "--json")), &r); err != nil {
				t.Fatal(err)
			}
			if len(r.Steps) != 3 || r.Steps[1].OffsetNS == nil || *r.Steps[1].OffsetNS > -1.5e18 {
				t.Fatalf("cmp after set 0: %+v, want an offset of minus the system time", r.Steps)
			}
			if c := r.Steps[2].Caps; c == nil || c.MaxAdjPPB <= 0 || c.PeriodicOutputs < 3 {
				t.Fatalf("caps: %+v", r.Steps[2].Caps)
			}
		})
	}
}

func TestClockSetFromSystemClock(t *testing.T) {
	// set without a time takes CLOCK_REALTIME, then cmp sees the two agree
	// to far better than a second (the manual timeline does not move).
	var r clockResult
	if err := json.Unmarshal([]byte(mustRun(t, "clock", "sim:enetc-timer41?timeline=manual", "set", "cmp", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if off := *r.Steps[1].OffsetNS; off > 0 || off < -1e9*60 {
		t.Fatalf("cmp right after set from the system clock: %d ns", off)
	}
}

func TestClockOfAPortWithItsOptions(t *testing.T) {
	// A port's spec with the driver's options (ptp-clock=, link-poll=) and
	// the generic ones: not a clock device, so nicctl opens the port.
	out := mustRun(t, "clock", "sim:fec43?soc=imx6q&ptp-clock=125000000&link-poll=0&queues=1&timeline=manual", "set", "7.5", "get")
	if out != "set clock time to 7.500000000\nclock time is 7.500000000\n" {
		t.Fatalf("clock on a FEC port with options: %q", out)
	}
}

func TestClockErrors(t *testing.T) {
	wantError(t, exitUsage, []string{"clock", "sim:enetc-timer42"}, "missing arguments")
	wantError(t, exitUsage, []string{"clock", "sim:enetc-timer42", "jump"}, "unknown command", "get, set")
	wantError(t, exitUsage, []string{"clock", "sim:enetc-timer42", "adj"}, "adj", "seconds")
	wantError(t, exitUsage, []string{"clock", "sim:enetc-timer42", "set", "1.0000000001"}, "nine decimals")
	wantError(t, exitUsage, []string{"clock", "sim:enetc-timer42?ref-clock=3", "get"}, "ref-clock")
	wantError(t, exitUsage, []string{"clock", "sim:enetc-timer42?queues=2", "get"}, "queues", "unknown option for a clock")
	wantError(t, exitUsage, []string{"clock", "sim:enetc-timer42?frobs=2", "get"}, "frobs")
	wantError(t, exitFailed, []string{"clock", "sim:enetc-timer42?timeline=manual", "freq", "2e9"}, "ppb")
	// An ENETC port's clock is its chip's timer, a device of its own.
	wantError(t, exitFailed, []string{"clock", "sim:enetc42", "get"}, "timer is not open", "sim:enetc-timerN")
	// The i.MX6Q's timer clock rate is the board's.
	wantError(t, exitFailed, []string{"clock", "sim:fec42?soc=imx6q", "get"}, "ptp-clock=")
}

// A clock operation the device refuses names the device once (nicctl names
// it; the clock names the operation and the limit).
func TestClockOpErrorsNameTheDeviceOnce(t *testing.T) {
	for _, c := range []struct{ dev, limit string }{
		{"sim:enetc-timer43?timeline=manual", "±9.99999999e+08 ppb"},
		{"sim:fec43?timeline=manual", "±100000000 ppb"},
	} {
		wantError(t, exitFailed, []string{"clock", c.dev, "freq", "2e9"}, c.dev+": freq: frequency adjustment 2e+09 ppb", c.limit)
		_, _, errOut := nicctl(t, "clock", c.dev, "freq", "2e9")
		name, _, _ := strings.Cut(strings.TrimPrefix(c.dev, "sim:"), "?")
		if n := strings.Count(errOut, name); n != 1 {
			t.Errorf("%q names %s %d times, want once", errOut, name, n)
		}
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// nicctl tsn with tc mqprio's, taprio's and cbs's words, on a sim ENETC
// port whose chip timer --clock opens: the output is what the hardware
// holds after each section applied.
func TestTSNSetAndShow(t *testing.T) {
	dev := "sim:enetc50?queues=2&chip=tsn50"
	clock := "--clock=sim:enetc-timer50?chip=tsn50&timeline=manual"
	out := mustRun(t, "tsn", dev, clock,
		"tc", "num_tc", "2", "map", "0", "1", "queues", "1@0", "1@1",
		"gates", "base-time", "4000000000000000000", "cycle-time", "1000000",
		"sched-entry", "S", "01", "300000", "sched-entry", "S", "02", "700000",
		"cbs", "tc", "1", "idleslope", "200000")
	want := dev + ": 8 traffic classes, gate lists of up to 64 entries, cbs on classes 1 0\n" +
		"tc num_tc 2 map 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 queues 1@0 1@1\n" +
		"gates base-time 4000000000000000000 cycle-time 1000000 cycle-time-extension 0 (first cycle at 4000000000.000000000)\n" +
		"\tindex 0 cmd S gatemask 0x1 interval 300000\n" +
		"\tindex 1 cmd S gatemask 0x2 interval 700000\n" +
		"cbs tc 1 idleslope 200000 (20% of the link)\n" +
		"preempt pmac-enabled off tx-enabled off verify-status initial verify-time 0 tx-min-frag-size 60 active off fp E E E E E E E E\n" +
		"\tfragments tx 0 rx 0, reassembled 0, assembly errors 0, SMD errors 0, holds 0\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	// A port opened afresh holds nothing: the settings last while the
	// command has the port (Close turns gating and shapers off).
	out = mustRun(t, "tsn", dev, "show")
	if want := dev + ": 8 traffic classes, gate lists of up to 64 entries, cbs on classes none (set a map)\ntc num_tc 0\ngates off\ncbs off\n" +
		"preempt pmac-enabled off tx-enabled off verify-status initial verify-time 0 tx-min-frag-size 60 active off fp E E E E E E E E\n" +
		"\tfragments tx 0 rx 0, reassembled 0, assembly errors 0, SMD errors 0, holds 0\n"; out != want {
		t.Fatalf("show: got\n%s\nwant\n%s", out, want)
	}
}

// base-time 0, as tc taprio is usually given: the list starts at the
// first cycle boundary after now.
func TestTSNBaseTimeZeroJSON(t *testing.T) {
	var r tsnResult
	out := mustRun(t, "tsn", "sim:enetc51?queues=2&chip=tsn51", "--clock=sim:enetc-timer51?chip=tsn51&timeline=manual", "--json",
		"gates", "base-time", "0", "cycle-time", "250000", "sched-entry", "S", "ff", "250000")
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	g := r.State.Gates
	if !r.State.Gating || g == nil || g.FirstCycle <= 0 || g.FirstCycle%250000 != 0 || len(g.Entries) != 1 || g.Entries[0].GateMask != 0xff {
		t.Fatalf("state %+v gates %+v: want gating from a 250 us boundary, one entry with mask 0xff", r.State, g)
	}
	if len(r.Applied) != 1 || r.Applied[0] != "gates" || r.Caps.MaxGateEntries != 64 {
		t.Errorf("applied %v caps %+v", r.Applied, r.Caps)
	}
}

// ethtool --set-mm's words: with verification on and a partner that never
// answers (the sim port's wire carries no mPackets), verification stays
// "verifying" and nothing is preempted; with it off, merging is active at
// once with the classes fp names.
func TestTSNPreempt(t *testing.T) {
	dev := "sim:enetc58?queues=2&chip=tsn58"
	out := mustRun(t, "tsn", dev, "preempt", "verify-time", "20", "tx-min-frag-size", "124", "fp", "P", "E")
	if !strings.Contains(out, "preempt pmac-enabled on tx-enabled on verify-status verifying verify-time 20 tx-min-frag-size 124 active off fp P E E E E E E E\n") {
		t.Errorf("preempt with verification: %s", out)
	}
	out = mustRun(t, "tsn", dev, "preempt", "verify-enabled", "off", "fp", "E", "P")
	if !strings.Contains(out, "verify-status disabled verify-time 10 tx-min-frag-size 60 active on fp E P E E E E E E\n") {
		t.Errorf("preempt without verification: %s", out)
	}
}

// The FEC's AVB shaper through the same command.
func TestTSNFEC(t *testing.T) {
	out := mustRun(t, "tsn", "sim:fec52?soc=imx8mp&queues=3&link-poll=0", "cbs", "tc", "2", "idleslope", "250000")
	if !strings.Contains(out, "no time gating, cbs on classes 1 2") || !strings.Contains(out, "cbs tc 2 idleslope 200000 (20% of the link)") {
		t.Fatalf("FEC cbs: %s", out)
	}
}

func TestTSNErrors(t *testing.T) {
	dev := "sim:enetc53?queues=2&chip=tsn53"
	clk := "--clock=sim:enetc-timer53?chip=tsn53&timeline=manual"
	wantError(t, exitUsage, []string{"tsn", dev}, "missing arguments")
	wantError(t, exitUsage, []string{"tsn", dev, "frobnicate"}, `unknown command "frobnicate"`, "show;", "gates base-time", "preempt")
	wantError(t, exitUsage, []string{"tsn", dev, "preempt", "verify-time"}, "verify-time needs a value")
	wantError(t, exitUsage, []string{"tsn", dev, "preempt", "tx-min-frag-size", "100"}, "60, 124, 188 or 252")
	wantError(t, exitUsage, []string{"tsn", dev, "preempt", "pmac-enabled", "off"}, "give both the same")
	wantError(t, exitUsage, []string{"tsn", dev, "preempt", "fp", "X"}, "fp takes E (express) or P")
	wantError(t, exitFailed, []string{"tsn", dev, "preempt", "verify-time", "200"}, "verify-time 200ms", "1 to 128")
	wantError(t, exitFailed, []string{"tsn", "sim:fec57?soc=imx8mp&queues=3&link-poll=0", "preempt"}, "no frame preemption")
	wantError(t, exitUsage, []string{"tsn", dev, "gates", "sched-entry", "H", "01", "1000"}, "only S", "preemption")
	wantError(t, exitUsage, []string{"tsn", dev, "gates", "cycle-time", "1000"}, "at least one sched-entry")
	wantError(t, exitUsage, []string{"tsn", dev, "gates", "sched-entry", "S", "1ff", "1000"}, "gate mask", "1ff")
	wantError(t, exitUsage, []string{"tsn", dev, "cbs", "tc", "1", "idleslope", "1000", "hicredit", "30"}, "hicredit", "derives it")
	wantError(t, exitUsage, []string{"tsn", dev, "tc", "num_tc", "2", "queues", "1-0"}, `unknown word "1-0"`)
	long := []string{"tsn", dev, clk, "gates"}
	for i := 0; i < 65; i++ {
		long = append(long, "sched-entry", "S", "01", "1000")
	}
	wantError(t, exitFailed, long, "65 entries", "at most 64", "PTGCAPR")
	wantError(t, exitFailed, []string{"tsn", dev, clk, "gates", "cycle-time", "1000", "sched-entry", "S", "01", "600", "sched-entry", "S", "02", "600"}, "cycle-time 1000 ns is shorter")
	wantError(t, exitFailed, []string{"tsn", dev, "--clock=sim:enetc-timer54?chip=other", "gates", "sched-entry", "S", "01", "1000"}, "timer is not open", "--clock")
	wantError(t, exitFailed, []string{"tsn", dev, "cbs", "tc", "1", "idleslope", "100000"}, "traffic class map")
	wantError(t, exitFailed, []string{"tsn", "sim:fec55?soc=imx8mp&queues=3&link-poll=0", "gates", "sched-entry", "S", "01", "1000"}, "no time-aware gates")
	wantError(t, exitFailed, []string{"tsn", "sim:fec56?soc=imx6ul&link-poll=0", "cbs", "tc", "1", "idleslope", "1000"}, "no AVB rings")
}

// A setting the driver refuses names the device once (nicctl names it; the
// driver names the operation and why).
func TestTSNRefusalNamesTheDeviceOnce(t *testing.T) {
	for _, c := range []struct{ dev, name, why string }{
		{"sim:enetc45", "enetc45", "cbs: set a traffic class map"},
		{"sim:fec45?soc=imx8mp", "fec45", "cbs: traffic class 1: the AVB classes"},
	} {
		wantError(t, exitFailed, []string{"tsn", c.dev, "cbs", "tc", "1", "idleslope", "5000"}, c.dev+": "+c.why)
		_, _, errOut := nicctl(t, "tsn", c.dev, "cbs", "tc", "1", "idleslope", "5000")
		if n := strings.Count(errOut, c.name); n != 1 {
			t.Errorf("%q names %s %d times, want once", errOut, c.name, n)
		}
	}
}

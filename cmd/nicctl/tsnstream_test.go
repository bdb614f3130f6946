package main

import (
	"encoding/json"
	"testing"
)

// nicctl tsn stream with tc flower's words and its gate and police
// actions: the stream as the port took it, with its counters.
func TestTSNStream(t *testing.T) {
	dev := "sim:enetc60?chip=tsn60"
	clock := "--clock=sim:enetc-timer60?chip=tsn60&timeline=manual"
	out := mustRun(t, "tsn", dev, clock, "stream", "chain", "1", "protocol", "802.1Q", "flower", "skip_sw",
		"dst_mac", "00:04:9f:05:f4:ab", "vlan_id", "12",
		"action", "gate", "base-time", "0", "sched-entry", "open", "200000", "-1", "-1", "sched-entry", "close", "800000",
		"action", "police", "rate", "10mbit", "burst", "10000", "mtu", "1000")
	want := "stream chain 1 dst_mac 00:04:9f:05:f4:ab vlan_id 12: gate open 200000 of 1000000 ns, mtu 1000, police 1250000 B/s burst 10000\n" +
		"\tmatching 0 passing 0, drops: sdu 0 gate 0 meter 0\n"
	if len(out) < len(want) || out[len(out)-len(want):] != want {
		t.Fatalf("got\n%s\nwant it to end\n%s", out, want)
	}
	var r tsnResult
	out = mustRun(t, "tsn", dev, clock, "--json", "stream", "chain", "2", "dst_mac", "01:80:c2:00:00:0e", "vlan_id", "0",
		"action", "gate", "sched-entry", "open", "1000000")
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Streams) != 1 || r.Streams[0].Chain != 2 || r.Streams[0].VlanID != 0 || r.Streams[0].RateBps != 0 || len(r.Applied) != 1 || r.Applied[0] != "stream" {
		t.Errorf("json: %+v", r)
	}
}

func TestTSNStreamErrors(t *testing.T) {
	dev := "sim:enetc61?chip=tsn61"
	clk := "--clock=sim:enetc-timer61?chip=tsn61&timeline=manual"
	wantError(t, exitUsage, []string{"tsn", dev, "stream", "dst_mac", "00:04:9f:05:f4:ab"}, "give chain N and dst_mac")
	wantError(t, exitUsage, []string{"tsn", dev, "stream", "chain", "1", "dst_mac", "nope"}, `dst_mac "nope"`)
	wantError(t, exitUsage, []string{"tsn", dev, "stream", "chain", "1", "dst_mac", "00:04:9f:05:f4:ab", "sched-entry", "open", "1000", "3", "-1"}, "internal priority")
	wantError(t, exitUsage, []string{"tsn", dev, "stream", "chain", "1", "dst_mac", "00:04:9f:05:f4:ab", "police", "rate", "fast"}, `rate "fast"`)
	wantError(t, exitUsage, []string{"tsn", dev, "stream", "chain", "1", "dst_mac", "00:04:9f:05:f4:ab", "police", "mtu", "100", "rate", "1mbit"}, "police needs rate and burst")
	wantError(t, exitUsage, []string{"tsn", dev, "stream", "chain", "1", "src_mac", "00:04:9f:05:f4:ab"}, "src_mac: not offered")
	wantError(t, exitFailed, []string{"tsn", dev, clk, "stream", "chain", "1", "dst_mac", "00:04:9f:05:f4:ab"}, "no gate sched-entry")
	wantError(t, exitFailed, []string{"tsn", dev, clk, "stream", "chain", "99", "dst_mac", "00:04:9f:05:f4:ab", "sched-entry", "open", "1000"}, "handles are 0-15")
	wantError(t, exitFailed, []string{"tsn", "sim:fec62?soc=imx8mp&queues=3&link-poll=0", "stream", "chain", "1", "dst_mac", "00:04:9f:05:f4:ab", "sched-entry", "open", "1000"}, "no 802.1Qci stream filters")
}

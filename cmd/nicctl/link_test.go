package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestLink(t *testing.T) {
	if out := mustRun(t, "link", "sim:enetc0"); out != "sim:enetc0: up 1000 Mb/s full duplex\n" {
		t.Errorf("link: %q", out)
	}
	var r linkResult
	if err := json.Unmarshal([]byte(mustRun(t, "link", "sim:fec0?link=down", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Up || r.Dev != "sim:fec0?link=down" {
		t.Errorf("link down: %+v", r)
	}
	if out := mustRun(t, "link", "sim:enetc1?vf=1"); !strings.Contains(out, "up") {
		t.Errorf("a VF reports up (no PHY to ask): %q", out)
	}
	wantError(t, exitUsage, []string{"link"}, "missing arguments")
	wantError(t, exitUsage, []string{"link", "sim:enetc0?link=sideways"}, "sideways")
}

func TestStats(t *testing.T) {
	var r statsResult
	if err := json.Unmarshal([]byte(mustRun(t, "stats", "sim:enetc0", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.RxQueues) != 1 || len(r.TxQueues) != 1 || r.Rx.Packets != 0 {
		t.Errorf("fresh port: %+v", r)
	}
	for _, k := range []string{"SIRFRM", "RBDCR(0)"} {
		if _, ok := r.HW[k]; !ok {
			t.Errorf("hw counters lack %s: %v", k, sortedKeys(r.HW))
		}
	}
	out := mustRun(t, "stats", "sim:fec0")
	for _, want := range []string{"rx packets", "total", "device counters:", "IEEE_R_FRAME_OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats sim:fec0 lacks %q:\n%s", want, out)
		}
	}
}

func TestStatsWatch(t *testing.T) {
	// --count 3 prints three samples, one JSON object per line, each with
	// rates.
	out := mustRun(t, "stats", "sim:enetc0", "--watch", "--interval", "10ms", "--count", "3", "--json")
	samples := watchSamples(t, out)
	if len(samples) != 3 || strings.Count(out, "\n") != 3 {
		t.Fatalf("%d samples, want 3, one per line:\n%s", len(samples), out)
	}
	if _, ok := samples[2].Rates["rx_packets"]; !ok {
		t.Errorf("rates lack rx_packets: %v", samples[2].Rates)
	}
	// The generator fills the RX ring of a port nobody polls: the MAC
	// counts the frames. --watch runs until interrupted, here once a
	// sample shows them, however long the device engine took to run.
	stop := make(chan struct{})
	var o, e lockedBuffer
	done := make(chan int)
	go func() {
		done <- runEnv(&env{stdout: &o, stderr: &e, now: time.Now, interrupt: stop, json: true},
			[]string{"stats", "sim:fec0?gen=1&mode=engine", "--watch", "--interval", "20ms", "--json"})
	}()
	counted := func() bool {
		s := watchSamples(t, o.String())
		return len(s) > 0 && s[len(s)-1].HW["IEEE_R_FRAME_OK"] != 0 && s[len(s)-1].Rates != nil
	}
	// The deadline only keeps a broken build from hanging.
	for deadline := time.Now().Add(60 * time.Second); !counted() && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	close(stop)
	if code := <-done; code != exitOK || !counted() {
		t.Errorf("stats --watch of a generator-fed port: exit %d, no sample with frames counted:\n%s\n%s", code, o.String(), e.String())
	}
	text := mustRun(t, "stats", "sim:enetc0", "--watch", "--interval", "10ms", "--count", "2")
	n := 0
	for s := bufio.NewScanner(strings.NewReader(text)); s.Scan(); {
		if strings.Contains(s.Text(), "/s") {
			n++
		}
	}
	if n == 0 {
		t.Errorf("--watch prints no rates:\n%s", text)
	}
	wantError(t, exitUsage, []string{"stats", "sim:enetc0", "--interval", "0s"}, "--interval", "positive")
	wantError(t, exitUsage, []string{"stats", "sim:enetc0", "--interval", "soon"}, "-interval")
	wantError(t, exitUsage, []string{"stats", "sim:enetc0", "--count", "-1"}, "--count")
}

// watchSamples decodes the complete lines of stats --watch --json.
func watchSamples(t *testing.T, out string) []statsResult {
	t.Helper()
	var samples []statsResult
	for _, l := range strings.Split(out, "\n") {
		if l == "" || !strings.HasSuffix(l, "}") {
			continue
		}
		var s statsResult
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		samples = append(samples, s)
	}
	return samples
}

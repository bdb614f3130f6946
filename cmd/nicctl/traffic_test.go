package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim"
)

func TestRings(t *testing.T) {
	var r ringsResult
	if err := json.Unmarshal([]byte(mustRun(t, "rings", "sim:enetc0", "--send", "3", "--at", "0", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Rings) != 2 {
		t.Fatalf("rings %+v", r.Rings)
	}
	tx, rx := r.Rings[0], r.Rings[1]
	reg := map[string]driver.RegValue{}
	for _, v := range tx.Regs {
		reg[v.Name] = v
	}
	if tx.Kind != "tx" || reg["TBPIR(0)"].Value != 3 || tx.NextToUse != 3 || len(tx.BDs) != 4 || reg["TBMR(0)"].Value>>31 != 1 {
		t.Errorf("tx ring after 3 frames: %+v (want TBPIR(0) 3, TBMR(0).EN set)", tx)
	}
	for i := 0; i < 3; i++ {
		if b := tx.BDs[i]; b.Len != 64 || b.FrmLen != 64 || b.Addr == 0 || strings.Join(b.Flags, " ") != "F" {
			t.Errorf("TX BD %d: %+v", i, b)
		}
	}
	if rx.Kind != "rx" || rx.BDs[0].Addr == 0 || !strings.Contains(rx.BDs[0].Note, "posted") {
		t.Errorf("rx ring: %+v", rx)
	}
	out := mustRun(t, "rings", "sim:fec0", "--send", "2", "--at", "0", "--window", "3")
	for _, want := range []string{"rx ring 0: 512 BDs", "E INT  (empty, owned by the MAC)", "tx ring 0", "len    64  L TC BDU", "2 doorbells", "device: TDAR 0x", "device: RDAR 0x01000000 ACTIVE=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("rings sim:fec0 lacks %q:\n%s", want, out)
		}
	}
	wantError(t, exitUsage, []string{"rings", "sim:enetc0", "--window", "-1"}, "--window")
	wantError(t, exitUsage, []string{"rings", "sim:enetc0", "--send", "9999"}, "--send")
	wantError(t, exitFailed, []string{"--root", "testdata/ls1028a", "rings", "0000:00:00.0"}, "offline tree")
}

func selftestJSON(t *testing.T, wantCode int, args ...string) selftestResult {
	t.Helper()
	code, out, errOut := nicctl(t, append([]string{"selftest", "--json"}, args...)...)
	if code != wantCode {
		t.Fatalf("selftest %v: exit %d, want %d; stderr %q\n%s", args, code, wantCode, errOut, out)
	}
	var r selftestResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

func TestSelftest(t *testing.T) {
	for _, dev := range []string{"sim:enetc0", "sim:fec0?soc=imx6ul", "sim:fec1?mode=engine", "sim:enetc4?peer=sim:enetc7"} {
		r := selftestJSON(t, exitOK, dev)
		if !r.Pass || len(r.Steps) < 8 || r.Loopback != "cable" {
			t.Errorf("%s: %+v", dev, r)
		}
		names := map[string]bool{}
		for _, s := range r.Steps {
			names[s.Name] = s.Pass
		}
		for _, n := range []string{"A->B: frames come back", "B->A: frames come back", "A->B: queue counters", "A->B: MAC counters"} {
			if !names[n] {
				t.Errorf("%s: step %q missing or failed: %+v", dev, n, r.Steps)
			}
		}
	}
	if r := selftestJSON(t, exitOK, "sim:enetc4?peer=sim:enetc7"); r.Peer != "sim:enetc7" {
		t.Errorf("peer given in the spec: %q", r.Peer)
	}
	// The text form says PASS or FAIL per step and ends with the verdict.
	out := mustRun(t, "selftest", "sim:enetc0", "--frames", "4")
	if !strings.Contains(out, "PASS  A->B: frames come back: 4 frames, bytes identical") || !strings.HasSuffix(out, "RESULT: PASS\n") {
		t.Errorf("text:\n%s", out)
	}
}

func TestSelftestMACLoopback(t *testing.T) {
	for _, dev := range []string{"sim:enetc0", "sim:fec0", "sim:fec1?soc=imx6ul&mode=engine"} {
		r := selftestJSON(t, exitOK, dev, "--loopback", "mac", "--force")
		var on, back, off bool
		for _, s := range r.Steps {
			on = on || (s.Name == "MAC loopback on" && s.Pass)
			back = back || (s.Name == "A->B: frames come back" && s.Pass)
			off = off || (s.Name == "MAC loopback off" && s.Pass)
		}
		if !on || !back || !off || r.Peer != "" {
			t.Errorf("%s: %+v", dev, r)
		}
	}
	// A VF has no MAC to loop.
	r := selftestJSON(t, exitFailed, "sim:enetc1?vf=1", "--loopback", "mac", "--force")
	if r.Steps[len(r.Steps)-1].Pass || !strings.Contains(r.Steps[len(r.Steps)-1].Detail, "VF has no MAC") {
		t.Errorf("VF: %+v", r.Steps)
	}
	wantError(t, exitUsage, []string{"selftest", "sim:enetc0", "--loopback", "mac"}, "--force")
	wantError(t, exitUsage, []string{"selftest", "0000:00:00.0", "--loopback", "mac", "--force"}, "phy", "external")
}

func TestSelftestFails(t *testing.T) {
	// A port whose link is down: the step fails, the steps are printed, exit 1.
	r := selftestJSON(t, exitFailed, "sim:enetc0?link=down")
	if r.Pass || len(r.Steps) != 2 || r.Steps[1].Name != "link up" || r.Steps[1].Pass {
		t.Errorf("link down: %+v", r)
	}
	code, out, errOut := nicctl(t, "selftest", "sim:fec0?link=down")
	if code != exitFailed || !strings.Contains(out, "FAIL  link up") || !strings.HasSuffix(out, "RESULT: FAIL\n") || !strings.Contains(errOut, "1 of 2 steps failed") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// PHY loopback on the ENETC model: the model does not loop at the PHY,
	// so nothing comes back and the test says so; BMCR is put back.
	r = selftestJSON(t, exitFailed, "sim:enetc0", "--loopback", "phy", "--force", "--timeout", "50ms", "--frames", "2")
	var back, off bool
	for _, s := range r.Steps {
		back = back || (s.Name == "A->B: frames come back" && !s.Pass)
		off = off || (s.Name == "PHY loopback off" && s.Pass)
	}
	if !back || !off {
		t.Errorf("phy loopback: %+v", r.Steps)
	}
	for _, c := range []struct {
		args  []string
		parts []string
	}{
		{[]string{"selftest", "sim:enetc0", "--loopback", "phy"}, []string{"--force"}},
		{[]string{"selftest", "sim:enetc0", "--loopback", "mirror"}, []string{`"mirror"`, "cable, mac, phy or external"}},
		{[]string{"selftest", "sim:enetc0", "--frames", "0"}, []string{"--frames"}},
		{[]string{"selftest", "sim:enetc0?gen=1"}, []string{"gen=", "drop it"}},
		{[]string{"selftest", "0000:00:00.0", "--loopback", "cable"}, []string{"sim devices"}},
	} {
		wantError(t, exitUsage, c.args, c.parts...)
	}
}

// TestPktgenBytesAsLinuxCounts: pktgen counts the bytes it sent as the
// driver, the device and the sink do, and as Linux's tx_bytes does:
// without the FCS. 1000 frames of 64 bytes on the wire are 60 000 bytes
// (l2fwd's TestBytesAsLinuxCounts forwards the same frames and reports
// the same figure).
func TestPktgenBytesAsLinuxCounts(t *testing.T) {
	t.Parallel() // its own devices (see main_test.go)
	var r pktgenResult
	if err := json.Unmarshal([]byte(mustRun(t, "pktgen", "sim:enetc504?sink=1&chip=bytes", "--count", "1000", "--size", "64", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Sent != 1000 || r.Bytes != 60000 || r.DriverBytes != 60000 || r.DeliveredBytes == nil || *r.DeliveredBytes != 60000 {
		t.Errorf("1000 frames of 64 bytes: pktgen says %d frames %d bytes, the driver %d bytes, the sink %v bytes; want 60000 each",
			r.Sent, r.Bytes, r.DriverBytes, r.DeliveredBytes)
	}
	out := mustRun(t, "pktgen", "sim:enetc504?sink=1&chip=bytes", "--count", "10", "--size", "64")
	if !strings.Contains(out, "(600 bytes without FCS") {
		t.Errorf("pktgen's text does not give the bytes as Linux counts them:\n%s", out)
	}
}

func TestPktgen(t *testing.T) {
	t.Parallel() // its own devices (see main_test.go)
	var r pktgenResult
	if err := json.Unmarshal([]byte(mustRun(t, "pktgen", "sim:enetc502?sink=1&chip=pktgen", "--count", "1000", "--size", "128", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Sent != 1000 || r.Bytes != 124000 || r.Delivered == nil || *r.Delivered != 1000 {
		t.Errorf("pktgen: %+v", r)
	}
	// At a set rate the run takes as long as the rate says.
	if err := json.Unmarshal([]byte(mustRun(t, "pktgen", "sim:fec502?sink=1", "--count", "200", "--rate", "2k", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Sent != 200 || r.Seconds < 0.08 || r.PPS > 2600 {
		t.Errorf("200 frames at 2 kpps took %.3fs (%.0f pps)", r.Seconds, r.PPS)
	}
	wantError(t, exitUsage, []string{"pktgen", "sim:enetc502?chip=pktgen", "--size", "10"}, "--size 10", "64 to 9600")
	wantError(t, exitUsage, []string{"pktgen", "sim:enetc502?chip=pktgen", "--rate", "fast"}, `--rate "fast"`)
	wantError(t, exitUsage, []string{"pktgen", "sim:enetc502?chip=pktgen", "--count", "-5"}, "--count")
	wantError(t, exitUsage, []string{"pktgen", "sim:enetc502?chip=pktgen", "--size", "9000"}, "MTU")
	wantError(t, exitFailed, []string{"pktgen", "sim:enetc502?link=down&chip=pktgen"}, "link is down")
}

// stepClock is a clock that moves on by step each time it is read.
func stepClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	now := time.Unix(1_000_000_000, 0)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
}

// mustRunClocked is mustRun with a clock of the test's.
func mustRunClocked(t *testing.T, now func() time.Time, args ...string) string {
	t.Helper()
	var o, e bytes.Buffer
	if code := runEnv(&env{stdout: &o, stderr: &e, now: now}, args); code != 0 {
		t.Fatalf("nicctl %s: exit %d, stderr %q", strings.Join(args, " "), code, e.String())
	}
	return o.String()
}

// TestBench runs bench on a clock that moves 1 ms each time bench reads
// it, over synchronous models (frames arrive on every poll): how many
// interval lines a run prints and what it receives depend on neither the
// machine's speed nor its load.
func TestBench(t *testing.T) {
	t.Parallel() // its own devices (see main_test.go)
	for _, mode := range []string{"drop", "pass", "tx", "redirect"} {
		// 200 ms in 40 ms intervals: lines at 40, 80, 120 and 160 ms, the
		// run ends at 200 with the summary.
		out := mustRunClocked(t, stepClock(time.Millisecond), "bench", "sim:enetc500?chip=bench&mode=sync", mode, "--duration", "200ms", "--interval", "40ms")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 6 || !strings.HasPrefix(lines[0], benchVerbs[mode]) || !strings.HasPrefix(lines[len(lines)-1], "Summary") {
			t.Errorf("%s: want a heading, 4 interval lines and the summary:\n%s", mode, out)
			continue
		}
		for _, l := range lines[1:5] {
			if !strings.HasPrefix(l, "sim:enetc500") || !strings.Contains(l, " rx/s") {
				t.Errorf("%s: interval line %q", mode, l)
			}
		}
		sum := lines[len(lines)-1]
		if !strings.Contains(sum, " rx/s") || !strings.Contains(sum, " err,drop/s") {
			t.Errorf("%s summary %q lacks xdp-bench's columns", mode, sum)
		}
		if tx := mode == "tx" || mode == "redirect"; tx != strings.Contains(sum, " xmit/s") {
			t.Errorf("%s summary %q: xmit/s column only for tx and redirect", mode, sum)
		}
		var r benchResult
		if err := json.Unmarshal([]byte(mustRunClocked(t, stepClock(time.Millisecond), "bench", "sim:fec500?mode=sync", mode, "--duration", "100ms", "--interval", "50ms", "--json")), &r); err != nil {
			t.Fatal(err)
		}
		if r.Rx == 0 || r.Summary.RxPPS == 0 || len(r.Samples) != 1 || r.Seconds < 0.1 || (mode == "tx" && r.Xmit == 0) {
			t.Errorf("%s on sim:fec500: %+v", mode, r)
		}
	}
	wantError(t, exitUsage, []string{"bench", "sim:enetc500?chip=bench", "spin"}, `"spin"`, "drop, tx, pass or redirect")
	wantError(t, exitUsage, []string{"bench", "sim:enetc500?chip=bench", "drop", "--to", "sim:enetc503"}, "--to", "redirect")
	wantError(t, exitUsage, []string{"bench", "sim:enetc500?chip=bench"}, "missing arguments")
	wantError(t, exitUsage, []string{"bench", "sim:enetc500?chip=bench", "drop", "--interval", "0s"}, "--interval")
}

func TestCommas(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 2783123: "2,783,123"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q", n, got)
		}
	}
}

// TestInterrupt stops commands that run until interrupted, once they
// run: bench and stats --watch have printed, pktgen has sent a frame.
func TestInterrupt(t *testing.T) {
	t.Parallel() // its own devices (see main_test.go)
	sent := func() bool { m := sim.ENETCModel("enetc501"); return m != nil && m.Stats().TxFrames > 0 }
	for _, c := range []struct {
		args    []string
		running func(o *lockedBuffer) bool
	}{
		{[]string{"bench", "sim:enetc501?chip=interrupt", "drop", "--duration", "0", "--interval", "20ms"}, (*lockedBuffer).printed},
		{[]string{"stats", "sim:enetc501?chip=interrupt", "--watch", "--interval", "20ms"}, (*lockedBuffer).printed},
		{[]string{"pktgen", "sim:enetc501?chip=interrupt", "--count", "0", "--rate", "1k"}, func(*lockedBuffer) bool { return sent() }},
	} {
		stop := make(chan struct{})
		var o, e lockedBuffer
		done := make(chan int)
		go func() { done <- runEnv(&env{stdout: &o, stderr: &e, now: time.Now, interrupt: stop}, c.args) }()
		// The deadlines only keep a broken build from hanging: long
		// enough for an emulated CPU on a loaded machine.
		for deadline := time.Now().Add(60 * time.Second); !c.running(&o); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				close(stop)
				t.Fatalf("%v did not get going in 60 s (exit %d, stderr %q)", c.args, <-done, e.String())
			}
		}
		close(stop)
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("%v: exit %d, stderr %q", c.args, code, e.String())
			}
			if o.Len() == 0 {
				t.Errorf("%v printed nothing", c.args)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%v did not stop on interrupt", c.args)
		}
	}
}

// lockedBuffer is a bytes.Buffer a command writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Len() int { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Len() }

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func (l *lockedBuffer) printed() bool { return l.Len() > 0 }

func TestRingsAt(t *testing.T) {
	var r ringsResult
	if err := json.Unmarshal([]byte(mustRun(t, "rings", "sim:fec0", "--at", "511", "--window", "2", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	for _, g := range r.Rings {
		if len(g.BDs) != 2 || g.BDs[0].Index != 511 || g.BDs[1].Index != 0 {
			t.Errorf("%s ring: the window from 511 wraps to 0: %+v", g.Kind, g.BDs)
		}
	}
	wantError(t, exitUsage, []string{"rings", "sim:enetc0", "--at", "512"}, "--at 512", "512 BDs", "0 to 511")
	wantError(t, exitUsage, []string{"rings", "sim:fec0", "--at", "-2"}, "--at -2")
}

// TestTrafficErrors: the self-test, bench and mdio inputs not covered
// above.
func TestTrafficErrors(t *testing.T) {
	for _, c := range []struct {
		code  int
		args  []string
		parts []string
	}{
		{exitUsage, []string{"selftest", "sim:enetc0?peer=0000:00:00.0"}, []string{`peer "0000:00:00.0" is not a sim device`, "peer=sim:enetcN"}},
		{exitUsage, []string{"selftest", "sim:enetc0", "--frames", "257"}, []string{"--frames 257", "1 to 256"}},
		{exitUsage, []string{"selftest", "sim:enetc0", "--timeout", "0s"}, []string{"--timeout 0s", "positive"}},
		{exitUsage, []string{"--root", "testdata/ls1028a", "bench", "0000:00:00.0", "redirect"}, []string{"redirect needs --to DEV2"}},
		{exitUsage, []string{"bench", "sim:enetc0", "drop", "--size", "63"}, []string{"--size 63", "64 to 9600"}},
		{exitUsage, []string{"bench", "sim:enetc0", "drop", "--duration", "-1s"}, []string{"--duration", "0 or positive"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "0", "1", "--devad", "40"}, []string{"--devad 40", "0 to 31"}},
	} {
		wantError(t, c.code, c.args, c.parts...)
	}
	// A VF has no PHY to loop: the step fails and says what to use.
	r := selftestJSON(t, exitFailed, "sim:enetc1?vf=1", "--loopback", "phy", "--force")
	if last := r.Steps[len(r.Steps)-1]; last.Pass || !strings.Contains(last.Detail, "no PHY on MDIO") || !strings.Contains(last.Detail, "--loopback external") {
		t.Errorf("VF, --loopback phy: %+v", r.Steps)
	}
}

// The huge-page warning is left out when every device is simulated.
func TestSimOnly(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"pktgen", "sim:enetc0?sink=1", "--count", "10"}, true},
		{[]string{"bench", "sim:enetc0", "redirect", "--to", "sim:enetc1"}, true},
		{[]string{"bench", "sim:enetc0", "redirect", "--to", "0000:00:00.1"}, false},
		{[]string{"stats", "0000:00:00.0"}, false},
		{[]string{"list"}, false},
	} {
		if got := simOnly(c.args); got != c.want {
			t.Errorf("simOnly(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

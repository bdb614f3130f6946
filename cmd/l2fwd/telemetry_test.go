package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/telemetry"
)

// TestTelemetry: while l2fwd forwards, a client of its --telemetry socket
// reads the ports' live counters (what nicctl stats --telemetry prints);
// the socket is gone when l2fwd exits.
func TestTelemetry(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	p0.load(0, testFrames(t, 50, 64))
	dir, err := os.MkdirTemp("", "l2t")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "l2fwd.sock")
	var st *telemetry.Stats
	var ports []telemetry.Port
	code, _, errOut := runUntil(t, []string{"--telemetry", path, "--stats-interval", "0", "sim:fake0", "sim:fake1"}, func() bool {
		if len(p1.txFrames()) < 50 {
			return false
		}
		c, err := telemetry.Dial(path)
		if err != nil {
			t.Error(err)
			return true
		}
		defer c.Close()
		if ports, err = c.Ports(); err != nil {
			t.Error(err)
		}
		if st, err = c.Stats("fake0"); err != nil {
			t.Error(err)
		}
		return true
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "telemetry on "+path) {
		t.Errorf("stderr does not name the socket:\n%s", errOut)
	}
	if len(ports) != 2 || ports[0].Name != "fake0" || ports[1].Name != "fake1" {
		t.Errorf("ports %+v", ports)
	}
	if st == nil || st.Rx.Packets != 50 || st.RxQueues[0].Packets != 50 {
		t.Errorf("fake0's stats over the socket: %+v, want 50 frames received", st)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("socket %s left behind: %v", path, err)
	}
}

// TestTelemetryDefault: without --telemetry, l2fwd serves on
// DefaultDir/l2fwd.PID.sock, names it, and removes it at exit.
func TestTelemetryDefault(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	p0.load(0, testFrames(t, 5, 64))
	sent := func(n int) func() bool { return func() bool { return len(p1.txFrames()) >= n } }
	code, _, errOut := runUntil(t, []string{"--stats-interval", "0", "sim:fake0", "sim:fake1"}, sent(5))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := regexp.MustCompile(`telemetry on (\S+)`).FindStringSubmatch(errOut)
	if m == nil || !strings.HasPrefix(m[1], filepath.Join(telemetry.DefaultDir(), "l2fwd.")) {
		t.Fatalf("stderr names no socket in %s:\n%s", telemetry.DefaultDir(), errOut)
	}
	if _, err := os.Lstat(m[1]); !os.IsNotExist(err) {
		t.Errorf("socket %s left behind: %v", m[1], err)
	}
}

// TestTelemetryPathOrOff: a --telemetry path l2fwd cannot use is an error
// that names it; --telemetry off serves nothing and says nothing of it.
func TestTelemetryPathOrOff(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	code, _, errOut := runUntil(t, []string{"--telemetry", "/nonexistent-dir/x.sock", "--stats-interval", "0", "sim:fake0", "sim:fake1"}, nil)
	if code != 2 || !strings.Contains(errOut, "--telemetry /nonexistent-dir/x.sock") {
		t.Errorf("--telemetry in a missing directory: exit %d: %s", code, errOut)
	}
	p0.load(0, testFrames(t, 5, 64))
	code, _, errOut = runUntil(t, []string{"--telemetry", "off", "--stats-interval", "0", "sim:fake0", "sim:fake1"}, func() bool { return len(p1.txFrames()) >= 5 })
	if code != 0 || strings.Contains(errOut, "telemetry") {
		t.Errorf("--telemetry off: exit %d: %s", code, errOut)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopmd/gopmd/telemetry"
)

// TestTelemetryFromL2fwd runs l2fwd as a process of its own, forwarding
// 1000 generated frames, and reads its ports with nicctl stats and rings
// --telemetry (auto, then the socket's path) while it runs: the counters are l2fwd's, live (the device
// indices wrap at the ring's 512 BDs: 1000 frames leave them at 488).
func TestTelemetryFromL2fwd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs l2fwd")
	}
	dir, err := os.MkdirTemp("", "nct")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "l2fwd")
	if out, err := exec.Command("go", "build", "-o", bin, "../l2fwd").CombinedOutput(); err != nil {
		t.Fatalf("building l2fwd: %v\n%s", err, out)
	}
	// l2fwd's default socket, found with --telemetry auto at first.
	l2 := exec.Command(bin, "--stats-interval", "0", "sim:enetc570?gen=1&gen-count=1000", "sim:enetc571")
	var l2err strings.Builder
	l2.Stderr = &l2err
	if err := l2.Start(); err != nil {
		t.Fatal(err)
	}
	defer l2.Process.Kill()
	sock := filepath.Join(telemetry.DefaultDir(), fmt.Sprintf("l2fwd.%d.sock", l2.Process.Pid))
	// Wait for the 1000 frames to be through; the deadline only keeps a
	// broken build from hanging.
	var r statsResult
	for deadline := time.Now().Add(time.Minute); ; {
		code, out, _ := nicctl(t, "stats", "--telemetry", "auto", "--json", "sim:enetc571")
		if code == 0 {
			r = statsResult{}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("stats --json: %v\n%s", err, out)
			}
			if r.Tx.Packets == 1000 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("l2fwd's port 1 did not reach 1000 frames sent: last %+v; l2fwd: %s", r.Tx, l2err.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(r.Source, "l2fwd pid ") || !strings.Contains(r.Source, sock) || r.HW["TFRM"] != 1000 {
		t.Errorf("stats: source %q, TFRM %d", r.Source, r.HW["TFRM"])
	}
	in := mustRun(t, "stats", "--telemetry", sock, "sim:enetc570")
	for _, want := range []string{"sim:enetc570, read from l2fwd pid", "total", "1000", "device counters:"} {
		if !strings.Contains(in, want) {
			t.Errorf("stats sim:enetc570 lacks %q:\n%s", want, in)
		}
	}
	rings := mustRun(t, "rings", "--telemetry", sock, "sim:enetc571")
	for _, want := range []string{"tx ring 0:", "device: TBMR(0) 0x8", " EN=1", "device: TBPIR(0) 0x000001e8 INDEX=0x1e8", "device: TBCIR(0) 0x000001e8 INDEX=0x1e8", "the serving process's own"} {
		if !strings.Contains(rings, want) {
			t.Errorf("rings sim:enetc571 lacks %q:\n%s", want, rings)
		}
	}
	wantError(t, exitUsage, []string{"rings", "--telemetry", sock, "--send", "1", "sim:enetc571"}, "--send", "--telemetry")
	wantError(t, exitFailed, []string{"stats", "--telemetry", sock, "sim:enetc572"}, "sim:enetc572", "/ports")
	if err := l2.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := l2.Wait(); err != nil {
		t.Fatalf("l2fwd: %v\n%s", err, l2err.String())
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("l2fwd left its socket behind: %v", err)
	}
	wantError(t, exitFailed, []string{"stats", "--telemetry", sock, "sim:enetc571"}, sock, "running")
}

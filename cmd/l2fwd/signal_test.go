package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/gopmd/gopmd/internal/testnote"
)

// mainEnv makes the test binary run l2fwd's main with the arguments in it
// (see TestMain), so a test can signal a real l2fwd process.
const mainEnv = "GOPMD_L2FWD_MAIN"

// TestSignalsStopCleanly sends SIGTERM, SIGINT (Ctrl-C) and SIGHUP (the
// terminal went away) to a running l2fwd: it stops, prints the summary
// with a passed leak check, exits 0.
func TestSignalsStopCleanly(t *testing.T) {
	testnote.SkipUnlessReexec(t, "the l2fwd signal test")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), mainEnv+"=--stats-interval 100ms sim:enetc0?gen=1&sink=1&link-poll=0 sim:enetc1?gen=1&sink=1&link-poll=0")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Forwarding has begun once a stats row shows frames on port 0.
			rd := bufio.NewReader(out)
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					cmd.Process.Kill()
					t.Fatalf("l2fwd output ended before forwarding began: %v; stderr %s", err, stderr.String())
				}
				if f := strings.Fields(line); len(f) > 2 && f[0] == "0" && f[1] != "0" {
					break
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(rd)
			err = cmd.Wait()
			if err != nil {
				t.Fatalf("after %v: %v; stderr %s", sig, err, stderr.String())
			}
			for _, want := range []string{"summary: mode fwd", "leak check: every buffer came back"} {
				if !strings.Contains(string(rest), want) {
					t.Fatalf("after %v the output lacks %q:\n%s", sig, want, rest)
				}
			}
		})
	}
}

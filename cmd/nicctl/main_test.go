package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// Most tests of this package run one at a time (no t.Parallel): they open
// sim:enetc0, sim:fec0 and their siblings by those names through the
// process-wide sim registry, as a user would, and the golden outputs show
// those names and the MACs derived from them. The traffic tests that print
// no device name (pktgen, bench, interrupt) run in parallel on devices of
// their own (sim:enetc500 and up, fec500 and up), their ENETCs each on a
// simulated chip of their own (chip=), so no other test's MDIO holds them
// off. The bind, unbind, sriov, DMA-memory, list and raw-register tests
// run in parallel too: each reads a tree of its own under --root (or the
// testdata tree, read only), opens no sim device, and plays the kernel, if
// at all, with a sysfs writer of its own (fakeKernel), which nicctl()
// hands to the command it runs.

// nicctl runs the command line and returns its exit status and output.
func nicctl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = runEnv(&env{stdout: &o, stderr: &e, now: time.Now, sysWrite: writerOf(t)}, args)
	return code, o.String(), e.String()
}

// mustRun runs a command that must succeed.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := nicctl(t, args...)
	if code != 0 {
		t.Fatalf("nicctl %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
	}
	return out
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", p, got, want)
	}
}

// wantError checks a failing command: exit status, one line on stderr,
// nothing on stdout, and the parts the message must name.
func wantError(t *testing.T, wantCode int, args []string, parts ...string) {
	t.Helper()
	code, out, errOut := nicctl(t, args...)
	if code != wantCode {
		t.Errorf("nicctl %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), code, wantCode, errOut)
	}
	if out != "" {
		t.Errorf("nicctl %s: stdout %q, want nothing", strings.Join(args, " "), out)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "nicctl") {
		t.Errorf("nicctl %s: stderr %q, want one line starting with nicctl", strings.Join(args, " "), errOut)
	}
	for _, p := range parts {
		if !strings.Contains(errOut, p) {
			t.Errorf("nicctl %s: stderr %q does not mention %q", strings.Join(args, " "), errOut, p)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args  []string
		parts []string
	}{
		{nil, []string{"no command", "list"}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`, "list, bind, unbind, sriov, info, regs, mdio, phy, link, clock, tsn, stats, rings, selftest, pktgen, bench"}},
		{[]string{"list", "--bogus"}, []string{"-bogus", "nicctl list -h"}},
		{[]string{"list", "extra"}, []string{`unexpected argument "extra"`, "usage: nicctl list"}},
		{[]string{"--nosuch", "list"}, []string{"-nosuch"}},
	}
	for _, c := range cases {
		wantError(t, exitUsage, c.args, c.parts...)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}} {
		out := mustRun(t, args...)
		for _, c := range commands {
			if !strings.Contains(out, "  "+c.name+" ") {
				t.Errorf("help does not list %s:\n%s", c.name, out)
			}
		}
	}
	if out := mustRun(t, "help", "mdio"); !strings.Contains(out, "--force") || !strings.Contains(out, "--devad") {
		t.Errorf("help mdio:\n%s", out)
	}
	if out := mustRun(t, "regs", "-h"); strings.Contains(out, "--force") || !strings.Contains(out, "--block") {
		t.Errorf("regs writes nothing and takes no --force:\n%s", out)
	}
	out := mustRun(t, "list", "-h")
	if !strings.Contains(out, "usage: nicctl list") || !strings.Contains(out, "--all") || !strings.Contains(out, "--json") {
		t.Errorf("list -h:\n%s", out)
	}
}

func TestRootErrors(t *testing.T) {
	wantError(t, exitUsage, []string{"--root", "testdata/nosuch", "list"}, "--root testdata/nosuch", "not a directory", "drop --root")
	wantError(t, exitUsage, []string{"info", "sim:enetc0", "--root", "testdata/mktrees.sh"}, "--root testdata/mktrees.sh", "not a directory")
}

// TestOfflineTree: under --root only list, bind, unbind, info and regs
// read the tree; every command that drives a port says the tree cannot be
// driven, for PCI, platform and UIO specs alike.
func TestOfflineTree(t *testing.T) {
	for _, c := range []struct{ root, dev string }{
		{"testdata/ls1028a", "0000:00:00.0"},
		{"testdata/imx8mp", "platform:30be0000.ethernet"},
		{"testdata/imx8mp", "uio:/dev/uio0"},
	} {
		for _, args := range [][]string{
			{"mdio", c.dev, "read", "0", "1"},
			{"phy", c.dev},
			{"link", c.dev},
			{"stats", c.dev},
			{"stats", c.dev, "--watch", "--count", "1"},
			{"rings", c.dev},
			{"selftest", c.dev, "--loopback", "external"},
			{"pktgen", c.dev, "--count", "1"},
			{"bench", c.dev, "drop"},
		} {
			wantError(t, exitFailed, append([]string{"--root", c.root}, args...), c.dev, "offline tree", "drop --root")
		}
	}
}

// TestForceOnlyWhereWritten: only mdio and selftest write registers, so
// only they take --force for that; bind, unbind and sriov take it to
// override their refusals, info to open an ENETC switch CPU port.
func TestForceOnlyWhereWritten(t *testing.T) {
	for _, c := range commands {
		if c.force != (c.name == "mdio" || c.name == "selftest") {
			t.Errorf("%s: force %v", c.name, c.force)
		}
		if (c.forceHelp != "") != (c.name == "bind" || c.name == "unbind" || c.name == "sriov" || c.name == "info") {
			t.Errorf("%s: force help %q", c.name, c.forceHelp)
		}
		if !c.force && c.forceHelp == "" {
			wantError(t, exitUsage, []string{c.name, "--force"}, "-force", "nicctl "+c.name+" -h")
		}
	}
}

package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/internal/testnote"
)

func TestFormat(t *testing.T) {
	bi := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/gopmd/gopmd", Version: "v0.3.1"},
		Settings: []debug.BuildSetting{
			{Key: "GOARCH", Value: "arm64"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-01T09:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	got := format("nicctl", bi, "go1.26.8", "linux/arm64")
	want := "nicctl github.com/gopmd/gopmd v0.3.1\n" +
		"git revision 0123456789abcdef0123456789abcdef01234567 (2026-12-01T09:00:00Z), with uncommitted changes\n" +
		"built with go1.26.8 for linux/arm64\n"
	if got != want {
		t.Errorf("tagged, modified build:\n got %q\nwant %q", got, want)
	}

	// A clean checkout build: no "uncommitted" note.
	bi.Main.Version = "(devel)"
	bi.Settings[4].Value = "false"
	got = format("l2fwd", bi, "go1.26.8", "linux/arm")
	if !strings.HasPrefix(got, "l2fwd github.com/gopmd/gopmd (devel)\ngit revision 0123456789abcdef") || strings.Contains(got, "uncommitted") {
		t.Errorf("clean devel build: %q", got)
	}

	// Built without VCS stamping (-buildvcs=false, or from a module zip):
	// no revision line, and never an empty one.
	got = format("l2fwd", &debug.BuildInfo{Main: debug.Module{Path: "github.com/gopmd/gopmd", Version: "v1.0.0"}}, "go1.26.8", "linux/amd64")
	if got != "l2fwd github.com/gopmd/gopmd v1.0.0\nbuilt with go1.26.8 for linux/amd64\n" {
		t.Errorf("no VCS info: %q", got)
	}

	// No build information at all.
	got = format("nicctl", nil, "go1.26.8", "linux/amd64")
	if got != "nicctl github.com/gopmd/gopmd unknown\nbuilt with go1.26.8 for linux/amd64\n" {
		t.Errorf("no build info: %q", got)
	}
}

// A binary built from this checkout reports the checkout's commit.
func TestBuiltFromCheckout(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		testnote.Skip(t, "the build-from-checkout version test", "it builds a program with the go command, which is not on PATH")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		testnote.Skip(t, "the build-from-checkout version test", "it compares with git rev-parse HEAD, and git is not on PATH")
	}
	head, err := exec.Command(git, "rev-parse", "HEAD").Output()
	if err != nil {
		testnote.Skip(t, "the build-from-checkout version test", "this tree is not a git checkout")
	}
	top, err := exec.Command(git, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse --show-toplevel: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		testnote.Skip(t, "the build-from-checkout version test", "the go command stamps the commit only when .git is a directory, and this checkout is a git worktree (.git is a file); run it in a plain clone")
	}
	bin := filepath.Join(t.TempDir(), "vprog")
	// Built for the host (GOARCH and GOARM cleared) so that it runs here
	// even when this test runs for another architecture under emulation.
	// VCS stamping is asked for in GOFLAGS, which outranks a
	// -buildvcs=false in the machine's go env file.
	build := exec.Command(gobin, "build", "-o", bin, "./testdata/vprog")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOARCH=") && !strings.HasPrefix(kv, "GOARM=") && !strings.HasPrefix(kv, "GOFLAGS=") {
			build.Env = append(build.Env, kv)
		}
	}
	build.Env = append(build.Env, "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(out), "\n")
	// The go command derives the version from the commit (a
	// pseudo-version, "+dirty" for a modified tree) or says "(devel)".
	if v, ok := strings.CutPrefix(lines[0], "vprog github.com/gopmd/gopmd "); !ok || v == "" || v == "unknown" {
		t.Errorf("first line %q, want the module and a version", lines[0])
	}
	if want := "git revision " + strings.TrimSpace(string(head)); !strings.HasPrefix(lines[1], want) {
		t.Errorf("second line %q, want it to start %q", lines[1], want)
	}
}

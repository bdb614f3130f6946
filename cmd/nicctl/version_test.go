package main

import (
	"runtime"
	"strings"
	"testing"
)

// --version names the command, the module and the toolchain, and exits 0
// without running a command.
func TestVersion(t *testing.T) {
	out := mustRun(t, "--version")
	if !strings.HasPrefix(out, "nicctl github.com/gopmd/gopmd ") || !strings.Contains(out, "built with "+runtime.Version()+" for "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("nicctl --version:\n%s", out)
	}
	if out := mustRun(t, "help"); !strings.Contains(out, "nicctl --version") {
		t.Errorf("help does not mention --version:\n%s", out)
	}
}

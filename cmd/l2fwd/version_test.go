package main

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

// --version prints the build and exits 0 without opening a port, even
// beside specs that would otherwise be opened.
func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--version", "sim:enetc0?gen=1"}, &out, &errOut)
	if code != 0 || errOut.Len() != 0 {
		t.Fatalf("l2fwd --version: exit %d, stderr %q", code, errOut.String())
	}
	s := out.String()
	if !strings.HasPrefix(s, "l2fwd github.com/gopmd/gopmd ") || !strings.Contains(s, "built with "+runtime.Version()) {
		t.Errorf("l2fwd --version:\n%s", s)
	}
	if strings.Contains(s, "rx_pkts") || strings.Contains(s, "port") {
		t.Errorf("l2fwd --version forwarded:\n%s", s)
	}
}

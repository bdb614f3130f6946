// Package notices holds the test that keeps the repository's NOTICE file
// in step with the modules gopmd's programs link: every third-party module
// is listed with its version, and the NOTICE file of every module that has
// one (the Apache-2.0 ones, whose license asks for it) is carried in full.
package notices

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/internal/testnote"
)

func TestNoticeListsModules(t *testing.T) {
	testnote.SkipEmulated(t, "the NOTICE check", "it runs the go command, which is the host's")
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the NOTICE check needs the go command on PATH")
	}
	root := filepath.Join("..", "..")
	notice, err := os.ReadFile(filepath.Join(root, "NOTICE"))
	if err != nil {
		t.Fatalf("the repository has no NOTICE file: %v", err)
	}
	cmd := exec.Command(goCmd, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}} {{.Dir}}{{end}}{{end}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		path, version, dir := f[0], f[1], f[2]
		if !strings.Contains(string(notice), "  "+path+" ") || !strings.Contains(string(notice), " "+version+" ") {
			t.Errorf("NOTICE does not list %s %s: add it, with its license, to the list of modules", path, version)
		}
		n, err := os.ReadFile(filepath.Join(dir, "NOTICE"))
		if err != nil {
			continue // no NOTICE file to carry
		}
		if !strings.Contains(string(notice), "NOTICE of "+path+" "+version+"\n") || !bytes.Contains(notice, bytes.TrimSpace(n)) {
			t.Errorf("NOTICE does not carry %s %s's NOTICE file (%s) unchanged: copy it in under a line \"NOTICE of %s %s\"", path, version, filepath.Join(dir, "NOTICE"), path, version)
		}
	}
	if len(seen) == 0 {
		t.Fatal("go list named no third-party module")
	}
}

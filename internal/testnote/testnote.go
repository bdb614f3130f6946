// Package testnote lets a test that is skipped by default (kernel rigs, long
// soaks) say so even under plain `go test ./...`, which prints nothing but
// "ok" for a passing package: the note also goes to the go command's own
// standard error, once per test binary.
package testnote

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

var once sync.Map

// Skip skips t with a message naming what is skipped and how to run it, and
// repeats that message where a plain `go test ./...` run shows it.
func Skip(t testing.TB, what, how string) {
	t.Helper()
	msg := fmt.Sprintf("skipped %s: %s", what, how)
	if _, dup := once.LoadOrStore(msg, true); !dup && !testing.Verbose() {
		tellParent("gopmd: " + msg + "\n")
	}
	t.Skip(msg)
}

// Note logs msg on t and repeats it, once per test binary, where a plain
// `go test ./...` run shows it: for tests that ran a reduced version of
// themselves (a short soak) and say how to run the full one.
func Note(t testing.TB, msg string) {
	t.Helper()
	if _, dup := once.LoadOrStore(msg, true); !dup && !testing.Verbose() {
		tellParent("gopmd: " + msg + "\n")
	}
	t.Log(msg)
}

// tellParent writes to the standard error of the go command that runs this
// test binary, if that is the parent; otherwise it does nothing.
func tellParent(s string) {
	ppid := os.Getppid()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", ppid), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	// Only a terminal or a pipe: a regular file has an offset of the go
	// command's own that would write over the note.
	if fi, err := f.Stat(); err != nil || fi.Mode().IsRegular() {
		return
	}
	_, _ = f.WriteString(s)
}

// Package testnote lets a test that is skipped by default (kernel rigs, long
// soaks) say so even under plain `go test ./...`, which prints nothing but
// "ok" for a passing package: the note also goes to the go command's own
// standard error, once per test binary.
package testnote

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
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

// EmulatorEnv names the variable scripts/test-all sets to the qemu-user
// binary it runs a foreign architecture's tests with (-exec).
const EmulatorEnv = "GOPMD_EMULATOR"

// SkipEmulated skips t, saying what and why, when the tests run under
// qemu-user (EmulatorEnv set): for tests that need the host's view of the
// process (/proc/self/pagemap, which qemu-user does not translate) or that
// time the code under test in ways emulation can stretch.
func SkipEmulated(t testing.TB, what, why string) {
	t.Helper()
	if emu := os.Getenv(EmulatorEnv); emu != "" {
		Skip(t, what, "under "+emu+": "+why+"; it runs natively")
	}
}

var reexec struct {
	once sync.Once
	err  error
}

// SkipUnlessReexec skips t when this test binary cannot be started again
// as a child process: under qemu-user without a binfmt_misc entry the
// kernel refuses a foreign-architecture binary (exec format error).
func SkipUnlessReexec(t testing.TB, what string) {
	t.Helper()
	reexec.once.Do(func() {
		self, err := os.Executable()
		if err != nil {
			reexec.err = err
			return
		}
		reexec.err = exec.Command(self, "-test.run=^$", "-test.count=1").Run()
	})
	if errors.Is(reexec.err, syscall.ENOEXEC) {
		Skip(t, what, "it starts this test binary again, and the kernel cannot run it ("+reexec.err.Error()+"; under qemu-user register binfmt_misc, or run natively)")
	}
}

package xdp

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/testnote"
	"golang.org/x/sys/unix"
)

// holdEnv makes the test binary a process that holds an xdp: port: it
// opens and starts the spec in the variable, prints "ready", and waits
// for its standard input to close (see TestMain).
const holdEnv = "GOPMD_XDP_HOLD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(holdEnv); spec != "" {
		os.Exit(holdPort(spec))
	}
	os.Exit(m.Run())
}

func holdPort(spec string) int {
	p, err := driver.Open(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	if err := p.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		return 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := p.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		return 1
	}
	return 0
}

// startHolder starts a process holding an xdp: port on spec and waits
// until its port runs.
func startHolder(t *testing.T, spec string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+spec)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the process holding %s did not start its port: %q, %v; stderr %s", spec, line, err, stderr.String())
	}
	return cmd, in
}

// A process that held a port and was killed (SIGKILL: no Close runs)
// leaves the steering program on the interface. What a user sees: while
// the process ran, its program was gopmd's in use by its pid and a second
// open was refused; after the kill, the interface's description says the
// program is gopmd's and held by no process, frames go to the kernel's
// stack meanwhile, and the next open replaces it without force=1, says
// so, and receives; its Close leaves no program. A process that ends by
// closing its port leaves none.
func TestDetachAfterKill(t *testing.T) {
	v := newPair(t, true)
	testnote.SkipUnlessReexec(t, "the AF_XDP kill test")
	spec := "xdp:" + v.host + "?mode=generic"
	cmd, _ := startHolder(t, spec)

	n, err := LookupNetdev(v.host)
	if err != nil {
		t.Fatal(err)
	}
	pl := n.Plan()
	if n.ProgName != progName || len(n.ProgHolders) != 1 || n.ProgHolders[0].PID != cmd.Process.Pid || !pl.OpenRefused ||
		!strings.Contains(pl.Program, "in use by process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("with the holder running: program %q id %d, holders %v, plan %+v", n.ProgName, n.ProgID, n.ProgHolders, pl)
	}
	running := n.ProgID
	if _, err := driver.Open(spec); err == nil || !strings.Contains(err.Error(), "in use by process "+strconv.Itoa(cmd.Process.Pid)) ||
		!strings.Contains(err.Error(), "force=1") {
		t.Fatalf("a second open while the holder runs: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	n, err = LookupNetdev(v.host)
	if err != nil {
		t.Fatal(err)
	}
	pl = n.Plan()
	if n.ProgID != running || n.ProgName != progName || len(n.ProgHolders) != 0 || pl.OpenRefused ||
		!strings.Contains(pl.Program, "held by no process") || !strings.Contains(pl.Program, "replaces it without force=1") {
		t.Fatalf("after SIGKILL: program %q id %d (was %d), holders %v, plan %+v", n.ProgName, n.ProgID, running, n.ProgHolders, pl)
	}
	// The killed process's socket left the program's map with it: the
	// frames of its queue go to the kernel, which answers a ping.
	if !v.ping(v.hostAddr, 5) {
		t.Error("no echo reply from the kernel through the program a killed run left")
	}

	p := openPort(t, spec)
	if d := p.Info().Device; !strings.Contains(d, fmt.Sprintf("replaced steering program id %d", running)) {
		t.Errorf("the port does not say it replaced program %d: %q", running, d)
	}
	a, err := queryXDP(n.Index)
	if err != nil || a.ProgID == 0 || a.ProgID == running {
		t.Fatalf("program %d a killed run left not replaced: %+v, %v", running, a, err)
	}
	fd := v.packetSocket()
	c := &collector{q: p.RxQueue(0)}
	want := frame(v.hostMAC, v.peerMAC, 7)
	if err := unix.Send(fd, want, 0); err != nil {
		t.Fatal(err)
	}
	c.until(1)
	if len(c.got) != 1 || string(c.got[0]) != string(want) {
		t.Fatalf("the new port received %d test frames", len(c.got))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if a, _ := queryXDP(n.Index); a.ProgID != 0 {
		t.Fatalf("after Close: program %d attached", a.ProgID)
	}

	// A holder that closes its port on the way out leaves nothing.
	cmd, in := startHolder(t, spec)
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the holder's close: %v", err)
	}
	if a, _ := queryXDP(n.Index); a.ProgID != 0 {
		t.Fatalf("after the holder closed its port: program %d attached", a.ProgID)
	}
}

// A queue another socket is bound to refuses a second port's bind, after
// waiting out the moment the kernel takes to let go of a closed socket's
// queue, with an error that says so; a port opened right after the
// first closed binds.
func TestQueueBusy(t *testing.T) {
	v := newPair(t, false)
	spec := "xdp:" + v.host + "?mode=generic"
	p := openPort(t, spec)
	_, err := driver.Open(spec + "&force=1")
	if err == nil || !strings.Contains(err.Error(), "queue 0 of "+v.host+" is bound to another AF_XDP socket") {
		t.Fatalf("a second port on a bound queue: %v", err)
	}
	for i := 0; i < 3; i++ {
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if p, err = driver.Open(spec); err != nil {
			t.Fatalf("open right after a close (round %d): %v", i, err)
		}
	}
	p.Close()
}

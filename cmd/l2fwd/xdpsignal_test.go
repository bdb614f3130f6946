package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopmd/gopmd/internal/testnote"
	"github.com/gopmd/gopmd/xdp"
	"golang.org/x/sys/unix"
)

// TestXDPDetachOnSignals runs l2fwd over two xdp: ports as a process of
// its own and ends it the ways a user does. SIGTERM and SIGINT: it exits 0
// with the summary, and neither interface carries a program. SIGKILL: no
// Close runs, the programs stay, and the interfaces' descriptions (what
// nicctl info and list print) say they are gopmd's and held by no
// process; the next l2fwd on the same interfaces, without force=1,
// replaces them and runs, and its SIGTERM leaves nothing.
func TestXDPDetachOnSignals(t *testing.T) {
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the l2fwd AF_XDP signal test", "needs root (veth pairs, BPF programs, AF_XDP sockets); run go test as root to include it")
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("the l2fwd AF_XDP signal test needs iproute2's ip command (apt-get install iproute2)")
	}
	if fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0); err != nil {
		testnote.Skip(t, "the l2fwd AF_XDP signal test", fmt.Sprintf("this kernel makes no AF_XDP socket (%v): it needs CONFIG_XDP_SOCKETS", err))
	} else {
		unix.Close(fd)
	}
	testnote.SkipUnlessReexec(t, "the l2fwd AF_XDP signal test")
	n := &netns{t: t, ip: ipPath}
	suffix := strconv.Itoa(os.Getpid() % 100000)
	ifs := []string{"gxsA" + suffix, "gxsB" + suffix}
	t.Cleanup(func() {
		for _, h := range ifs {
			_ = exec.Command(ipPath, "link", "del", h).Run()
		}
	})
	for _, h := range ifs {
		n.run("link", "add", h, "type", "veth", "peer", "name", h+"p")
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+h+"/disable_ipv6", []byte("1"), 0o644)
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+h+"p/disable_ipv6", []byte("1"), 0o644)
		n.run("link", "set", h, "up")
		n.run("link", "set", h+"p", "up")
	}
	args := "--stats-interval 0 --no-mac-updating xdp:" + ifs[0] + "?mode=generic xdp:" + ifs[1] + "?mode=generic"

	// start runs l2fwd and waits until it holds the programs of both
	// interfaces; it returns their ids.
	start := func() (*exec.Cmd, chan error, *strings.Builder, []uint32) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), mainEnv+"="+args)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		waitc := make(chan error, 1)
		go func() { waitc <- cmd.Wait() }()
		ids := make([]uint32, len(ifs))
		for i, h := range ifs {
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
				d, err := xdp.LookupNetdev(h)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.ProgHolders) == 1 && d.ProgHolders[0].PID == cmd.Process.Pid {
					ids[i] = d.ProgID
					break
				}
				select {
				case err := <-waitc:
					t.Fatalf("l2fwd exited (%v) before it held %s's program: %s", err, h, out.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("l2fwd does not hold a program on %s: %+v", h, d)
				}
			}
		}
		return cmd, waitc, &out, ids
	}
	stopWith := func(sig syscall.Signal) {
		cmd, waitc, out, _ := start()
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if err := <-waitc; err != nil {
			t.Fatalf("after %v: %v: %s", sig, err, out.String())
		}
		if !strings.Contains(out.String(), "leak check: every buffer came back") {
			t.Errorf("after %v: no passed leak check in the output:\n%s", sig, out.String())
		}
		for _, h := range ifs {
			if l := n.run("link", "show", h); strings.Contains(l, "xdp") {
				t.Errorf("XDP program left on %s after %v: %s", h, sig, l)
			}
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		stopWith(sig)
	}

	cmd, waitc, _, ids := start()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-waitc
	for i, h := range ifs {
		d, err := xdp.LookupNetdev(h)
		if err != nil {
			t.Fatal(err)
		}
		pl := d.Plan()
		if d.ProgID != ids[i] || len(d.ProgHolders) != 0 || pl.OpenRefused || !strings.Contains(pl.Program, "held by no process") {
			t.Fatalf("%s after SIGKILL: program %q id %d (l2fwd's was %d), holders %v, plan %q", h, d.ProgName, d.ProgID, ids[i], d.ProgHolders, pl.Program)
		}
	}
	cmd, waitc, out, ids2 := start()
	for i := range ifs {
		if ids2[i] == ids[i] {
			t.Errorf("%s: the next l2fwd runs on program %d, the one the killed run left", ifs[i], ids[i])
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-waitc; err != nil {
		t.Fatalf("the l2fwd after the kill: %v: %s", err, out.String())
	}
	for _, h := range ifs {
		if l := n.run("link", "show", h); strings.Contains(l, "xdp") {
			t.Errorf("XDP program left on %s: %s", h, l)
		}
	}
}

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/internal/testnote"
	"golang.org/x/sys/unix"
)

// l2fwd over xdp: ports, on the topology of the kernel-traffic test: the
// host ends of two veth pairs are opened as AF_XDP ports (the kernel keeps
// them; generic XDP steers their frames to the sockets), and the
// namespaces reach each other only through the forwarder.
//
//	ns A: 10.97.0.1/24 on gxA1 ── veth ── gxA0 ── xdp:gxA0 ─┐
//	                                                         l2fwd
//	ns B: 10.97.0.2/24 on gxB1 ── veth ── gxB0 ── xdp:gxB0 ─┘
func TestXDPForwardingThroughNamespaces(t *testing.T) { xdpForwarding(t, "poll") }

// The same with --rx-mode adaptive: the workers sleep in poll(2) on the
// AF_XDP sockets when idle, and every frame still crosses.
func TestXDPForwardingAdaptive(t *testing.T) { xdpForwarding(t, "adaptive") }

// The same over one shared UMEM (umem=): each frame leaves the other port
// from the buffer it arrived in, and every buffer is home at the end.
func TestXDPForwardingSharedUMEM(t *testing.T) { xdpForwarding(t, "poll", "&umem=l2fwd") }

func xdpForwarding(t *testing.T, rxMode string, opts ...string) {
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the l2fwd AF_XDP test", "needs root (network namespaces, veth pairs, BPF programs, AF_XDP sockets); run go test as root to include it")
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("the l2fwd AF_XDP test needs iproute2's ip command (apt-get install iproute2)")
	}
	if fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0); err != nil {
		testnote.Skip(t, "the l2fwd AF_XDP test", fmt.Sprintf("this kernel makes no AF_XDP socket (%v): it needs CONFIG_XDP_SOCKETS", err))
	} else {
		unix.Close(fd)
	}
	testnote.SkipUnlessReexec(t, "the l2fwd AF_XDP test")
	n := &netns{t: t, ip: ipPath}
	suffix := strconv.Itoa(os.Getpid() % 100000)
	nsA, nsB := "gxA"+suffix, "gxB"+suffix
	hostA, hostB := "gxA0"+suffix, "gxB0"+suffix
	innerA, innerB := "gxA1"+suffix, "gxB1"+suffix
	t.Cleanup(func() {
		for _, c := range [][]string{{"netns", "del", nsA}, {"netns", "del", nsB}, {"link", "del", hostA}, {"link", "del", hostB}} {
			_ = exec.Command(ipPath, c...).Run()
		}
	})
	n.run("netns", "add", nsA)
	n.run("netns", "add", nsB)
	for _, x := range []struct{ ns, host, inner, addr string }{{nsA, hostA, innerA, "10.97.0.1/24"}, {nsB, hostB, innerB, "10.97.0.2/24"}} {
		n.run("link", "add", x.host, "type", "veth", "peer", "name", x.inner)
		n.run("link", "set", x.inner, "netns", x.ns)
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+x.host+"/disable_ipv6", []byte("1"), 0o644)
		n.run("link", "set", x.host, "up")
		n.helperOut(x.ns, "prepare", x.inner)
		n.run("-n", x.ns, "addr", "add", x.addr, "dev", x.inner)
		n.run("-n", x.ns, "link", "set", x.inner, "up")
		n.run("-n", x.ns, "link", "set", "lo", "up")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr strings.Builder
	res := make(chan int, 1)
	go func() {
		res <- run(ctx, []string{"--json", "--stats-interval", "0", "--no-mac-updating", "--rx-mode", rxMode,
			"xdp:" + hostA + "?mode=generic" + strings.Join(opts, ""), "xdp:" + hostB + "?mode=generic" + strings.Join(opts, "")}, &stdout, &stderr)
	}()
	// The ports are up once both interfaces carry the program (before,
	// the kernel's stack drops the frames: the host ends have no
	// address). The ping below retries, so it is only a start.
	for _, h := range []string{hostA, hostB} {
		for !strings.Contains(n.run("link", "show", h), "xdpgeneric") {
			select {
			case code := <-res:
				t.Fatalf("l2fwd exited %d before traffic: %s", code, stderr.String())
			case <-time.After(time.Millisecond):
			}
		}
	}

	out := n.helperOut(nsA, "ping", "10.97.0.2")
	t.Logf("ns A: %s", strings.TrimSpace(out))
	// The program is on the interfaces from the ports' open, the sockets
	// in its map from their start: a frame between the two goes to the
	// kernel's stack, as a port not started leaves its queues to the
	// kernel, and no port counts it. Once an echo came back both ports
	// run: the frames sent before it (but the answered request and its
	// reply) may be such frames, and nothing sent after.
	preA, preB := counter(t, n, nsA, innerA, "tx_packets")-1, counter(t, n, nsB, innerB, "tx_packets")-1

	// TCP: 1 MiB from A to B, byte for byte.
	n.tcpTransfer(nsA, nsB, "10.97.0.2:9098", 1<<20)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if counter(t, n, nsA, innerA, "tx_packets") == counter(t, n, nsB, innerB, "rx_packets") &&
			counter(t, n, nsB, innerB, "tx_packets") == counter(t, n, nsA, innerA, "rx_packets") {
			break
		}
	}
	cancel()
	if code := <-res; code != 0 {
		t.Fatalf("l2fwd exit %d: %s", code, stderr.String())
	}
	s := parseSummary(t, stdout.String())
	if s.RxMode != rxMode {
		t.Errorf("summary rx_mode %q, want %q", s.RxMode, rxMode)
	}
	t.Logf("--rx-mode %s: %d sleeps", rxMode, s.Sleeps)
	aTx, aRx := counter(t, n, nsA, innerA, "tx_packets"), counter(t, n, nsA, innerA, "rx_packets")
	bTx, bRx := counter(t, n, nsB, innerB, "tx_packets"), counter(t, n, nsB, innerB, "rx_packets")
	t.Logf("ns A sent %d frames, ns B received %d; ns B sent %d, ns A received %d; l2fwd %d and %d", aTx, bRx, bTx, aRx, s.Ports[0].Handled, s.Ports[1].Handled)
	drops := func(m map[string]uint64) uint64 {
		var d uint64
		for _, v := range m {
			d += v
		}
		return d
	}
	d0, d1 := drops(s.Ports[0].Rx.Drops), drops(s.Ports[1].Rx.Drops)
	crossed := func(sent, got, d, pre uint64) bool { return got <= sent && sent <= got+d+pre }
	if !crossed(aTx, bRx, d0, preA) || !crossed(bTx, aRx, d1, preB) {
		t.Errorf("frame counts differ: A sent %d (%d before the ports ran), B got %d, %d counted drops; B sent %d (%d before), A got %d, %d counted drops", aTx, preA, bRx, d0, bTx, preB, aRx, d1)
	}
	if !crossed(aTx, s.Ports[0].Rx.Packets, d0, preA) || s.Ports[0].Handled != s.Ports[0].Rx.Packets || s.Ports[1].Tx.Packets != bRx ||
		!crossed(bTx, s.Ports[1].Rx.Packets, d1, preB) || s.Ports[1].Handled != s.Ports[1].Rx.Packets || s.Ports[0].Tx.Packets != aRx {
		t.Errorf("l2fwd counters do not match the namespaces': %+v", s.Ports)
	}
	if !s.LeakCheck.OK {
		t.Errorf("leak check %+v", s.LeakCheck)
	}
	// The program is off both interfaces once l2fwd has exited.
	for _, h := range []string{hostA, hostB} {
		if l := n.run("link", "show", h); strings.Contains(l, "xdp") {
			t.Errorf("XDP program left on %s after l2fwd exited: %s", h, l)
		}
	}
}

package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gopmd/gopmd/internal/testnote"

	"github.com/gopmd/gopmd/sim"
	"golang.org/x/sys/unix"
)

// The kernel-traffic test: two network namespaces, each joined to this one
// by a veth pair; one simulated ENETC port sits on each host-side veth end
// through the AF_PACKET wire, and l2fwd forwards between them. The
// namespaces can only reach each other through the forwarder.
//
//	ns A: 10.99.0.1/24 on gpA1 ── veth ── gpA0 ── sim:enetc0 ─┐
//	                                                           l2fwd
//	ns B: 10.99.0.2/24 on gpB1 ── veth ── gpB0 ── sim:enetc1 ─┘
//
// Inside the namespaces the test binary runs again as a helper
// (GOPMD_NS_HELPER): it switches IPv6 and the veth offloads off (a real wire
// carries whole, checksummed frames), pings, and moves data over TCP.

const helperEnv = "GOPMD_NS_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(nsHelper(mode, os.Args[len(os.Args)-1]))
	}
	if args, ok := os.LookupEnv(mainEnv); ok {
		os.Args = append([]string{"l2fwd"}, strings.Fields(args)...)
		main() // exits
	}
	os.Exit(m.Run())
}

// nsHelper is the program run inside a namespace.
func nsHelper(mode, arg string) int {
	var err error
	switch mode {
	case "prepare":
		err = prepareNS(arg, false)
	case "prepare6":
		err = prepareNS(arg, true)
	case "ping":
		err = ping(arg)
	case "serve":
		err = serve(arg)
	case "send":
		err = send(arg)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

// prepareNS turns IPv6 off in the namespace (no background traffic) unless
// keep6, and the interface's checksum and segmentation offloads off, with
// the legacy ethtool ioctls.
func prepareNS(ifname string, keep6 bool) error {
	if !keep6 {
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/all/disable_ipv6", []byte("1"), 0o644); err != nil {
			return err
		}
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for _, cmd := range []uint32{unix.ETHTOOL_STSO, unix.ETHTOOL_SGSO, unix.ETHTOOL_SGRO, unix.ETHTOOL_STXCSUM} {
		val := struct{ cmd, data uint32 }{cmd, 0}
		var ifr [40]byte
		copy(ifr[:unix.IFNAMSIZ-1], ifname)
		*(*uintptr)(unsafe.Pointer(&ifr[unix.IFNAMSIZ])) = uintptr(unsafe.Pointer(&val))
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); e != 0 {
			return fmt.Errorf("ethtool command %#x on %s: %w", cmd, ifname, e)
		}
	}
	return nil
}

// ping sends ICMP echo requests to addr until one is answered (5 tries);
// to an IPv6 address, ICMPv6 echo requests (the kernel sums them).
func ping(addr string) error {
	network, laddr, request, reply := "ip4:icmp", "0.0.0.0", byte(8), byte(0)
	if strings.Contains(addr, ":") {
		network, laddr, request, reply = "ip6:ipv6-icmp", "::", 128, 129
	}
	c, err := net.ListenPacket(network, laddr)
	if err != nil {
		return err
	}
	defer c.Close()
	dst := &net.IPAddr{IP: net.ParseIP(addr)}
	for seq := 1; seq <= 5; seq++ {
		msg := make([]byte, 8+32)
		msg[0] = request
		binary.BigEndian.PutUint16(msg[4:], 0x6770)
		binary.BigEndian.PutUint16(msg[6:], uint16(seq))
		copy(msg[8:], "gopmd l2fwd netns test payload!!")
		if request == 8 {
			binary.BigEndian.PutUint16(msg[2:], inetChecksum(msg))
		}
		if _, err := c.WriteTo(msg, dst); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				break // timeout: try again
			}
			if from.String() == addr && n >= 8 && buf[0] == reply && binary.BigEndian.Uint16(buf[6:]) == uint16(seq) {
				fmt.Printf("echo reply from %s seq %d\n", addr, seq)
				return nil
			}
		}
	}
	return fmt.Errorf("no echo reply from %s", addr)
}

func inetChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

// serve accepts one TCP connection on addr and reports what it read.
func serve(addr string) error {
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Println("listening")
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	h := sha256.New()
	n, err := io.Copy(h, c)
	if err != nil {
		return err
	}
	fmt.Printf("received %d bytes sha256 %s\n", n, hex.EncodeToString(h.Sum(nil)))
	return nil
}

// send connects to addr ("host:port:bytes") and writes pseudo-random bytes.
func send(arg string) error {
	i := strings.LastIndex(arg, ":")
	size, err := strconv.Atoi(arg[i+1:])
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp4", arg[:i], 10*time.Second)
	if err != nil {
		return err
	}
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for j := range data {
		data[j] = byte(r.Uint32())
	}
	if _, err := c.Write(data); err != nil {
		return err
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	io.Copy(io.Discard, c) // wait for the server to close
	c.Close()
	sum := sha256.Sum256(data)
	fmt.Printf("sent %d bytes sha256 %s\n", size, hex.EncodeToString(sum[:]))
	return nil
}

// netns is the test's topology; its methods run commands and fail the test.
type netns struct {
	t  *testing.T
	ip string
}

func (n *netns) run(args ...string) string {
	n.t.Helper()
	out, err := exec.Command(n.ip, args...).CombinedOutput()
	if err != nil {
		n.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// helper runs the test binary as a helper inside namespace ns.
func (n *netns) helper(ns, mode, arg string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		n.t.Fatal(err)
	}
	cmd := exec.Command(n.ip, "netns", "exec", ns, self, "-test.run=^$", arg)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	return cmd
}

func (n *netns) helperOut(ns, mode, arg string) string {
	n.t.Helper()
	out, err := n.helper(ns, mode, arg).CombinedOutput()
	if err != nil {
		n.t.Fatalf("helper %s %s in %s: %v: %s", mode, arg, ns, err, out)
	}
	return string(out)
}

// tcpTransfer sends size bytes over TCP from namespace from to a server in
// namespace to at addr (host:port), and fails the test unless the sender
// sent them all and both ends report the same bytes (the helpers print a
// digest). It returns both ends' reports.
func (n *netns) tcpTransfer(from, to, addr string, size int) (sent, received string) {
	n.t.Helper()
	srv := n.helper(to, "serve", addr)
	srvOut, err := srv.StdoutPipe()
	if err != nil {
		n.t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		n.t.Fatal(err)
	}
	defer srv.Process.Kill()
	rd := bufio.NewReader(srvOut)
	if l, err := rd.ReadString('\n'); err != nil || !strings.Contains(l, "listening") {
		n.t.Fatalf("server did not start: %q %v", l, err)
	}
	sent = strings.TrimSpace(n.helperOut(from, "send", fmt.Sprintf("%s:%d", addr, size)))
	got, _ := io.ReadAll(rd)
	if err := srv.Wait(); err != nil {
		n.t.Fatalf("server: %v", err)
	}
	received = strings.TrimSpace(string(got))
	if want := fmt.Sprintf("sent %d bytes", size); !strings.HasPrefix(sent, want) {
		n.t.Fatalf("sender: %q", sent)
	}
	if strings.TrimPrefix(sent, "sent") != strings.TrimPrefix(received, "received") {
		n.t.Fatalf("bytes differ: sender %q, receiver %q", sent, received)
	}
	return sent, received
}

func counter(t *testing.T, n *netns, ns, ifname, name string) uint64 {
	t.Helper()
	out, err := exec.Command(n.ip, "netns", "exec", ns, "cat", "/sys/class/net/"+ifname+"/statistics/"+name).Output()
	if err != nil {
		t.Fatalf("reading %s of %s in %s: %v", name, ifname, ns, err)
	}
	v, _ := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	return v
}

func TestKernelTrafficThroughNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the l2fwd kernel-traffic test", "needs root (network namespaces, veth pairs, raw sockets); run go test as root to include it")
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("kernel-traffic test needs iproute2's ip command (apt-get install iproute2)")
	}
	testnote.SkipUnlessReexec(t, "the l2fwd kernel-traffic test")
	n := &netns{t: t, ip: ipPath}
	suffix := strconv.Itoa(os.Getpid() % 100000)
	nsA, nsB := "gpmdA"+suffix, "gpmdB"+suffix
	// Interface names carry the suffix too: the host ends live in this
	// namespace, where another run of this test may be making its own.
	hostA, hostB := "gpA0"+suffix, "gpB0"+suffix
	innerA, innerB := "gpA1"+suffix, "gpB1"+suffix
	// Clean up even when the test fails half-way; deleting a namespace
	// deletes the veth end in it and so the pair.
	t.Cleanup(func() {
		for _, c := range [][]string{{"netns", "del", nsA}, {"netns", "del", nsB}, {"link", "del", hostA}, {"link", "del", hostB}} {
			_ = exec.Command(ipPath, c...).Run()
		}
	})
	for _, c := range [][]string{{"link", "del", hostA}, {"link", "del", hostB}} {
		_ = exec.Command(ipPath, c...).Run() // left over from an interrupted run
	}
	n.run("netns", "add", nsA)
	n.run("netns", "add", nsB)
	for _, x := range []struct{ ns, host, inner, addr string }{{nsA, hostA, innerA, "10.99.0.1/24"}, {nsB, hostB, innerB, "10.99.0.2/24"}} {
		n.run("link", "add", x.host, "type", "veth", "peer", "name", x.inner)
		n.run("link", "set", x.inner, "netns", x.ns)
		// The host ends carry no traffic of their own.
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+x.host+"/disable_ipv6", []byte("1"), 0o644)
		n.run("link", "set", x.host, "up")
		n.helperOut(x.ns, "prepare", x.inner)
		n.run("-n", x.ns, "addr", "add", x.addr, "dev", x.inner)
		n.run("-n", x.ns, "link", "set", x.inner, "up")
		n.run("-n", x.ns, "link", "set", "lo", "up")
	}

	// l2fwd between the two host ends, frames unchanged (the namespaces'
	// own MACs must survive).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr strings.Builder
	res := make(chan int, 1)
	go func() {
		res <- run(ctx, []string{"--json", "--stats-interval", "0", "--no-mac-updating",
			"sim:enetc0?afpacket=" + hostA + "&" + simOpts, "sim:enetc1?afpacket=" + hostB + "&" + simOpts}, &stdout, &stderr)
	}()
	// Traffic may start once both ports are started: their models then
	// have receive buffers posted (before, a frame would be dropped by a
	// MAC that is not enabled yet).
	started := func(name string) bool {
		m := sim.ENETCModel(name)
		return m != nil && m.RxRoom() > 0
	}
	for !started("enetc0") || !started("enetc1") {
		select {
		case code := <-res:
			t.Fatalf("l2fwd exited %d before traffic: %s", code, stderr.String())
		case <-time.After(time.Millisecond):
		}
	}

	// ARP and ICMP echo, from A to B.
	out := n.helperOut(nsA, "ping", "10.99.0.2")
	t.Logf("ns A: %s", strings.TrimSpace(out))
	macB := strings.TrimSpace(n.run("-n", nsB, "link", "show", innerB))
	neigh := n.run("-n", nsA, "neigh", "show", "10.99.0.2")
	if f := strings.Fields(macB); len(f) < 2 || !strings.Contains(neigh, "lladdr") {
		t.Fatalf("ns A has not resolved 10.99.0.2: %q", neigh)
	}
	if !strings.Contains(macB, strings.Fields(neigh[strings.Index(neigh, "lladdr"):])[1]) {
		t.Fatalf("ns A resolved 10.99.0.2 to %q, not to ns B's interface (%s)", neigh, macB)
	}

	// TCP: 1 MiB from A to B, some 730 full frames, more than port 0's
	// receive ring holds (512). A frame dropped for want of a buffer costs
	// TCP a retransmission timeout, so a longer transfer on a loaded
	// machine mostly waits.
	const size = 1 << 20
	sent, received := n.tcpTransfer(nsA, nsB, "10.99.0.2:9099", size)
	t.Logf("ns A: %s", sent)
	t.Logf("ns B: %s", received)

	// Let the last frames (the connection's closing ACKs) cross before
	// stopping: wait until the counters agree or a generous bound passes.
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
	// Every frame one namespace sent reached the other, and l2fwd counted
	// each of them on the way.
	aTx, aRx := counter(t, n, nsA, innerA, "tx_packets"), counter(t, n, nsA, innerA, "rx_packets")
	bTx, bRx := counter(t, n, nsB, innerB, "tx_packets"), counter(t, n, nsB, innerB, "rx_packets")
	t.Logf("ns A sent %d frames, ns B received %d; ns B sent %d, ns A received %d; l2fwd %d and %d", aTx, bRx, bTx, aRx, s.Ports[0].Handled, s.Ports[1].Handled)
	// A simulated port, like silicon, drops a frame that finds no posted
	// buffer (TCP bursts on a loaded machine): each such drop is counted,
	// and the frames that crossed are the frames sent less those drops.
	drops := func(m map[string]uint64) uint64 {
		var d uint64
		for _, v := range m {
			d += v
		}
		return d
	}
	d0, d1 := drops(s.Ports[0].Rx.Drops), drops(s.Ports[1].Rx.Drops)
	if d0 != 0 || d1 != 0 {
		t.Logf("counted RX drops: port 0 %d, port 1 %d", d0, d1)
	}
	// What crossed: every frame a namespace sent reached the other one or
	// is among the counted drops (exact when nothing was dropped).
	crossed := func(sent, got, d uint64) bool { return got <= sent && sent <= got+d }
	if !crossed(aTx, bRx, d0) || !crossed(bTx, aRx, d1) {
		t.Errorf("frame counts differ: A sent %d, B got %d, %d counted drops; B sent %d, A got %d, %d counted drops", aTx, bRx, d0, bTx, aRx, d1)
	}
	// l2fwd's own counters: it forwarded all it received, and every frame
	// it sent arrived.
	if !crossed(aTx, s.Ports[0].Rx.Packets, d0) || s.Ports[0].Handled != s.Ports[0].Rx.Packets || s.Ports[1].Tx.Packets != bRx ||
		!crossed(bTx, s.Ports[1].Rx.Packets, d1) || s.Ports[1].Handled != s.Ports[1].Rx.Packets || s.Ports[0].Tx.Packets != aRx {
		t.Errorf("l2fwd counters do not match the namespaces': %+v; afpacket %+v %+v", s.Ports, *s.Ports[0].AFPacket, *s.Ports[1].AFPacket)
	}
	if s.Ports[0].Rx.Bytes < size || !s.LeakCheck.OK {
		t.Errorf("port 0 received %d bytes for a %d-byte transfer; leak check %+v", s.Ports[0].Rx.Bytes, size, s.LeakCheck)
	}
}

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopmd/gopmd/internal/testnote"
)

// The exception-path test: l2fwd runs with --tap in a namespace of its own
// (nsL), where its TAP twins appear; two more namespaces sit on the wire
// side of ports 0 and 1, joined to nsL by veth pairs that the simulated
// ports reach through AF_PACKET. Ports 2 and 3 forward generated traffic
// meanwhile.
//
//	ns A: 10.99.1.1/24 on inA ── veth ── wireA ── sim:enetc0 ── gpt0: 10.99.1.10/24 (in nsL)
//	                                                  │ l2fwd
//	ns B: 10.99.1.2/24 on inB ── veth ── wireB ── sim:enetc1
//	generator ── sim:enetc2 ── l2fwd ── sim:enetc3 ── sink (and back)
//
// Namespace A pings the TAP's address, sends it 512 KiB over TCP and
// receives 512 KiB from it, all through port 0; it pings B through the
// forwarder too (its ARP request is copied up and forwarded). Afterwards
// every frame is accounted for.
func TestTapExceptionPathThroughNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the l2fwd exception-path (--tap) test", "needs root (network namespaces, veth pairs, TAP interfaces); run go test as root to include it")
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("the exception-path test needs iproute2's ip command (apt-get install iproute2)")
	}
	testnote.SkipUnlessReexec(t, "the l2fwd exception-path (--tap) test")
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("the exception-path test needs /dev/net/tun (modprobe tun): %v", err)
	}
	n := &netns{t: t, ip: ipPath}
	suffix := strconv.Itoa(os.Getpid() % 100000)
	nsA, nsB, nsL := "gptA"+suffix, "gptB"+suffix, "gptL"+suffix
	t.Cleanup(func() {
		for _, ns := range []string{nsA, nsB, nsL} {
			_ = exec.Command(ipPath, "netns", "del", ns).Run()
		}
	})
	for _, ns := range []string{nsA, nsB, nsL} {
		n.run("netns", "add", ns)
	}
	// nsL sends nothing of its own over IPv6 (the TAPs come up in it), and
	// answers ARP only on the interface that has the address asked for:
	// the veth ends the ports reach hold none (they stand for the wire),
	// and by default Linux answers an ARP request for any of its addresses
	// on any interface.
	for _, k := range []string{"ipv6/conf/all/disable_ipv6", "ipv6/conf/default/disable_ipv6", "ipv4/conf/all/arp_ignore"} {
		if out, err := exec.Command(ipPath, "netns", "exec", nsL, "sh", "-c", "echo 1 > /proc/sys/net/"+k).CombinedOutput(); err != nil {
			t.Fatalf("set %s in %s: %v: %s", k, nsL, err, out)
		}
	}
	for _, x := range []struct{ ns, wire, inner, addr string }{{nsA, "wireA", "inA", "10.99.1.1/24"}, {nsB, "wireB", "inB", "10.99.1.2/24"}} {
		n.run("-n", nsL, "link", "add", x.wire, "type", "veth", "peer", "name", x.inner)
		n.run("-n", nsL, "link", "set", x.inner, "netns", x.ns)
		n.run("-n", nsL, "link", "set", x.wire, "up")
		n.helperOut(x.ns, "prepare", x.inner)
		n.run("-n", x.ns, "addr", "add", x.addr, "dev", x.inner)
		n.run("-n", x.ns, "link", "set", x.inner, "up")
		n.run("-n", x.ns, "link", "set", "lo", "up")
	}

	// l2fwd, as its own process inside nsL.
	args := "--json --stats-interval 100ms --no-mac-updating --workers 2 --tap --tap-name gpt%d" +
		" sim:enetc0?afpacket=wireA&" + simOpts + " sim:enetc1?afpacket=wireB&" + simOpts +
		" sim:enetc2?gen=1&gen-rate=20k&sink=1&" + simOpts + " sim:enetc3?gen=1&gen-rate=20k&sink=1&" + simOpts
	l := startInNamespace(t, n, nsL, args)
	defer l.cmd.Process.Kill()
	l2, stdout, running, l2Err := l.cmd, &l.stdout, l.running, l.stderr
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatalf("l2fwd did not start forwarding: %s", l2Err())
	}
	n.run("-n", nsL, "addr", "add", "10.99.1.10/24", "dev", "gpt0")

	// ARP and ICMP echo to the TAP's address, and through the forwarder to B.
	t.Logf("ns A: %s", strings.TrimSpace(n.helperOut(nsA, "ping", "10.99.1.10")))
	t.Logf("ns A: %s", strings.TrimSpace(n.helperOut(nsA, "ping", "10.99.1.2")))
	tapLink := n.run("-n", nsL, "link", "show", "gpt0")
	neigh := n.run("-n", nsA, "neigh", "show", "10.99.1.10")
	i := strings.Index(neigh, "lladdr")
	if i < 0 || !strings.Contains(tapLink, strings.Fields(neigh[i:])[1]) {
		t.Fatalf("ns A resolved 10.99.1.10 as %q, not as the TAP's (port 0's) MAC: %s", neigh, tapLink)
	}
	// From here the neighbours are fixed: no ARP probe, which the kernel
	// times by itself, crosses while the test reads the counters below.
	macA, macB, macTap := linkMAC(t, n, nsA, "inA"), linkMAC(t, n, nsB, "inB"), linkMAC(t, n, nsL, "gpt0")
	for _, x := range []struct{ ns, addr, mac, dev string }{
		{nsA, "10.99.1.10", macTap, "inA"}, {nsA, "10.99.1.2", macB, "inA"},
		{nsB, "10.99.1.1", macA, "inB"}, {nsL, "10.99.1.1", macA, "gpt0"},
	} {
		n.run("-n", x.ns, "neigh", "replace", x.addr, "lladdr", x.mac, "dev", x.dev, "nud", "permanent")
	}

	// TCP: 512 KiB from A to the TAP's address (full frames go up), then
	// 512 KiB from the TAP's side to A (full frames come down: the kernel
	// must hand the TAP whole, checksummed frames no larger than its MTU).
	const size = 512 << 10
	tcp := func(srvNS, addr, cliNS string) {
		t.Helper()
		srv := n.helper(srvNS, "serve", addr)
		srvOut, err := srv.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		srv.Stderr = os.Stderr
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		defer srv.Process.Kill()
		rd := bufio.NewReader(srvOut)
		if l, err := rd.ReadString('\n'); err != nil || !strings.Contains(l, "listening") {
			t.Fatalf("server did not start: %q %v", l, err)
		}
		sent := strings.TrimSpace(n.helperOut(cliNS, "send", fmt.Sprintf("%s:%d", addr, size)))
		got, _ := io.ReadAll(rd)
		if err := srv.Wait(); err != nil {
			t.Fatalf("server: %v", err)
		}
		received := strings.TrimSpace(string(got))
		t.Logf("%s: %s; %s: %s", cliNS, sent, srvNS, received)
		if !strings.HasPrefix(sent, fmt.Sprintf("sent %d bytes", size)) || strings.TrimPrefix(sent, "sent") != strings.TrimPrefix(received, "received") {
			t.Fatalf("TCP from %s to %s: sender %q, receiver %q", cliNS, addr, sent, received)
		}
	}
	tcp(nsL, "10.99.1.10:9098", nsA)
	tcp(nsA, "10.99.1.1:9097", nsL)

	// Let the last frames cross (closing ACKs), then stop l2fwd.
	sig := func() []uint64 {
		return []uint64{counter(t, n, nsA, "inA", "tx_packets"), counter(t, n, nsA, "inA", "rx_packets"),
			counter(t, n, nsB, "inB", "tx_packets"), counter(t, n, nsB, "inB", "rx_packets"),
			counter(t, n, nsL, "gpt0", "rx_packets"), counter(t, n, nsL, "gpt0", "tx_packets")}
	}
	last := sig()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		cur := sig()
		if slices.Equal(cur, last) {
			break
		}
		last = cur
	}
	tapRx, tapTx := counter(t, n, nsL, "gpt0", "rx_packets"), counter(t, n, nsL, "gpt0", "tx_packets")
	tapRxDrop, tapTxDrop := counter(t, n, nsL, "gpt0", "rx_dropped"), counter(t, n, nsL, "gpt0", "tx_dropped")
	aTx, aRx := counter(t, n, nsA, "inA", "tx_packets"), counter(t, n, nsA, "inA", "rx_packets")
	bTx, bRx := counter(t, n, nsB, "inB", "tx_packets"), counter(t, n, nsB, "inB", "rx_packets")
	if err := l2.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := l2.Wait(); err != nil {
		t.Fatalf("l2fwd: %v: %s", err, l2Err())
	}
	s := parseSummary(t, stdout.String())
	if !s.LeakCheck.OK || len(s.Errors) != 0 || len(s.Ports) != 4 {
		t.Fatalf("leak check %+v, errors %v, %d ports", s.LeakCheck, s.Errors, len(s.Ports))
	}
	p0, p1 := s.Ports[0], s.Ports[1]
	x := p0.Tap
	if x == nil || x.Name != "gpt0" {
		t.Fatalf("port 0 has no TAP twin gpt0 in the summary: %+v", p0)
	}
	t.Logf("ns A sent %d, got %d; ns B sent %d, got %d; TAP gpt0 rx %d (dropped %d) tx %d (dropped %d)", aTx, aRx, bTx, bRx, tapRx, tapRxDrop, tapTx, tapTxDrop)
	t.Logf("port 0: rx %d, forwarded %d, tap %+v", p0.Rx.Packets, p0.Handled, *x)
	if p0.AFPacket != nil {
		t.Logf("port 0 afpacket %+v; port 1 afpacket %+v", *p0.AFPacket, *p1.AFPacket)
	}

	// Every port: what it received was forwarded, refused (counted) or
	// taken up to its TAP.
	for i, p := range s.Ports {
		var taken uint64
		if p.Tap != nil {
			taken = p.Tap.Taken
			if len(p.Tap.Drops) != 0 {
				t.Errorf("port %d TAP dropped frames: %v", i, p.Tap.Drops)
			}
		}
		if p.Handled+p.TxRefused+p.NoBounce+taken != p.Rx.Packets {
			t.Errorf("port %d: received %d = forwarded %d + refused %d + no bounce %d + taken up %d does not hold", i, p.Rx.Packets, p.Handled, p.TxRefused, p.NoBounce, taken)
		}
	}
	// Up: every frame written reached the kernel's side of the TAP; the
	// frames to the TAP's address were taken, not forwarded.
	if x.Up != tapRx+tapRxDrop || x.Up == 0 || x.Taken == 0 || x.UpCopies == 0 {
		t.Errorf("TAP: %d frames written up, the kernel counted %d received + %d dropped; taken %d, copies %d", x.Up, tapRx, tapRxDrop, x.Taken, x.UpCopies)
	}
	if x.Up < size/1500 || x.Down < size/1500 || x.DownBytes < size {
		t.Errorf("%d frames went up, %d (%d bytes) came down, for a %d-byte transfer each way", x.Up, x.Down, x.DownBytes, size)
	}
	// Down: every frame the kernel handed to the TAP's reader left port 0
	// (frames the kernel could not queue are its own tx_dropped, logged).
	if x.Down != tapTx || x.Down == 0 {
		t.Errorf("TAP: %d frames down; the kernel sent %d (and dropped %d)", x.Down, tapTx, tapTxDrop)
	}
	// The wire side: frames A sent arrived at port 0 (or were counted
	// lost on the way); what port 0 sent (forwarded from B and the
	// kernel's) reached A; what port 1 sent reached B.
	drops := func(m map[string]uint64) (d uint64) {
		for _, v := range m {
			d += v
		}
		return d
	}
	crossed := func(sent, got, d uint64) bool { return got <= sent && sent <= got+d }
	if !crossed(aTx, p0.Rx.Packets, drops(p0.Rx.Drops)) || !crossed(bTx, p1.Rx.Packets, drops(p1.Rx.Drops)) {
		t.Errorf("A sent %d, port 0 got %d (%v dropped); B sent %d, port 1 got %d (%v dropped)", aTx, p0.Rx.Packets, p0.Rx.Drops, bTx, p1.Rx.Packets, p1.Rx.Drops)
	}
	if p0.Tx.Packets != p1.Handled+x.Down || p0.Tx.Packets != aRx || p1.Tx.Packets != p0.Handled || p1.Tx.Packets != bRx {
		t.Errorf("port 0 sent %d (B's %d + kernel's %d), A got %d; port 1 sent %d (forwarded %d), B got %d", p0.Tx.Packets, p1.Handled, x.Down, aRx, p1.Tx.Packets, p0.Handled, bRx)
	}
	// Ports 2 and 3 forwarded their generated traffic all along.
	for _, i := range []int{2, 3} {
		p, peer := s.Ports[i], s.Ports[i^1]
		if p.Generator == nil || peer.Sink == nil || p.Handled == 0 || peer.Sink.Frames != peer.Tx.Packets || peer.Tx.Packets != p.Handled {
			t.Errorf("port %d generated traffic: %+v; sink of port %d %+v", i, p, i^1, peer.Sink)
		}
	}
}

// linkMAC is an interface's MAC, as ip link show gives it.
func linkMAC(t *testing.T, n *netns, ns, ifname string) string {
	t.Helper()
	f := strings.Fields(n.run("-n", ns, "link", "show", ifname))
	for i, w := range f {
		if w == "link/ether" && i+1 < len(f) {
			return f[i+1]
		}
	}
	t.Fatalf("no MAC for %s in %s", ifname, ns)
	return ""
}

// TestTapIPv6ByDefault pings the TAP's IPv6 address from a namespace on
// port 0's wire, with the default --tap rules: the neighbour solicitation
// goes to the address's solicited-node group (33:33:ff:00:00:10), which
// the default rules copy up, so the kernel behind the TAP answers it and
// the echo requests that follow.
//
//	ns A: fd00:99::1/64 on inA ── veth ── wireA ── sim:enetc0 ── gp60: fd00:99::10/64 (in nsL)
//	                                                   │ l2fwd
//	                                               sim:enetc1 ── sink
func TestTapIPv6ByDefault(t *testing.T) {
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the l2fwd exception-path IPv6 test", "needs root (network namespaces, veth pairs, TAP interfaces); run go test as root to include it")
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("the exception-path IPv6 test needs iproute2's ip command (apt-get install iproute2)")
	}
	testnote.SkipUnlessReexec(t, "the l2fwd exception-path IPv6 test")
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("the exception-path IPv6 test needs /dev/net/tun (modprobe tun): %v", err)
	}
	n := &netns{t: t, ip: ipPath}
	suffix := strconv.Itoa(os.Getpid() % 100000)
	nsA, nsL := "gp6A"+suffix, "gp6L"+suffix
	t.Cleanup(func() {
		for _, ns := range []string{nsA, nsL} {
			_ = exec.Command(ipPath, "netns", "del", ns).Run()
		}
	})
	for _, ns := range []string{nsA, nsL} {
		n.run("netns", "add", ns)
	}
	sysctl := func(ns, key, val string) {
		t.Helper()
		if out, err := exec.Command(ipPath, "netns", "exec", ns, "sh", "-c", "echo "+val+" > /proc/sys/net/"+key).CombinedOutput(); err != nil {
			t.Fatalf("set %s in %s: %v: %s", key, ns, err, out)
		}
	}
	// In nsL only the TAP speaks IPv6: the veth end the port reaches
	// stands for the wire.
	sysctl(nsL, "ipv6/conf/default/disable_ipv6", "1")
	n.run("-n", nsL, "link", "add", "wireA", "type", "veth", "peer", "name", "inA")
	n.run("-n", nsL, "link", "set", "inA", "netns", nsA)
	n.run("-n", nsL, "link", "set", "wireA", "up")
	n.helperOut(nsA, "prepare6", "inA")
	n.run("-n", nsA, "addr", "add", "fd00:99::1/64", "dev", "inA", "nodad")
	n.run("-n", nsA, "link", "set", "inA", "up")

	args := "--json --stats-interval 100ms --no-mac-updating --tap --tap-name gp6%d" +
		" sim:enetc0?afpacket=wireA&" + simOpts + " sim:enetc1?sink=1&" + simOpts
	l := startInNamespace(t, n, nsL, args)
	defer l.cmd.Process.Kill()
	l2, stdout, running, l2Err := l.cmd, &l.stdout, l.running, l.stderr
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatalf("l2fwd did not start forwarding: %s", l2Err())
	}
	sysctl(nsL, "ipv6/conf/gp60/disable_ipv6", "0")
	n.run("-n", nsL, "addr", "add", "fd00:99::10/64", "dev", "gp60", "nodad")

	t.Logf("ns A: %s", strings.TrimSpace(n.helperOut(nsA, "ping", "fd00:99::10")))
	neigh := n.run("-n", nsA, "-6", "neigh", "show", "fd00:99::10")
	tapLink := n.run("-n", nsL, "link", "show", "gp60")
	i := strings.Index(neigh, "lladdr")
	if i < 0 || !strings.Contains(tapLink, strings.Fields(neigh[i:])[1]) {
		t.Fatalf("ns A resolved fd00:99::10 as %q, not as the TAP's (port 0's) MAC: %s", neigh, tapLink)
	}
	if err := l2.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := l2.Wait(); err != nil {
		t.Fatalf("l2fwd: %v: %s", err, l2Err())
	}
	s := parseSummary(t, stdout.String())
	x := s.Ports[0].Tap
	if !s.LeakCheck.OK || len(s.Errors) != 0 || x == nil || x.UpCopies == 0 || x.Up <= x.UpCopies || x.Down == 0 {
		t.Fatalf("leak check %+v, errors %v, port 0's TAP %+v: want neighbour solicitations copied up, echo requests up, answers down", s.LeakCheck, s.Errors, x)
	}
	t.Logf("port 0 TAP: %d frames up (%d copies), %d down", x.Up, x.UpCopies, x.Down)
}

// TestTapDeletedMidRun deletes port 0's TAP while l2fwd runs: l2fwd says
// so once, stops using it (no read errors pile up in dropped), the
// summary marks it gone, and the run still ends cleanly and balances.
func TestTapDeletedMidRun(t *testing.T) {
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the l2fwd deleted-TAP test", "needs root (a network namespace, TAP interfaces); run go test as root to include it")
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("the deleted-TAP test needs iproute2's ip command (apt-get install iproute2)")
	}
	testnote.SkipUnlessReexec(t, "the l2fwd deleted-TAP test")
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("the deleted-TAP test needs /dev/net/tun (modprobe tun): %v", err)
	}
	n := &netns{t: t, ip: ipPath}
	nsL := "gpdL" + strconv.Itoa(os.Getpid()%100000)
	t.Cleanup(func() { _ = exec.Command(ipPath, "netns", "del", nsL).Run() })
	n.run("netns", "add", nsL)
	args := "--json --stats-interval 100ms --tap --tap-name gpd%d" +
		" sim:enetc0?gen=1&gen-rate=20k&sink=1&" + simOpts + " sim:enetc1?gen=1&gen-rate=20k&sink=1&" + simOpts
	l := startInNamespace(t, n, nsL, args, "tap gpd0: the interface is gone")
	defer l.cmd.Process.Kill()
	l2, stdout, running, gone, l2Err := l.cmd, &l.stdout, l.running, l.seen[0], l.stderr
	// The deadlines only keep a broken build from hanging.
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatalf("l2fwd did not start forwarding: %s", l2Err())
	}
	n.run("-n", nsL, "link", "del", "gpd0")
	select {
	case <-gone:
	case <-time.After(20 * time.Second):
		t.Fatalf("l2fwd did not notice that gpd0 was deleted: %s", l2Err())
	}
	// Let the workers poll on a while with the TAP gone: a table or two.
	tables := strings.Count(l2Err(), "\nall ")
	for deadline := time.Now().Add(20 * time.Second); strings.Count(l2Err(), "\nall ") < tables+3 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if err := l2.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := l2.Wait(); err != nil {
		t.Fatalf("l2fwd: %v: %s", err, l2Err())
	}
	s := parseSummary(t, stdout.String())
	x0, x1 := s.Ports[0].Tap, s.Ports[1].Tap
	if !s.LeakCheck.OK || !s.Accounting.OK || len(s.Errors) != 0 || x0 == nil || x1 == nil {
		t.Fatalf("leak check %+v, accounting %+v, errors %v, TAPs %+v %+v", s.LeakCheck, s.Accounting, s.Errors, x0, x1)
	}
	if !x0.Gone || x1.Gone || x0.Drops["down_read"] != 0 || x0.Drops["up_write"] != 0 {
		t.Errorf("port 0's TAP (deleted) %+v, port 1's %+v: want port 0's gone with no read or write errors counted", *x0, *x1)
	}
	if c := strings.Count(l2Err(), "the interface is gone"); c != 1 {
		t.Errorf("l2fwd said %d times that a TAP is gone, want once:\n%s", c, l2Err())
	}
}

// nsL2fwd is l2fwd started in a network namespace from this test binary.
type nsL2fwd struct {
	cmd     *exec.Cmd
	stdout  strings.Builder
	running chan struct{}   // closed at the first stats table: forwarding runs
	seen    []chan struct{} // closed when a stderr line contains the pattern of that index
	mu      sync.Mutex
	errLog  strings.Builder
}

// stderr is what l2fwd has written to stderr so far.
func (l *nsL2fwd) stderr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errLog.String()
}

// startInNamespace runs l2fwd with args (--json and a stats interval, so
// the tables go to stderr) in namespace ns, watching its stderr for the
// first table and for lines containing each of patterns.
func startInNamespace(t *testing.T, n *netns, ns, args string, patterns ...string) *nsL2fwd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l := &nsL2fwd{running: make(chan struct{})}
	l.cmd = exec.Command(n.ip, "netns", "exec", ns, self, "-test.run=^$")
	l.cmd.Env = append(os.Environ(), mainEnv+"="+args)
	l.cmd.Stdout = &l.stdout
	errPipe, err := l.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	once := make([]sync.Once, len(patterns))
	for range patterns {
		l.seen = append(l.seen, make(chan struct{}))
	}
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(errPipe)
		var started sync.Once
		for sc.Scan() {
			line := sc.Text()
			l.mu.Lock()
			l.errLog.WriteString(line + "\n")
			l.mu.Unlock()
			if strings.HasPrefix(line, "all ") {
				started.Do(func() { close(l.running) })
			}
			for i, p := range patterns {
				if strings.Contains(line, p) {
					once[i].Do(func() { close(l.seen[i]) })
				}
			}
		}
		io.Copy(io.Discard, errPipe)
	}()
	return l
}

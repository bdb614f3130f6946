package xdp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/testnote"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/xdp/internal/xsk"
	"golang.org/x/sys/unix"
)

// The tests run on veth pairs: the gopmd side of each pair stays in this
// network namespace (the xdp: port opens it), the peer end lives in a
// namespace of its own, where the test sends and receives through sockets
// made on a thread that entered it.

var pairs atomic.Int32

// vethPair is one test topology.
type vethPair struct {
	t          testing.TB
	ns         string
	host, peer string
	hostAddr   string // 10.98.N.2 on host, when asked
	peerAddr   string // 10.98.N.1 on peer
	peerMAC    net.HardwareAddr
	hostMAC    net.HardwareAddr
}

func ipCmd(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil && !(childrenIgnored.Load() && errors.Is(err, unix.ECHILD)) {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// needKernel skips unless the test can make namespaces and AF_XDP sockets.
func needKernel(t testing.TB) {
	t.Helper()
	testnote.SkipEmulated(t, "the AF_XDP tests", "qemu-user does not implement the bpf system call")
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the AF_XDP tests", "need root (network namespaces, veth pairs, BPF programs, AF_XDP sockets); run go test as root to include them")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the AF_XDP tests need iproute2's ip command (apt-get install iproute2)")
	}
	fd, err := unix.Socket(xsk.AFXDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		testnote.Skip(t, "the AF_XDP tests", fmt.Sprintf("this kernel makes no AF_XDP socket (%v): it needs CONFIG_XDP_SOCKETS", err))
	}
	unix.Close(fd)
}

func newPair(t *testing.T, hostAddr bool) *vethPair { return newPairQueues(t, hostAddr, 1) }

// newPairQueues makes a pair whose ends have nq RX and TX queues each.
func newPairQueues(t testing.TB, hostAddr bool, nq int) *vethPair {
	t.Helper()
	needKernel(t)
	n := pairs.Add(1)
	id := strconv.Itoa(os.Getpid()%10000) + strconv.Itoa(int(n))
	v := &vethPair{t: t, ns: "gpx" + id, host: "gpx" + id + "h", peer: "gpx" + id + "p",
		peerAddr: fmt.Sprintf("10.98.%d.1", n)}
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", v.ns).Run()
		_ = exec.Command("ip", "link", "del", v.host).Run()
	})
	ipCmd(t, "netns", "add", v.ns)
	q := strconv.Itoa(nq)
	ipCmd(t, "link", "add", v.host, "numrxqueues", q, "numtxqueues", q, "type", "veth", "peer", "name", v.peer, "numrxqueues", q, "numtxqueues", q)
	ipCmd(t, "link", "set", v.peer, "netns", v.ns)
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+v.host+"/disable_ipv6", []byte("1"), 0o644)
	ipCmd(t, "-n", v.ns, "link", "set", "lo", "up")
	ipCmd(t, "netns", "exec", v.ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
	ipCmd(t, "-n", v.ns, "addr", "add", v.peerAddr+"/24", "dev", v.peer)
	if hostAddr {
		v.hostAddr = fmt.Sprintf("10.98.%d.2", n)
		ipCmd(t, "addr", "add", v.hostAddr+"/24", "dev", v.host)
	}
	ipCmd(t, "link", "set", v.host, "up")
	ipCmd(t, "-n", v.ns, "link", "set", v.peer, "up")
	ifc, err := net.InterfaceByName(v.host)
	if err != nil {
		t.Fatal(err)
	}
	v.hostMAC = ifc.HardwareAddr
	v.inNS(func() {
		ifc, err := net.InterfaceByName(v.peer)
		if err != nil {
			t.Fatal(err)
		}
		v.peerMAC = ifc.HardwareAddr
	})
	return v
}

// inNS runs fn on a thread that entered the pair's namespace; the thread
// is thrown away afterwards. Sockets fn makes stay in the namespace.
func (v *vethPair) inNS(fn func()) {
	v.t.Helper()
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		f, err := os.Open("/run/netns/" + v.ns)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		fn()
		done <- nil
	}()
	if err := <-done; err != nil {
		v.t.Fatalf("entering namespace %s: %v", v.ns, err)
	}
}

// packetSocket is an AF_PACKET socket on the peer end, for frames of
// EtherType testType only.
func (v *vethPair) packetSocket() int {
	v.t.Helper()
	var fd int
	var err error
	v.inNS(func() {
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(testType)))
		if err != nil {
			return
		}
		var ifc *net.Interface
		if ifc, err = net.InterfaceByName(v.peer); err != nil {
			return
		}
		err = unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(testType), Ifindex: ifc.Index})
	})
	if err != nil {
		v.t.Fatalf("packet socket on %s: %v", v.peer, err)
	}
	// Room for every frame a test sends at once: a full buffer drops
	// frames on the peer's side, where the port cannot count them.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20); err != nil {
		v.t.Fatal(err)
	}
	tv := unix.Timeval{Sec: 5}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	v.t.Cleanup(func() { unix.Close(fd) })
	return fd
}

const testType = 0x88b5 // IEEE 802 local experimental EtherType

func htons(x uint16) uint16 { return x<<8 | x>>8 }

// frame builds test frame i: dst, src, EtherType, then a payload that
// names i and varies in length.
func frame(dst, src net.HardwareAddr, i int) []byte {
	b := make([]byte, 60+i%200)
	copy(b, dst)
	copy(b[6:], src)
	binary.BigEndian.PutUint16(b[12:], testType)
	for j := 14; j < len(b); j++ {
		b[j] = byte(i*7 + j)
	}
	binary.BigEndian.PutUint32(b[14:], uint32(i))
	return b
}

func openPort(t testing.TB, spec string) driver.Port {
	t.Helper()
	p, err := driver.Open(spec)
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.Start(); err != nil {
		t.Fatalf("start %s: %v", spec, err)
	}
	return p
}

// collector gathers what an RX queue receives: frames of the test
// EtherType in got, the others in other.
type collector struct {
	q          driver.RxQueue
	got, other [][]byte
}

// poll takes one burst.
func (c *collector) poll() int {
	var burst [32]*pool.Packet
	n := c.q.RxBurst(burst[:])
	for _, pk := range burst[:n] {
		d := append([]byte(nil), pk.Data()...)
		if len(d) >= 14 && binary.BigEndian.Uint16(d[12:]) == testType {
			c.got = append(c.got, d)
		} else {
			c.other = append(c.other, d)
		}
		pk.Free()
	}
	return n
}

// until polls until want test frames came, or a generous bound passes.
func (c *collector) until(want int) {
	for deadline := time.Now().Add(20 * time.Second); len(c.got) < want && time.Now().Before(deadline); {
		if c.poll() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// recvFrames reads up to n frames from an AF_PACKET socket (5 s without
// one ends it).
func recvFrames(t *testing.T, fd, n int) [][]byte {
	var out [][]byte
	buf := make([]byte, 4096)
	for len(out) < n {
		k, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			break
		}
		out = append(out, append([]byte(nil), buf[:k]...))
	}
	return out
}

func TestFramesBothWays(t *testing.T) {
	v := newPair(t, false)
	p := openPort(t, "xdp:"+v.host+"?mode=generic")
	info := p.Info()
	if info.Driver != "xdp" || info.Backend != "xdp" || !strings.Contains(info.Device, "generic") || !bytes.Equal(p.MAC(), v.hostMAC) {
		t.Fatalf("info %+v, MAC %v (interface %v)", info, p.MAC(), v.hostMAC)
	}
	fd := v.packetSocket()

	// Peer to port: every frame arrives byte for byte, in order.
	const n = 300
	c := &collector{q: p.RxQueue(0)}
	var sent [][]byte
	for i := 0; i < n; i++ {
		f := frame(v.hostMAC, v.peerMAC, i)
		sent = append(sent, f)
		if err := unix.Send(fd, f, 0); err != nil {
			t.Fatalf("send frame %d: %v", i, err)
		}
		if i%32 == 31 {
			c.until(i - 31) // keep the RX ring from filling on a loaded machine
		}
	}
	c.until(n)
	if len(c.got) != n {
		t.Fatalf("port received %d of %d frames; stats %+v", len(c.got), n, p.Stats())
	}
	for i := range sent {
		if !bytes.Equal(c.got[i], sent[i]) {
			t.Fatalf("frame %d differs:\n sent % x\n got  % x", i, sent[i], c.got[i])
		}
	}
	if s := p.Stats(); s.Rx.Packets < n || s.RxQueues[0].Packets != s.Rx.Packets {
		t.Errorf("RX counters %+v after %d frames", s.Rx, n)
	}

	// Port to peer: frames built in the port's own pool (sent from the
	// UMEM as they are) and in a foreign pool (copied into it).
	other, err := dma.Alloc(umemMapper{}, 64*2048, dma.Options{Attr: dma.Attr{Name: "foreign"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	fp, err := pool.New(other, pool.Config{Name: "foreign", Count: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer fp.Close(time.Second)
	own := p.RxQueue(0).Pool()
	tx := p.TxQueue(0)
	var out [][]byte
	for i := 0; i < 200; i++ {
		pl := own
		if i%3 == 0 {
			pl = fp
		}
		pk := pl.Alloc()
		if pk == nil {
			t.Fatalf("pool %s empty at frame %d", pl.Name(), i)
		}
		f := frame(v.peerMAC, v.hostMAC, 1000+i)
		copy(pk.Append(len(f)), f)
		out = append(out, f)
		for tx.TxBurst([]*pool.Packet{pk}) == 0 {
			tx.Reclaim()
		}
		if i%32 == 31 {
			for tx.Pending() > 0 {
				tx.Reclaim()
			}
		}
	}
	for deadline := time.Now().Add(20 * time.Second); tx.Pending() > 0 && time.Now().Before(deadline); {
		tx.Reclaim()
	}
	got := recvFrames(t, fd, len(out))
	if len(got) != len(out) {
		t.Fatalf("peer received %d of %d frames; stats %+v", len(got), len(out), p.Stats())
	}
	for i := range out {
		if !bytes.Equal(got[i], out[i]) {
			t.Fatalf("frame %d differs:\n sent % x\n got  % x", i, out[i], got[i])
		}
	}
	s := p.Stats()
	if s.Tx.Packets != uint64(len(out)) || tx.Pending() != 0 {
		t.Errorf("TX counters %+v, pending %d, after %d frames", s.Tx, tx.Pending(), len(out))
	}
	for _, k := range []string{"xdp_rx_dropped", "xdp_rx_invalid_descs", "xdp_tx_invalid_descs", "xdp_rx_ring_full", "xdp_rx_fill_ring_empty_descs", "xdp_tx_ring_empty_descs", "drv_rx0_xdp_rx_ring_full"} {
		if _, ok := s.HW[k]; !ok {
			t.Errorf("no counter %s in %v", k, s.HW)
		}
	}
	if fp.InFlight() != 0 {
		t.Errorf("%d foreign buffers not freed after their copies were sent", fp.InFlight())
	}
}

// ping sends ICMP echo requests from the peer's namespace to addr, tries
// times a second apart, and reports whether one was answered.
func (v *vethPair) ping(addr string, tries int) bool {
	v.t.Helper()
	network, laddr, request, reply := "ip4:icmp", "0.0.0.0", byte(8), byte(0)
	if strings.Contains(addr, ":") {
		network, laddr, request, reply = "ip6:ipv6-icmp", "::", 128, 129 // the kernel sums ICMPv6
	}
	var c net.PacketConn
	var err error
	v.inNS(func() { c, err = net.ListenPacket(network, laddr) })
	if err != nil {
		v.t.Fatalf("ICMP socket in %s: %v", v.ns, err)
	}
	defer c.Close()
	for seq := 1; seq <= tries; seq++ {
		msg := make([]byte, 8+16)
		msg[0] = request
		binary.BigEndian.PutUint16(msg[4:], 0x6770)
		binary.BigEndian.PutUint16(msg[6:], uint16(seq))
		if request == 8 {
			binary.BigEndian.PutUint16(msg[2:], inetChecksum(msg))
		}
		if _, err := c.WriteTo(msg, &net.IPAddr{IP: net.ParseIP(addr)}); err != nil {
			v.t.Fatalf("ping %s: %v", addr, err)
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				break
			}
			if net.ParseIP(from.String()).Equal(net.ParseIP(addr)) && n >= 8 && buf[0] == reply && binary.BigEndian.Uint16(buf[6:]) == uint16(seq) {
				return true
			}
		}
	}
	return false
}

func inetChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

func etherTypes(frames [][]byte) map[uint16]int {
	m := map[uint16]int{}
	for _, f := range frames {
		if len(f) >= 14 {
			m[binary.BigEndian.Uint16(f[12:])]++
		}
	}
	return m
}

// With pass=arp,host the kernel keeps answering ARP and ping for its own
// address while the socket takes the rest.
func TestPassToKernel(t *testing.T) {
	v := newPair(t, true)
	p := openPort(t, "xdp:"+v.host+"?mode=generic&pass=arp,host")
	fd := v.packetSocket()
	c := &collector{q: p.RxQueue(0)}
	if !v.ping(v.hostAddr, 5) {
		t.Fatalf("no echo reply from %s through pass=arp,host; the socket took %v (EtherType: frames)", v.hostAddr, etherTypes(c.other))
	}
	if err := unix.Send(fd, frame(v.hostMAC, v.peerMAC, 7), 0); err != nil {
		t.Fatal(err)
	}
	c.until(1)
	if len(c.got) != 1 {
		t.Fatalf("the socket did not get the test frame beside the passed traffic; stats %+v", p.Stats())
	}
	if n := etherTypes(c.other); n[0x0806] != 0 || n[0x0800] != 0 {
		t.Errorf("ARP or IPv4 for the host reached the socket: %v", n)
	}
}

// Without pass= the socket takes every frame of its queue, ARP too; Close
// takes the program off and the kernel answers again.
func TestSocketTakesAllThenClose(t *testing.T) {
	v := newPair(t, true)
	spec := "xdp:" + v.host + "?mode=generic"
	p, err := driver.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	ifc, _ := net.InterfaceByName(v.host)
	if a, err := queryXDP(ifc.Index); err != nil || a.ProgID == 0 || a.Mode != xdpAttachedSkb {
		t.Fatalf("after Open: XDP attachment %+v, %v", a, err)
	}
	if v.ping(v.hostAddr, 1) {
		t.Fatal("the kernel answered a ping while the socket was bound with no pass rule")
	}
	c := &collector{q: p.RxQueue(0)}
	for deadline := time.Now().Add(20 * time.Second); etherTypes(c.other)[0x0806] == 0 && time.Now().Before(deadline); {
		if c.poll() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	if etherTypes(c.other)[0x0806] == 0 {
		t.Fatalf("the ARP request did not reach the socket: %v", etherTypes(c.other))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if a, err := queryXDP(ifc.Index); err != nil || a.ProgID != 0 {
		t.Fatalf("after Close: XDP attachment %+v, %v", a, err)
	}
	if !v.ping(v.hostAddr, 5) {
		t.Fatal("no echo reply from the kernel after Close")
	}
	if err := p.Start(); !errors.Is(err, driver.ErrClosed) {
		t.Errorf("Start after Close: %v", err)
	}
}

func attach(t *testing.T, ifindex int, prog *ebpf.Program) uint32 {
	t.Helper()
	if err := setXDP(ifindex, prog.FD(), unix.XDP_FLAGS_SKB_MODE, 0); err != nil {
		t.Fatal(err)
	}
	a, err := queryXDP(ifindex)
	if err != nil || a.ProgID == 0 {
		t.Fatalf("attached program not found: %+v %v", a, err)
	}
	return a.ProgID
}

// Another program on the interface is refused with its name and id, and
// left in place; force=1 replaces it; Close leaves none.
func TestForeignProgram(t *testing.T) {
	v := newPair(t, false)
	ifc, _ := net.InterfaceByName(v.host)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "foreign_pass", Type: ebpf.XDP, License: "BSD",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()}})
	if err != nil {
		t.Fatal(err)
	}
	id := attach(t, ifc.Index, prog)
	prog.Close() // the interface keeps it
	spec := "xdp:" + v.host + "?mode=generic"
	_, err = driver.Open(spec)
	if err == nil || !strings.Contains(err.Error(), `"foreign_pass"`) || !strings.Contains(err.Error(), fmt.Sprintf("id %d", id)) || !strings.Contains(err.Error(), "force=1") {
		t.Fatalf("open over a foreign program: %v", err)
	}
	if a, _ := queryXDP(ifc.Index); a.ProgID != id {
		t.Fatalf("the refused open changed the attachment: %+v, want program %d", a, id)
	}
	p, err := driver.Open(spec + "&force=1")
	if err != nil {
		t.Fatalf("force=1: %v", err)
	}
	if a, _ := queryXDP(ifc.Index); a.ProgID == id || a.ProgID == 0 {
		t.Fatalf("force=1 left attachment %+v (foreign program %d)", a, id)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if a, _ := queryXDP(ifc.Index); a.ProgID != 0 {
		t.Fatalf("after Close: attachment %+v", a)
	}
}

// A steering program a crashed run left is recognised by its name and
// replaced without force.
func TestCrashedRunReplaced(t *testing.T) {
	v := newPair(t, false)
	ifc, _ := net.InterfaceByName(v.host)
	s, err := loadSteering(1, passRules{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := attach(t, ifc.Index, s.prog)
	s.close() // the "crash": the process lets go, the interface keeps the program
	p, err := driver.Open("xdp:" + v.host + "?mode=generic")
	if err != nil {
		t.Fatalf("open over a stale program of ours: %v", err)
	}
	if a, _ := queryXDP(ifc.Index); a.ProgID == id || a.ProgID == 0 {
		t.Fatalf("stale program %d not replaced: %+v", id, a)
	}
	p.Close()
}

// Every option the driver does not take, or a value it cannot, is
// refused by name; a failed open leaves no program behind.
func TestOptionsRefused(t *testing.T) {
	v := newPair(t, false)
	ifc, _ := net.InterfaceByName(v.host)
	base := "xdp:" + v.host + "?mode=generic"
	for _, c := range []struct{ opts, want string }{
		{"&busy-poll=x", "busy-poll"},
		{"&busy-poll=-1", "busy-poll"},
		{"&need-wakeup=maybe", "need-wakeup"},
		{"&queue=x", "queue"},
		{"&queue=1", "queues"}, // a one-queue interface has no queue 1
		{"&promisc=1", "promisc"},
		{"&mtu=9000", "mtu"},
		{"&unsafe-noiommu=1", "unsafe-noiommu"},
		{"&frame-size=3000", "frame-size"},
		{"&buf-size=1024", "buf-size"},
		{"&zero-copy=on", "zero-copy"},
		{"&zero-copy=maybe", "zero-copy"},
		{"&pass=arp,dhcp", "pass"},
		{"&rx-ring=1000", "rx-ring"},
		{"&queues=2", "queues"},
		{"&rxq=1&txq=2", "rxq"},
		{"&bogus=1", "bogus"},
		{"&force=maybe", "force"},
	} {
		_, err := driver.Open(base + c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.opts, err, c.want)
		}
	}
	if _, err := driver.Open("xdp:" + v.host + "?mode=bogus"); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("mode=bogus: %v", err)
	}
	if _, err := driver.Open("xdp:gpxnosuchif"); err == nil || !strings.Contains(err.Error(), "gpxnosuchif") {
		t.Errorf("no such interface: %v", err)
	}
	// veth has no AF_XDP zero-copy: asking for it fails at the bind, and
	// the program attached before is taken off again.
	if _, err := driver.Open("xdp:" + v.host + "?mode=native&zero-copy=on"); err == nil || !strings.Contains(err.Error(), "zero-copy") {
		t.Errorf("zero-copy=on on veth: %v", err)
	}
	if a, _ := queryXDP(ifc.Index); a.ProgID != 0 {
		t.Errorf("a failed open left program %d attached", a.ProgID)
	}
}

// The data path allocates nothing per packet: a round of TX from the
// port's pool and from a foreign one (copied), reclaim, and RX.
func TestZeroAllocs(t *testing.T) {
	v := newPair(t, false)
	p := openPort(t, "xdp:"+v.host+"?mode=generic")
	fd := v.packetSocket()
	other, err := dma.Alloc(umemMapper{}, 256*2048, dma.Options{Attr: dma.Attr{Name: "foreign"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	fp, err := pool.New(other, pool.Config{Name: "foreign", Count: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer fp.Close(time.Second)
	f := frame(v.hostMAC, v.peerMAC, 1)
	for i := 0; i < 200; i++ {
		if err := unix.Send(fd, f, 0); err != nil {
			t.Fatal(err)
		}
	}
	rx, tx, own := p.RxQueue(0), p.TxQueue(0), p.RxQueue(0).Pool()
	var burst [32]*pool.Packet
	received := 0
	allocs := testing.AllocsPerRun(50, func() {
		n := own.AllocBulk(burst[:16])
		n += fp.AllocBulk(burst[n : n+16])
		for _, pk := range burst[:n] {
			copy(pk.Append(len(f)), f)
		}
		k := tx.TxBurst(burst[:n])
		pool.FreeBulk(burst[k:n])
		tx.Reclaim()
		m := rx.RxBurst(burst[:])
		received += m
		pool.FreeBulk(burst[:m])
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per round of 32 frames", allocs)
	}
	if received == 0 || p.Stats().Tx.Packets == 0 {
		t.Fatalf("the measured rounds moved no frames (received %d, stats %+v)", received, p.Stats())
	}
}

// TxBurst reclaims on its own: a sender that never calls Reclaim keeps
// sending past the ring's size, and every frame arrives.
func TestTxReclaimsItself(t *testing.T) {
	v := newPair(t, false)
	p := openPort(t, "xdp:"+v.host+"?mode=generic&tx-ring=64")
	fd := v.packetSocket()
	tx, own := p.TxQueue(0), p.RxQueue(0).Pool()
	const n = 300
	// The peer reads as the port sends: its socket buffer holds fewer
	// than n frames.
	res := make(chan int)
	go func() { res <- len(recvFrames(t, fd, n)) }()
	for i := 0; i < n; i++ {
		pk := own.Alloc()
		copy(pk.Append(60), frame(v.peerMAC, v.hostMAC, i))
		tries := 0
		for tx.TxBurst([]*pool.Packet{pk}) == 0 {
			if tries++; tries == 100000 {
				t.Fatalf("TxBurst took nothing for %d tries at frame %d (pending %d)", tries, i, tx.Pending())
			}
			runtime.Gosched()
		}
	}
	if got := <-res; got != n {
		t.Fatalf("peer received %d of %d frames; stats %+v", got, n, p.Stats())
	}
}

// Stop counts the frames left unread in the RX ring as stopped; the port
// starts again and receives.
func TestStopCountsAndRestarts(t *testing.T) {
	v := newPair(t, false)
	p := openPort(t, "xdp:"+v.host+"?mode=generic")
	fd := v.packetSocket()
	q := p.(*port).queues[0]
	const n = 10
	for i := 0; i < n; i++ {
		if err := unix.Send(fd, frame(v.hostMAC, v.peerMAC, i), 0); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); q.rx.ready() < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Rx.Drops[driver.CauseStopped] != n || s.Rx.Packets != 0 {
		t.Fatalf("after Stop with %d frames unread: RX %+v", n, s.Rx)
	}
	if got := p.RxQueue(0).RxBurst(make([]*pool.Packet, 8)); got != 0 {
		t.Fatalf("RxBurst on a stopped port returned %d", got)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Send(fd, frame(v.hostMAC, v.peerMAC, 99), 0); err != nil {
		t.Fatal(err)
	}
	c := &collector{q: p.RxQueue(0)}
	c.until(1)
	if len(c.got) != 1 || binary.BigEndian.Uint32(c.got[0][14:]) != 99 {
		t.Fatalf("after a restart the port received %d test frames", len(c.got))
	}
	if err := p.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// queues=2 binds a socket on each queue of a two-queue interface: frames
// the peer sends to queue 0 arrive on the port's queue 0, those to queue 1
// on its queue 1. (Native mode: veth runs XDP per RX queue there; its
// generic path reports every frame on queue 0.)
func TestTwoQueues(t *testing.T) {
	v := newPairQueues(t, false, 2)
	p := openPort(t, "xdp:"+v.host+"?mode=native&queues=2")
	if i := p.Info(); i.RxQueues != 2 || i.TxQueues != 2 || i.MaxRxQueues != 2 {
		t.Fatalf("info %+v", i)
	}
	if _, err := driver.Open("xdp:" + v.host + "?mode=generic&queues=3"); err == nil || !strings.Contains(err.Error(), "2 RX queues") {
		t.Fatalf("queues=3 on two queues: %v", err)
	}
	fd := v.packetSocket()
	const n = 64
	v.sendOn(0)
	for i := 0; i < n; i++ {
		if i == n/2 {
			v.sendOn(1) // the second half to queue 1
		}
		if err := unix.Send(fd, frame(v.hostMAC, v.peerMAC, i), 0); err != nil {
			t.Fatal(err)
		}
	}
	c0, c1 := &collector{q: p.RxQueue(0)}, &collector{q: p.RxQueue(1)}
	for deadline := time.Now().Add(20 * time.Second); len(c0.got)+len(c1.got) < n && time.Now().Before(deadline); {
		if c0.poll()+c1.poll() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	if len(c0.got) != n/2 || len(c1.got) != n/2 {
		t.Fatalf("received %d on queue 0 and %d on queue 1, want %d on each", len(c0.got), len(c1.got), n/2)
	}
	for i, f := range append(c0.got, c1.got...) {
		if want := frame(v.hostMAC, v.peerMAC, i); !bytes.Equal(f, want) {
			t.Fatalf("frame %d differs:\n sent % x\n got  % x", i, want, f)
		}
	}
	s := p.Stats()
	if s.RxQueues[0].Packets != uint64(len(c0.got)) || s.RxQueues[1].Packets != uint64(len(c1.got)) {
		t.Errorf("per-queue counters %d %d, frames %d %d", s.RxQueues[0].Packets, s.RxQueues[1].Packets, len(c0.got), len(c1.got))
	}
	t.Logf("queue 0: %d frames, queue 1: %d", len(c0.got), len(c1.got))
}

// sendOn makes the peer send on its TX queue txq (XPS: every CPU maps to
// it), which veth turns into the host end's RX queue txq.
func (v *vethPair) sendOn(txq int) {
	v.t.Helper()
	all := ""
	for c := runtime.NumCPU(); c > 0; c -= 4 {
		all = strconv.FormatInt(int64(1)<<min(c, 4)-1, 16) + all
	}
	dir := "/sys/class/net/" + v.peer + "/queues/"
	var script []string
	ents, _ := os.ReadDir("/sys/class/net/" + v.host + "/queues")
	for _, e := range ents {
		if q, ok := strings.CutPrefix(e.Name(), "tx-"); ok {
			mask := "0"
			if q == strconv.Itoa(txq) {
				mask = all
			}
			script = append(script, "echo "+mask+" > "+dir+e.Name()+"/xps_cpus")
		}
	}
	ipCmd(v.t, "netns", "exec", v.ns, "sh", "-c", strings.Join(script, "; "))
}

// queue= binds the port's queue 0 to a later interface queue: frames the
// peer sends to that queue arrive there (native mode, as in TestTwoQueues).
func TestQueueOffset(t *testing.T) {
	v := newPairQueues(t, false, 2)
	p := openPort(t, "xdp:"+v.host+"?mode=native&queue=1")
	if i := p.Info(); i.RxQueues != 1 {
		t.Fatalf("info %+v", i)
	}
	if _, err := driver.Open("xdp:" + v.host + "?mode=generic&queue=1&queues=2"); err == nil || !strings.Contains(err.Error(), "queues 1 to 2") {
		t.Fatalf("queue=1&queues=2 on two queues: %v", err)
	}
	fd := v.packetSocket()
	v.sendOn(1)
	for i := 0; i < 8; i++ {
		if err := unix.Send(fd, frame(v.hostMAC, v.peerMAC, i), 0); err != nil {
			t.Fatal(err)
		}
	}
	c := &collector{q: p.RxQueue(0)}
	c.until(8)
	if len(c.got) != 8 {
		t.Fatalf("port on interface queue 1 received %d of 8 frames sent to it", len(c.got))
	}
}

// pass=nd,host over IPv6: the kernel answers the neighbour solicitation
// (sent to a solicited-node group, no host address) and the echo request
// to its address; with pass=host alone the solicitation goes to the
// socket and nothing is answered.
func TestPassIPv6(t *testing.T) {
	v := newPair(t, false)
	n := pairs.Load()
	hostAddr, peerAddr := fmt.Sprintf("fd00:98:%d::2", n), fmt.Sprintf("fd00:98:%d::1", n)
	if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+v.host+"/disable_ipv6", []byte("0"), 0o644); err != nil {
		t.Skipf("no IPv6 here: %v", err)
	}
	ipCmd(t, "addr", "add", hostAddr+"/64", "dev", v.host, "nodad")
	ipCmd(t, "netns", "exec", v.ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0", "net.ipv6.conf."+v.peer+".disable_ipv6=0")
	ipCmd(t, "-n", v.ns, "addr", "add", peerAddr+"/64", "dev", v.peer, "nodad")

	p, err := driver.Open("xdp:" + v.host + "?mode=generic&pass=host")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if v.ping(hostAddr, 1) {
		t.Fatal("echo reply over IPv6 without pass=nd: the solicitation reached the kernel")
	}
	c := &collector{q: p.RxQueue(0)}
	for c.poll() > 0 {
	}
	sawNS := false
	for _, f := range c.other {
		if len(f) > 54 && binary.BigEndian.Uint16(f[12:]) == 0x86dd && f[20] == 58 && f[54] == 135 {
			sawNS = true
		}
	}
	if !sawNS {
		t.Fatalf("the neighbour solicitation did not reach the socket: %v", etherTypes(c.other))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	ipCmd(t, "-n", v.ns, "neigh", "flush", "dev", v.peer)

	p = openPort(t, "xdp:"+v.host+"?mode=generic&pass=nd,host")
	if !v.ping(hostAddr, 5) {
		t.Fatal("no echo reply over IPv6 through pass=nd,host")
	}
	c = &collector{q: p.RxQueue(0)}
	for c.poll() > 0 {
	}
	for _, f := range c.other {
		if len(f) > 54 && binary.BigEndian.Uint16(f[12:]) == 0x86dd && f[20] == 58 && (f[54] == 135 || f[54] == 128) {
			t.Errorf("ICMPv6 type %d reached the socket under pass=nd,host", f[54])
		}
	}
}

// A frame the caller still holds at Close is reported by holder, and the
// program is off the interface all the same.
func TestCloseReportsHeldFrames(t *testing.T) {
	v := newPair(t, false)
	p, err := driver.Open("xdp:" + v.host + "?mode=generic")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	fd := v.packetSocket()
	if err := unix.Send(fd, frame(v.hostMAC, v.peerMAC, 1), 0); err != nil {
		t.Fatal(err)
	}
	var burst [4]*pool.Packet
	for deadline := time.Now().Add(20 * time.Second); p.RxQueue(0).RxBurst(burst[:1]) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no frame received")
		}
		time.Sleep(100 * time.Microsecond)
	}
	err = p.Close()
	var le *pool.LeakError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "rx queue 0 caller") {
		t.Fatalf("Close with a frame held: %v", err)
	}
	ifc, _ := net.InterfaceByName(v.host)
	if a, _ := queryXDP(ifc.Index); a.ProgID != 0 {
		t.Fatalf("program %d left attached", a.ProgID)
	}
}

package xdp

import (
	"bytes"
	"encoding/binary"
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
	t          *testing.T
	ns         string
	host, peer string
	hostAddr   string // 10.98.N.2 on host, when asked
	peerAddr   string // 10.98.N.1 on peer
	peerMAC    net.HardwareAddr
	hostMAC    net.HardwareAddr
}

func ipCmd(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// needKernel skips unless the test can make namespaces and AF_XDP sockets.
func needKernel(t *testing.T) {
	t.Helper()
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

func newPair(t *testing.T, hostAddr bool) *vethPair {
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
	ipCmd(t, "link", "add", v.host, "type", "veth", "peer", "name", v.peer)
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

func openPort(t *testing.T, spec string) driver.Port {
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

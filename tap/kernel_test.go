package tap

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/testnote"
)

// inNewNetns runs f on a thread moved into a network namespace of its own,
// so the TAP it makes never touches the host's interfaces. The thread is
// thrown away afterwards (its goroutine ends still locked to it).
func inNewNetns(t *testing.T, f func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the TAP tests against the kernel", "need root (a network namespace and a TAP interface); run go test as root to include them")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("no /dev/net/tun (modprobe tun): %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			t.Errorf("unshare the network namespace: %v", err)
			return
		}
		f()
	}()
	<-done
}

// A real TAP: named, addressed and sized as asked, up, exclusive; an ARP
// request for its address goes up and the kernel's reply comes down.
func TestKernelTAP(t *testing.T) {
	testnote.SkipEmulated(t, "the TAP ARP test against the kernel", "it expects the ARP reply to be the first frame down, and at emulated speed the kernel's IPv6 multicast reports on the new interface come first")
	// Pools are made here: t.Fatal must not run on inNewNetns's goroutine.
	pl, rx := newPool(t, 16), newPool(t, 4)
	inNewNetns(t, func() {
		tw, err := Open(Config{Name: "gptap0", MAC: ownMAC, MTU: 1400, Pool: pl, Logger: quiet})
		if err != nil {
			t.Errorf("Open: %v", err)
			return
		}
		defer tw.Close(time.Second)
		ifi, err := net.InterfaceByName("gptap0")
		if err != nil {
			t.Errorf("the TAP is not there: %v", err)
			return
		}
		if ifi.HardwareAddr.String() != ownMAC.String() || ifi.MTU != 1400 || ifi.Flags&net.FlagUp == 0 {
			t.Errorf("interface %+v: want MAC %s, MTU 1400, up", ifi, ownMAC)
		}
		if _, err := Open(Config{Name: "gptap0", MAC: ownMAC, Pool: pl, Logger: quiet}); err == nil || !strings.Contains(err.Error(), "exists already") {
			t.Errorf("a second Open of gptap0 = %v, want a refusal naming the existing interface", err)
		}
		if _, err := Open(Config{Name: "lo", MAC: ownMAC, Pool: pl, Logger: quiet}); err == nil || !strings.Contains(err.Error(), "exists already") {
			t.Errorf("Open of lo = %v, want a refusal", err)
		}

		// Give the TAP 192.0.2.1 and ask for it.
		sock, _ := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
		ifr, _ := unix.NewIfreq("gptap0")
		ifr.SetInet4Addr([]byte{192, 0, 2, 1})
		if err := unix.IoctlIfreq(sock, unix.SIOCSIFADDR, ifr); err != nil {
			t.Errorf("SIOCSIFADDR: %v", err)
		}
		unix.Close(sock)
		req := arpRequest("192.0.2.1")
		copy(req[8:14], otherMAC)              // sender hardware address
		copy(req[14:18], []byte{192, 0, 2, 9}) // sender protocol address
		pk := []*driver.Packet{rx.Alloc()}
		f := frame(bcastMAC, -1, etherARP, req)
		pk[0].SetLen(len(f))
		copy(pk[0].Data(), f)
		if kept := tw.Up(pk); kept != 1 {
			t.Errorf("the ARP broadcast was not kept for forwarding (kept %d)", kept)
		}
		rx.Recycle(pk[0])
		// The kernel may send its own frames first (IPv6 MLD reports and
		// neighbour solicitations as the interface comes up): look for
		// the ARP reply among what comes down.
		isReply := func(r []byte) bool {
			return len(r) >= 42 && binary.BigEndian.Uint16(r[12:]) == etherARP && binary.BigEndian.Uint16(r[20:]) == 2
		}
		var r []byte
		for deadline := time.Now().Add(20 * time.Second); r == nil && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			tx := &fakeTx{room: 8}
			tw.Down(tx)
			for _, f := range tx.frames {
				if isReply(f) {
					r = f
					break
				}
			}
		}
		if r == nil {
			t.Errorf("no ARP reply came down; stats %+v", tw.Stats())
			return
		}
		if !bytes.Equal(r[0:6], otherMAC) || !bytes.Equal(r[6:12], ownMAC) ||
			netip.AddrFrom4([4]byte(r[28:32])) != netip.MustParseAddr("192.0.2.1") {
			t.Errorf("the ARP reply is not from %s for 192.0.2.1: %x", ownMAC, r)
		}
		s := tw.Stats()
		if s.UpFrames != 1 || s.UpCopies != 1 || s.DownFrames < 1 || s.UpDrops()+s.DownDrops() != 0 {
			t.Errorf("stats %+v", s)
		}
	})
}

var _ driver.TxQueue = (*fakeTx)(nil)

// BenchmarkKernelTAP measures the exception path against a real TAP in a
// namespace of its own (root only): "up" writes bursts of 32 frames for the
// host (EtherType 0x88b5, which the kernel takes in and drops), "down-idle"
// is one Down that finds nothing queued.
//
//	sudo go test -run '^$' -bench KernelTAP ./tap
func BenchmarkKernelTAP(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root (a network namespace and a TAP interface)")
	}
	pl, rx := newPool(b, 64), newPool(b, 64)
	var tw *Twin
	release := make(chan struct{})
	ready := make(chan error, 1)
	go func() {
		// The namespace lives as long as this thread does: it waits for
		// the benchmark to end, then dies with its goroutine.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ready <- err
			return
		}
		t, err := Open(Config{Name: "gpbench0", MAC: ownMAC, Pool: pl, Logger: quiet})
		tw = t
		ready <- err
		<-release
		if t != nil {
			t.Close(time.Second)
		}
	}()
	defer close(release)
	if err := <-ready; err != nil {
		b.Fatal(err)
	}
	b.Run("up", func(b *testing.B) {
		f := frame(ownMAC, -1, 0x88b5, make([]byte, 46))
		var burst [32]*driver.Packet
		b.ReportAllocs()
		for b.Loop() {
			for i := range burst {
				burst[i] = rx.Alloc()
				burst[i].SetLen(len(f))
				copy(burst[i].Data(), f)
			}
			if tw.Up(burst[:]) != 0 {
				b.Fatal("a frame to the host was kept")
			}
		}
		if s := tw.Stats(); s.UpDrops() != 0 {
			b.Fatalf("the kernel refused frames: %+v", s)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(burst)), "ns/pkt")
	})
	b.Run("down-idle", func(b *testing.B) {
		tx := &fakeTx{room: 32}
		b.ReportAllocs()
		for b.Loop() {
			tw.Down(tx)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/call")
	})
}

// A TAP deleted while its twin runs (ip link del): the first failed write
// says so once, in the log; the twin then writes and reads nothing more,
// frames for the host count as up_gone (none as up_write or down_read),
// broadcasts are still forwarded, and Stats says Gone.
func TestKernelTAPDeleted(t *testing.T) {
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("needs iproute2's ip command (apt-get install iproute2)")
	}
	pl, rx := newPool(t, 16), newPool(t, 16)
	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	inNewNetns(t, func() {
		tw, err := Open(Config{Name: "gpgone0", MAC: ownMAC, Pool: pl, Logger: log})
		if err != nil {
			t.Errorf("Open: %v", err)
			return
		}
		defer tw.Close(time.Second)
		up := func(dst net.HardwareAddr, n int) int {
			pk := make([]*driver.Packet, n)
			f := frame(dst, -1, 0x88b5, make([]byte, 46))
			for i := range pk {
				pk[i] = rx.Alloc()
				pk[i].SetLen(len(f))
				copy(pk[i].Data(), f)
			}
			kept := tw.Up(pk)
			for _, p := range pk[:kept] {
				rx.Recycle(p)
			}
			return kept
		}
		if kept := up(ownMAC, 1); kept != 0 || tw.Stats().UpFrames != 1 || tw.Stats().Gone {
			t.Errorf("before the deletion: kept %d, stats %+v", kept, tw.Stats())
		}
		// ip runs on this goroutine's thread, in its namespace.
		if out, err := exec.Command(ipPath, "link", "del", "gpgone0").CombinedOutput(); err != nil {
			t.Errorf("ip link del gpgone0: %v: %s", err, out)
			return
		}
		tx := &fakeTx{room: 8}
		kept := up(ownMAC, 3)
		for range 1000 {
			tw.Down(tx)
		}
		copies := up(bcastMAC, 2)
		s := tw.Stats()
		if kept != 0 || copies != 2 || !s.Gone || s.UpFrames != 1 || s.Drops[CauseUpGone] != 5 || s.Drops[CauseUpWrite] != 0 ||
			s.Drops[CauseDownRead] != 0 || s.Taken != 4 || len(tx.frames) != 0 {
			t.Errorf("after the deletion: kept %d of 3 for the host, %d of 2 broadcasts; stats %+v; %d frames down", kept, copies, s, len(tx.frames))
		}
		if n := strings.Count(logBuf.String(), "the interface is gone"); n != 1 || !strings.Contains(logBuf.String(), "tap gpgone0") || !strings.Contains(logBuf.String(), "up_gone") {
			t.Errorf("the twin said %d times that the TAP is gone; log:\n%s", n, logBuf.String())
		}
	})
}

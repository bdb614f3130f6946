package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/tap"
)

// fakeKernel stands in for the kernel behind each port's TAP: the twin is
// attached to one end of a SOCK_SEQPACKET pair (one frame per read and
// write, as a TAP file), the test holds the other.
type fakeKernel struct {
	mu    sync.Mutex
	ends  map[string]int // port name -> the kernel's end
	names map[string]string
}

func withFakeTaps(t *testing.T) *fakeKernel { return withFakeTapsTB(t) }

func withFakeTapsTB(t testing.TB) *fakeKernel {
	t.Helper()
	k := &fakeKernel{ends: map[string]int{}, names: map[string]string{}}
	old := openTap
	openTap = func(p driver.Port, cfg tap.Config) (*tap.Twin, error) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		if err := unix.SetNonblock(fds[1], true); err != nil {
			return nil, err
		}
		// The twin's buffers live in the port's DMA domain, as OpenPort's do.
		m := p.RxQueue(0).Pool().Region().Mapper()
		r, err := dma.NewRegion(make([]byte, 64*pool.DefaultBufSize), m, dma.Options{Attr: dma.Attr{Name: cfg.Name}}, nil)
		if err != nil {
			return nil, err
		}
		pl, err := pool.New(r, pool.Config{Name: cfg.Name, Count: 64})
		if err != nil {
			return nil, err
		}
		if cfg.Name == "gpfail1" {
			pl.Close(0)
			unix.Close(fds[0])
			unix.Close(fds[1])
			return nil, errors.New("tap gpfail1: an interface of that name exists already")
		}
		cfg.MAC, cfg.MTU, cfg.Pool = p.MAC(), 1500, pl
		if cfg.Logger != tapLog {
			return nil, errors.New("l2fwd gave the twin another logger than tapLog")
		}
		tw, err := tap.Attach(fds[0], cfg)
		if err != nil {
			return nil, err
		}
		k.mu.Lock()
		k.ends[p.Info().Name], k.names[p.Info().Name] = fds[1], cfg.Name
		k.mu.Unlock()
		t.Cleanup(func() {
			unix.Close(fds[1])
			if err := pl.Close(time.Second); err != nil {
				t.Errorf("TAP pool of %s: %v", cfg.Name, err)
			}
		})
		return tw, nil
	}
	t.Cleanup(func() { openTap = old })
	return k
}

func (k *fakeKernel) end(port string) (int, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	fd, ok := k.ends[port]
	return fd, ok
}

func withDst(frames [][]byte, dst net.HardwareAddr) [][]byte {
	out := make([][]byte, len(frames))
	for i, f := range frames {
		out[i] = append([]byte(nil), f...)
		copy(out[i], dst)
	}
	return out
}

// --tap: frames to the port's MAC go up instead of being forwarded,
// broadcasts go up and on, the kernel's frames go out of the port, and
// every received frame is forwarded or taken.
func TestTapTwins(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	k := withFakeTaps(t)
	transit := testFrames(t, 300, 64)
	toHost := withDst(testFrames(t, 20, 64), mac0)
	bcast := withDst(testFrames(t, 10, 64), net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	var in [][]byte
	for i := range transit {
		in = append(in, transit[i])
		if i%15 == 0 {
			in = append(in, toHost[i/15])
		}
		if i%30 == 0 {
			in = append(in, bcast[i/30])
		}
	}
	p0.load(0, in)
	fromKernel := withDst(testFrames(t, 15, 64), mac1)

	var up [][]byte
	wrote := false
	buf := make([]byte, 4096)
	code, out, errOut := runUntil(t, []string{"--tap", "--tap-name", "gp%d", "--no-mac-updating", "--json", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool {
			fd, ok := k.end("fake0")
			if !ok {
				return false
			}
			if !wrote {
				for _, f := range fromKernel {
					unix.Write(fd, f)
				}
				wrote = true
			}
			for {
				n, err := unix.Read(fd, buf)
				if err != nil {
					break
				}
				up = append(up, append([]byte(nil), buf[:n]...))
			}
			return len(up) == 30 && len(p1.txFrames()) == 310 && len(p0.txFrames()) == 15
		})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Up, in order: the frames to the host and the broadcasts.
	var wantUp [][]byte
	for _, f := range in {
		if f[0] == 0xff || bytes.Equal(f[:6], mac0) {
			wantUp = append(wantUp, f)
		}
	}
	if len(up) != len(wantUp) {
		t.Fatalf("the kernel got %d frames, want %d", len(up), len(wantUp))
	}
	for i := range up {
		if !bytes.Equal(up[i], wantUp[i]) {
			t.Fatalf("frame %d up differs", i)
		}
	}
	// Forwarded: transit frames and the broadcasts, never a frame to the host.
	fwd := p1.txFrames()
	for _, f := range fwd {
		if bytes.Equal(f[:6], mac0) {
			t.Fatal("a frame to port 0's own MAC was forwarded")
		}
	}
	// Down: the kernel's frames, out of port 0, unchanged.
	for i, f := range p0.txFrames() {
		if !bytes.Equal(f, fromKernel[i]) {
			t.Fatalf("kernel frame %d left port 0 changed", i)
		}
	}
	s := parseSummary(t, out)
	x, y := s.Ports[0].Tap, s.Ports[1].Tap
	if x == nil || y == nil || x.Name != "gp0" || y.Name != "gp1" {
		t.Fatalf("summary has no TAP twins named gp0, gp1: %+v", s.Ports)
	}
	if x.Up != 30 || x.UpCopies != 10 || x.Taken != 20 || x.Down != 15 || len(x.Drops) != 0 || x.UpBytes != 30*60 {
		t.Fatalf("port 0 TAP counters %+v: want 30 up (10 copies), 20 taken, 15 down, no drops", *x)
	}
	// The accounting identity: received = forwarded + refused + taken up.
	p := s.Ports[0]
	if p.Rx.Packets != 330 || p.Handled+p.TxRefused+p.NoBounce+x.Taken != p.Rx.Packets || p.Handled != 310 {
		t.Fatalf("port 0: rx %d, handled %d, refused %d, taken %d: frames unaccounted", p.Rx.Packets, p.Handled, p.TxRefused, x.Taken)
	}
	if s.Ports[0].Tx.Packets != 15 || s.Ports[1].Tx.Packets != 310 {
		t.Fatalf("TX counters: port 0 %d (want the 15 kernel frames), port 1 %d (want 310)", s.Ports[0].Tx.Packets, s.Ports[1].Tx.Packets)
	}
}

// In drop mode no lane sends on a port, yet the kernel's frames leave it.
func TestTapDropMode(t *testing.T) {
	p0, _ := twoFakes(t, 1)
	k := withFakeTaps(t)
	p0.load(0, append(testFrames(t, 50, 64), withDst(testFrames(t, 5, 64), mac0)...))
	wrote := false
	code, out, errOut := runUntil(t, []string{"--tap", "--mode", "drop", "--json", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool {
			fd, ok := k.end("fake0")
			if ok && !wrote {
				unix.Write(fd, withDst(testFrames(t, 1, 64), mac1)[0])
				wrote = true
			}
			return len(p0.txFrames()) == 1 && p0.rxq[0].Stats().Packets == 55
		})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := parseSummary(t, out)
	if x := s.Ports[0].Tap; x == nil || x.Down != 1 || x.Taken != 5 || s.Ports[0].Handled != 50 {
		t.Fatalf("drop mode with --tap: %+v, tap %+v", s.Ports[0], x)
	}
}

func TestTapBadInput(t *testing.T) {
	twoFakes(t, 1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tap-rules", "vlan=5"}, "--tap-rules is given without --tap"},
		{[]string{"--tap-name", "x%d"}, "--tap-name is given without --tap"},
		{[]string{"--tap", "--tap-rules", "vlan=5000"}, "not a VLAN ID"},
		{[]string{"--tap", "--tap-rules", "colour=red"}, "unknown key"},
		{[]string{"--tap", "--tap-name", "gp%s"}, "use at most one %d"},
		{[]string{"--tap", "--tap-name", "gp", "sim:fake0", "sim:fake1"}, "would clash"},
		{[]string{"--tap", "--tap-name", "a-very-long-name%d", "sim:fake0", "sim:fake1"}, "interface names have at most 15"},
	} {
		code, out, errOut := runUntil(t, tc.args, nil)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", tc.args, code, errOut, out, tc.want)
		}
	}
}

// The loop with --tap allocates nothing: transit frames (classified and
// forwarded), frames to the port (written up and freed) and the kernel's
// frames (read and sent) alike.
func TestTapLoopDoesNotAllocate(t *testing.T) {
	for _, toHost := range []bool{false, true} {
		t.Run(map[bool]string{false: "transit", true: "to-host"}[toHost], func(t *testing.T) {
			k := withFakeTaps(t)
			o := &options{mode: modeFwd, burst: 32, queues: 1, ringSize: 512, macUpdating: true,
				tapOptions: tapOptions{tap: true, tapName: "gp%d"}}
			a := setupLanes(t, o, true)
			t.Cleanup(func() { a.closeTwins() })
			if toHost {
				for i, p := range a.ports {
					f := append([]byte(nil), p.(*fakePort).rxq[0].repeat...)
					copy(f, []net.HardwareAddr{mac0, mac1}[i])
					p.(*fakePort).rxq[0].repeat = f
				}
			}
			fd, _ := k.end("fake0")
			kernelFrame := withDst(testFrames(t, 1, 64), mac1)[0]
			buf := make([]byte, 4096)
			var pkts [maxBurst]*driver.Packet
			burst := pkts[:o.burst]
			poll := func() {
				unix.Write(fd, kernelFrame)
				for _, l := range a.lanes {
					l.poll(burst)
				}
				for unix.Read(fd, buf); ; { // what went up
					if _, err := unix.Read(fd, buf); err != nil {
						break
					}
				}
			}
			for i := 0; i < 100; i++ {
				poll()
			}
			if n := testing.AllocsPerRun(1000, poll); n != 0 {
				t.Fatalf("%v allocations per poll", n)
			}
			s := a.twins[0].Stats()
			if s.DownFrames == 0 || (toHost && s.Taken == 0) || (!toHost && (s.Taken != 0 || a.lanes[0].handled.Load() == 0)) {
				t.Fatalf("twin stats %+v, forwarded %d: the loop did not exercise the path", s, a.lanes[0].handled.Load())
			}
		})
	}
}

// BenchmarkForwardingLoopTap is BenchmarkForwardingLoop with --tap and
// transit frames only: the exception path's cost to forwarding (one
// classification per frame, one empty read of the TAP every tapDownEvery
// polls). go test -run '^$' -bench 'ForwardingLoop' ./cmd/l2fwd
func BenchmarkForwardingLoopTap(b *testing.B) {
	for _, burst := range []int{1, 32} {
		b.Run("burst-"+strconv.Itoa(burst), func(b *testing.B) {
			withFakeTapsTB(b)
			o := &options{mode: modeFwd, burst: burst, queues: 1, ringSize: 512, macUpdating: true,
				tapOptions: tapOptions{tap: true, tapName: "gp%d"}}
			a := setupLanes(b, o, true)
			b.Cleanup(func() { a.closeTwins() })
			var pkts [maxBurst]*driver.Packet
			l := a.lanes[0]
			b.ReportAllocs()
			for b.Loop() {
				l.poll(pkts[:burst])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(l.handled.Load()), "ns/pkt")
		})
	}
}

// With several RX queues, every queue's lane sends its frames for the host
// up through the one twin of the port, at the same time.
func TestTapMultiQueue(t *testing.T) {
	p0, p1 := twoFakes(t, 2)
	k := withFakeTaps(t)
	// 120 frames up in all: fewer than the socket pair standing in for the
	// TAP buffers (about 270 small frames), however late the test reads.
	toHost := withDst(testFrames(t, 120, 64), mac0)
	transit := testFrames(t, 120, 64)
	for q := 0; q < 2; q++ {
		var in [][]byte
		for i := q * 60; i < (q+1)*60; i++ {
			in = append(in, toHost[i], transit[i])
		}
		p0.load(q, in)
	}
	up := 0
	buf := make([]byte, 4096)
	code, out, errOut := runUntil(t, []string{"--tap", "--queues", "2", "--json", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool {
			fd, ok := k.end("fake0")
			for ok {
				if _, err := unix.Read(fd, buf); err != nil {
					break
				}
				up++
			}
			return up == 120 && len(p1.txFrames()) == 120
		})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := parseSummary(t, out)
	if x := s.Ports[0].Tap; up != 120 || x == nil || x.Up != 120 || x.Taken != 120 || s.Ports[0].Handled != 120 || s.Ports[0].Rx.Packets != 240 {
		t.Fatalf("the kernel read %d frames; summary %+v, tap %+v", up, s.Ports[0], x)
	}
}

// --metrics carries the twins' counters.
func TestTapMetrics(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	k := withFakeTaps(t)
	p0.load(0, append(testFrames(t, 20, 64), withDst(testFrames(t, 5, 64), mac0)...))
	addrCh := make(chan string, 1)
	old := listenMetrics
	listenMetrics = func(a string) (net.Listener, error) {
		ln, err := net.Listen("tcp", a)
		if err == nil {
			addrCh <- ln.Addr().String()
		}
		return ln, err
	}
	defer func() { listenMetrics = old }()
	var body string
	up := 0
	buf := make([]byte, 4096)
	code, _, errOut := runUntil(t, []string{"--tap", "--metrics", ":0", "--stats-interval", "0", "sim:fake0", "sim:fake1"}, func() bool {
		fd, ok := k.end("fake0")
		for ok {
			if _, err := unix.Read(fd, buf); err != nil {
				break
			}
			up++
		}
		if up < 5 || len(p1.txFrames()) < 20 {
			return false
		}
		resp, err := http.Get("http://" + <-addrCh + "/metrics")
		if err != nil {
			t.Error(err)
			return true
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return true
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`gopmd_tap_frames_total{dir="up",tap="gopmd0"} 5`,
		`gopmd_tap_bytes_total{dir="up",tap="gopmd0"} 300`,
		`gopmd_tap_taken_total{tap="gopmd0"} 5`,
		`gopmd_tap_frames_total{dir="down",tap="gopmd1"} 0`,
		`gopmd_tap_drops_total{cause="down_tx_full",tap="gopmd0"} 0`,
		`gopmd_l2fwd_handled_total{port="fake0"} 20`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// The stats table follows a port's row with its twin's rates, and lists
// the twin's drops among the port's causes.
func TestTapStatsTable(t *testing.T) {
	t.Parallel() // no port, no process-wide state
	a := &app{o: &options{mode: modeFwd}, tapNames: []string{"gopmd0", "gopmd1"}}
	var b strings.Builder
	a.table = &b
	prev := []portSnap{{}, {}}
	cur := []portSnap{{}, {}}
	cur[0].stats.Rx = driver.QueueStats{Packets: 100, Bytes: 6000}
	cur[0].tap = tap.Stats{UpFrames: 30, UpCopies: 10, Taken: 22, DownFrames: 12}
	cur[0].tap.Drops[tap.CauseUpWrite] = 2
	cur[0].tap.Drops[tap.CauseDownTxFull] = 1
	a.printTable(prev, cur, 2*time.Second)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("want a header, 2 ports each with a tap line, and a total:\n%s", b.String())
	}
	for _, want := range []struct {
		line int
		text []string
	}{
		{1, []string{"tap:up_write=2", "tap:down_tx_full=1", " 2 "}}, // 3 drops in 2 s
		{2, []string{"tap gopmd0: up 15/s (11/s taken from forwarding, 5/s copies), down 6/s"}},
		{4, []string{"tap gopmd1: up 0/s"}},
		{5, []string{"all", "dropped 3"}},
	} {
		for _, w := range want.text {
			if !strings.Contains(lines[want.line], w) {
				t.Errorf("line %q lacks %q", lines[want.line], w)
			}
		}
	}
}

// A twin that cannot be opened stops l2fwd before it starts (exit 2, one
// line), and the twins already open are closed.
func TestTapOpenFails(t *testing.T) {
	twoFakes(t, 1)
	k := withFakeTaps(t)
	code, out, errOut := runUntil(t, []string{"--tap", "--tap-name", "gpfail%d", "sim:fake0", "sim:fake1"}, nil)
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); code != 2 || len(lines) != 1 || out != "" ||
		!strings.Contains(errOut, "--tap: port 1 (sim:fake1): tap gpfail1: an interface of that name exists already") {
		t.Fatalf("exit %d, stderr %q, stdout %q; want exit 2 and one line naming port 1's TAP", code, errOut, out)
	}
	fd, ok := k.end("fake0")
	if !ok {
		t.Fatal("port 0's twin was never opened")
	}
	if n, err := unix.Read(fd, make([]byte, 64)); n != 0 || err != nil {
		t.Fatalf("port 0's TAP is still open after the failed start (read %d, %v; want end of file)", n, err)
	}
}

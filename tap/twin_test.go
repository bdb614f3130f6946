package tap

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim/simdma"
)

func newPool(t testing.TB, n int) *pool.Pool {
	t.Helper()
	r, err := dma.Alloc(simdma.NewIOMMU(false), n*pool.DefaultBufSize, dma.Options{Attr: dma.Attr{Name: t.Name()}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pool.New(r, pool.Config{Name: t.Name(), Count: n})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(time.Second); err != nil {
			t.Errorf("pool: %v", err)
		}
		r.Close()
	})
	return p
}

// fakeTx is a TX queue that takes the first room frames of each burst and
// frees them, keeping copies of their bytes.
type fakeTx struct {
	room   int
	frames [][]byte
	bursts int
}

func (f *fakeTx) TxBurst(pkts []*driver.Packet) int {
	f.bursts++
	n := min(f.room, len(pkts))
	for _, p := range pkts[:n] {
		f.frames = append(f.frames, append([]byte(nil), p.Data()...))
	}
	pool.FreeBulk(pkts[:n])
	return n
}
func (f *fakeTx) Reclaim() int             { return 0 }
func (f *fakeTx) Pending() int             { return 0 }
func (f *fakeTx) Stats() driver.QueueStats { return driver.QueueStats{} }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeTwin attaches a twin to one end of a SOCK_SEQPACKET pair (one frame
// per read and write, as a TAP file) and returns the other end: the kernel.
func fakeTwin(t testing.TB, cfg Config) (*Twin, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Pool == nil {
		cfg.Pool = newPool(t, 64)
	}
	if cfg.MAC == nil {
		cfg.MAC = ownMAC
	}
	cfg.Logger = quiet
	tw, err := Attach(fds[0], cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tw.Close(time.Second); unix.Close(fds[1]) })
	unix.SetNonblock(fds[1], true)
	return tw, fds[1]
}

// packets copies frames into buffers of pl.
func packets(t *testing.T, pl *pool.Pool, frames ...[]byte) []*driver.Packet {
	t.Helper()
	var ps []*driver.Packet
	for _, f := range frames {
		p := pl.Alloc()
		if p == nil || !p.SetLen(len(f)) {
			t.Fatal("no buffer for a test frame")
		}
		copy(p.Data(), f)
		p.PktLen = len(f)
		ps = append(ps, p)
	}
	return ps
}

// readAll reads every frame waiting on the kernel's end.
func readAll(fd int) [][]byte {
	var out [][]byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			return out
		}
		out = append(out, append([]byte(nil), buf[:n]...))
	}
}

func TestUp(t *testing.T) {
	tw, kernel := fakeTwin(t, Config{})
	rx := newPool(t, 64)
	toHost := frame(ownMAC, -1, etherIPv4, ipv4(6, "192.0.2.1"))
	arp := frame(bcastMAC, -1, etherARP, arpRequest("192.0.2.9"))
	transit1 := frame(otherMAC, -1, etherIPv4, ipv4(6, "198.51.100.7"))
	transit2 := frame(otherMAC, -1, etherIPv4, ipv4(17, "198.51.100.8"))
	pkts := packets(t, rx, transit1, toHost, arp, transit2)
	transitPkt1, arpPkt, transitPkt2 := pkts[0], pkts[2], pkts[3]

	kept := tw.Up(pkts)
	// The application keeps the transit frames and the broadcast, in order.
	if kept != 3 || pkts[0] != transitPkt1 || pkts[1] != arpPkt || pkts[2] != transitPkt2 {
		t.Fatalf("Up kept %d: %v; want the two transit frames and the ARP broadcast in order", kept, pkts[:kept])
	}
	got := readAll(kernel)
	if len(got) != 2 || !bytes.Equal(got[0], toHost) || !bytes.Equal(got[1], arp) {
		t.Fatalf("the kernel got %d frames %x, want the frame to the host and a copy of the ARP request", len(got), got)
	}
	s := tw.Stats()
	if s.UpFrames != 2 || s.UpCopies != 1 || s.UpBytes != uint64(len(toHost)+len(arp)) || s.UpDrops() != 0 || s.Taken != 1 {
		t.Fatalf("stats %+v: want 2 frames up (%d bytes), 1 of them a copy, 1 taken, no drops", s, len(toHost)+len(arp))
	}
	// The frame that went up was freed: only the kept ones are out.
	if out := rx.InFlight(); out != 3 {
		t.Fatalf("%d buffers out of the RX pool after Up, want the 3 kept", out)
	}
	pool.FreeBulk(pkts[:kept])
}

// A chained frame goes up whole, and a tag the device stripped goes back
// where it was on the wire.
func TestUpGathers(t *testing.T) {
	tw, kernel := fakeTwin(t, Config{})
	rx := newPool(t, 64)
	whole := frame(ownMAC, -1, etherIPv4, ipv4(6, "192.0.2.1"))
	ps := packets(t, rx, whole[:20], whole[20:])
	ps[0].SetNext(ps[1])
	ps[0].NSegs, ps[0].PktLen = 2, len(whole)

	tagged := frame(ownMAC, 0x2064, etherIPv4, ipv4(6, "192.0.2.1"))
	untagged := append(append([]byte{}, tagged[:12]...), tagged[16:]...)
	st := packets(t, rx, untagged)[0]
	st.SetRxMeta(pool.RxMeta{Flags: pool.FlagVLANStripped, VLAN: 0x2064})

	if kept := tw.Up([]*driver.Packet{ps[0], st}); kept != 0 {
		t.Fatalf("Up kept %d frames to the host", kept)
	}
	got := readAll(kernel)
	if len(got) != 2 || !bytes.Equal(got[0], whole) || !bytes.Equal(got[1], tagged) {
		t.Fatalf("kernel got %x\nwant %x\nand  %x", got, whole, tagged)
	}
	if out := rx.InFlight(); out != 0 {
		t.Fatalf("%d buffers (segments) still out after Up", out)
	}
}

// A frame the kernel refuses is counted and freed, never lost silently; a
// frame with more segments than a write gathers too.
func TestUpDrops(t *testing.T) {
	tw, kernel := fakeTwin(t, Config{})
	rx := newPool(t, 64)
	var segs []*driver.Packet
	for i := 0; i < 20; i++ {
		segs = append(segs, packets(t, rx, frame(ownMAC, -1, etherIPv4, ipv4(6, "192.0.2.1")))...)
		if i > 0 {
			segs[i-1].SetNext(segs[i])
		}
	}
	if kept := tw.Up(segs[:1]); kept != 0 {
		t.Fatal("a frame to the host was kept")
	}
	unix.Close(kernel) // the far end is gone: writes fail (EPIPE)
	ps := packets(t, rx, frame(ownMAC, -1, etherIPv4, ipv4(6, "192.0.2.1")), frame(bcastMAC, -1, etherARP, arpRequest("192.0.2.9")))
	if kept := tw.Up(ps); kept != 1 || ps[0].Data()[0] != 0xff {
		t.Fatalf("Up kept %d; want the broadcast only (its copy failed, the frame is still forwarded)", kept)
	}
	s := tw.Stats()
	if s.UpFrames != 0 || s.Drops[CauseUpGather] != 1 || s.Drops[CauseUpWrite] != 2 || s.UpDrops() != 3 || s.Taken != 2 {
		t.Fatalf("stats %+v: want 1 up_gather and 2 up_write drops, nothing up, 2 taken (the broadcast stays)", s)
	}
	pool.FreeBulk(ps[:1])
	if out := rx.InFlight(); out != 0 {
		t.Fatalf("%d buffers out after the drops", out)
	}
}

func TestDown(t *testing.T) {
	twPool := newPool(t, 8)
	tw, kernel := fakeTwin(t, Config{Pool: twPool, Burst: 4})
	var want [][]byte
	for i := 0; i < 6; i++ {
		f := frame(otherMAC, -1, etherIPv4, ipv4(6, "198.51.100.7"))
		f = append(f, byte(i))
		want = append(want, f)
		if _, err := unix.Write(kernel, f); err != nil {
			t.Fatal(err)
		}
	}
	tx := &fakeTx{room: 3}
	// A burst is at most Burst frames, in one TxBurst; what it refuses is
	// counted and freed.
	if n := tw.Down(tx); n != 3 || tx.bursts != 1 {
		t.Fatalf("Down sent %d frames in %d bursts, want 3 (the TX room) in 1", n, tx.bursts)
	}
	tx.room = 10
	if n := tw.Down(tx); n != 2 {
		t.Fatalf("second Down sent %d, want the 2 frames left", n)
	}
	if n := tw.Down(tx); n != 0 || tx.bursts != 2 {
		t.Fatalf("Down with nothing queued sent %d in %d bursts; want none and no TxBurst", n, tx.bursts)
	}
	if len(tx.frames) != 5 {
		t.Fatalf("TX got %d frames, want 5", len(tx.frames))
	}
	for i, f := range tx.frames {
		w := want[i]
		if i >= 3 {
			w = want[i+1] // frame 3 was refused
		}
		if !bytes.Equal(f, w) {
			t.Errorf("TX frame %d = %x, want %x", i, f, w)
		}
	}
	s := tw.Stats()
	if s.DownFrames != 5 || s.Drops[CauseDownTxFull] != 1 || s.DownBytes != uint64(5*len(want[0])) {
		t.Fatalf("stats %+v: want 5 down, 1 down_tx_full", s)
	}
	// Runts and frames that fill the buffer are dropped and counted.
	unix.Write(kernel, make([]byte, 13))
	unix.Write(kernel, make([]byte, 3000))
	unix.Write(kernel, want[0])
	if n := tw.Down(tx); n != 1 {
		t.Fatalf("Down sent %d, want the one good frame", n)
	}
	s = tw.Stats()
	if s.Drops[CauseDownRunt] != 1 || s.Drops[CauseDownTooBig] != 1 || s.DownDrops() != 3 {
		t.Fatalf("stats %+v: want 1 runt, 1 too big, 3 down drops in all", s)
	}
	// A burst of bad frames ends the call: reads are bounded, not just
	// good frames.
	for i := 0; i < 6; i++ {
		unix.Write(kernel, make([]byte, 5))
	}
	if n := tw.Down(tx); n != 0 || tw.Stats().Drops[CauseDownRunt] != 5 {
		t.Fatalf("Down over 6 runts sent %d, runts counted in all %d; want 0 and 5 (the earlier one and a burst of 4 reads)", n, tw.Stats().Drops[CauseDownRunt])
	}
	tw.Down(tx) // the last two
	if r := tw.Stats().Drops[CauseDownRunt]; r != 7 {
		t.Fatalf("%d runts counted, want 7", r)
	}
	// An empty pool stops Down; the frames wait in the kernel. (The twin
	// keeps the one buffer its last empty read did not fill.)
	var held []*driver.Packet
	for p := twPool.Alloc(); p != nil; p = twPool.Alloc() {
		held = append(held, p)
	}
	unix.Write(kernel, want[1])
	unix.Write(kernel, want[2])
	if n := tw.Down(tx); n != 1 || tw.Stats().DownNoBuffer != 1 {
		t.Fatalf("Down with only its spare buffer sent %d, no-buffer count %d; want 1 and 1", n, tw.Stats().DownNoBuffer)
	}
	twPool.RecycleBulk(held)
	if n := tw.Down(tx); n != 1 || !bytes.Equal(tx.frames[len(tx.frames)-1], want[2]) {
		t.Fatalf("Down after buffers came back sent %d, want the waiting frame", n)
	}
}

func TestUpDownAllocateNothing(t *testing.T) {
	tw, kernel := fakeTwin(t, Config{})
	rx := newPool(t, 64)
	f := frame(ownMAC, -1, etherIPv4, ipv4(6, "192.0.2.1"))
	g := frame(otherMAC, -1, etherIPv4, ipv4(6, "198.51.100.7"))
	buf := make([]byte, 2048)
	var burst [2]*driver.Packet
	tx := &fakeTx{room: 0}
	allocs := testing.AllocsPerRun(200, func() {
		burst[0], burst[1] = rx.Alloc(), rx.Alloc()
		burst[0].SetLen(len(f))
		copy(burst[0].Data(), f)
		burst[1].SetLen(len(g))
		copy(burst[1].Data(), g)
		if tw.Up(burst[:]) != 1 {
			panic("transit frame not kept")
		}
		rx.Recycle(burst[0])
		unix.Read(kernel, buf)
		unix.Write(kernel, g)
		if tw.Down(tx) != 0 {
			panic("refusing TX took a frame")
		}
	})
	if allocs != 0 {
		t.Fatalf("Up and Down allocate %.1f times per call pair, want 0", allocs)
	}
}

func TestConfigRefused(t *testing.T) {
	pl := newPool(t, 4)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Pool: pl}, "not a 6-byte unicast"},
		{Config{MAC: ownMAC}, "no Config.Pool"},
		{Config{MAC: ownMAC, Pool: pl, MTU: 9000}, "MTU 9000 does not fit"},
		{Config{MAC: ownMAC, Pool: pl, MTU: 40}, "MTU 40 does not fit"},
		{Config{MAC: ownMAC, Pool: pl, Burst: 300}, "burst 300 out of range"},
		{Config{MAC: ownMAC, Pool: pl, Rules: &Rules{VLANs: []uint16{5000}}}, "VLAN ID 5000"},
		{Config{MAC: ownMAC, Pool: pl, Name: "a-name-too-long-for-linux"}, "at most 15"},
		{Config{MAC: ownMAC, Pool: pl, Name: "../x"}, "not a valid interface name"},
	} {
		if _, err := Open(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%+v) = %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
}

// BenchmarkDownIdle is what a loop pays for asking when the kernel has
// sent nothing: one read(2) that finds the socket (here) or TAP empty.
func BenchmarkDownIdle(b *testing.B) {
	tw, _ := fakeTwin(b, Config{Pool: newPool(b, 64)})
	tx := &fakeTx{room: 32}
	b.ReportAllocs()
	for b.Loop() {
		if tw.Down(tx) != 0 {
			b.Fatal("a frame came down from nowhere")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/call")
}

// BenchmarkUpTransit is Up over a burst of 32 frames for other hosts:
// the exception path's cost to every forwarded frame.
func BenchmarkUpTransit(b *testing.B) {
	tw, _ := fakeTwin(b, Config{Pool: newPool(b, 64)})
	rx := newPool(b, 64)
	var burst [32]*driver.Packet
	f := frame(otherMAC, -1, etherIPv4, ipv4(6, "198.51.100.7"))
	for i := range burst {
		burst[i] = rx.Alloc()
		burst[i].SetLen(len(f))
		copy(burst[i].Data(), f)
	}
	b.Cleanup(func() { rx.RecycleBulk(burst[:]) })
	b.ReportAllocs()
	for b.Loop() {
		if tw.Up(burst[:]) != len(burst) {
			b.Fatal("a transit frame was taken")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(burst)), "ns/pkt")
}

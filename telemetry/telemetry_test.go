package telemetry_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc"
	_ "github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/pool"
	_ "github.com/gopmd/gopmd/sim"
	"github.com/gopmd/gopmd/telemetry"
)

func open(t *testing.T, spec string) driver.Port {
	t.Helper()
	p, err := driver.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

func fixed(ps ...driver.Port) func() []driver.Port { return func() []driver.Port { return ps } }

// sockDir is a short directory of the test's own (socket paths are
// limited to 107 bytes).
func sockDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "tlm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestServeWhilePolled: a client reads a port's counters and rings while
// another goroutine polls the port's queue (run with -race), sees the
// frames received so far, and the socket goes when the server closes.
func TestServeWhilePolled(t *testing.T) {
	const frames = 3000
	e := open(t, "sim:enetc70?link-poll=0&gen=1&gen-count=3000")
	f := open(t, "sim:fec70?link-poll=0")
	path := filepath.Join(sockDir(t), "app.sock")
	srv, err := telemetry.Listen(path, fixed(e, f))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket %s: %v %v, want a socket of mode 0660", path, fi.Mode(), err)
	}
	var got atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the process's worker
		defer wg.Done()
		rx := e.RxQueue(0)
		burst := make([]*pool.Packet, 32)
		for i := 0; i < 1000*frames && got.Load() < frames; i++ {
			n := rx.RxBurst(burst)
			pool.FreeBulk(burst[:n])
			got.Add(int64(n))
		}
	}()
	c, err := telemetry.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Info.PID != os.Getpid() || c.Info.Version != telemetry.Version {
		t.Errorf("info %+v", c.Info)
	}
	for i := 0; i < 20; i++ { // reads that overlap the polling
		if _, err := c.Stats("sim:enetc70"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Rings("0"); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if got.Load() != frames {
		t.Fatalf("the worker received %d of %d frames", got.Load(), frames)
	}
	ps, err := c.Ports()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name != e.Info().Name || ps[1].Driver != "fec" || !ps[0].Link.Up {
		t.Errorf("ports %+v", ps)
	}
	st, err := c.Stats("sim:enetc70")
	if err != nil {
		t.Fatal(err)
	}
	if st.Rx.Packets != frames || len(st.RxQueues) != e.Info().RxQueues || st.RxQueues[0].Packets != frames {
		t.Errorf("stats: rx %+v queues %+v, want %d frames", st.Rx, st.RxQueues, frames)
	}
	if ps := st.PortStats(); ps.Rx.Packets != frames || ps.HW["link_up"] != 1 {
		t.Errorf("as PortStats: rx %d link_up %d", ps.Rx.Packets, ps.HW["link_up"])
	}
	rings, err := c.Rings(e.Info().Name)
	if err != nil {
		t.Fatal(err)
	}
	var rx0 *telemetry.Ring
	for i := range rings {
		if rings[i].Kind == "rx" && rings[i].Queue == 0 {
			rx0 = &rings[i]
		}
	}
	if rx0 == nil {
		t.Fatalf("rings %+v: no rx ring 0", rings)
	}
	rs := rx0.RingState()
	mr, _ := rs.Reg("RBMR(0)")
	pir, _ := rs.Reg("RBPIR(0)")
	en, _ := mr.Field("EN")
	if en != 1 || rs.Size != e.Info().RxRingSize || pir.Value != frames%uint32(rs.Size) || rs.NextToClean != -1 {
		t.Errorf("rx ring 0: %+v, want RBMR(0).EN set, %d BDs, RBPIR(0) %d, driver indices -1", rx0, e.Info().RxRingSize, frames%e.Info().RxRingSize)
	}
	frings, err := c.Rings("sim:fec70")
	if err != nil {
		t.Fatal(err)
	}
	if len(frings) != f.Info().RxQueues+f.Info().TxQueues || frings[0].NextToUse != -1 {
		t.Errorf("FEC rings %+v: want every ring, each without the driver's indices", frings)
	}
	for _, r := range frings {
		dar := "RDAR"
		if r.Kind == "tx" {
			dar = "TDAR"
		}
		if len(r.Regs) != 1 || !strings.HasPrefix(r.Regs[0].Name, dar) {
			t.Errorf("FEC %s ring %d: registers %+v, want its %s", r.Kind, r.Queue, r.Regs, dar)
		}
	}
	for _, bad := range []string{"/stats,sim:enetc71", "/stats", "/nope", "/stats,7"} {
		if err := c.Call(bad, new(any)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("socket still there after Close: %v", err)
	}
	if _, err := c.Ports(); err == nil {
		t.Error("a client still gets answers after Close")
	}
}

// TestListenRefuses: a symbolic link, a file that is not a socket, a
// socket another server answers on, and an unsafe directory are refused;
// a stale socket is replaced.
func TestListenRefuses(t *testing.T) {
	dir := sockDir(t)
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.sock")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	none := fixed()
	for path, want := range map[string]string{link: "symbolic link", target: "not a socket"} {
		if _, err := telemetry.Listen(path, none); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Listen(%s): %v, want %q", path, err, want)
		}
	}
	live := filepath.Join(dir, "live.sock")
	srv, err := telemetry.Listen(live, none)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, err := telemetry.Listen(live, none); err == nil || !strings.Contains(err.Error(), "another process serves it") {
		t.Errorf("Listen on a live socket: %v", err)
	}
	// A socket left by a process that died.
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: stale, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	s2, err := telemetry.Listen(stale, none)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	s2.Close()
	// Directories.
	linkDir := filepath.Join(dir, "linkdir")
	if err := os.Symlink(dir, linkDir); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{filepath.Join(linkDir, "a.sock"): "symbolic link", filepath.Join(open, "a.sock"): "writable by everyone"} {
		if _, err := telemetry.Listen(path, none); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Listen(%s): %v, want %q", path, err, want)
		}
	}
}

// TestFind: Find picks the one process that has the port, skips a stale
// socket, and says what there is when none has it.
func TestFind(t *testing.T) {
	dir := sockDir(t)
	a, b := open(t, "sim:fec71?link-poll=0"), open(t, "sim:fec72?link-poll=0")
	sa, err := telemetry.Listen(filepath.Join(dir, "a.1.sock"), fixed(a))
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sb, err := telemetry.Listen(filepath.Join(dir, "b.2.sock"), fixed(b))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: filepath.Join(dir, "c.3.sock"), Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if p, err := telemetry.Find(dir, "sim:fec72"); err != nil || p != sb.Path() {
		t.Errorf("Find(sim:fec72) = %q, %v; want %s", p, err, sb.Path())
	}
	if _, err := telemetry.Find(dir, "sim:fec73"); err == nil || !strings.Contains(err.Error(), "sim:fec71?link-poll=0") {
		t.Errorf("Find(sim:fec73): %v, want an error listing the ports there are", err)
	}
}

// TestClientCap: a client beyond MaxClients gets an error, not a hang.
func TestClientCap(t *testing.T) {
	path := filepath.Join(sockDir(t), "cap.sock")
	srv, err := telemetry.Listen(path, fixed())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var cs []*telemetry.Client
	for i := 0; i < telemetry.MaxClients; i++ {
		c, err := telemetry.Dial(path)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	if _, err := telemetry.Dial(path); err == nil || !strings.Contains(err.Error(), "clients already connected") {
		t.Errorf("client %d: %v", telemetry.MaxClients+1, err)
	}
	cs[0].Close()
	for _, c := range cs[1:] {
		if _, err := c.Ports(); err != nil {
			t.Error(err)
		}
		c.Close()
	}
}

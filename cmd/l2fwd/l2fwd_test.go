package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/safefile"
	"github.com/gopmd/gopmd/sim"
	"github.com/gopmd/gopmd/sim/simdma"
)

// The tests that run l2fwd run one at a time (no t.Parallel): they open
// the same sim:enetc0/sim:enetc1 ports through the process-wide sim
// registry and their output names them, and a forwarder's workers never
// yield their CPU, so a second forwarder on two cores would starve the
// first one's link watchers and engines and the loss accounting several of
// them check. (ERR050089 no longer ties them together: it is kept per
// chip, and a test could give its ENETCs a chip of their own with chip=.)
// Bounded work would not change that: the fake-port tests end once their
// frames are through (some 10 ms each, nothing to gain), and the long ones
// (the no-drops run, the namespace tests) forward at full rate for as long
// as they last. The tests of pure functions (tables, addresses, pairing)
// run in parallel.

// testFrames builds n generator frames of the given size.
func testFrames(t *testing.T, n, size int) [][]byte { return testFramesTB(t, n, size) }

func testFramesTB(t testing.TB, n, size int) [][]byte {
	t.Helper()
	g, err := sim.NewGenerator(sim.GenConfig{Size: size, Flows: 4})
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, size)
		l, _ := g.Next(b)
		out[i] = b[:l]
	}
	return out
}

// withFakes makes openPort hand out the given fake ports by spec.
func withFakes(t *testing.T, fakes map[string]*fakePort) {
	t.Helper()
	old := openPort
	openPort = func(spec string, cfg driver.Config) (driver.Port, error) {
		p, ok := fakes[spec]
		if !ok {
			return nil, fmt.Errorf("open %s: no such fake port", spec)
		}
		return p, nil
	}
	t.Cleanup(func() { openPort = old })
}

// runUntil runs l2fwd with args until done reports true, then stops it as
// Ctrl-C would. It returns the exit status, stdout and stderr.
func runUntil(t *testing.T, args []string, done func() bool) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	res := make(chan int, 1)
	go func() { res <- run(ctx, args, &stdout, &stderr) }()
	// The deadline only keeps a broken build from hanging; no assertion
	// depends on timing.
	deadline := time.Now().Add(20 * time.Second)
	for done != nil && !done() && time.Now().Before(deadline) {
		select {
		case code := <-res:
			return code, stdout.String(), stderr.String()
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	code := <-res
	return code, stdout.String(), stderr.String()
}

func parseSummary(t *testing.T, out string) summaryJSON {
	t.Helper()
	var s summaryJSON
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", out)
	}
	return s
}

var (
	mac0 = net.HardwareAddr{0x00, 0x04, 0x9f, 0, 0, 0x10}
	mac1 = net.HardwareAddr{0x00, 0x04, 0x9f, 0, 0, 0x11}
)

// twoFakes makes two fake ports in one DMA domain.
func twoFakes(t *testing.T, queues int) (*fakePort, *fakePort) {
	iommu := simdma.NewIOMMU(false)
	p0 := newFakePort("fake0", 0, queues, mac0, iommu)
	p1 := newFakePort("fake1", 1, queues, mac1, iommu)
	withFakes(t, map[string]*fakePort{"sim:fake0": p0, "sim:fake1": p1})
	return p0, p1
}

func TestForwardMACUpdating(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	in0, in1 := testFrames(t, 1000, 64), testFrames(t, 700, 128)
	p0.load(0, in0)
	p1.load(0, in1)
	code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 1000 && len(p0.txFrames()) == 700 })
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	check := func(got, in [][]byte, txPort int, txMAC net.HardwareAddr) {
		t.Helper()
		if len(got) != len(in) {
			t.Fatalf("port %d sent %d frames, want %d", txPort, len(got), len(in))
		}
		for i := range in {
			wantDst := []byte{0x02, 0, 0, 0, 0, byte(txPort)}
			if !bytes.Equal(got[i][0:6], wantDst) || !bytes.Equal(got[i][6:12], txMAC) {
				t.Fatalf("frame %d out of port %d: dst %x src %x, want %x and %x", i, txPort, got[i][0:6], got[i][6:12], wantDst, []byte(txMAC))
			}
			if !bytes.Equal(got[i][12:], in[i][12:]) {
				t.Fatalf("frame %d out of port %d: bytes after the MACs changed", i, txPort)
			}
		}
	}
	check(p1.txFrames(), in0, 1, mac1)
	check(p0.txFrames(), in1, 0, mac0)
	s := parseSummary(t, out)
	if s.Mode != "fwd" || !s.MACUpdating || s.Packets != 1700 || !s.LeakCheck.OK || len(s.Ports) != 2 {
		t.Fatalf("summary %+v", s)
	}
	if s.Ports[0].Handled != 1000 || s.Ports[0].TxPort != 1 || s.Ports[1].Handled != 700 || s.Ports[1].HandledBytes != 700*124 {
		t.Fatalf("per-port summary %+v", s.Ports)
	}
	if s.Ports[1].Rx.Packets != 700 || s.Ports[1].Tx.Packets != 1000 {
		t.Fatalf("port 1 counters rx %+v tx %+v", s.Ports[1].Rx, s.Ports[1].Tx)
	}
}

func TestForwardNoMACUpdatingMultiQueue(t *testing.T) {
	p0, p1 := twoFakes(t, 2)
	in := testFrames(t, 600, 64)
	p0.load(0, in[:300])
	p0.load(1, in[300:])
	code, out, errOut := runUntil(t, []string{"--no-mac-updating", "--queues", "2", "--burst", "7", "--stats-interval", "0", "--json", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 600 })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Each RX queue went to the TX queue of the same number, unchanged.
	if q0, q1 := p1.txq[0].frames(), p1.txq[1].frames(); len(q0) != 300 || len(q1) != 300 ||
		!bytes.Equal(q0[299], in[299]) || !bytes.Equal(q1[0], in[300]) {
		t.Fatalf("TX queues got %d and %d frames, or frames changed", len(q0), len(q1))
	}
	// One worker per RX queue (4), but never more than GOMAXPROCS-1.
	want := min(4, max(1, runtime.GOMAXPROCS(0)-1))
	if s := parseSummary(t, out); s.MACUpdating || s.Queues != 2 || s.Workers != want {
		t.Fatalf("summary %+v, want %d workers", s, want)
	}
}

func TestModes(t *testing.T) {
	for _, m := range []string{"drop", "tx", "pass"} {
		t.Run(m, func(t *testing.T) {
			p0, p1 := twoFakes(t, 1)
			in := testFrames(t, 500, 64)
			p0.load(0, in)
			code, out, errOut := runUntil(t, []string{"--mode", m, "--json", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
				func() bool { return p0.rxq[0].Stats().Packets == 500 && (m != "tx" || len(p0.txFrames()) == 500) })
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			s := parseSummary(t, out)
			if s.Mode != m || s.Ports[0].Handled != 500 || !s.LeakCheck.OK {
				t.Fatalf("summary %+v", s)
			}
			if len(p1.txFrames()) != 0 {
				t.Fatalf("%s mode sent %d frames out of the other port", m, len(p1.txFrames()))
			}
			switch m {
			case "tx":
				got := p0.txFrames()
				for i := range in {
					if !bytes.Equal(got[i][0:6], in[i][6:12]) || !bytes.Equal(got[i][6:12], in[i][0:6]) || !bytes.Equal(got[i][12:], in[i][12:]) {
						t.Fatalf("frame %d did not bounce with its MACs swapped", i)
					}
				}
			case "drop", "pass":
				if len(p0.txFrames()) != 0 {
					t.Fatalf("%s mode transmitted", m)
				}
				if m == "pass" && s.Ports[0].Pass["ipv4"] != 500 {
					t.Fatalf("application saw %v, want 500 IPv4 frames", s.Ports[0].Pass)
				}
				// drop recycles into the owner's cache: the pool says so.
				if ps := p0.rxq[0].pool.Stats(); m == "drop" && ps.RecycleCached+ps.RecycleCacheFull == 0 {
					t.Fatalf("drop mode did not recycle into the pool cache: %+v", ps)
				}
			}
		})
	}
}

func TestTxRefusedIsFreedAndCounted(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	p1.txq[0].room = 100 // TX takes 100 frames (the fourth burst's first 4), then nothing
	in := testFrames(t, 400, 64)
	p0.load(0, in)
	code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return p0.rxq[0].Stats().Packets == 400 })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := parseSummary(t, out)
	if s.Ports[0].Handled != 100 || s.Ports[0].TxRefused != 300 || s.Dropped != 300 || !s.LeakCheck.OK || !s.Accounting.OK {
		t.Fatalf("handled %d refused %d dropped %d leak ok %v accounting %+v", s.Ports[0].Handled, s.Ports[0].TxRefused, s.Dropped, s.LeakCheck.OK, s.Accounting)
	}
	if want := uint64(100 * len(in[0])); s.Ports[0].HandledBytes != want {
		t.Fatalf("handled %d bytes, want %d: the bytes of the frames TX took", s.Ports[0].HandledBytes, want)
	}
}

func TestStatsTable(t *testing.T) {
	t.Parallel() // no port, no process-wide state
	// One interval of one second: rates, pool use, drops by cause on the
	// port that dropped them, and the totals since the start.
	a := &app{o: &options{mode: modeFwd}}
	var b strings.Builder
	a.table = &b
	prev := []portSnap{{}, {}}
	cur := []portSnap{{poolUse: 300, poolSize: 1536}, {poolUse: 20, poolSize: 1536}}
	cur[0].stats.Rx = driver.QueueStats{Packets: 1000, Bytes: 60000}
	cur[0].stats.Rx.Drops[driver.CauseNoBuffer] = 7
	cur[0].txRefused = 50
	cur[1].stats.Tx = driver.QueueStats{Packets: 950, Bytes: 57000}
	cur[1].outRefused = 50
	a.printTable(prev, cur, time.Second)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header, 2 ports and a total:\n%s", b.String())
	}
	for _, want := range []struct {
		line int
		text []string
	}{
		{1, []string{"1000", "0.5", "300/1536", "rx:no_buffer=7"}},
		{2, []string{"950", "0.5", "20/1536", " 50 ", "tx:refused=50"}},
		{3, []string{"all", "1000", "950", " 57 ", "since start: rx 1000, tx 950, dropped 57"}},
	} {
		for _, w := range want.text {
			if !strings.Contains(lines[want.line], w) {
				t.Errorf("line %q lacks %q", lines[want.line], w)
			}
		}
	}
	if strings.Contains(lines[1], "refused") {
		t.Errorf("port 0's row shows refusals its TX did not make: %q", lines[1])
	}
}

func TestLeakExitsNonZero(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	p1.txq[0].keep = true // the "device" never gives 5 buffers back
	p0.load(0, testFrames(t, 5, 64))
	code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 5 })
	if code != 1 {
		t.Fatalf("exit %d with leaked buffers, want 1", code)
	}
	s := parseSummary(t, out)
	if s.LeakCheck.OK || len(s.LeakCheck.Leaks) != 1 || !strings.Contains(s.LeakCheck.Leaks[0], "5 buffers") {
		t.Fatalf("leak check %+v", s.LeakCheck)
	}
	if !strings.Contains(errOut, "leak") || !strings.Contains(errOut, "fake0-rx0") {
		t.Fatalf("stderr does not name the leaking pool: %s", errOut)
	}
}

func TestCapture(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	in := testFrames(t, 300, 64)
	p0.load(0, in)
	file := filepath.Join(t.TempDir(), "fwd.pcap")
	code, out, errOut := runUntil(t, []string{"--capture", file, "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 300 })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "capture "+file+": 300 frames written, 0 copies dropped") {
		t.Fatalf("summary does not report the capture:\n%s", out)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil || r.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("capture is not an Ethernet pcap: %v", err)
	}
	sent := p1.txFrames()
	for i := 0; ; i++ {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			if i != 300 {
				t.Fatalf("capture holds %d frames, want 300", i)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, sent[i]) {
			t.Fatalf("captured frame %d is not the forwarded frame", i)
		}
	}
}

// TestCapturePcapng: a --capture file named .pcapng is written as pcapng.
func TestCapturePcapng(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	p0.load(0, testFrames(t, 100, 64))
	file := filepath.Join(t.TempDir(), "fwd.pcapng")
	code, _, errOut := runUntil(t, []string{"--capture", file, "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 100 })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil || r.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("capture is not an Ethernet pcapng: %v", err)
	}
	sent := p1.txFrames()
	for i := range sent {
		data, _, err := r.ReadPacketData()
		if err != nil || !bytes.Equal(data, sent[i]) {
			t.Fatalf("captured frame %d: %v", i, err)
		}
	}
}

// TestCaptureFileSafety: --capture never follows a planted symbolic link
// and replaces an existing capture only with --force.
func TestCaptureFileSafety(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "root-only")
	os.WriteFile(victim, []byte("precious"), 0o600)
	link := filepath.Join(dir, "planted.pcap")
	os.Symlink(victim, link)
	old := filepath.Join(dir, "old.pcap")
	os.WriteFile(old, []byte("old"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--capture", link}, "symbolic link"},
		{[]string{"--capture", link, "--force"}, "symbolic link"},
		{[]string{"--capture", old}, "--force"},
		{[]string{"--cpuprofile", link}, "symbolic link"},
		{[]string{"--cpuprofile", old}, "--force"},
	} {
		twoFakes(t, 1)
		code, _, errOut := runUntil(t, append(tc.args, "--duration", "1ms", "sim:fake0", "sim:fake1"), nil)
		if code != 2 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, tc.args[1]) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message naming the file and %q", tc.args, code, errOut, tc.want)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the link's target was written: %q", b)
	}
	if b, _ := os.ReadFile(old); string(b) != "old" {
		t.Fatalf("the existing file was written: %q", b)
	}
	p0, p1 := twoFakes(t, 1)
	p0.load(0, testFrames(t, 10, 64))
	code, out, errOut := runUntil(t, []string{"--capture", old, "--force", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 10 })
	if code != 0 || !strings.Contains(out, "capture "+old+": 10 frames written") {
		t.Fatalf("--force over an existing file: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestCaptureChainedFrames(t *testing.T) {
	// Frames that arrive in two chained buffers are captured whole, as
	// they leave (here without MAC updating: byte for byte as they came).
	p0, p1 := twoFakes(t, 1)
	p0.rxq[0].split = 100
	in := testFrames(t, 200, 300)
	p0.load(0, in)
	file := filepath.Join(t.TempDir(), "chained.pcap")
	code, out, errOut := runUntil(t, []string{"--capture", file, "--no-mac-updating", "--json", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 200 })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if s := parseSummary(t, out); s.Capture == nil || s.Capture.Frames != 200 || s.Capture.Overflow != 0 || !s.LeakCheck.OK {
		t.Fatalf("capture %+v, leak check %+v", s.Capture, s.LeakCheck)
	}
	got, sent := readPcap(t, file), p1.txFrames()
	if len(got) != 200 {
		t.Fatalf("capture holds %d frames, want 200", len(got))
	}
	for i := range in {
		if !bytes.Equal(got[i], in[i]) || !bytes.Equal(sent[i], in[i]) {
			t.Fatalf("frame %d: captured %d bytes, sent %d, want the %d-byte frame as it came", i, len(got[i]), len(sent[i]), len(in[i]))
		}
	}
}

func TestMetrics(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	p0.load(0, testFrames(t, 50, 64))
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
	code, _, errOut := runUntil(t, []string{"--metrics", ":0", "--stats-interval", "0", "sim:fake0", "sim:fake1"}, func() bool {
		if len(p1.txFrames()) < 50 {
			return false
		}
		addr := <-addrCh
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("--metrics :0 listened on %s, want loopback", addr)
		}
		resp, err := http.Get("http://" + addr + "/metrics")
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
		`gopmd_port_packets_total{dir="tx",port="fake1"} 50`,
		`gopmd_queue_packets_total{dir="rx",port="fake0",queue="0"} 50`,
		`gopmd_l2fwd_handled_total{port="fake0"} 50`,
		`gopmd_l2fwd_tx_refused_total{port="fake0"} 0`,
		`gopmd_l2fwd_no_bounce_total{port="fake0"} 0`,
		`gopmd_port_drops_total{cause="no_buffer",dir="rx",port="fake0"} 0`,
		`gopmd_pool_buffers{port="fake0",queue="0"} 512`,
		`gopmd_pool_events_total{event="alloc_fast",port="fake0",queue="0"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	lintScrape(t, body)
}

func TestBadInput(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "flag provided but not defined"},
		{[]string{"--burst", "0"}, "--burst 0 out of range"},
		{[]string{"--burst", "1000"}, "use 1 to 256"},
		{[]string{"--mode", "fly"}, "use fwd, drop, tx or pass"},
		{[]string{"--queues", "0"}, "--queues"},
		{[]string{"--duration", "-1s"}, "--duration"},
		{[]string{"--metrics", "0.0.0.0:9464"}, "--metrics-any"},
		{[]string{"--metrics", "nonsense"}, "host:port"},
		{[]string{"bogus:thing"}, "unknown scheme"},
		{[]string{"sim:fake0", "sim:nope9"}, "port 1"},
		{[]string{"--capture", "/nonexistent/dir/x.pcap", "sim:fake0", "sim:fake1"}, "--capture"},
		{[]string{"--capture", "x.pcap", "--mode", "drop"}, "--mode drop forwards none"},
		{[]string{"--until-done"}, "its generator has no gen-count"},
		{[]string{"--until-done", "sim:enetc0?pcap-in=x.pcap", "sim:enetc1?afpacket=veth0"}, "port 1 (sim:enetc1?afpacket=veth0) never runs dry"},
		{[]string{"--until-done", "0000:01:00.0"}, "a real device"},
		{[]string{"--until-done", "sim:enetc0?peer=sim:enetc1", "sim:enetc1"}, "no port has an input that ends"},
	} {
		code, out, errOut := runUntil(t, tc.args, nil)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", tc.args, code, errOut, out, tc.want)
		}
	}
	// The port opened before the one that failed was closed again.
	if !p0.closed.Load() {
		t.Error("port 0 left open after port 1 failed to open")
	}
	_ = p1
	if code, out, _ := runUntil(t, []string{"-h"}, nil); code != 0 || !strings.Contains(out, "usage: l2fwd") || !strings.Contains(out, "-no-mac-updating") {
		t.Errorf("-h: exit %d, output %q", code, out)
	}
}

func TestMetricsAddr(t *testing.T) {
	t.Parallel() // no port, no process-wide state
	for _, c := range []struct {
		in, want string
		any, ok  bool
	}{
		{":9464", "127.0.0.1:9464", false, true},
		{"localhost:1", "localhost:1", false, true},
		{"[::1]:9464", "[::1]:9464", false, true},
		{"10.0.0.1:9464", "", false, false},
		{"10.0.0.1:9464", "10.0.0.1:9464", true, true},
		{"127.0.0.1:x", "", false, false},
	} {
		got, err := metricsAddr(c.in, c.any)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("metricsAddr(%q, %v) = %q, %v", c.in, c.any, got, err)
		}
	}
}

func TestPairing(t *testing.T) {
	t.Parallel() // no port, no process-wide state
	for _, c := range []struct{ i, n, want int }{{0, 2, 1}, {1, 2, 0}, {2, 3, 2}, {3, 4, 2}, {0, 1, 0}} {
		if got := pairOf(c.i, c.n, modeFwd); got != c.want {
			t.Errorf("pairOf(%d, %d) = %d, want %d", c.i, c.n, got, c.want)
		}
	}
	if pairOf(0, 2, modeTx) != 0 {
		t.Error("tx mode must bounce out of the same port")
	}
}

func TestForwardAcrossDMADomains(t *testing.T) {
	// Each port has its own IOMMU domain: port 1 cannot read port 0's
	// buffers, so l2fwd copies each frame into memory mapped for port 1.
	p0 := newFakePort("fake0", 0, 1, mac0, simdma.NewIOMMU(false))
	p1 := newFakePort("fake1", 1, 1, mac1, simdma.NewIOMMU(false))
	withFakes(t, map[string]*fakePort{"sim:fake0": p0, "sim:fake1": p1})
	in := testFrames(t, 2000, 256)
	p0.load(0, in)
	code, out, errOut := runUntil(t, []string{"--json", "--no-mac-updating", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 2000 })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := p1.txFrames()
	for i := range in {
		if !bytes.Equal(got[i], in[i]) {
			t.Fatalf("frame %d changed on the way", i)
		}
	}
	s := parseSummary(t, out)
	if !s.Ports[0].Copied || s.Ports[0].Handled != 2000 || s.Ports[0].NoBounce != 0 || !s.LeakCheck.OK {
		t.Fatalf("summary port 0 %+v, leak check %+v", s.Ports[0], s.LeakCheck)
	}
	// The fake's TX buffers are port 1's: the bounce pool, not port 0's.
	if st := p0.rxq[0].pool.Stats(); st.RecycleRing != 0 {
		t.Fatalf("port 0's buffers went to TX: %+v", st)
	}
}

// TestCPUProfileWriteErrors: a profile that cannot be written (a full
// disk, here /dev/full) is an error naming the file, and the exit status
// says so, after the run's summary as usual.
func TestCPUProfileWriteErrors(t *testing.T) {
	old := createProfile
	t.Cleanup(func() { createProfile = old })
	createProfile = func(string, safefile.Options) (*os.File, error) { return os.OpenFile("/dev/full", os.O_WRONLY, 0) }
	p0, p1 := twoFakes(t, 1)
	p0.load(0, testFrames(t, 10, 64))
	code, out, errOut := runUntil(t, []string{"--cpuprofile", "full.prof", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 10 })
	if code != 1 || !strings.Contains(errOut, "--cpuprofile full.prof") || !strings.Contains(errOut, "no space left on device") ||
		!strings.Contains(errOut, "incomplete") || !strings.Contains(out, "leak check: every buffer came back") {
		t.Fatalf("profile onto a full disk: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	// A profile that is written: exit 0, a non-empty file.
	createProfile = old
	f := filepath.Join(t.TempDir(), "ok.prof")
	p0, p1 = twoFakes(t, 1)
	p0.load(0, testFrames(t, 10, 64))
	code, _, errOut = runUntil(t, []string{"--cpuprofile", f, "--stats-interval", "0", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == 10 })
	if fi, err := os.Stat(f); code != 0 || err != nil || fi.Size() == 0 {
		t.Fatalf("profile to a file: exit %d, %v, stderr %s", code, err, errOut)
	}
}

// TestMACUpdatingWarning: with MAC updating on (the default), each port
// that faces a real network (a real device, afpacket=) is named once at
// start, with the flag that forwards frames unchanged; simulated ports,
// --no-mac-updating and the modes that do not rewrite get no warning.
func TestMACUpdatingWarning(t *testing.T) {
	iommu := simdma.NewIOMMU(false)
	for _, c := range []struct {
		args []string
		want []string // ports warned about
	}{
		{[]string{"0000:01:00.0", "sim:fake1?afpacket=veth9"}, []string{"port 0 (0000:01:00.0)", "port 1 (sim:fake1?afpacket=veth9)"}},
		{[]string{"sim:fake0", "sim:fake1?afpacket=veth9"}, []string{"port 1 (sim:fake1?afpacket=veth9)"}},
		{[]string{"sim:fake0", "sim:fake1"}, nil},
		{[]string{"--no-mac-updating", "0000:01:00.0", "sim:fake1?afpacket=veth9"}, nil},
		{[]string{"--mode", "tx", "0000:01:00.0", "sim:fake1?afpacket=veth9"}, nil},
	} {
		specs := c.args[len(c.args)-2:]
		p0 := newFakePort("fake0", 0, 1, mac0, iommu)
		p1 := newFakePort("fake1", 1, 1, mac1, iommu)
		withFakes(t, map[string]*fakePort{specs[0]: p0, specs[1]: p1})
		p0.load(0, testFrames(t, 10, 64))
		code, _, errOut := runUntil(t, append([]string{"--stats-interval", "0"}, c.args...), func() bool { return len(p1.txFrames()) == 10 || len(p0.txFrames()) == 10 })
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", c.args, code, errOut)
		}
		if n := strings.Count(errOut, "warning:"); n != len(c.want) {
			t.Errorf("%q: %d warnings, want %d:\n%s", c.args, n, len(c.want), errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, "warning: "+w+" faces a real network") || !strings.Contains(errOut, "--no-mac-updating") {
				t.Errorf("%q: stderr does not warn about %s naming --no-mac-updating:\n%s", c.args, w, errOut)
			}
		}
	}
}

// TestTableOutputFits: the header lines fit 100 columns, and the column
// header is printed with the first table, then again only once 20 rows
// or more have passed, not every interval.
func TestTableOutputFits(t *testing.T) {
	t.Parallel() // no port, no process-wide state
	a := &app{o: &options{mode: modeFwd, statsInterval: time.Second, burst: 32, queues: 1, macUpdating: true}, ports: make([]driver.Port, 2),
		nWorkers: 1, lanes: make([]*lane, 2), workerWhy: "capped at GOMAXPROCS-1 = 1 so the simulated devices' engine goroutine and the link watchers keep a CPU"}
	var b strings.Builder
	a.table = &b
	a.printTableHeader()
	prev, cur := []portSnap{{}, {}}, []portSnap{{}, {}}
	for range 20 {
		a.printTable(prev, cur, time.Second)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	headers := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "l2fwd: ") || strings.HasPrefix(l, "       ") || strings.HasPrefix(l, "port ") {
			if len(l) > 100 {
				t.Errorf("header line %d is %d columns wide: %q", i, len(l), l)
			}
		}
		if strings.HasPrefix(l, "port ") {
			headers++
		}
	}
	// 20 tables of 3 rows: a header with the first, then after 21, 42 rows.
	if headers != 3 || !strings.HasPrefix(lines[0], "l2fwd: 2 ports") {
		t.Errorf("%d column headers in 20 tables of 3 rows, want 3:\n%s", headers, b.String())
	}
	for _, w := range []string{"GOMAXPROCS-1 = 1", "the exception path (--tap)", "MAC updating true"} {
		if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), w) {
			t.Errorf("the header lost %q:\n%s", w, b.String())
		}
	}
}

// TestNoHugePageWarningOnSim: the DMA layer's warnings (no huge pages)
// stay off stderr while l2fwd runs simulated ports only, and go through
// when a real device is among the ports.
func TestNoHugePageWarningOnSim(t *testing.T) {
	var mu sync.Mutex
	var got []string
	old := dma.Warn
	dma.Warn = func(m string) { mu.Lock(); got = append(got, m); mu.Unlock() }
	t.Cleanup(func() { dma.Warn = old })
	iommu := simdma.NewIOMMU(false)
	for _, c := range []struct {
		specs []string
		warn  bool
	}{
		{[]string{"sim:fake0", "sim:fake1?afpacket=veth9"}, false},
		{[]string{"0000:01:00.0", "sim:fake1"}, true},
	} {
		got = nil
		p0 := newFakePort("fake0", 0, 1, mac0, iommu)
		p1 := newFakePort("fake1", 1, 1, mac1, iommu)
		withFakes(t, map[string]*fakePort{c.specs[0]: p0, c.specs[1]: p1})
		p0.load(0, testFrames(t, 10, 64))
		// While l2fwd runs, the DMA layer warns (as a device allocating
		// without huge pages would).
		warned := false
		code, _, errOut := runUntil(t, append([]string{"--stats-interval", "0", "--no-mac-updating"}, c.specs...), func() bool {
			if len(p1.txFrames()) < 10 {
				return false
			}
			if !warned {
				dma.Warn("dma: no 2 MiB huge pages")
				warned = true
			}
			return true
		})
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if code != 0 || (n == 1) != c.warn {
			t.Errorf("%q: exit %d, %d DMA warnings passed on (want them: %v); stderr %s", c.specs, code, n, c.warn, errOut)
		}
	}
	if dma.Warn == nil {
		t.Fatal("l2fwd left no DMA warning function behind")
	}
}

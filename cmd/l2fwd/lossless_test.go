package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	enetcmodel "github.com/gopmd/gopmd/enetc/model"
	fecmodel "github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/sim"
	"github.com/gopmd/gopmd/wire"
)

// runToEnd runs l2fwd with --until-done-style args and returns its exit
// status, stdout and stderr; the timeout only keeps a broken build from
// hanging.
func runToEnd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	if ctx.Err() != nil {
		t.Fatalf("l2fwd did not end by itself: %s", stderr.String())
	}
	return code, stdout.String(), stderr.String()
}

// runtFrames are frames as a sending host captures them before its MAC
// pads them: 42-byte ARP requests and 48-byte IPv4 frames, numbered.
func runtFrames(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		size, typ := 42, []byte{0x08, 0x06}
		if i%2 == 1 {
			size, typ = 48, []byte{0x08, 0x00}
		}
		f := make([]byte, size)
		copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x99})
		copy(f[12:], typ)
		for j := 14; j < size; j++ {
			f[j] = byte(i + j)
		}
		out[i] = f
	}
	return out
}

func TestRuntReplayThroughBothNICs(t *testing.T) {
	// A capture full of frames shorter than the Ethernet minimum replays
	// in full through either NIC model with --until-done: each frame is
	// padded to 60 bytes as the sending MAC would, forwarded, and written
	// out; nothing is dropped, the accounting balances.
	const n = 500
	frames := runtFrames(n)
	for _, kind := range []string{"enetc", "fec"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "in.pcap"), filepath.Join(dir, "out.pcap")
			writePcap(t, in, frames)
			opts := ""
			if kind == "enetc" {
				opts = "&" + simOpts
			}
			code, stdout, stderr := runToEnd(t, "--json", "--stats-interval", "0", "--until-done", "--no-mac-updating",
				"sim:"+kind+"0?pcap-in="+in+opts, "sim:"+kind+"1?pcap-out="+out+opts)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			s := parseSummary(t, stdout)
			if p := s.Ports[0].PcapIn; p == nil || !p.Done || p.Frames != n || p.Padded != n || p.TooBig != 0 {
				t.Fatalf("pcap-in %+v, want %d frames, all padded", p, n)
			}
			if s.Ports[0].Rx.Packets != n || s.Dropped != 0 || !s.Accounting.OK {
				t.Fatalf("port 0 received %d of %d, dropped %d, accounting %+v", s.Ports[0].Rx.Packets, n, s.Dropped, s.Accounting)
			}
			got := readPcap(t, out)
			if len(got) != n {
				t.Fatalf("%d frames came out, want %d", len(got), n)
			}
			for i, f := range got {
				want := append(append([]byte(nil), frames[i]...), make([]byte, wire.MinFrame-len(frames[i]))...)
				if !bytes.Equal(f, want) {
					t.Fatalf("frame %d came out as % x, want % x", i, f, want)
				}
			}
		})
	}
}

func TestTruncatedPcapExitsOne(t *testing.T) {
	// A capture whose last record is cut short replays up to it and makes
	// l2fwd exit 1, naming the file and the record.
	dir := t.TempDir()
	in := filepath.Join(dir, "cut.pcap")
	writePcap(t, in, testFrames(t, 10, 64))
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b[:len(b)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runToEnd(t, "--json", "--stats-interval", "0", "--until-done",
		"sim:enetc0?pcap-in="+in+"&"+simOpts, "sim:enetc1?sink=1&"+simOpts)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	if !strings.Contains(stderr, in+": record 10: truncated") || !strings.Contains(stderr, "pcap-in stopped after 9 frames") {
		t.Fatalf("stderr does not name the file, record and frames: %s", stderr)
	}
	s := parseSummary(t, stdout)
	if p := s.Ports[0].PcapIn; p == nil || p.Frames != 9 || p.Error == "" || s.Ports[1].Sink.Frames != 9 || !s.Accounting.OK {
		t.Fatalf("pcap-in %+v, sink %+v, accounting %+v", p, s.Ports[1].Sink, s.Accounting)
	}
}

func TestCaptureNeverThePcapIn(t *testing.T) {
	// --capture naming the file a pcap-in replays (here through a hard
	// link) is refused even with --force, before the file is touched.
	dir := t.TempDir()
	in, link := filepath.Join(dir, "in.pcap"), filepath.Join(dir, "link.pcap")
	writePcap(t, in, testFrames(t, 50, 64))
	want, _ := os.ReadFile(in)
	if err := os.Link(in, link); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runToEnd(t, "--stats-interval", "0", "--until-done", "--force", "--capture", link, "sim:enetc0?pcap-in="+in, "sim:enetc1?sink=1")
	if code != 2 || !strings.Contains(stderr, "--capture") || !strings.Contains(stderr, "pcap-in of sim:enetc0") {
		t.Fatalf("exit %d, want 2 naming the pcap-in: %s", code, stderr)
	}
	if got, _ := os.ReadFile(in); !bytes.Equal(got, want) {
		t.Fatalf("the capture changed (%d bytes, was %d)", len(got), len(want))
	}
}

func TestPcapngReplays(t *testing.T) {
	// pcapng in, as Wireshark saves it, and pcapng out (by the name):
	// every frame through, in order.
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.pcapng"), filepath.Join(dir, "out.pcapng")
	frames := testFrames(t, 200, 64)
	writePcap(t, in, frames)
	code, _, stderr := runToEnd(t, "--stats-interval", "0", "--no-mac-updating", "--until-done", "sim:enetc0?pcap-in="+in, "sim:enetc1?pcap-out="+out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := wire.OpenPcap(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Format() != wire.FormatPcapng {
		t.Fatalf("%s written as %v, want pcapng", out, r.Format())
	}
	for i := range frames {
		f, _, err := r.Next()
		if err != nil || !bytes.Equal(f, frames[i]) {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
}

func TestUntilDoneEnds(t *testing.T) {
	// --until-done ends by itself with the summary whatever the inputs do:
	// a rate-limited generator, and a port whose link is down. The ENETC
	// model takes one frame, then offers no room: the replay stalls, the
	// stall error names the port and l2fwd exits 1. The FEC model takes
	// them all and its MAC discards them, counted in RMON_R_DROP: the
	// driver reports every one as rx:mac_discard and the accounting holds.
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	writePcap(t, in, testFrames(t, 300, 64))
	for _, c := range []struct {
		name  string
		specs []string
		code  int
		want  string
	}{
		{"rate-limited generator", []string{"sim:enetc0?gen=1&gen-rate=5k&gen-count=500&" + simOpts, "sim:enetc1?sink=1&" + simOpts}, 0, ""},
		{"enetc link down", []string{"sim:enetc0?pcap-in=" + in + "&link=down&" + simOpts, "sim:enetc1?sink=1&" + simOpts}, 1, "port 0 (sim:enetc0"},
		{"fec link down", []string{"sim:fec0?pcap-in=" + in + "&link=down", "sim:fec1?sink=1"}, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.code != 0 {
				// The stall error is the same after 200 ms of nothing
				// moving as after the second l2fwd waits.
				old := untilDoneStall
				untilDoneStall = 200 * time.Millisecond
				t.Cleanup(func() { untilDoneStall = old })
			}
			code, stdout, stderr := runToEnd(t, append([]string{"--json", "--stats-interval", "0", "--until-done"}, c.specs...)...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, want %d and stderr naming %q: %s", code, c.code, c.want, stderr)
			}
			s := parseSummary(t, stdout)
			if c.name == "rate-limited generator" && (!s.Accounting.OK || s.Ports[1].Sink.Frames+s.Dropped != 500) {
				t.Fatalf("sink %d frames, dropped %d, accounting %+v", s.Ports[1].Sink.Frames, s.Dropped, s.Accounting)
			}
			if c.name == "fec link down" && (!s.Accounting.OK || s.Ports[0].Rx.Drops["mac_discard"] != 300) {
				t.Fatalf("port 0 rx drops %v, accounting %+v: want all 300 frames as mac_discard", s.Ports[0].Rx.Drops, s.Accounting)
			}
			t.Logf("accounting %+v, errors %q", s.Accounting, s.Errors)
		})
	}
}

// openInjecting opens ports as l2fwd does, then has inject arm faults on
// the models before any frame flows.
func openInjecting(t *testing.T, inject func(spec string)) {
	t.Helper()
	old := openPort
	openPort = func(spec string, cfg driver.Config) (driver.Port, error) {
		p, err := old(spec, cfg)
		if err == nil {
			inject(spec)
		}
		return p, err
	}
	t.Cleanup(func() { openPort = old })
}

func TestAccountingUnderFaultInjection(t *testing.T) {
	// Receive errors injected into either model are counted by the driver
	// by cause: every frame of the replay is forwarded or counted, and the
	// accounting balances. (The ENETC driver counts every receive error as
	// "frame"; the FEC driver tells CRC from the rest.)
	const n, crc, other = 2000, 7, 5
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	writePcap(t, in, testFrames(t, n, 128))
	for _, c := range []struct {
		kind, opts, crcCause string
		inject               func()
	}{
		{"enetc", "&" + simOpts, "frame", func() {
			m := sim.ENETCModel("enetc0")
			if err := m.InjectRxErrors(enetcmodel.RxCRC, crc); err != nil {
				panic(err)
			}
			if err := m.InjectRxErrors(enetcmodel.RxOversize, other); err != nil {
				panic(err)
			}
		}},
		{"fec", "", "crc", func() {
			m := sim.FECModel("fec0")
			if err := m.InjectRxErrors(fecmodel.RxCRC, crc); err != nil {
				panic(err)
			}
			if err := m.InjectRxErrors(fecmodel.RxOverrun, other); err != nil {
				panic(err)
			}
		}},
	} {
		t.Run(c.kind, func(t *testing.T) {
			openInjecting(t, func(spec string) {
				if strings.HasPrefix(spec, "sim:"+c.kind+"0") {
					c.inject()
				}
			})
			code, stdout, stderr := runToEnd(t, "--json", "--stats-interval", "0", "--until-done",
				"sim:"+c.kind+"0?pcap-in="+in+c.opts, "sim:"+c.kind+"1?sink=1"+c.opts)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			s := parseSummary(t, stdout)
			p := s.Ports[0]
			var bad uint64
			for _, d := range p.Rx.Drops {
				bad += d
			}
			if p.Rx.Drops[c.crcCause] < crc || p.Rx.Packets+bad != n || s.Ports[1].Sink.Frames != p.Rx.Packets || !s.Accounting.OK {
				t.Fatalf("rx %d, drops %v, sink %d, accounting %+v; want at least %d %s drops and every frame of %d received or counted", p.Rx.Packets, p.Rx.Drops, s.Ports[1].Sink.Frames, s.Accounting, crc, c.crcCause, n)
			}
			t.Logf("rx %d, drops %v", p.Rx.Packets, p.Rx.Drops)
		})
	}
}

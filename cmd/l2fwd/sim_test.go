package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket/pcapgo"
	"github.com/gopmd/gopmd/sim"
	"github.com/gopmd/gopmd/wire"
)

// sinkFrames is what the sink of an open simulated port has seen (0 before
// the port opens).
func sinkFrames(name string) uint64 {
	if s := sim.SinkOf(name); s != nil {
		return s.Stats().Frames
	}
	return 0
}

// The simulated ports run synchronously (the workers pump them) and
// without the driver's link watcher, whose MDIO transactions close the
// data path for a moment and would make TX refuse bursts.
const simOpts = "link-poll=0"

func TestSimGeneratorToSink(t *testing.T) {
	const n = 20000
	code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0",
		"sim:enetc0?gen=1&gen-count=20000&gen-flows=8&" + simOpts, "sim:enetc1?sink=1&" + simOpts},
		func() bool { return sinkFrames("enetc1") == n })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := parseSummary(t, out)
	p0, p1 := s.Ports[0], s.Ports[1]
	if p0.Generator == nil || p0.Generator.Frames != n || p1.Sink == nil {
		t.Fatalf("generator %+v sink %+v", p0.Generator, p1.Sink)
	}
	if k := p1.Sink; k.Frames != n || k.Lost != 0 || k.Duplicates != 0 || k.Reordered != 0 || k.Other != 0 {
		t.Fatalf("sink saw %+v, want %d frames, no loss, duplication or reordering", *k, n)
	}
	if p0.Rx.Packets != n || p0.Handled != n || p1.Tx.Packets != n || s.Dropped != 0 || !s.LeakCheck.OK {
		t.Fatalf("port 0 rx %d handled %d, port 1 tx %d, dropped %d, leak check %+v", p0.Rx.Packets, p0.Handled, p1.Tx.Packets, s.Dropped, s.LeakCheck)
	}
	// Two simulated ENETCs share one IOMMU address space: port 1's TX
	// reads port 0's buffers, no copy.
	if p0.Copied {
		t.Fatal("frames between two sim ENETC ports were copied; they share a DMA domain")
	}
}

// writePcap writes frames into a pcap file.
func writePcap(t *testing.T, path string, frames [][]byte) {
	t.Helper()
	w, err := wire.CreatePcap(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		w.Transmit(f)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readPcap(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		d, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
}

func TestSimPcapReplayForwarded(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	// Frames of many sizes, 60 to 1514 bytes.
	var frames [][]byte
	for i, size := range []int{64, 65, 128, 200, 511, 1024, 1518} {
		for _, f := range testFrames(t, 300, size) {
			f[20] = byte(i) // vary a byte the forwarder must not touch
			frames = append(frames, f)
		}
	}
	writePcap(t, in, frames)
	for _, macUpd := range []bool{true, false} {
		out := filepath.Join(dir, "out-"+strconv.FormatBool(macUpd)+".pcap") // pcap-out= never replaces a file
		args := []string{"--json", "--stats-interval", "0", "--burst", "16",
			"sim:enetc0?pcap-in=" + in + "&" + simOpts, "sim:enetc1?pcap-out=" + out + "&sink=1&" + simOpts}
		if !macUpd {
			args = append(args, "--no-mac-updating")
		}
		code, stdout, errOut := runUntil(t, args, func() bool { return sinkFrames("enetc1") == uint64(len(frames)) })
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		got := readPcap(t, out)
		if len(got) != len(frames) {
			t.Fatalf("mac updating %v: %d frames replayed, %d came out of port 1", macUpd, len(frames), len(got))
		}
		for i := range frames {
			want := frames[i]
			if macUpd {
				want = append([]byte{0x02, 0, 0, 0, 0, 1}, want[6:]...)
				copy(want[6:12], got[i][6:12])
			}
			if !bytes.Equal(got[i], want) {
				t.Fatalf("mac updating %v: frame %d (%d bytes) differs beyond the MACs", macUpd, i, len(frames[i]))
			}
		}
		s := parseSummary(t, stdout)
		if s.Ports[1].MAC == "" {
			t.Fatal("port 1 has no MAC in the summary")
		}
		if macUpd {
			if mac := s.Ports[1].MAC; !bytes.Equal(got[0][6:12], mustMAC(t, mac)) {
				t.Fatalf("source MAC %x is not port 1's MAC %s", got[0][6:12], mac)
			}
		}
		if !s.LeakCheck.OK || s.Dropped != 0 {
			t.Fatalf("dropped %d, leak check %+v", s.Dropped, s.LeakCheck)
		}
	}
}

func TestSimDropMode(t *testing.T) {
	// --until-done ends the run once the generator is done and every frame
	// it sent has been received and dropped.
	const n = 5000
	code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "--mode", "drop", "--until-done",
		"sim:enetc0?gen=1&gen-count=5000&" + simOpts}, func() bool { return false })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := parseSummary(t, out)
	if s.Ports[0].Rx.Packets != n || s.Ports[0].Handled != n || s.Ports[0].Tx.Packets != 0 || !s.LeakCheck.OK {
		t.Fatalf("drop mode: rx %d handled %d tx %d leak %+v", s.Ports[0].Rx.Packets, s.Ports[0].Handled, s.Ports[0].Tx.Packets, s.LeakCheck)
	}
}

func mustMAC(t *testing.T, s string) []byte {
	t.Helper()
	m, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSimCable(t *testing.T) {
	// gen -> port 0 -> port 1 -> cable -> port 2 -> (forwards to itself)
	// -> cable -> port 1 -> port 0 -> sink. The cable hands frames from
	// one synchronous model to the other on the sender's goroutine, so
	// l2fwd drives the three ports from one worker (under -race, a split
	// would show).
	for _, kind := range []string{"enetc", "fec"} {
		t.Run(kind, func(t *testing.T) {
			const n = 5000
			opts, last := "", "sim:"+kind+"2"
			if kind == "enetc" {
				opts, last = "&"+simOpts, last+"?"+simOpts
			}
			code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "--until-done",
				"sim:" + kind + "0?gen=1&gen-count=5000&sink=1" + opts,
				"sim:" + kind + "1?peer=sim:" + kind + "2" + opts, last},
				func() bool { return false })
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			s := parseSummary(t, out)
			if k := s.Ports[0].Sink; k == nil || k.Frames != n || k.Lost != 0 || k.Reordered != 0 || k.Duplicates != 0 {
				t.Fatalf("sink after the cable round trip: %+v", k)
			}
			if s.Workers != 1 || s.Ports[2].TxPort != 2 || s.Ports[2].Handled != n || s.Ports[1].Handled != n || s.Dropped != 0 || !s.LeakCheck.OK {
				t.Fatalf("workers %d, ports %+v dropped %d leak %+v", s.Workers, s.Ports, s.Dropped, s.LeakCheck)
			}
		})
	}
}

func TestSimFECToENETC(t *testing.T) {
	// An i.MX FEC port forwarding to an ENETC port: two drivers, two
	// device models, one forwarder.
	const n = 10000
	code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0",
		"sim:fec0?gen=1&gen-count=10000", "sim:enetc1?sink=1&" + simOpts},
		func() bool { return sinkFrames("enetc1") == n })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := parseSummary(t, out)
	if k := s.Ports[1].Sink; k == nil || k.Frames != n || k.Lost != 0 || k.Reordered != 0 || !s.LeakCheck.OK {
		t.Fatalf("sink %+v leak %+v", k, s.LeakCheck)
	}
	// The i.MX FEC is not cache-coherent and the ENETC is: two IOMMU
	// address spaces, so every frame crossed through a bounce buffer, and
	// all the bounce buffers came back (the leak check covers their pool).
	if p := s.Ports[0]; !p.Copied || p.Handled != n || p.NoBounce != 0 || s.Dropped != 0 {
		t.Fatalf("FEC to ENETC: copied %v, handled %d, no bounce buffer %d, dropped %d; want every frame copied, none lost", p.Copied, p.Handled, p.NoBounce, s.Dropped)
	}
}

func TestSimENETCAndFECBothWays(t *testing.T) {
	// Both directions across the coherence boundary at once, each through
	// its own bounce pool, the run ending by itself once both generators
	// are done and every frame is forwarded.
	const n = 20000
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a broken build only
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"--json", "--stats-interval", "0", "--until-done",
		"sim:fec0?gen=1&gen-count=20000&sink=1", "sim:enetc1?gen=1&gen-count=20000&sink=1&" + simOpts}, &stdout, &stderr)
	if code != 0 || ctx.Err() != nil {
		t.Fatalf("exit %d (context %v): %s", code, ctx.Err(), stderr.String())
	}
	s := parseSummary(t, stdout.String())
	for i, p := range s.Ports {
		if !p.Copied || p.Handled != n || p.Sink == nil || p.Sink.Frames != n || p.Sink.Lost != 0 {
			t.Fatalf("port %d: copied %v, handled %d, sink %+v; want %d frames each way through bounce buffers", i, p.Copied, p.Handled, p.Sink, n)
		}
	}
	if s.Dropped != 0 || !s.LeakCheck.OK {
		t.Fatalf("dropped %d, leak check %+v", s.Dropped, s.LeakCheck)
	}
}

func TestSimUntilDonePcapReplay(t *testing.T) {
	// A pcap replay ends the run on its own with --until-done: every frame
	// of the file comes out of the other port, in order.
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.pcap"), filepath.Join(dir, "out.pcap")
	frames := testFrames(t, 3000, 200)
	writePcap(t, in, frames)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a broken build only
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"--json", "--stats-interval", "0", "--until-done", "--no-mac-updating",
		"sim:enetc0?pcap-in=" + in + "&" + simOpts, "sim:enetc1?pcap-out=" + out + "&" + simOpts}, &stdout, &stderr)
	if code != 0 || ctx.Err() != nil {
		t.Fatalf("exit %d (context %v): %s", code, ctx.Err(), stderr.String())
	}
	s := parseSummary(t, stdout.String())
	if p := s.Ports[0].PcapIn; p == nil || !p.Done || p.Frames != uint64(len(frames)) || p.Error != "" {
		t.Fatalf("pcap-in in the summary: %+v", p)
	}
	got := readPcap(t, out)
	if len(got) != len(frames) {
		t.Fatalf("%d frames replayed, %d written by port 1", len(frames), len(got))
	}
	for i := range frames {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d changed or out of order", i)
		}
	}
}

func TestSimPcapDamaged(t *testing.T) {
	// A damaged record header (a captured length past any snap length)
	// stops the replay after the good records; l2fwd says where, and exits
	// 1 because the file was not replayed in full.
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.pcap")
	writePcap(t, in, testFrames(t, 10, 64))
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	// Record 4's captured length (file header 24 bytes, each record a
	// 16-byte header and 60 bytes) becomes absurd.
	off := 24 + 3*(16+60) + 8
	b[off], b[off+1], b[off+2], b[off+3] = 0xff, 0xff, 0xff, 0x7f
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a broken build only
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"--json", "--stats-interval", "0", "--until-done",
		"sim:enetc0?pcap-in=" + in + "&" + simOpts, "sim:enetc1?sink=1&" + simOpts}, &stdout, &stderr)
	if code != 1 || ctx.Err() != nil {
		t.Fatalf("exit %d (context %v), want 1: %s", code, ctx.Err(), stderr.String())
	}
	s := parseSummary(t, stdout.String())
	if p := s.Ports[0].PcapIn; p == nil || p.Frames != 3 || p.Error == "" || len(s.Errors) != 1 {
		t.Fatalf("pcap-in %+v, errors %q", p, s.Errors)
	}
	if !strings.Contains(stderr.String(), "pcap-in stopped after 3 frames") {
		t.Fatalf("stderr does not say where the replay stopped: %s", stderr.String())
	}
}

func TestFailedOpenReleasesSimPorts(t *testing.T) {
	// Port 1 cannot open: l2fwd says so in one line, exits 2 and closes
	// port 0 again, so the next run can open the same device.
	code, out, errOut := runUntil(t, []string{"sim:enetc5?gen=1&" + simOpts, "sim:enetc6?gen=nope"}, nil)
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); code != 2 || len(lines) != 1 || !strings.Contains(errOut, "port 1") || out != "" {
		t.Fatalf("exit %d, stderr %q, stdout %q; want exit 2 and one line about port 1", code, errOut, out)
	}
	if sim.GeneratorOf("enetc5") != nil {
		t.Fatal("sim:enetc5 is still open after the failed start")
	}
	code, out, errOut = runUntil(t, []string{"--json", "--stats-interval", "0", "--mode", "drop", "--until-done", "sim:enetc5?gen-count=100&" + simOpts}, func() bool { return false })
	if code != 0 {
		t.Fatalf("sim:enetc5 cannot be opened again: exit %d: %s", code, errOut)
	}
	if s := parseSummary(t, out); s.Ports[0].Handled != 100 || !s.LeakCheck.OK {
		t.Fatalf("second run: handled %d, leak check %+v", s.Ports[0].Handled, s.LeakCheck)
	}
}

func TestSimModesTxAndPass(t *testing.T) {
	// tx: every frame leaves by the port it came in, MACs swapped. pass:
	// the application sees every frame (IPv4 here) and frees it.
	const n = 3000
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.pcap"), filepath.Join(dir, "out.pcap")
	frames := testFrames(t, n, 128)
	writePcap(t, in, frames)

	code, stdout, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "--mode", "tx", "--until-done",
		"sim:enetc0?pcap-in=" + in + "&pcap-out=" + out + "&" + simOpts}, func() bool { return false })
	if code != 0 {
		t.Fatalf("tx mode: exit %d: %s", code, errOut)
	}
	s := parseSummary(t, stdout)
	if p := s.Ports[0]; p.TxPort != 0 || p.Handled != n || p.Rx.Packets != n || p.Tx.Packets != n || s.Dropped != 0 || !s.LeakCheck.OK {
		t.Fatalf("tx mode: port %+v dropped %d leak %+v", p, s.Dropped, s.LeakCheck)
	}
	got := readPcap(t, out)
	if len(got) != n {
		t.Fatalf("tx mode: %d frames came back out, want %d", len(got), n)
	}
	for i, f := range frames {
		if !bytes.Equal(got[i][0:6], f[6:12]) || !bytes.Equal(got[i][6:12], f[0:6]) || !bytes.Equal(got[i][12:], f[12:]) {
			t.Fatalf("tx mode: frame %d did not come back with only its MACs swapped", i)
		}
	}

	code, stdout, errOut = runUntil(t, []string{"--json", "--stats-interval", "0", "--mode", "pass", "--until-done",
		"sim:enetc0?pcap-in=" + in + "&" + simOpts}, func() bool { return false })
	if code != 0 {
		t.Fatalf("pass mode: exit %d: %s", code, errOut)
	}
	s = parseSummary(t, stdout)
	if p := s.Ports[0]; p.Handled != n || p.Pass["ipv4"] != n || p.Pass["arp"] != 0 || p.Tx.Packets != 0 || !s.LeakCheck.OK {
		t.Fatalf("pass mode: port %+v leak %+v", p, s.LeakCheck)
	}
}

// TestBytesAsLinuxCounts: l2fwd reports the bytes of the frames it
// forwards as Linux's rx_bytes/tx_bytes count them (ip -s link, ethtool),
// without the FCS, on both drivers: 1000 frames of 64 bytes on the wire
// are 60 000 bytes received, handled and sent, the figure nicctl pktgen
// gives for the same frames (TestPktgenBytesAsLinuxCounts).
func TestBytesAsLinuxCounts(t *testing.T) {
	for _, kind := range []string{"enetc", "fec"} {
		t.Run(kind, func(t *testing.T) {
			opts := ""
			if kind == "enetc" {
				opts = "&" + simOpts
			}
			code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "--until-done",
				"sim:" + kind + "0?gen=1&gen-size=64&gen-count=1000" + opts, "sim:" + kind + "1?sink=1" + opts},
				func() bool { return false })
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			s := parseSummary(t, out)
			p0, p1 := s.Ports[0], s.Ports[1]
			if p0.Rx.Packets != 1000 || p0.Rx.Bytes != 60000 || p0.HandledBytes != 60000 || p1.Tx.Bytes != 60000 || s.Bytes != 60000 ||
				p1.Sink == nil || p1.Sink.Bytes != 60000 {
				t.Fatalf("1000 frames of 64 bytes: port 0 rx %d frames %d bytes, handled %d bytes; port 1 tx %d bytes, sink %+v; total %d bytes; want 60000",
					p0.Rx.Packets, p0.Rx.Bytes, p0.HandledBytes, p1.Tx.Bytes, p1.Sink, s.Bytes)
			}
		})
	}
}

package main

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim/simdma"
)

// cacheLineBytes is the cache line of the CPUs l2fwd runs on (the
// LS1028A's and i.MX 8's Cortex-A cores, x86-64): 64 bytes.
const cacheLineBytes = 64

// No field of a lane or of a worker shares a 64-byte cache line with a
// field of another lane or worker: each worker writes its lanes' counters
// and flags every burst, and a line shared with another worker's would
// bounce between their cores (false sharing). The structures are checked
// as l2fwd allocates them, at their addresses.
func TestLanesAndWorkersShareNoCacheLine(t *testing.T) {
	m := simdma.NewIOMMU(false)
	p0 := newFakePort("fake0", 0, 4, mac0, m)
	p1 := newFakePort("fake1", 1, 4, mac1, m)
	o := &options{mode: modeFwd, burst: 32, queues: 4, ringSize: 512, macUpdating: true, workers: 8}
	a := &app{o: o, ports: []driver.Port{p0, p1}, specs: []string{"sim:fake0", "sim:fake1"}}
	if err := a.setup(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.closePorts() })
	ws := a.workers()
	if len(a.lanes) != 8 || len(ws) != 8 {
		t.Fatalf("%d lanes, %d workers: want 8 of each", len(a.lanes), len(ws))
	}
	type span struct {
		name       string
		start, end uintptr // the named fields' bytes, [start, end)
	}
	var spans []span
	for i, l := range a.lanes {
		s, e := fieldSpan(reflect.TypeOf(l).Elem())
		p := uintptr(unsafe.Pointer(l))
		spans = append(spans, span{fmt.Sprintf("lane %d", i), p + s, p + e})
	}
	for i, w := range ws {
		s, e := fieldSpan(reflect.TypeOf(w).Elem())
		p := uintptr(unsafe.Pointer(w))
		spans = append(spans, span{fmt.Sprintf("worker %d", i), p + s, p + e})
	}
	for i, x := range spans {
		for _, y := range spans[i+1:] {
			// The lines [first, last] of each: they overlap when
			// neither ends before the other begins.
			xf, xl := x.start/cacheLineBytes, (x.end-1)/cacheLineBytes
			yf, yl := y.start/cacheLineBytes, (y.end-1)/cacheLineBytes
			if xf <= yl && yf <= xl {
				t.Errorf("%s (fields at %#x-%#x) and %s (%#x-%#x) share a %d-byte cache line",
					x.name, x.start, x.end, y.name, y.start, y.end, cacheLineBytes)
			}
		}
	}
}

// The drivers' per-queue structures share no line either: the RX and TX
// queues and the RX pools behind the lanes of two simulated ENETC ports
// with 4 queues each, at their addresses.
func TestDriverQueuesShareNoCacheLine(t *testing.T) {
	o := &options{mode: modeFwd, burst: 32, queues: 4, ringSize: 512, macUpdating: true,
		specs: []string{"sim:enetc72?" + simOpts, "sim:enetc73?" + simOpts}}
	a := &app{o: o}
	t.Cleanup(func() { a.closePorts() })
	if err := a.open(); err != nil {
		t.Fatal(err)
	}
	if err := a.setup(); err != nil {
		t.Fatal(err)
	}
	type span struct {
		name       string
		start, end uintptr
	}
	var spans []span
	for i, l := range a.lanes {
		for _, x := range []any{l.rx, l.tx, l.pool} {
			v := reflect.ValueOf(x)
			s, e := fieldSpan(v.Type().Elem())
			spans = append(spans, span{fmt.Sprintf("lane %d's %s", i, v.Type()), v.Pointer() + s, v.Pointer() + e})
		}
	}
	if len(spans) != 24 {
		t.Fatalf("%d structures, want 24 (8 lanes' RX queue, TX queue, pool)", len(spans))
	}
	for i, x := range spans {
		for _, y := range spans[i+1:] {
			xf, xl := x.start/cacheLineBytes, (x.end-1)/cacheLineBytes
			yf, yl := y.start/cacheLineBytes, (y.end-1)/cacheLineBytes
			if xf <= yl && yf <= xl {
				t.Errorf("%s (fields at %#x-%#x) and %s (%#x-%#x) share a %d-byte cache line",
					x.name, x.start, x.end, y.name, y.start, y.end, cacheLineBytes)
			}
		}
	}
}

// fieldSpan is where a struct's named fields lie: from the first one's
// offset to the end of the last one (blank padding fields left out).
func fieldSpan(t reflect.Type) (start, end uintptr) {
	start = t.Size()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "_" {
			continue
		}
		start = min(start, f.Offset)
		end = max(end, f.Offset+f.Type.Size())
	}
	return start, end
}

// putMACs writes exactly the lane's 12 address bytes, destination first,
// and swapMACs swaps the two addresses, into the first 12 bytes of a
// frame's data window wherever it lies in its buffer; a window shorter
// than 12 bytes is left alone, and no byte around it changes.
func TestPutAndSwapMACs(t *testing.T) {
	macs := [12]byte{0x02, 0, 0, 0, 0, 1, 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee}
	pl := newFakePort("addrs", 0, 1, mac0, simdma.NewIOMMU(false)).rxq[0].pool
	p := pl.Alloc()
	defer p.Free()
	buf, headroom := p.Buf(), p.Headroom()
	for _, swap := range []bool{false, true} {
		for n := 0; n <= 20; n++ {
			// At the default headroom, and at the very end of the buffer.
			for _, off := range []int{headroom, len(buf) - n} {
				for i := range buf {
					buf[i] = byte(0x90 + i)
				}
				want := append([]byte(nil), buf...)
				if !p.SetData(off, n) {
					t.Fatalf("SetData(%d, %d) refused", off, n)
				}
				if swap {
					swapMACs(p)
					if n >= 12 {
						orig := append([]byte(nil), want[off:off+12]...)
						copy(want[off:], orig[6:12]) // the source, now first
						copy(want[off+6:], orig[0:6])
					}
				} else {
					putMACs(p, &macs)
					if n >= 12 {
						copy(want[off:], macs[:])
					}
				}
				if !bytes.Equal(buf, want) {
					t.Fatalf("swap %v, %d-byte window at %d: buffer\n% x\nwant\n% x", swap, n, off,
						buf[max(0, off-4):min(len(buf), off+n+4)], want[max(0, off-4):min(len(want), off+n+4)])
				}
			}
		}
	}
}

// Frames that arrive in two chained buffers get their addresses in the
// first segment when it holds them; a first segment shorter than 12
// bytes is left alone, and no byte after the addresses changes.
func TestForwardMACUpdatingChained(t *testing.T) {
	for _, split := range []int{20, 8} {
		t.Run(fmt.Sprintf("first-segment-%d", split), func(t *testing.T) {
			p0, p1 := twoFakes(t, 1)
			p0.rxq[0].split = split
			in := testFrames(t, 100, 128)
			p0.load(0, in)
			code, _, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "sim:fake0", "sim:fake1"},
				func() bool { return len(p1.txFrames()) == 100 })
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			got := p1.txFrames()
			for i := range in {
				want := append([]byte(nil), in[i]...)
				if split >= 12 {
					copy(want[0:6], []byte{0x02, 0, 0, 0, 0, 1})
					copy(want[6:12], mac1)
				}
				if !bytes.Equal(got[i], want) {
					t.Fatalf("frame %d: sent % x\nwant % x", i, got[i][:16], want[:16])
				}
			}
		})
	}
}

// Runts (frames shorter than the two addresses) among full frames, in
// every place of a burst: each full frame gets the addresses, those after
// a runt in its burst too, each runt goes out as it came, and the bytes
// count every frame.
func TestForwardMACUpdatingRunts(t *testing.T) {
	p0, p1 := twoFakes(t, 1)
	in := testFrames(t, 300, 64)
	var want uint64
	for i := range in {
		if i%7 == 3 || i%64 == 0 || i%32 == 31 { // mid-burst, first (every other burst), last
			in[i] = in[i][:1+i%11]
		}
		want += uint64(len(in[i]))
	}
	p0.load(0, in)
	code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "--burst", "32", "sim:fake0", "sim:fake1"},
		func() bool { return len(p1.txFrames()) == len(in) })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := p1.txFrames()
	if len(got) != len(in) {
		t.Fatalf("port 1 sent %d frames, want %d", len(got), len(in))
	}
	for i := range in {
		w := append([]byte(nil), in[i]...)
		if len(w) >= 12 {
			copy(w[0:6], []byte{0x02, 0, 0, 0, 0, 1})
			copy(w[6:12], mac1)
		}
		if !bytes.Equal(got[i], w) {
			t.Fatalf("frame %d (%d bytes): sent % x\nwant % x", i, len(in[i]), got[i][:min(16, len(got[i]))], w[:min(16, len(w))])
		}
	}
	if s := parseSummary(t, out); s.Ports[0].Handled != uint64(len(in)) || s.Ports[0].HandledBytes != want {
		t.Fatalf("port 0 handled %d frames, %d bytes; want %d, %d", s.Ports[0].Handled, s.Ports[0].HandledBytes, len(in), want)
	}
}

// BenchmarkL2fwdForward is l2fwd's whole forward as a user runs it: the
// lane of port 0's RX queue 0 polled in fwd mode with the MAC update,
// over two simulated ENETC ports in synchronous mode (the lane's pump
// pulls 64-byte frames from port 0's generator into its RX ring before
// each poll; port 1's model discards what it transmits), bursts of 32.
// Each b.N is one forwarded frame. scripts/bench-instr counts it as
// l2fwd-fwd: driver, pool and l2fwd's own loop per packet.
func BenchmarkL2fwdForward(b *testing.B) {
	o := &options{mode: modeFwd, burst: 32, queues: 1, ringSize: 512, macUpdating: true,
		specs: []string{"sim:enetc70?gen=1&" + simOpts, "sim:enetc71?" + simOpts}}
	a := &app{o: o}
	b.Cleanup(func() {
		a.closeBounces()
		a.closePorts()
	})
	if err := a.open(); err != nil {
		b.Fatal(err)
	}
	if err := a.setup(); err != nil {
		b.Fatal(err)
	}
	for _, p := range a.ports {
		if err := p.Start(); err != nil {
			b.Fatal(err)
		}
	}
	for _, s := range a.around {
		s.release()
	}
	l := a.lanes[0]
	if l.pump == nil || l.txPort != 1 {
		b.Fatalf("lane 0: pump %v, TX port %d: want port 0's generator pumped, forwarding to port 1", l.pump != nil, l.txPort)
	}
	var pkts [maxBurst]*driver.Packet
	burst := pkts[:o.burst]
	for l.handled.Load() < 4096 { // warm the pool's cache and the rings
		l.poll(burst)
	}
	h0, r0 := l.handled.Load(), l.txRefused.Load()
	b.ReportAllocs()
	b.ResetTimer()
	for l.handled.Load()-h0 < uint64(b.N) {
		l.poll(burst)
	}
	b.StopTimer()
	fwd := l.handled.Load() - h0
	if r := l.txRefused.Load() - r0; r != 0 {
		b.Fatalf("TX refused %d frames: the loop measured a drop path", r)
	}
	// Drain before the ports close: the generator stops, and the lane
	// polls until its RX ring is empty and TX has given back every buffer,
	// so closing waits for nothing (a close that waits out a timeout would
	// spin a varying number of instructions into the count).
	for _, s := range a.around {
		s.hold()
	}
	for i := 0; l.poll(burst) > 0 || l.tx.Pending() > 0; i++ {
		if i == 1000 {
			b.Fatalf("the lane did not drain: %d frames pending on TX", l.tx.Pending())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(fwd), "ns/pkt")
	b.ReportMetric(float64(fwd)/float64(b.N), "fwd/pkt")
}

// BenchmarkL2fwdEmptyPoll is one poll of an idle lane as a worker makes it
// between bursts: lane.poll in fwd mode over two simulated ENETC ports
// whose RX rings stay empty, after a forwarded burst whose TX the first
// empty poll reclaimed. The lane's pump is taken away, so the poll is what
// it is on a port with its own engine (hardware, xdp:): RxBurst on an
// empty ring and the idle bookkeeping. Each b.N is one poll;
// scripts/bench-instr counts it as l2fwd-empty-poll, per poll.
func BenchmarkL2fwdEmptyPoll(b *testing.B) {
	o := &options{mode: modeFwd, burst: 32, queues: 1, ringSize: 512, macUpdating: true,
		specs: []string{"sim:enetc70?gen=1&" + simOpts, "sim:enetc71?" + simOpts}}
	a := &app{o: o}
	b.Cleanup(func() {
		a.closeBounces()
		a.closePorts()
	})
	if err := a.open(); err != nil {
		b.Fatal(err)
	}
	if err := a.setup(); err != nil {
		b.Fatal(err)
	}
	for _, p := range a.ports {
		if err := p.Start(); err != nil {
			b.Fatal(err)
		}
	}
	for _, s := range a.around {
		s.release()
	}
	l := a.lanes[0]
	if l.pump == nil || l.txPort != 1 {
		b.Fatalf("lane 0: pump %v, TX port %d: want port 0's generator pumped, forwarding to port 1", l.pump != nil, l.txPort)
	}
	var pkts [maxBurst]*driver.Packet
	burst := pkts[:o.burst]
	for l.handled.Load() < 64 { // frames through both rings first
		l.poll(burst)
	}
	for _, s := range a.around {
		s.hold()
	}
	l.pump, l.hooked = nil, false
	for i := 0; l.poll(burst) > 0 || l.tx.Pending() > 0; i++ {
		if i == 1000 {
			b.Fatalf("the lane did not drain: %d frames pending on TX", l.tx.Pending())
		}
	}
	got := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		got += l.poll(burst)
	}
	b.StopTimer()
	if got != 0 {
		b.Fatalf("%d frames received by polls of an idle lane", got)
	}
}

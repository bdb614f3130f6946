package sim

import (
	"encoding/binary"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

func TestGeneratorFrames(t *testing.T) {
	t.Parallel()
	g, err := NewGenerator(GenConfig{Size: 128, Flows: 3, Count: 7})
	if err != nil {
		t.Fatal(err)
	}
	var buf [2048]byte
	var ports []uint16
	for i := 0; i < 7; i++ {
		n, ok := g.Next(buf[:])
		if !ok || n != 124 {
			t.Fatalf("frame %d: n=%d ok=%v, want 124 bytes (128 with FCS)", i, n, ok)
		}
		p := gopacket.NewPacket(buf[:n], layers.LayerTypeEthernet, gopacket.Default)
		udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		if udp == nil || ip == nil {
			t.Fatalf("frame %d does not decode as IPv4/UDP: %v", i, p)
		}
		if int(ip.Length) != n-14 {
			t.Errorf("frame %d: IP length %d, want %d", i, ip.Length, n-14)
		}
		ports = append(ports, uint16(udp.SrcPort))
		if seq := binary.BigEndian.Uint64(buf[stampOffset+10:]); seq != uint64(i/3) {
			t.Errorf("frame %d: sequence %d, want %d", i, seq, i/3)
		}
	}
	if ports[0] == ports[1] || ports[0] != ports[3] {
		t.Errorf("flows not round robin: source ports %v", ports)
	}
	if _, ok := g.Next(buf[:]); ok || !g.Done() {
		t.Fatal("generator sent past its count")
	}
	if s := g.Stats(); s.Frames != 7 || s.Bytes != 7*124 {
		t.Fatalf("stats %+v, want 7 frames of 124 bytes", s)
	}
	short := make([]byte, 100)
	g2, _ := NewGenerator(GenConfig{Size: 200})
	// A frame longer than the port's buffer is counted and kept out, never
	// cut; the next one that fits carries the next sequence number.
	if n, ok := g2.Next(short); ok || n != 0 || g2.Stats().TooBig != 1 || g2.Stats().Frames != 0 {
		t.Fatalf("short buffer: n=%d ok=%v stats %+v", n, ok, g2.Stats())
	}
	long := make([]byte, 300)
	if n, ok := g2.Next(long); !ok || n != 196 || binary.BigEndian.Uint64(long[stampOffset+10:]) != 1 {
		t.Fatalf("after a too-big frame: n=%d ok=%v seq %d", n, ok, binary.BigEndian.Uint64(long[stampOffset+10:]))
	}
}

func TestSinkCountsLossDupReorder(t *testing.T) {
	t.Parallel()
	g, _ := NewGenerator(GenConfig{Flows: 2})
	frames := make([][]byte, 20)
	for i := range frames {
		b := make([]byte, 64)
		n, _ := g.Next(b)
		frames[i] = b[:n]
	}
	s := NewSink()
	// Per flow: flow 0 gets 0,2,4,... (frames 0,2,4...), flow 1 odd frames.
	// Lose frame 4 (flow 0 seq 2), duplicate frame 6, swap 8 and 10.
	order := []int{0, 1, 2, 3, 5, 6, 6, 7, 10, 9, 8, 11, 12, 13, 14, 15, 16, 17, 18, 19}
	for _, i := range order {
		s.Transmit(frames[i])
	}
	s.Transmit(make([]byte, 60)) // not a generator frame
	st := s.Stats()
	want := SinkStats{Frames: 21, Bytes: 21 * 60, Other: 1, Lost: 1, Duplicates: 1, Reordered: 1}
	if st != want {
		t.Fatalf("sink stats %+v, want %+v", st, want)
	}
}

func TestSinkWindow(t *testing.T) {
	t.Parallel()
	g, _ := NewGenerator(GenConfig{})
	frames := make([][]byte, 1000)
	for i := range frames {
		b := make([]byte, 64)
		n, _ := g.Next(b)
		frames[i] = b[:n]
	}
	s := NewSink()
	for i := 1; i < 1000; i++ {
		s.Transmit(frames[i])
	}
	s.Transmit(frames[0])   // 999 behind: too late to judge
	s.Transmit(frames[900]) // in the window, seen: duplicate
	st := s.Stats()
	if st.Lost != 1 || st.TooLate != 1 || st.Duplicates != 1 || st.Reordered != 0 {
		t.Fatalf("sink stats %+v, want lost 1, too late 1, duplicates 1", st)
	}
}

func TestGeneratorRate(t *testing.T) {
	t.Parallel()
	g, _ := NewGenerator(GenConfig{Rate: 1})
	if g.Lossless() {
		t.Fatal("a paced generator must not be lossless")
	}
	var buf [64]byte
	// At 1 frame/s nothing is due at the start.
	if _, ok := g.Next(buf[:]); ok {
		t.Fatal("a 1 pps generator sent a frame at once")
	}
	for _, c := range []struct {
		in   string
		want float64
	}{{"max", 0}, {"1M", 1e6}, {"250kpps", 250e3}, {"1500", 1500}} {
		if v, err := ParseRate(c.in); err != nil || v != c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", c.in, v, err, c.want)
		}
	}
	if _, err := ParseRate("-3"); err == nil {
		t.Error("negative rate accepted")
	}
}

// Serial: testing.AllocsPerRun counts the mallocs of the whole process, so a
// parallel test allocating at the same time would be counted here.
func TestGeneratorAndSinkDoNotAllocate(t *testing.T) {
	g, _ := NewGenerator(GenConfig{Flows: 16})
	s := NewSink()
	var buf [2048]byte
	n, _ := g.Next(buf[:])
	s.Transmit(buf[:n])
	allocs := testing.AllocsPerRun(1000, func() {
		n, _ := g.Next(buf[:])
		s.Transmit(buf[:n])
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per frame, want 0", allocs)
	}
}

func BenchmarkGeneratorSink(b *testing.B) {
	g, _ := NewGenerator(GenConfig{Flows: 16})
	s := NewSink()
	var buf [2048]byte
	b.ReportAllocs()
	for b.Loop() {
		n, _ := g.Next(buf[:])
		s.Transmit(buf[:n])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/pkt")
}

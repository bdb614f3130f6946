package simdma

import (
	"bytes"
	"testing"

	"github.com/gopmd/gopmd/dma"
)

// The batched syncs do what SyncForDevice and SyncForCPU do range by
// range: whole lines of every span inside the region, nothing of spans
// outside it or empty, nothing of the lines in between; with and without
// the region's own cache maintenance (NonCoherent: DC CVAC / CIVAC and one
// DSB on arm64).
func TestSyncSpans(t *testing.T) {
	for _, noncoh := range []bool{false, true} {
		s := NewIOMMU(true)
		r, err := dma.Alloc(s, 4096, dma.Options{Attr: dma.Attr{Name: "spans"}, Hugepages: dma.HugeNever, NonCoherent: noncoh})
		if err != nil {
			t.Fatal(err)
		}
		dev := func(off, n int) []byte { return s.Slice(r.IOVA()+uint64(off), n, false) }
		copy(r.Bytes()[64:], "one")
		copy(r.Bytes()[256:], "two")
		copy(r.Bytes()[192:], "gap")
		copy(r.Bytes()[4000:], "end")
		r.SyncSpansForDevice([]dma.Span{{Off: 64, Len: 3}, {Off: -1, Len: 8}, {Off: 256, Len: 3}, {Off: 4090, Len: 100}, {Off: 1024, Len: 0}})
		if !bytes.Equal(dev(64, 3), []byte("one")) || !bytes.Equal(dev(256, 3), []byte("two")) {
			t.Fatalf("noncoh %v: the device does not see the cleaned spans", noncoh)
		}
		if bytes.Equal(dev(192, 3), []byte("gap")) || bytes.Equal(dev(4000, 3), []byte("end")) {
			t.Fatalf("noncoh %v: a line outside the spans was cleaned", noncoh)
		}
		s.Write(r.IOVA()+512, []byte("rx1"))
		s.Write(r.IOVA()+1536, []byte("rx2"))
		s.Write(r.IOVA()+1024, []byte("not"))
		r.SyncSpansForCPU([]dma.Span{{Off: 512, Len: 3}, {Off: 1536, Len: 3}, {Off: 8192, Len: 3}})
		if !bytes.Equal(r.Bytes()[512:515], []byte("rx1")) || !bytes.Equal(r.Bytes()[1536:1539], []byte("rx2")) {
			t.Fatalf("noncoh %v: the CPU does not see the invalidated spans", noncoh)
		}
		if bytes.Equal(r.Bytes()[1024:1027], []byte("not")) {
			t.Fatalf("noncoh %v: a line outside the spans was invalidated", noncoh)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// The simulated cache's copy moves each span's whole lines and nothing
// else: a span across a line boundary takes both lines, one at a
// mapping's end that is not a whole line takes what is there, and a
// span starting before the mapping moves nothing.
func TestCopySpansLines(t *testing.T) {
	src := bytes.Repeat([]byte{0xAA}, 200) // 3 lines and 8 bytes
	dst := make([]byte, 200)
	copySpans(dst, src, []dma.Span{{Off: 60, Len: 8}, {Off: 193, Len: 2}, {Off: -64, Len: 8}})
	for i, b := range dst {
		want := byte(0)
		if i < 128 || i >= 192 {
			want = 0xAA // lines 0 and 1 (the first span), the tail (the second)
		}
		if b != want {
			t.Fatalf("byte %d is %#x after the copy, want %#x", i, b, want)
		}
	}
}

// copySpans against a byte-by-byte model of a cache: every byte of every
// line a span touches moves from src to dst (up to the mapping's end when
// its last line is partial), no other byte does, and a span not inside
// the mapping moves nothing. The shapes cover the fast
// case's one-line and two-line spans and longer ones, unaligned starts and
// ends, spans ending exactly on a line, the mapping's first and last lines,
// a last partial line, and spans outside the mapping mixed in before,
// between and after the others.
func TestCopySpansModel(t *testing.T) {
	type tc struct {
		size  int
		spans []dma.Span
	}
	cases := []tc{
		{4096, []dma.Span{{Off: 0, Len: 1}}},                                           // first line, one byte
		{4096, []dma.Span{{Off: 63, Len: 1}}},                                          // first line, last byte
		{4096, []dma.Span{{Off: 64, Len: 64}}},                                         // one whole line
		{4096, []dma.Span{{Off: 62, Len: 4}}},                                          // two lines, two bytes each
		{4096, []dma.Span{{Off: 2, Len: 64}}},                                          // two lines, a frame after 2 bytes of headroom
		{4096, []dma.Span{{Off: 128, Len: 128}}},                                       // two whole lines
		{4096, []dma.Span{{Off: 130, Len: 190}}},                                       // four lines, unaligned
		{4096, []dma.Span{{Off: 4032, Len: 64}}},                                       // the last line
		{4096, []dma.Span{{Off: 4000, Len: 96}}},                                       // the last two lines
		{4096, []dma.Span{{Off: 0, Len: 4096}}},                                        // everything
		{4096, []dma.Span{{Off: 100, Len: 0}, {Off: -1, Len: 8}, {Off: 4090, Len: 7}}}, // empty, before, past the end
		{4096, []dma.Span{{Off: 64, Len: 3}, {Off: -64, Len: 70}, {Off: 256, Len: 3}}}, // one outside between two inside
		{4096, []dma.Span{{Off: 64, Len: 3}, {Off: 300, Len: 2}, {Off: 4096, Len: 1}}}, // outside after two inside
		{4096, []dma.Span{{Off: 8, Len: -8}, {Off: 64, Len: 1}}},                       // a negative length first
		{200, []dma.Span{{Off: 60, Len: 8}, {Off: 193, Len: 2}}},                       // a last partial line
		{200, []dma.Span{{Off: 190, Len: 10}}},                                         // a span across into the partial line
		{200, []dma.Span{{Off: 0, Len: 200}}},                                          // a partial mapping, everything
		{200, []dma.Span{{Off: 10, Len: 20}, {Off: 192, Len: 8}, {Off: 70, Len: 60}}},  // partial line between fast ones
		{200, []dma.Span{{Off: 150, Len: 51}, {Off: 64, Len: 1}}},                      // one byte past a partial mapping
		{64, []dma.Span{{Off: 0, Len: 64}, {Off: 1, Len: 63}, {Off: 63, Len: 1}}},      // a one-line mapping
		{1 << 16, []dma.Span{{Off: 1 << 15, Len: 1 << 14}, {Off: 5, Len: 70}}},         // a long span, then a short one
	}
	rng := uint64(0x9e3779b97f4a7c15)
	next := func(n int) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	for range 200 {
		size := []int{4096, 4096 + 40, 640, 100}[next(4)]
		spans := make([]dma.Span, 1+next(20))
		for i := range spans {
			spans[i] = dma.Span{Off: next(size+80) - 40, Len: next(200) - 10}
		}
		cases = append(cases, tc{size, spans})
	}
	for _, c := range cases {
		src, dst := make([]byte, c.size), make([]byte, c.size)
		for i := range src {
			src[i], dst[i] = byte(i*7+1), byte(i*7+2) // every byte differs
		}
		moved := make([]bool, c.size)
		for _, s := range c.spans {
			if s.Off < 0 || s.Len <= 0 || s.Off+s.Len > c.size {
				continue
			}
			for i := s.Off &^ (dma.CacheLine - 1); i < min(roundUp(s.Off+s.Len, dma.CacheLine), c.size); i++ {
				moved[i] = true
			}
		}
		copySpans(dst, src, c.spans)
		for i := range dst {
			want := byte(i*7 + 2)
			if moved[i] {
				want = byte(i*7 + 1)
			}
			if dst[i] != want {
				t.Fatalf("size %d, spans %v: byte %d is %#x, want %#x (moved %v)", c.size, c.spans, i, dst[i], want, moved[i])
			}
		}
		for i := range src {
			if src[i] != byte(i*7+1) {
				t.Fatalf("size %d, spans %v: the copy changed its source at byte %d", c.size, c.spans, i)
			}
		}
	}
}

// A region whose mapping ends in a partial line (memory mapped through the
// simulated IOMMU directly, not by Alloc): the batched syncs move the
// partial line's bytes that are there, drop the spans past the end, and a
// missing sync still leaves the other side stale.
func TestSyncSpansPartialLine(t *testing.T) {
	s := NewIOMMU(true)
	mem := make([]byte, 200)
	r, err := dma.NewRegion(mem, s, dma.Options{Attr: dma.Attr{Name: "partial"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dev := func(off, n int) []byte { return s.Slice(r.IOVA()+uint64(off), n, false) }
	copy(mem[10:], "head")
	copy(mem[195:], "tail")
	copy(mem[130:], "mid")
	r.SyncSpansForDevice([]dma.Span{{Off: 195, Len: 4}, {Off: 198, Len: 10}, {Off: 10, Len: 4}})
	if !bytes.Equal(dev(195, 4), []byte("tail")) || !bytes.Equal(dev(10, 4), []byte("head")) {
		t.Fatalf("the device sees %q and %q, want the cleaned %q and %q", dev(195, 4), dev(10, 4), "tail", "head")
	}
	if bytes.Equal(dev(130, 3), []byte("mid")) {
		t.Fatal("a line no span touched was cleaned")
	}
	s.Write(r.IOVA()+192, []byte("rx-tail!"))
	s.Write(r.IOVA()+64, []byte("rx-line"))
	r.SyncSpansForCPU([]dma.Span{{Off: 199, Len: 1}, {Off: 199, Len: 2}})
	if !bytes.Equal(mem[192:200], []byte("rx-tail!")) {
		t.Fatalf("the CPU sees %q in the partial line, want %q", mem[192:200], "rx-tail!")
	}
	if bytes.Equal(mem[64:71], []byte("rx-line")) {
		t.Fatal("a line no span touched was invalidated")
	}
}

// A closed region's batched syncs do nothing: its mapping is gone (and its
// device-side copy unmapped), and a region mapped since at the same IOVA
// keeps its own bytes on both sides.
func TestSyncSpansAfterClose(t *testing.T) {
	s := NewIOMMU(true)
	old, err := dma.Alloc(s, 4096, dma.Options{Attr: dma.Attr{Name: "old"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	iova := old.IOVA()
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := dma.Alloc(s, 4096, dma.Options{Attr: dma.Attr{Name: "new"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.IOVA() != iova {
		t.Fatalf("the new region is at IOVA %#x, not the closed one's %#x: the test needs the IOVA reused", r.IOVA(), iova)
	}
	copy(r.Bytes()[0:], "cpu")
	s.Write(iova+64, []byte("dev"))
	old.SyncSpansForDevice([]dma.Span{{Off: 0, Len: 128}})
	old.SyncSpansForCPU([]dma.Span{{Off: 0, Len: 128}})
	if d := s.Slice(iova, 3, false); bytes.Equal(d, []byte("cpu")) {
		t.Fatal("a closed region's clean reached the region mapped at its IOVA since")
	}
	if bytes.Equal(r.Bytes()[64:67], []byte("dev")) {
		t.Fatal("a closed region's invalidate reached the region mapped at its IOVA since")
	}
	r.SyncSpansForDevice([]dma.Span{{Off: 0, Len: 3}})
	r.SyncSpansForCPU([]dma.Span{{Off: 64, Len: 3}})
	if d := s.Slice(iova, 3, false); !bytes.Equal(d, []byte("cpu")) || !bytes.Equal(r.Bytes()[64:67], []byte("dev")) {
		t.Fatalf("the new region's own syncs: device %q, CPU %q, want %q and %q", d, r.Bytes()[64:67], "cpu", "dev")
	}
}

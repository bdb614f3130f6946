package dma

import (
	"bytes"
	"testing"
)

// The batched syncs do what SyncForDevice and SyncForCPU do range by
// range: whole lines of every span inside the region, nothing of spans
// outside it or empty, nothing of the lines in between; with and without
// the region's own cache maintenance (NonCoherent: DC CVAC / CIVAC and one
// DSB on arm64).
func TestSyncSpans(t *testing.T) {
	for _, noncoh := range []bool{false, true} {
		s := NewSimIOMMU(true)
		r, err := Alloc(s, 4096, Options{Attr: Attr{Name: "spans"}, Hugepages: HugeNever, NonCoherent: noncoh})
		if err != nil {
			t.Fatal(err)
		}
		dev := func(off, n int) []byte { return s.Slice(r.IOVA()+uint64(off), n, false) }
		copy(r.Bytes()[64:], "one")
		copy(r.Bytes()[256:], "two")
		copy(r.Bytes()[192:], "gap")
		copy(r.Bytes()[4000:], "end")
		r.SyncSpansForDevice([]Span{{64, 3}, {-1, 8}, {256, 3}, {4090, 100}, {1024, 0}})
		if !bytes.Equal(dev(64, 3), []byte("one")) || !bytes.Equal(dev(256, 3), []byte("two")) {
			t.Fatalf("noncoh %v: the device does not see the cleaned spans", noncoh)
		}
		if bytes.Equal(dev(192, 3), []byte("gap")) || bytes.Equal(dev(4000, 3), []byte("end")) {
			t.Fatalf("noncoh %v: a line outside the spans was cleaned", noncoh)
		}
		s.Write(r.IOVA()+512, []byte("rx1"))
		s.Write(r.IOVA()+1536, []byte("rx2"))
		s.Write(r.IOVA()+1024, []byte("not"))
		r.SyncSpansForCPU([]Span{{512, 3}, {1536, 3}, {8192, 3}})
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
// span starting before the mapping panics as a slice expression does.
func TestCopySpansLines(t *testing.T) {
	src := bytes.Repeat([]byte{0xAA}, 200) // 3 lines and 8 bytes
	dst := make([]byte, 200)
	copySpans(dst, src, []Span{{60, 8}, {193, 2}})
	for i, b := range dst {
		want := byte(0)
		if i < 128 || i >= 192 {
			want = 0xAA // lines 0 and 1 (the first span), the tail (the second)
		}
		if b != want {
			t.Fatalf("byte %d is %#x after the copy, want %#x", i, b, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a span at offset -64 was copied without a panic")
		}
	}()
	copySpans(dst, src, []Span{{-64, 8}})
}

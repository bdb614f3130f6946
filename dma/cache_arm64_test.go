package dma

import (
	"math"
	"testing"
)

// TestSpanLines: the span walk behind SyncSpansForDevice and
// SyncSpansForCPU issues one DC per 64-byte line a span touches, and none
// for a span that is empty or not wholly inside the region (a negative
// offset or length, bytes past the end, an offset and length whose sum
// overflows): the spans are the caller's, and a DC on an address outside
// the region could fault.
func TestSpanLines(t *testing.T) {
	r, err := Alloc(&fakeMapper{}, 4096, Options{Attr: Attr{Name: "bufs"}, Hugepages: HugeNever, NonCoherent: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The region is page-aligned (mmap): offsets are line offsets.
	cases := []struct {
		s     Span
		lines int
	}{
		{Span{0, 8}, 1},
		{Span{0, 64}, 1},
		{Span{0, 65}, 2},
		{Span{60, 10}, 2},
		{Span{63, 1}, 1},
		{Span{64, 66}, 2},
		{Span{1024, 3072}, 48},
		{Span{0, 4096}, 64},
		{Span{4095, 1}, 1},
		{Span{512, 0}, 0},
		{Span{-1, 8}, 0},
		{Span{-64, 128}, 0},
		{Span{100, -50}, 0},
		{Span{4090, 100}, 0},
		{Span{4096, 1}, 0},
		{Span{math.MaxInt, 2}, 0},
		{Span{1 << 62, 1 << 62}, 0},
		{Span{2, math.MaxInt}, 0},
	}
	all, want := make([]Span, 0, len(cases)), 0
	for _, c := range cases {
		if got := spanLines(r.mem, []Span{c.s}); got != c.lines {
			t.Errorf("span %+v: %d lines maintained, want %d", c.s, got, c.lines)
		}
		all, want = append(all, c.s), want+c.lines
	}
	if got := spanLines(r.mem, all); got != want {
		t.Errorf("all spans in one batch: %d lines maintained, want %d", got, want)
	}
	if got := spanLines(r.mem, nil); got != 0 {
		t.Errorf("no spans: %d lines maintained", got)
	}
	// The real walks take the same spans without a fault.
	r.SyncSpansForDevice(all)
	r.SyncSpansForCPU(all)
}

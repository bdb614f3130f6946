package dma

import (
	"fmt"
	"slices"
	"testing"
)

// fakeMapper maps contiguous memory at made-up bus addresses, 1 MiB apart.
type fakeMapper struct{ next uint64 }

func (f *fakeMapper) Name() string      { return "fake" }
func (f *fakeMapper) NeedsLocked() bool { return false }
func (f *fakeMapper) Map(mem []byte, a Attr) (Mapping, error) {
	f.next += 1 << 20
	return Mapping{IOVA: f.next}, nil
}
func (f *fakeMapper) Unmap([]byte, Mapping) error { return nil }

// domainMapper is a handle on an address space that other handles share.
type domainMapper struct {
	fakeMapper
	space *int
}

func (d *domainMapper) Domain() any { return d.space }

// syncMapper is a Syncer that writes down every call it gets, with the
// memory and mapping it was handed.
type syncMapper struct {
	fakeMapper
	t        *testing.T
	mem      []byte
	mapping  Mapping
	coherent bool // NonCoherent reports !coherent
	calls    []string
}

func (s *syncMapper) Map(mem []byte, a Attr) (Mapping, error) {
	m, err := s.fakeMapper.Map(mem, a)
	s.mem, s.mapping = mem, m
	return m, err
}

func (s *syncMapper) NonCoherent() bool { return !s.coherent }

func (s *syncMapper) check(mem []byte, m Mapping) {
	if &mem[0] != &s.mem[0] || len(mem) != len(s.mem) || m.IOVA != s.mapping.IOVA {
		s.t.Errorf("sync handed %d bytes at IOVA %#x, not the region's %d at %#x", len(mem), m.IOVA, len(s.mem), s.mapping.IOVA)
	}
}

func (s *syncMapper) SyncForDevice(mem []byte, m Mapping, off, n int) {
	s.check(mem, m)
	s.calls = append(s.calls, fmt.Sprintf("device %d+%d", off, n))
}

func (s *syncMapper) SyncForCPU(mem []byte, m Mapping, off, n int) {
	s.check(mem, m)
	s.calls = append(s.calls, fmt.Sprintf("cpu %d+%d", off, n))
}

// spanMapper is a syncMapper that takes the batched form too.
type spanMapper struct{ syncMapper }

func (s *spanMapper) SyncSpansForDevice(mem []byte, m Mapping, spans []Span) {
	s.check(mem, m)
	s.calls = append(s.calls, fmt.Sprintf("device spans %v", spans))
}

func (s *spanMapper) SyncSpansForCPU(mem []byte, m Mapping, spans []Span) {
	s.check(mem, m)
	s.calls = append(s.calls, fmt.Sprintf("cpu spans %v", spans))
}

// syncs runs the same syncs on a region of 4096 bytes mapped through m:
// two inside the region, one past its end, and two batches that mix
// spans inside it with one before it, one past its end and an empty one.
func syncs(t *testing.T, m Mapper, uncached bool) {
	t.Helper()
	r, err := Alloc(m, 4096, Options{Attr: Attr{Name: "bufs", Uncached: uncached}, Hugepages: HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SyncForDevice(64, 3)
	r.SyncForCPU(128, 10)
	r.SyncForDevice(4095, 2)
	r.SyncSpansForDevice([]Span{{Off: 0, Len: 8}, {Off: -1, Len: 8}, {Off: 256, Len: 3}, {Off: 4090, Len: 100}})
	r.SyncSpansForCPU([]Span{{Off: 512, Len: 0}, {Off: 512, Len: 60}, {Off: 1024, Len: 3072}})
}

// TestRegionSyncsThroughInterface: a Region hands every sync to its
// mapper through Syncer (or SpanSyncer, when the mapper has it) with its
// own memory and mapping: a Syncer gets only ranges inside the region, a
// SpanSyncer the batch as given (it skips what is outside, see
// SpanSyncer), and neither gets anything when the mapper says it is
// coherent or the region is uncached.
// No mapper gets a path of its own: the simulated IOMMU plugs in the same
// way (sim/simdma).
func TestRegionSyncsThroughInterface(t *testing.T) {
	spans := &spanMapper{syncMapper{t: t}}
	syncs(t, spans, false)
	want := []string{
		"device 64+3",
		"cpu 128+10",
		"device spans [{0 8} {-1 8} {256 3} {4090 100}]",
		"cpu spans [{512 0} {512 60} {1024 3072}]",
	}
	if !slices.Equal(spans.calls, want) {
		t.Errorf("a SpanSyncer got\n%q\nwant\n%q", spans.calls, want)
	}

	plain := &syncMapper{t: t}
	syncs(t, plain, false)
	want = []string{"device 64+3", "cpu 128+10", "device 0+8", "device 256+3", "cpu 512+60", "cpu 1024+3072"}
	if !slices.Equal(plain.calls, want) {
		t.Errorf("a Syncer got\n%q\nwant\n%q", plain.calls, want)
	}

	coherent := &spanMapper{syncMapper{t: t, coherent: true}}
	syncs(t, coherent, false)
	uncached := &spanMapper{syncMapper{t: t}}
	syncs(t, uncached, true)
	if len(coherent.calls) != 0 || len(uncached.calls) != 0 {
		t.Errorf("a coherent syncer got %q, an uncached region's %q; want no calls", coherent.calls, uncached.calls)
	}
}

// TestSameDomain: handles on one address space are one domain; other
// mappers are not.
func TestSameDomain(t *testing.T) {
	space := new(int)
	a, b := &domainMapper{space: space}, &domainMapper{space: space}
	other := &domainMapper{space: new(int)}
	if !SameDomain(a, a) || !SameDomain(a, b) || SameDomain(a, other) || SameDomain(a, &Pagemap{}) || SameDomain(&fakeMapper{}, &fakeMapper{}) {
		t.Fatal("SameDomain")
	}
}

// TestDomainID: handles on one address space share a domain number, as
// SameDomain says; separate spaces and no mapper do not.
func TestDomainID(t *testing.T) {
	space := new(int)
	a, b := &domainMapper{space: space}, &domainMapper{space: space}
	other := &domainMapper{space: new(int)}
	if DomainID(a) == 0 || DomainID(a) != DomainID(b) {
		t.Errorf("two handles on one space: %d vs %d, want the same non-zero number", DomainID(a), DomainID(b))
	}
	if DomainID(a) == DomainID(other) {
		t.Errorf("two spaces got one domain number %d", DomainID(a))
	}
	f := &fakeMapper{}
	first, again := DomainID(f), DomainID(f)
	if first == 0 || first != again || first == DomainID(&fakeMapper{}) {
		t.Errorf("a mapper without Domain is a domain of its own: %d, %d", DomainID(f), DomainID(&fakeMapper{}))
	}
	if DomainID(nil) != 0 {
		t.Errorf("no mapper: %d, want 0", DomainID(nil))
	}
}

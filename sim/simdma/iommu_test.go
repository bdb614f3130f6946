package simdma

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/dma"
)

func TestIOMMUFaults(t *testing.T) {
	s := NewIOMMU(false)
	r, err := dma.Alloc(s, 8192, dma.Options{Attr: dma.Attr{Name: "ring"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	base := r.IOVA()
	if base < iovaBase {
		t.Fatalf("IOVA %#x below the simulated range", base)
	}
	copy(r.Bytes()[100:], "hello")
	got := make([]byte, 5)
	if !s.Read(base+100, got) || string(got) != "hello" {
		t.Fatalf("device read %q at a mapped IOVA", got)
	}
	if !s.Write(base+200, []byte("world")) || string(r.Bytes()[200:205]) != "world" {
		t.Fatal("device write not visible to the CPU on coherent memory")
	}
	for _, tc := range []struct {
		name  string
		iova  uint64
		n     int
		write bool
	}{
		{"below every mapping", 0x1000, 4, true},
		{"runs past the end", base + 8190, 4, false},
		{"in the guard gap", base + 8192 + 16, 4, true},
		{"pointer instead of IOVA", 0x7f00_0000_0000, 64, true},
	} {
		before := s.FaultCount()
		var ok bool
		if tc.write {
			ok = s.Write(tc.iova, make([]byte, tc.n))
		} else {
			ok = s.Read(tc.iova, make([]byte, tc.n))
		}
		if ok || s.FaultCount() != before+1 {
			t.Errorf("%s: access at %#x allowed (ok=%v, faults %d→%d)", tc.name, tc.iova, ok, before, s.FaultCount())
			continue
		}
		f := s.Faults()[len(s.Faults())-1]
		if f.IOVA != tc.iova || f.Len != tc.n || f.Write != tc.write {
			t.Errorf("%s: recorded %+v", tc.name, f)
		}
		if !strings.Contains(f.String(), "not mapped") {
			t.Errorf("fault text %q", f)
		}
	}
	if _, ok := s.Load32(base + 2); ok {
		t.Error("unaligned 32-bit device access allowed")
	}
	// After Close the memory is gone from the IOMMU too.
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Mappings() != 0 || s.Read(base, got) {
		t.Fatal("access to an unmapped region allowed")
	}
}

func TestIOMMUNonCoherent(t *testing.T) {
	s := NewIOMMU(true)
	buf, err := dma.Alloc(s, 4096, dma.Options{Attr: dma.Attr{Name: "buf"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := dma.Alloc(s, 4096, dma.Options{Attr: dma.Attr{Name: "ring", Uncached: true}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	if !buf.NeedsSync() || ring.NeedsSync() {
		t.Fatalf("NeedsSync: cached %v uncached %v", buf.NeedsSync(), ring.NeedsSync())
	}
	dev := func(r *dma.Region, off, n int) []byte { return s.Slice(r.IOVA()+uint64(off), n, false) }

	copy(buf.Bytes()[64:], "frame")
	if bytes.Equal(dev(buf, 64, 5), []byte("frame")) {
		t.Fatal("device saw CPU bytes that were never cleaned")
	}
	buf.SyncForDevice(64, 5)
	if !bytes.Equal(dev(buf, 64, 5), []byte("frame")) {
		t.Fatal("device does not see cleaned bytes")
	}
	s.Write(buf.IOVA()+512, []byte("dma"))
	if bytes.Equal(buf.Bytes()[512:515], []byte("dma")) {
		t.Fatal("CPU saw device bytes without invalidating")
	}
	buf.SyncForCPU(512, 3)
	if !bytes.Equal(buf.Bytes()[512:515], []byte("dma")) {
		t.Fatal("CPU does not see device bytes after invalidating")
	}
	// Maintenance works on whole lines: a line next door stays stale.
	copy(buf.Bytes()[128:], "next")
	buf.SyncForDevice(64, 5)
	if bytes.Equal(dev(buf, 128, 4), []byte("next")) {
		t.Fatal("a clean of line 1 wrote line 2")
	}
	// Uncached memory is shared as is.
	copy(ring.Bytes(), "desc")
	if !bytes.Equal(dev(ring, 0, 4), []byte("desc")) {
		t.Fatal("uncached memory needed maintenance")
	}
}

func TestIOMMUShare(t *testing.T) {
	a := NewIOMMU(false)
	b := a.Share()
	r, err := dma.Alloc(a, 4096, dma.Options{Attr: dma.Attr{Name: "port0 rx"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	copy(r.Bytes(), "shared")
	got := make([]byte, 6)
	if !b.Read(r.IOVA(), got) || string(got) != "shared" {
		t.Fatal("memory mapped through one handle is not reachable through the other")
	}
	r2, err := dma.Alloc(b, 4096, dma.Options{Attr: dma.Attr{Name: "port1 rx"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.IOVA() == r.IOVA() {
		t.Fatal("two handles handed out the same IOVA")
	}
	b.Read(0x10, got)
	if b.FaultCount() != 1 || a.FaultCount() != 0 {
		t.Fatalf("faults: a %d, b %d; each handle keeps its own", a.FaultCount(), b.FaultCount())
	}
}

func TestIOMMUReusesFreedIOVAs(t *testing.T) {
	s := NewIOMMU(false)
	a, _ := dma.Alloc(s, 8192, dma.Options{Attr: dma.Attr{Name: "a"}, Hugepages: dma.HugeNever})
	b, _ := dma.Alloc(s, 8192, dma.Options{Attr: dma.Attr{Name: "b"}, Hugepages: dma.HugeNever})
	defer b.Close()
	first := a.IOVA()
	a.Close()
	for i := 0; i < 10000; i++ { // far more than a 32-bit space holds without reuse
		c, err := dma.Alloc(s, 64<<10, dma.Options{Attr: dma.Attr{Name: "c"}, Hugepages: dma.HugeNever})
		if err != nil {
			t.Fatal(err)
		}
		if c.IOVA() >= 1<<32 {
			t.Fatalf("map %d landed at %#x: freed IOVAs are not reused", i, c.IOVA())
		}
		c.Close()
	}
	c, _ := dma.Alloc(s, 8192, dma.Options{Attr: dma.Attr{Name: "c"}, Hugepages: dma.HugeNever})
	defer c.Close()
	if c.IOVA() != first {
		t.Fatalf("a freed range was not reused: got %#x, freed %#x", c.IOVA(), first)
	}
	if c.IOVA() < b.IOVA() && c.IOVA()+8192+guard > b.IOVA() {
		t.Fatal("a reused range lost its guard gap")
	}
}

func TestSameDomain(t *testing.T) {
	a := NewIOMMU(false)
	if !dma.SameDomain(a, a.Share()) || dma.SameDomain(a, NewIOMMU(false)) || dma.SameDomain(a, &dma.Pagemap{}) {
		t.Fatal("SameDomain")
	}
}

// TestDomainID: IOMMU handles on one address space share a domain number, as
// SameDomain says; separate IOMMUs and no mapper do not.
func TestDomainID(t *testing.T) {
	a := NewIOMMU(false)
	b := NewIOMMU(false)
	if dma.DomainID(a) == 0 || dma.DomainID(a) != dma.DomainID(a.Share()) {
		t.Errorf("a shared handle: %d vs %d, want the same non-zero number", dma.DomainID(a), dma.DomainID(a.Share()))
	}
	if dma.DomainID(a) == dma.DomainID(b) {
		t.Errorf("two IOMMUs got one domain number %d", dma.DomainID(a))
	}
	if dma.SameDomain(a, b) || !dma.SameDomain(a, a.Share()) {
		t.Error("SameDomain disagrees with DomainID")
	}
	if dma.DomainID(nil) != 0 {
		t.Errorf("no mapper: %d, want 0", dma.DomainID(nil))
	}
}

package dma

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/internal/testnote"
)

func TestSimIOMMUFaults(t *testing.T) {
	s := NewSimIOMMU(false)
	r, err := Alloc(s, 8192, Options{Attr: Attr{Name: "ring"}, Hugepages: HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	base := r.IOVA()
	if base < simIOVABase {
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

func TestSimIOMMUNonCoherent(t *testing.T) {
	s := NewSimIOMMU(true)
	buf, err := Alloc(s, 4096, Options{Attr: Attr{Name: "buf"}, Hugepages: HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := Alloc(s, 4096, Options{Attr: Attr{Name: "ring", Uncached: true}, Hugepages: HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	if !buf.NeedsSync() || ring.NeedsSync() {
		t.Fatalf("NeedsSync: cached %v uncached %v", buf.NeedsSync(), ring.NeedsSync())
	}
	dev := func(r *Region, off, n int) []byte { return s.Slice(r.IOVA()+uint64(off), n, false) }

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

// scatter is a mapper that returns per-page addresses in reverse order.
type scatter struct{}

func (scatter) Name() string      { return "scatter" }
func (scatter) NeedsLocked() bool { return false }
func (scatter) Unmap([]byte, Mapping) error {
	return nil
}
func (scatter) Map(mem []byte, a Attr) (Mapping, error) {
	n := len(mem) / PageSize
	pages := make([]uint64, n)
	for i := range pages {
		pages[i] = uint64(0x100000 + (n-i)*2*PageSize)
	}
	return Mapping{Pages: pages}, nil
}

func TestScatteredRegion(t *testing.T) {
	r, err := Alloc(scatter{}, 3*PageSize, Options{Attr: Attr{Name: "bufs"}, Hugepages: HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Contiguous() {
		t.Fatal("scattered region reported contiguous")
	}
	if got, want := r.IOVAAt(PageSize+10), uint64(0x100000+2*2*PageSize+10); got != want {
		t.Fatalf("IOVAAt = %#x, want %#x", got, want)
	}
	if !r.ContiguousRange(PageSize, PageSize) || r.ContiguousRange(PageSize-64, 128) {
		t.Fatal("ContiguousRange wrong at a page boundary")
	}
	_, err = Alloc(scatter{}, 2*PageSize, Options{Attr: Attr{Name: "ring", Contiguous: true}, Hugepages: HugeNever})
	if !errors.Is(err, ErrNotContiguous) || !strings.Contains(err.Error(), "ring") {
		t.Fatalf("contiguous request on scattered memory: %v", err)
	}
}

func TestAllocErrors(t *testing.T) {
	if _, err := Alloc(nil, 4096, Options{Attr: Attr{Name: "x"}}); err == nil || !strings.Contains(err.Error(), "no mapper") {
		t.Errorf("nil mapper: %v", err)
	}
	if _, err := Alloc(NewSimIOMMU(false), 0, Options{Attr: Attr{Name: "x"}}); err == nil || !strings.Contains(err.Error(), "size 0") {
		t.Errorf("zero size: %v", err)
	}
	free, _ := os.ReadFile("/proc/sys/vm/nr_hugepages")
	if strings.TrimSpace(string(free)) == "0" {
		_, err := Alloc(NewSimIOMMU(false), 4096, Options{Attr: Attr{Name: "huge"}, Hugepages: HugeRequire})
		if err == nil || !strings.Contains(err.Error(), "nr_hugepages") {
			t.Errorf("HugeRequire without huge pages: %v", err)
		}
		// HugeAuto falls back to 4 KiB pages.
		r, err := Alloc(NewSimIOMMU(false), 4096, Options{Attr: Attr{Name: "auto"}})
		if err != nil || r.Huge() {
			t.Fatalf("HugeAuto fallback: %v huge=%v", err, r != nil && r.Huge())
		}
		r.Close()
	} else {
		r, err := Alloc(NewSimIOMMU(false), 4096, Options{Attr: Attr{Name: "huge"}, Hugepages: HugeRequire})
		if err != nil || !r.Huge() || r.Len() != HugePageSize {
			t.Fatalf("huge page alloc: %v", err)
		}
		r.Close()
	}
}

func TestPagemapAsRoot(t *testing.T) {
	testnote.SkipEmulated(t, "the pagemap test", "qemu-user does not translate /proc/self/pagemap to the guest's addresses")
	if os.Geteuid() != 0 {
		t.Skip("pagemap physical addresses need root: run `sudo go test ./dma -run Pagemap`")
	}
	r, err := Alloc(&Pagemap{}, 4*PageSize, Options{Attr: Attr{Name: "pm"}, Hugepages: HugeNever})
	if err != nil {
		if strings.Contains(err.Error(), "mlock") {
			t.Skipf("cannot lock memory here: %v", err)
		}
		t.Fatal(err)
	}
	defer r.Close()
	for off := 0; off < r.Len(); off += PageSize {
		pa := r.IOVAAt(off)
		if pa == 0 || pa%PageSize != 0 {
			t.Fatalf("page %d: physical address %#x", off/PageSize, pa)
		}
	}
	// A single page is always contiguous and gets one address.
	one, err := Alloc(&Pagemap{}, PageSize, Options{Attr: Attr{Name: "one", Contiguous: true}, Hugepages: HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if !one.Contiguous() || one.IOVA() == 0 {
		t.Fatalf("one page: contiguous=%v pa=%#x", one.Contiguous(), one.IOVA())
	}
	// Distinct pages have distinct frames.
	seen := map[uint64]bool{}
	for off := 0; off < r.Len(); off += PageSize {
		if seen[r.IOVAAt(off)] {
			t.Fatal("two pages share a physical frame")
		}
		seen[r.IOVAAt(off)] = true
	}
}

func TestPagemapErrors(t *testing.T) {
	mem := make([]byte, 2*PageSize)
	if _, err := (&Pagemap{Path: "/nonexistent/pagemap"}).Map(mem[1:PageSize+1], Attr{Name: "odd"}); err == nil || !strings.Contains(err.Error(), "whole pages") {
		t.Errorf("unaligned region: %v", err)
	}
	p := &Phys{Base: 0x8000_0000, Size: PageSize}
	if _, err := p.Map(mem, Attr{Name: "big"}); err == nil || !strings.Contains(err.Error(), "exceeds carve-out") {
		t.Errorf("region larger than the carve-out: %v", err)
	}
	m, err := p.Map(mem[:PageSize], Attr{Name: "fits"})
	if err != nil || m.IOVA != 0x8000_0000 {
		t.Fatalf("carve-out map: %v %#x", err, m.IOVA)
	}
	if _, err := p.Map(mem[:PageSize], Attr{Name: "again"}); err == nil {
		t.Error("carve-out mapped twice")
	}
}

func TestSimIOMMUShare(t *testing.T) {
	a := NewSimIOMMU(false)
	b := a.Share()
	r, err := Alloc(a, 4096, Options{Attr: Attr{Name: "port0 rx"}, Hugepages: HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	copy(r.Bytes(), "shared")
	got := make([]byte, 6)
	if !b.Read(r.IOVA(), got) || string(got) != "shared" {
		t.Fatal("memory mapped through one handle is not reachable through the other")
	}
	r2, err := Alloc(b, 4096, Options{Attr: Attr{Name: "port1 rx"}, Hugepages: HugeNever})
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

func TestSameDomain(t *testing.T) {
	a := NewSimIOMMU(false)
	if !SameDomain(a, a.Share()) || SameDomain(a, NewSimIOMMU(false)) || SameDomain(a, &Pagemap{}) {
		t.Fatal("SameDomain")
	}
}

func TestSimIOMMUReusesFreedIOVAs(t *testing.T) {
	s := NewSimIOMMU(false)
	a, _ := Alloc(s, 8192, Options{Attr: Attr{Name: "a"}, Hugepages: HugeNever})
	b, _ := Alloc(s, 8192, Options{Attr: Attr{Name: "b"}, Hugepages: HugeNever})
	defer b.Close()
	first := a.IOVA()
	a.Close()
	for i := 0; i < 10000; i++ { // far more than a 32-bit space holds without reuse
		c, err := Alloc(s, 64<<10, Options{Attr: Attr{Name: "c"}, Hugepages: HugeNever})
		if err != nil {
			t.Fatal(err)
		}
		if c.IOVA() >= 1<<32 {
			t.Fatalf("map %d landed at %#x: freed IOVAs are not reused", i, c.IOVA())
		}
		c.Close()
	}
	c, _ := Alloc(s, 8192, Options{Attr: Attr{Name: "c"}, Hugepages: HugeNever})
	defer c.Close()
	if c.IOVA() != first {
		t.Fatalf("a freed range was not reused: got %#x, freed %#x", c.IOVA(), first)
	}
	if c.IOVA() < b.IOVA() && c.IOVA()+8192+simGuard > b.IOVA() {
		t.Fatal("a reused range lost its guard gap")
	}
}

// TestDomainID: handles on one address space share a domain number, as
// SameDomain says; separate IOMMUs and no mapper do not.
func TestDomainID(t *testing.T) {
	a := NewSimIOMMU(false)
	b := NewSimIOMMU(false)
	if DomainID(a) == 0 || DomainID(a) != DomainID(a.Share()) {
		t.Errorf("a shared handle: %d vs %d, want the same non-zero number", DomainID(a), DomainID(a.Share()))
	}
	if DomainID(a) == DomainID(b) {
		t.Errorf("two IOMMUs got one domain number %d", DomainID(a))
	}
	if SameDomain(a, b) || !SameDomain(a, a.Share()) {
		t.Error("SameDomain disagrees with DomainID")
	}
	if DomainID(nil) != 0 {
		t.Errorf("no mapper: %d, want 0", DomainID(nil))
	}
}

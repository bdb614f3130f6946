package dma

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/internal/testnote"
)

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
	if _, err := Alloc(&fakeMapper{}, 0, Options{Attr: Attr{Name: "x"}}); err == nil || !strings.Contains(err.Error(), "size 0") {
		t.Errorf("zero size: %v", err)
	}
	free, _ := os.ReadFile("/proc/sys/vm/nr_hugepages")
	if strings.TrimSpace(string(free)) == "0" {
		_, err := Alloc(&fakeMapper{}, 4096, Options{Attr: Attr{Name: "huge"}, Hugepages: HugeRequire})
		if err == nil || !strings.Contains(err.Error(), "nr_hugepages") {
			t.Errorf("HugeRequire without huge pages: %v", err)
		}
		// HugeAuto falls back to 4 KiB pages.
		r, err := Alloc(&fakeMapper{}, 4096, Options{Attr: Attr{Name: "auto"}})
		if err != nil || r.Huge() {
			t.Fatalf("HugeAuto fallback: %v huge=%v", err, r != nil && r.Huge())
		}
		r.Close()
	} else {
		r, err := Alloc(&fakeMapper{}, 4096, Options{Attr: Attr{Name: "huge"}, Hugepages: HugeRequire})
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

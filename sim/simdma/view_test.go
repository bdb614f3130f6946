package simdma

import (
	"testing"

	"github.com/gopmd/gopmd/dma"
)

// TestView: a view translates like IOMMU.Slice, remembers the mapping
// it hit, records the same faults, and never uses a mapping after Unmap.
func TestView(t *testing.T) {
	s := NewIOMMU(false)
	a, err := dma.Alloc(s, 8192, dma.Options{Attr: dma.Attr{Name: "a"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	b, err := dma.Alloc(s, 4096, dma.Options{Attr: dma.Attr{Name: "b"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	v := s.View()
	if got := v.Slice(a.IOVA()+100, 16, true); got == nil || &got[0] != &a.Bytes()[100] || len(got) != 16 || cap(got) != 16 {
		t.Fatal("view: wrong bytes for a mapped range")
	}
	if got := v.Slice(a.IOVA()+8192-4, 4, false); got == nil || &got[0] != &a.Bytes()[8188] {
		t.Fatal("view: last word of the mapping")
	}
	if got := v.Slice(b.IOVA(), 8, false); got == nil || &got[0] != &b.Bytes()[0] {
		t.Fatal("view: another mapping")
	}
	for _, c := range []struct {
		name string
		iova uint64
		n    int
	}{
		{"past the end", a.IOVA() + 8190, 4},
		{"negative length", a.IOVA(), -1},
		{"below the mapping", a.IOVA() - 1, 1},
		{"unmapped gap", b.IOVA() + 4096 + 100, 1},
	} {
		before := s.FaultCount()
		if got := v.Slice(c.iova, c.n, true); got != nil {
			t.Errorf("%s: got %d bytes, want a fault", c.name, len(got))
		}
		if s.FaultCount() != before+1 {
			t.Errorf("%s: fault not recorded", c.name)
		}
	}
	// The view remembers a; after Unmap the next access must fault.
	iova := a.IOVA()
	if v.Slice(iova, 8, false) == nil {
		t.Fatal("before unmap")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	before := s.FaultCount()
	if got := v.Slice(iova, 8, false); got != nil {
		t.Fatal("view used a mapping after Unmap")
	}
	if s.FaultCount() != before+1 {
		t.Error("access after unmap: fault not recorded")
	}
}

// TestStoreLoadLE32 publishes and reads a status word in place.
func TestStoreLoadLE32(t *testing.T) {
	s := NewIOMMU(false)
	r, err := dma.Alloc(s, 4096, dma.Options{Attr: dma.Attr{Name: "ring"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v := s.View()
	w := v.Slice(r.IOVA()+12, 4, true)
	if !StoreLE32(w, 0xC0000040) {
		t.Fatal("aligned store refused")
	}
	if got := r.Bytes()[12:16]; got[0] != 0x40 || got[3] != 0xC0 {
		t.Errorf("stored bytes % x, want little-endian 0xC0000040", got)
	}
	if x, ok := LoadLE32(w); !ok || x != 0xC0000040 {
		t.Errorf("LoadLE32 = %#x, %v", x, ok)
	}
	if StoreLE32(v.Slice(r.IOVA()+13, 4, true), 1) {
		t.Error("misaligned store accepted")
	}
	if StoreLE32(w[:3], 1) {
		t.Error("short slice accepted")
	}
	if _, ok := LoadLE32(nil); ok {
		t.Error("LoadLE32 of nothing accepted")
	}
}

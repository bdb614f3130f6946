package simdma

import (
	"strings"
	"testing"

	"github.com/gopmd/gopmd/dma"
)

func TestIOMMUMapAt(t *testing.T) {
	s := NewIOMMU(false)
	mem := make([]byte, 3*dma.PageSize)
	copy(mem, "harness bytes")
	const at = 0x7000_0000
	m, err := s.MapAt(at, mem, dma.Attr{Name: "shared ring"})
	if err != nil {
		t.Fatal(err)
	}
	if m.IOVA != at {
		t.Fatalf("MapAt returned IOVA %#x, asked for %#x", m.IOVA, at)
	}
	got := make([]byte, 13)
	if !s.Read(at, got) || string(got) != "harness bytes" {
		t.Fatalf("device read at the chosen IOVA: %q", got)
	}
	if !s.Write(at+2*dma.PageSize+5, []byte("dev")) || string(mem[2*dma.PageSize+5:2*dma.PageSize+8]) != "dev" {
		t.Fatal("a device write did not land in the caller's memory")
	}
	if s.Read(at+uint64(len(mem))-1, make([]byte, 2)) || s.FaultCount() != 1 {
		t.Fatal("an access running past the caller's memory was not refused")
	}

	// Map places its regions around the caller's range.
	for i := 0; i < 64; i++ {
		r, err := dma.Alloc(s, 1<<20, dma.Options{Attr: dma.Attr{Name: "pool"}, Hugepages: dma.HugeNever})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.IOVA() < at+uint64(len(mem)) && r.IOVA()+1<<20 > at {
			t.Fatalf("Map placed %#x..%#x over the MapAt range", r.IOVA(), r.IOVA()+1<<20)
		}
	}

	if err := s.Unmap(mem, m); err != nil {
		t.Fatal(err)
	}
	if string(mem[:13]) != "harness bytes" {
		t.Fatal("Unmap touched the caller's memory")
	}
	if s.Read(at, got) {
		t.Fatal("the IOVA still translates after Unmap")
	}
	if _, err := s.MapAt(at, mem, dma.Attr{Name: "again"}); err != nil {
		t.Fatalf("the range is free again after Unmap: %v", err)
	}
}

func TestIOMMUMapAtErrors(t *testing.T) {
	s := NewIOMMU(false)
	r, err := dma.Alloc(s, 2*dma.PageSize, dma.Options{Attr: dma.Attr{Name: "rx ring"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := s.MapAt(0x9000_0000, make([]byte, dma.PageSize), dma.Attr{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	mem := make([]byte, dma.PageSize)
	for _, c := range []struct {
		name string
		iova uint64
		mem  []byte
		want []string
	}{
		{"misaligned", 0x9100_0010, mem, []string{`"x"`, "0x91000010", "multiple of the 4096-byte", "0x91000000"}},
		{"overlaps a Map region", r.IOVA() + dma.PageSize, mem, []string{"overlaps", `"rx ring"`}},
		{"overlaps the start of a Map region", r.IOVA() - dma.PageSize, make([]byte, 2*dma.PageSize), []string{"overlaps", `"rx ring"`}},
		{"overlaps a MapAt region", 0x9000_0000, mem, []string{"overlaps", `"a"`, "0x90000000..0x90000fff"}},
		{"wraps", 1<<64 - dma.PageSize, make([]byte, 2*dma.PageSize), []string{"wrap"}},
		{"empty", 0x9200_0000, nil, []string{"empty"}},
	} {
		_, err := s.MapAt(c.iova, c.mem, dma.Attr{Name: "x"})
		if err == nil {
			t.Errorf("%s: MapAt at %#x accepted", c.name, c.iova)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
	if s.Mappings() != 2 {
		t.Fatalf("%d live mappings after refused MapAt calls, want 2", s.Mappings())
	}
	// Adjacent, not overlapping: accepted.
	if _, err := s.MapAt(0x9000_0000+dma.PageSize, mem, dma.Attr{Name: "b"}); err != nil {
		t.Fatalf("a range starting where another ends was refused: %v", err)
	}
}

func TestIOMMUMapAtNonCoherent(t *testing.T) {
	s := NewIOMMU(true)
	mem := make([]byte, dma.PageSize)
	m, err := s.MapAt(0x5000_0000, mem, dma.Attr{Name: "buf"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unmap(mem, m)
	copy(mem, "cpu")
	got := make([]byte, 3)
	s.Read(m.IOVA, got)
	if string(got) == "cpu" {
		t.Fatal("the device saw CPU bytes before SyncForDevice")
	}
	s.SyncForDevice(mem, m, 0, 3)
	if s.Read(m.IOVA, got); string(got) != "cpu" {
		t.Fatalf("after SyncForDevice the device reads %q", got)
	}
}

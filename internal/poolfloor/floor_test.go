package poolfloor

import "testing"

// A round trip hands out fresh headers and takes every one back.
func TestRoundTripFreshAndWhole(t *testing.T) {
	p := New(256, 128)
	var burst [32]*Header
	for round := range 300 {
		n := p.AllocBulk(burst[:])
		if n != 32 {
			t.Fatalf("round %d: got %d buffers, want 32", round, n)
		}
		for i, h := range burst[:n] {
			if h.off != 128 || h.len != 0 || h.NSegs != 1 || h.holder != 0 || h.PktLen != 0 || uint8(h.state) != 0 {
				t.Fatalf("round %d: buffer %d not fresh: off %d len %d segs %d holder %#x pktlen %d state %#x",
					round, i, h.off, h.len, h.NSegs, h.holder, h.PktLen, h.state)
			}
			h.off, h.len, h.PktLen, h.holder = 64, 60, 60, 0x77 // a holder's writes
		}
		p.RecycleBulk(burst[:n])
	}
	if taken, foreign, double := p.Counts(); p.Free() != 256 || taken != 300*32 || foreign != 0 || double != 0 {
		t.Fatalf("free %d, taken %d, foreign %d, double %d; want 256, %d, 0, 0", p.Free(), taken, foreign, double, 300*32)
	}
}

// Each bulk gives its buffers a new generation, so an entry naming an
// earlier one is told apart.
func TestGenerationStepsPerBulk(t *testing.T) {
	p := New(64, 0)
	var a, b [8]*Header
	p.AllocBulk(a[:])
	g := a[0].state >> genShift
	p.RecycleBulk(a[:])
	p.AllocBulk(b[:])
	if b[0] != a[0] {
		t.Fatalf("the cache is not LIFO: got %p, want %p", b[0], a[0])
	}
	if g2 := b[0].state >> genShift; g2 == g {
		t.Fatalf("generation %d on both allocations of one buffer", g)
	}
}

// A header of another pool, a forged one and nil are refused and counted,
// wherever they are in a bulk, and the rest taken.
func TestForeignRefused(t *testing.T) {
	p, other := New(64, 0), New(64, 0)
	var burst [16]*Header
	var o [1]*Header
	p.AllocBulk(burst[:])
	other.AllocBulk(o[:])
	forged := &Header{}
	burst[3], burst[11] = o[0], forged
	p.RecycleBulk(burst[:])
	if taken, foreign, double := p.Counts(); taken != 14 || foreign != 2 || double != 0 || p.Free() != 64-16+14 {
		t.Fatalf("taken %d, foreign %d, double %d, free %d; want 14, 2, 0, %d", taken, foreign, double, p.Free(), 64-16+14)
	}
	if forged.state != 0 || uint8(o[0].state) != 0 {
		t.Fatalf("a refused header was written: forged %#x, other's %#x", forged.state, o[0].state)
	}
}

// A buffer given twice in one bulk, or returned when home, is refused and
// counted once per extra return; the cache holds it once.
func TestDoubleRefused(t *testing.T) {
	p := New(64, 0)
	var burst [16]*Header
	p.AllocBulk(burst[:])
	burst[9] = burst[2] // burst[9]'s own buffer stays out
	p.RecycleBulk(burst[:])
	if taken, _, double := p.Counts(); taken != 15 || double != 1 {
		t.Fatalf("taken %d, double %d; want 15, 1", taken, double)
	}
	var again [8]*Header
	for i := range again {
		again[i] = burst[0]
	}
	p.RecycleBulk(again[:])
	if taken, _, double := p.Counts(); taken != 15 || double != 9 || p.Free() != 64-16+15 {
		t.Fatalf("taken %d, double %d, free %d; want 15, 9, %d", taken, double, p.Free(), 64-16+15)
	}
}

// The unchecked return takes what it is given: a double free lands in the
// cache twice: what the checks RecycleBulk keeps prevent, and what
// RecycleBulkUnchecked's figure leaves out.
func TestUncheckedTakesDouble(t *testing.T) {
	p := New(64, 0)
	var burst [8]*Header
	p.AllocBulk(burst[:])
	burst[5] = burst[4]
	p.RecycleBulkUnchecked(burst[:])
	seen := map[uint32]int{}
	for _, e := range p.cache {
		seen[e]++
	}
	if len(seen) != len(p.cache)-1 {
		t.Fatalf("the cache holds %d entries, %d distinct; want one twice", len(p.cache), len(seen))
	}
}

// The two benchmarks are the pool's BenchmarkAllocFreeBulk32 written out
// twice: one body for both would make the return a call through a
// function value, which the pool's loop does not make and the count would
// include.
func BenchmarkBulk32(b *testing.B) {
	p := New(1024, 128)
	var burst [32]*Header
	b.ReportAllocs()
	for i := 0; i < b.N; i += 32 {
		n := p.AllocBulk(burst[:])
		p.RecycleBulk(burst[:n])
	}
}

func BenchmarkBulk32Unchecked(b *testing.B) {
	p := New(1024, 128)
	var burst [32]*Header
	b.ReportAllocs()
	for i := 0; i < b.N; i += 32 {
		n := p.AllocBulk(burst[:])
		p.RecycleBulkUnchecked(burst[:n])
	}
}

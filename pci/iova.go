package pci

import (
	"fmt"
	"sort"
	"sync"
)

// iovaRange is an inclusive range of usable IOVAs.
type iovaRange struct{ start, last uint64 }

// iovaSpace hands out IOVAs inside the ranges the IOMMU allows (and below a
// device's DMA limit), aligned so huge pages map as huge IOMMU pages. Freed
// ranges are reused.
type iovaSpace struct {
	mu    sync.Mutex
	free  []iovaRange // sorted, disjoint
	limit uint64      // highest IOVA a device can address
	used  map[uint64]uint64
}

// iovaFloor keeps page 0 and the first megabyte unused: a zero or small
// bus address from a driver bug then faults instead of hitting memory.
const iovaFloor = 1 << 20

func newIOVASpace(ranges []iovaRange, limit uint64) *iovaSpace {
	s := &iovaSpace{limit: limit, used: map[uint64]uint64{}}
	for _, r := range ranges {
		if r.start < iovaFloor {
			if r.last < iovaFloor {
				continue
			}
			r.start = iovaFloor
		}
		s.free = append(s.free, r)
	}
	sort.Slice(s.free, func(i, j int) bool { return s.free[i].start < s.free[j].start })
	return s
}

// alloc returns an IOVA for size bytes aligned to align (a power of two).
func (s *iovaSpace) alloc(size, align uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.free {
		a := (r.start + align - 1) &^ (align - 1)
		if a < r.start || a > r.last || r.last-a < size-1 || a+size-1 > s.limit {
			continue
		}
		// Split r into [start, a) and [a+size, last].
		var repl []iovaRange
		if a > r.start {
			repl = append(repl, iovaRange{r.start, a - 1})
		}
		if a+size-1 < r.last {
			repl = append(repl, iovaRange{a + size, r.last})
		}
		s.free = append(s.free[:i], append(repl, s.free[i+1:]...)...)
		s.used[a] = size
		return a, nil
	}
	return 0, fmt.Errorf("no free IOVA range of %#x bytes (alignment %#x) below %#x in the IOMMU's allowed ranges %v", size, align, s.limit, s.free)
}

// restrict drops every free IOVA outside ranges (the IOMMU narrowed what
// it allows, e.g. when another group joined the container).
func (s *iovaSpace) restrict(ranges []iovaRange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []iovaRange
	for _, f := range s.free {
		for _, r := range ranges {
			lo, hi := max(f.start, r.start), min(f.last, r.last)
			if lo <= hi {
				out = append(out, iovaRange{lo, hi})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	s.free = out
}

// release returns a range handed out by alloc.
func (s *iovaSpace) release(iova uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	size, ok := s.used[iova]
	if !ok {
		return
	}
	delete(s.used, iova)
	s.free = append(s.free, iovaRange{iova, iova + size - 1})
	sort.Slice(s.free, func(i, j int) bool { return s.free[i].start < s.free[j].start })
	merged := s.free[:1]
	for _, r := range s.free[1:] {
		l := &merged[len(merged)-1]
		if l.last+1 == r.start {
			l.last = r.last
		} else {
			merged = append(merged, r)
		}
	}
	s.free = merged
}

// alignFor picks the IOVA alignment for a mapping of n bytes: the largest
// IOMMU page size not above n, so 2 MiB huge pages get 2 MiB IOPTEs.
func alignFor(n uint64, pgsizes uint64) uint64 {
	align := uint64(4096)
	for b := 0; b < 64; b++ {
		p := uint64(1) << b
		if pgsizes&p != 0 && p <= n && p > align && p <= 1<<30 {
			align = p
		}
	}
	return align
}

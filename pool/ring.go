package pool

import (
	"sync/atomic"
)

// ring is a bounded lock-free queue with many producers (any goroutine that
// frees a buffer) and one consumer (the pool's owner, refilling its cache).
//
// Each cell is one 64-bit word: the high half tags the absolute position the
// cell was written for (pos+1, so a zero cell is never "ready"), the low half
// carries the entry. A producer reserves positions with one CAS on tail, then
// publishes each cell with one atomic store; the consumer sees a cell as
// ready when its tag matches, and hands the whole batch back to producers with
// a single store of head. So a bulk of k frees costs one CAS and k stores.
type ring struct {
	mask  uint64
	_     [56]byte
	tail  atomic.Uint64 // next position a producer reserves
	_     [56]byte
	head  atomic.Uint64 // next position the consumer reads; written by the consumer only
	_     [56]byte
	cells []atomic.Uint64
}

func newRing(size int) *ring {
	n := 1
	for n < size {
		n <<= 1
	}
	return &ring{mask: uint64(n - 1), cells: make([]atomic.Uint64, n)}
}

// len is a snapshot of how many entries are reserved and not yet consumed.
func (r *ring) len() int { return int(r.tail.Load() - r.head.Load()) }

// push enqueues entries; it returns how many fitted (all or none).
func (r *ring) push(entries []uint32) bool {
	k := uint64(len(entries))
	for {
		t := r.tail.Load()
		// head only grows, so a stale head can only make the ring look fuller.
		if t+k-r.head.Load() > uint64(len(r.cells)) {
			return false
		}
		if r.tail.CompareAndSwap(t, t+k) {
			cells, mask := r.cells, r.mask
			for i, e := range entries {
				pos := t + uint64(i)
				// The tag is published with the entry in one store, after every
				// write the producer made to the buffer: the consumer's load of
				// this cell orders those writes before its use of the buffer.
				cells[pos&mask].Store((pos+1)<<32 | uint64(e))
			}
			return true
		}
	}
}

// pop dequeues up to len(out) ready entries in order (consumer only).
func (r *ring) pop(out []uint32) int {
	h := r.head.Load()
	cells, mask := r.cells, r.mask
	n := 0
	for i := range out {
		pos := h + uint64(i)
		c := cells[pos&mask].Load()
		if c>>32 != (pos+1)&0xFFFF_FFFF {
			break // not yet published (or never reserved)
		}
		out[i] = uint32(c)
		n = i + 1
	}
	if n > 0 {
		// Hands the cells back to producers; they are rewritten only after
		// a producer sees this head.
		r.head.Store(h + uint64(n))
	}
	return n
}

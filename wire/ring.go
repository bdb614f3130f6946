package wire

import "sync/atomic"

// FrameRing is a bounded single-producer single-consumer queue of frames,
// lock-free: one goroutine Puts, one goroutine Gets. Frames are copied in
// and out of fixed slots, so neither side allocates.
type FrameRing struct {
	// head is written by the consumer only, tail by the producer only; each
	// side keeps a cached copy of the other's index and reloads it only
	// when the ring looks full (producer) or empty (consumer).
	_         [64]byte
	head      atomic.Uint64
	tailCache uint64 // consumer's view of tail
	_         [48]byte
	tail      atomic.Uint64
	headCache uint64 // producer's view of head
	_         [48]byte

	mask     uint64
	slotSize int
	data     []byte
	lens     []int32

	// Full counts frames Put refused because the ring was full; TooBig
	// counts frames longer than a slot; TooLong counts frames Get dropped
	// because they were longer than its destination (never cut).
	Full, TooBig, TooLong atomic.Uint64
}

// NewFrameRing makes a ring of slots (rounded up to a power of two) frames
// of at most slotSize bytes each.
func NewFrameRing(slots, slotSize int) *FrameRing {
	n := 1
	for n < slots {
		n <<= 1
	}
	return &FrameRing{mask: uint64(n - 1), slotSize: slotSize,
		data: make([]byte, n*slotSize), lens: make([]int32, n)}
}

// Put copies frame into the ring. It reports false, and counts the frame in
// Full or TooBig, when it does not fit. Producer only.
func (r *FrameRing) Put(frame []byte) bool {
	if len(frame) > r.slotSize {
		r.TooBig.Add(1)
		return false
	}
	t := r.tail.Load() // our own index: no other writer
	if t-r.headCache > r.mask {
		r.headCache = r.head.Load()
		if t-r.headCache > r.mask {
			r.Full.Add(1)
			return false
		}
	}
	i := t & r.mask
	off := int(i) * r.slotSize
	copy(r.data[off:off+len(frame)], frame)
	r.lens[i] = int32(len(frame))
	// The store of tail publishes the slot's bytes and length to the
	// consumer (atomic store: release order).
	r.tail.Store(t + 1)
	return true
}

// Get copies the oldest frame into dst and returns its length, or ok=false
// when the ring is empty. A frame longer than dst is dropped and counted in
// TooLong, and the next one is taken: a frame is never cut. Consumer only.
func (r *FrameRing) Get(dst []byte) (n int, ok bool) {
	for {
		h := r.head.Load()
		if h == r.tailCache {
			r.tailCache = r.tail.Load()
			if h == r.tailCache {
				return 0, false
			}
		}
		i := h & r.mask
		off := int(i) * r.slotSize
		l := int(r.lens[i])
		if l <= len(dst) {
			n = copy(dst, r.data[off:off+l])
		}
		// Storing head hands the slot back to the producer.
		r.head.Store(h + 1)
		if l <= len(dst) {
			return n, true
		}
		r.TooLong.Add(1)
	}
}

// Len is a snapshot of the number of queued frames.
func (r *FrameRing) Len() int { return int(r.tail.Load() - r.head.Load()) }

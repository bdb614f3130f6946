// Package poolfloor measures how few instructions a bulk allocation and
// return of 32 buffers can take in Go while every returned buffer is still
// checked as the pool checks it. It is a measurement, not a pool: nothing
// imports it. scripts/bench-instr counts it beside the pool's own bulk
// loop (pool-floor-bulk32, pool-floor-unchecked-bulk32), and
// docs/benchmarks.md ("How far down the bulk path goes") reads the figures.
//
// The loops are the pool's (pool/alloc.go AllocBulk, pool/turns_amd64.go),
// eight buffers a turn, over a header laid out for the fewest stores an
// allocation can make, at the price of three changes the pool does not
// make:
//
//   - The per-holder fields an allocation must clear come first, 16 bytes
//     (the holder word and the frame length), one 16-byte store of zeros.
//     The device's report words are not cleared: a fresh header's holder
//     word names no report format, so they are never read.
//   - The data window (offset and length) is one word, stored whole.
//   - The segment count and the state word are one word, stored whole: the
//     flags cleared (out) and the generation set from a per-pool sequence
//     that steps once per bulk, where the pool keeps each header's
//     generation and steps it on each return. A stale ring entry carries
//     an older sequence, so it is refused as the pool refuses it.
//
// A return keeps the pool's checks: all eight headers of a turn proven to
// lie in the header array before anything is written (one subtraction
// each and one compare of their OR: no foreign, forged or nil pointer is
// taken), then each marked home with one addition and read back, so a
// buffer already home (a double free, or one given twice in the bulk)
// sends the bulk to a checked one-at-a-time path that refuses and counts
// it. RecycleBulkUnchecked is the same return without the proof and the
// read-back: what a free list that trusts its caller does.
package poolfloor

import "unsafe"

// Header is a buffer's header in the lowest-store layout; 104 bytes, as
// pool.Packet.
type Header struct {
	holder uint64 // owner, port, queue and report format; 0 when fresh
	PktLen int

	off, len int32 // the data window: one word

	NSegs int32
	state uint32 // flags (low byte) and generation: one word with NSegs

	ptype, vlan uint16 // the device's report words: read only under holder's format
	flags, hash uint32

	buf  []byte
	iova uint64
	pool *Pool
	idx  uint32
	_    uint32
	next *Header
}

const (
	stHome    = 1 << 0
	stChained = 1 << 1
	genShift  = 8
)

// Pool is a pool's owner cache and header array, nothing else.
type Pool struct {
	cache []uint32 // free headers, each as its byte offset from hdr0
	hdr0  unsafe.Pointer
	base  uintptr
	span  uintptr // the header array's reach, a power of two
	head  uint64  // a fresh data window: the headroom, no bytes
	word  uint64  // what an allocation stores over NSegs and the state (outWord)
	step  uint64  // what a generation adds to word, in either byte order
	runs  int     // bulks since the last publication of the counters, as the pool counts them

	taken          uint64 // buffers taken back
	refusedForeign uint64 // returns of a header that is not this pool's
	refusedDouble  uint64 // returns of a buffer already home
	hdrs           []Header
	headroom       int
}

// publishRuns is the pool's: a bulk allocation takes the slow path once
// every publishRuns bulks.
const publishRuns = 64

// New makes a pool of n headers, all home.
func New(n, headroom int) *Pool {
	size := int(unsafe.Sizeof(Header{}))
	reach := 1
	for reach < n*size {
		reach <<= 1
	}
	p := &Pool{hdrs: make([]Header, n, (reach+size-1)/size), span: uintptr(reach), headroom: headroom}
	p.hdr0 = unsafe.Pointer(&p.hdrs[0])
	p.base = uintptr(p.hdr0)
	p.head = uint64(uint32(headroom))
	p.word, p.step = outWord(0), outWord(1)-outWord(0)
	p.cache = make([]uint32, 0, n)
	for i := range p.hdrs {
		h := &p.hdrs[i]
		h.pool, h.idx, h.state = p, uint32(i), stHome
		p.cache = append(p.cache, uint32(i*size))
	}
	return p
}

// Free is how many buffers are home.
func (p *Pool) Free() int { return len(p.cache) }

// Counts returns the buffers taken back and the returns refused as foreign
// and as double.
func (p *Pool) Counts() (taken, foreign, double uint64) {
	return p.taken, p.refusedForeign, p.refusedDouble
}

// AllocBulk fills out with fresh buffers and returns how many it got.
func (p *Pool) AllocBulk(out []*Header) int {
	cache, k := p.cache, len(out)
	r := len(cache) - k
	if r < 0 || k == 0 || p.runs >= publishRuns-1 {
		return p.allocBulkSlow(out)
	}
	p.cache = cache[:r]
	p.runs++
	p.word += p.step
	sp := unsafe.Add(unsafe.Pointer(unsafe.SliceData(cache)), r*4)
	dp, base, head, word := unsafe.Pointer(unsafe.SliceData(out)), p.hdr0, p.head, p.word
	j, turns := 0, k&^7
	for tp := &turns; j < *tp; j += 8 {
		s := (*[8]uint32)(unsafe.Add(sp, j*4))
		d := (*[8]*Header)(unsafe.Add(dp, j*int(unsafe.Sizeof(out[0]))))
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = fresh(base, s[0], head, word), fresh(base, s[1], head, word),
			fresh(base, s[2], head, word), fresh(base, s[3], head, word), fresh(base, s[4], head, word),
			fresh(base, s[5], head, word), fresh(base, s[6], head, word), fresh(base, s[7], head, word)
	}
	for ; j < k; j++ {
		out[j] = fresh(base, *(*uint32)(unsafe.Add(sp, j*4)), head, word)
	}
	return k
}

// allocBulkSlow is AllocBulk when the cache holds less than the bulk or a
// publication is due: as many as there are, one at a time. Out of line,
// as the pool's (too big to inline) is: inlined, it takes registers from
// AllocBulk's loop.
//
//go:noinline
func (p *Pool) allocBulkSlow(out []*Header) int {
	if len(out) > 0 && len(p.cache) >= len(out) {
		p.runs = 0 // where the pool publishes its counters
		return p.AllocBulk(out)
	}
	p.runs = 0
	p.word += p.step
	n := min(len(out), len(p.cache))
	for i := range n {
		c := len(p.cache) - 1
		out[i] = fresh(p.hdr0, p.cache[c], p.head, p.word)
		p.cache = p.cache[:c]
	}
	return n
}

// outWord is the word an allocation stores over NSegs and the state: one
// segment, out (flags clear), generation gen.
func outWord(gen uint32) uint64 {
	w := struct {
		nsegs int32
		state uint32
	}{1, gen << genShift}
	return *(*uint64)(unsafe.Pointer(&w))
}

// fresh gives the header at offset off from base a fresh holder's
// metadata and marks it out: three stores.
func fresh(base unsafe.Pointer, off uint32, head, word uint64) *Header {
	h := (*Header)(unsafe.Add(base, off))
	*(*[2]uint64)(unsafe.Pointer(h)) = [2]uint64{}
	*(*uint64)(unsafe.Pointer(&h.off)) = head
	*(*uint64)(unsafe.Pointer(&h.NSegs)) = word
	return h
}

// RecycleBulk takes pkts back into the cache, refusing and counting any
// header that is not this pool's or not out.
func (p *Pool) RecycleBulk(pkts []*Header) {
	n, k := len(p.cache), len(pkts)
	if m := n + k; k > 0 && m <= cap(p.cache) {
		p.cache = p.cache[:m]
		p.taken += uint64(k)
		dst := unsafe.Add(unsafe.Pointer(unsafe.SliceData(p.cache)), n*4)
		i, ok := takeTurns(unsafe.Pointer(unsafe.SliceData(pkts)), dst, p.hdr0, p.base, p.span, k&^7)
		if i == k && ok {
			return
		}
		p.cache = p.cache[:n]
		p.taken -= uint64(k)
		if !ok {
			for _, h := range pkts[:i] {
				h.state -= stHome
			}
			i = 0
		}
		pkts = pkts[i:]
		if i > 0 {
			p.cache = p.cache[:n+i]
			p.taken += uint64(i)
		}
	}
	for _, h := range pkts {
		p.recycleOne(h)
	}
}

// recycleOne is the checked return of one header.
func (p *Pool) recycleOne(h *Header) {
	d := uintptr(unsafe.Pointer(h)) - p.base
	switch {
	case d >= p.span || d >= uintptr(len(p.hdrs))*unsafe.Sizeof(Header{}):
		p.refusedForeign++
	case uint8(h.state) != 0:
		p.refusedDouble++
	case len(p.cache) == cap(p.cache):
		p.refusedDouble++ // more returns than buffers: one of them is a double
	default:
		h.state += stHome
		p.cache = append(p.cache, uint32(d))
		p.taken++
	}
}

// RecycleBulkUnchecked is RecycleBulk without the checks: each header is
// marked home and taken, whatever it is. A forged or foreign header is
// written to and lands in the cache; so does a double free.
func (p *Pool) RecycleBulkUnchecked(pkts []*Header) {
	n, k := len(p.cache), len(pkts)
	if m := n + k; k > 0 && m <= cap(p.cache) {
		p.cache = p.cache[:m]
		p.taken += uint64(k)
		takeUnchecked(unsafe.Pointer(unsafe.SliceData(pkts)), unsafe.Add(unsafe.Pointer(unsafe.SliceData(p.cache)), n*4), p.base, k)
	}
}

func takeUnchecked(pkts, dst unsafe.Pointer, base uintptr, k int) {
	i, turns := 0, k&^7
	for ; i < turns; i += 8 {
		// The eight loaded before any store: the stores through them may
		// alias the array as far as the compiler knows, and a load after
		// them would be a second load of each.
		q := (*[8]*Header)(unsafe.Add(pkts, i*int(unsafe.Sizeof((*Header)(nil)))))
		h0, h1, h2, h3, h4, h5, h6, h7 := q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]
		h0.state += stHome
		h1.state += stHome
		h2.state += stHome
		h3.state += stHome
		h4.state += stHome
		h5.state += stHome
		h6.state += stHome
		h7.state += stHome
		o := (*[8]uint32)(unsafe.Add(dst, i*4))
		o[0], o[1] = uint32(uintptr(unsafe.Pointer(h0))-base), uint32(uintptr(unsafe.Pointer(h1))-base)
		o[2], o[3] = uint32(uintptr(unsafe.Pointer(h2))-base), uint32(uintptr(unsafe.Pointer(h3))-base)
		o[4], o[5] = uint32(uintptr(unsafe.Pointer(h4))-base), uint32(uintptr(unsafe.Pointer(h5))-base)
		o[6], o[7] = uint32(uintptr(unsafe.Pointer(h6))-base), uint32(uintptr(unsafe.Pointer(h7))-base)
	}
	for ; i < k; i++ {
		h := *(**Header)(unsafe.Add(pkts, i*int(unsafe.Sizeof((*Header)(nil)))))
		h.state += stHome
		*(*uint32)(unsafe.Add(dst, i*4)) = uint32(uintptr(unsafe.Pointer(h)) - base)
	}
}

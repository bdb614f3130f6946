package xdp

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gopmd/gopmd/xdp/internal/xsk"
	"golang.org/x/sys/unix"
)

// ring is one of a socket's four rings, mapped from the kernel: a producer
// and a consumer index, a flags word (need_wakeup) and the entries (a
// 64-bit UMEM address for the fill and completion rings, an xdp_desc for
// RX and TX). Each side keeps its own index cached and publishes it once
// per burst, and keeps its last view of the other side's index too
// (seen): a consumer reads the kernel's producer index only when the
// entries its view counts are all taken, a producer reads the kernel's
// consumer index only when its view shows too little room. Those loads are
// acquire loads (LDAR on arm64), so the entries they cover are read after
// them; the publishing stores are release stores (STLR), so the entries
// written before them are seen by the kernel first.
type ring struct {
	prod, cons *uint32
	flags      *uint32
	base       unsafe.Pointer // the entries: mask+1 of them, indexed by an index & mask
	addrs      []uint64       // fill, completion
	descs      []xsk.Desc     // rx, tx
	mask, size uint32
	cached     uint32 // our own index: the producer's for fill and TX, the consumer's for RX and completion
	// seen is the other side's index as last read: for RX and completion
	// the kernel's producer index, never more than size ahead of cached
	// whatever the kernel wrote; for fill and TX its consumer index,
	// never ahead of cached nor more than size behind it.
	seen uint32
	mem  []byte
}

// mapRing maps the ring of n entries at page offset pgoff.
func mapRing(fd int, off xsk.RingOffset, pgoff int64, n uint32, desc bool, name string) (*ring, error) {
	es := uint64(8)
	if desc {
		es = uint64(unsafe.Sizeof(xsk.Desc{}))
	}
	mem, err := unix.Mmap(fd, pgoff, int(off.Desc+uint64(n)*es), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mapping the %s ring (%d entries): %w", name, n, err)
	}
	r := &ring{
		prod:  (*uint32)(unsafe.Pointer(&mem[off.Producer])),
		cons:  (*uint32)(unsafe.Pointer(&mem[off.Consumer])),
		flags: (*uint32)(unsafe.Pointer(&mem[off.Flags])),
		mask:  n - 1, size: n, mem: mem,
	}
	base := unsafe.Pointer(&mem[off.Desc])
	if desc {
		r.setEntries(unsafe.Slice((*xsk.Desc)(base), n), nil)
	} else {
		r.setEntries(nil, unsafe.Slice((*uint64)(base), n))
	}
	// Our index starts where the kernel's view of it is (0 on a new
	// socket): the consumer's for the rings we read, the producer's for
	// the rings we write; our view of the other index starts equal to it
	// (nothing to read, no room known), and the first burst reads it.
	r.cached = atomic.LoadUint32(r.prod)
	if pgoff == xsk.PgoffRxRing || pgoff == xsk.PgoffCompletionRng {
		r.cached = atomic.LoadUint32(r.cons)
	}
	r.seen = r.cached
	return r, nil
}

// setEntries gives the ring its entries, descs or addrs, of size entries
// each: the bursts index them from base with an index masked to the
// ring's size, so they must hold mask+1 entries.
func (r *ring) setEntries(descs []xsk.Desc, addrs []uint64) {
	r.descs, r.addrs = descs, addrs
	switch {
	case len(descs) > 0 && len(descs) == int(r.mask)+1:
		r.base = unsafe.Pointer(unsafe.SliceData(descs))
	case len(addrs) > 0 && len(addrs) == int(r.mask)+1:
		r.base = unsafe.Pointer(unsafe.SliceData(addrs))
	default:
		panic(fmt.Sprintf("xdp: a ring of %d entries given %d descriptors and %d addresses", r.mask+1, len(descs), len(addrs)))
	}
}

// descRun is the descriptors from index i on, up to n of them, that lie
// in one run, before the ring wraps (RX, TX).
func (r *ring) descRun(i, n uint32) []xsk.Desc {
	s := i & r.mask
	return r.descs[s : s+min(n, r.size-s)]
}

// addrRun is descRun for the address rings (fill, completion).
func (r *ring) addrRun(i, n uint32) []uint64 {
	s := i & r.mask
	return r.addrs[s : s+min(n, r.size-s)]
}

// desc is the descriptor at index i (RX, TX).
func (r *ring) desc(i uint32) *xsk.Desc {
	return (*xsk.Desc)(unsafe.Add(r.base, uintptr(i&r.mask)*unsafe.Sizeof(xsk.Desc{})))
}

func (r *ring) unmap() {
	if r != nil && r.mem != nil {
		_ = unix.Munmap(r.mem)
		r.mem = nil
	}
}

// room is how many entries a producer may write now, from its view of
// the kernel's consumer index; when the view shows fewer than want, it
// reads the index again first. A consumer index the kernel could not have
// written (ahead of ours, or behind the one last read) leaves the view as
// it was.
func (r *ring) room(want uint32) uint32 {
	free := r.size - (r.cached - r.seen)
	if free >= want {
		return free
	}
	c := atomic.LoadUint32(r.cons)
	if c-r.seen <= r.cached-r.seen {
		r.seen = c
		free = r.size - (r.cached - c)
	}
	return free
}

// avail is how many entries a consumer may read now, from its view of the
// kernel's producer index; only when the view has none left does it read
// the index again. Never more than the ring holds, whatever the producer's
// index says.
func (r *ring) avail() uint32 {
	if r.seen != r.cached {
		return r.seen - r.cached
	}
	return r.refresh()
}

// refresh reads the kernel's producer index (an acquire load: the entries
// up to it are read after it) into the view, and returns how many entries
// it offers, at most the ring's size.
func (r *ring) refresh() uint32 {
	n := atomic.LoadUint32(r.prod) - r.cached
	if n != 0 { // nothing to store for an empty ring: the empty poll's path
		n = r.saw(n)
	}
	return n
}

// saw takes n, the kernel's producer index just read less the cached
// consumer index, into the view: no more than the ring's size, which it
// returns.
func (r *ring) saw(n uint32) uint32 {
	n = min(n, r.size)
	r.seen = r.cached + n
	return n
}

// ready is how many entries a consumer may read now, the kernel's
// producer index read afresh.
func (r *ring) ready() uint32 { return r.refresh() }

// publish makes the entries written up to the cached producer index
// visible to the kernel.
func (r *ring) publish() { atomic.StoreUint32(r.prod, r.cached) }

// release gives the entries read up to the cached consumer index back.
func (r *ring) release() { atomic.StoreUint32(r.cons, r.cached) }

// needWakeup reports whether the kernel asks for a syscall to go on.
func (r *ring) needWakeup() bool { return atomic.LoadUint32(r.flags)&xsk.RingNeedWakeup != 0 }

// pending is how many entries a producer wrote that the kernel has not yet
// consumed.
func (r *ring) pending() uint32 { return r.cached - atomic.LoadUint32(r.cons) }

// unsafePointer is the address of b's first byte (memory mapped outside
// the Go heap: the UMEM).
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

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
// RX and TX). The side that produces keeps its index cached and publishes
// it once per burst; the other side's index is read once per burst.
type ring struct {
	prod, cons *uint32
	flags      *uint32
	addrs      []uint64   // fill, completion
	descs      []xsk.Desc // rx, tx
	mask, size uint32
	cached     uint32 // our own index: the producer's for fill and TX, the consumer's for RX and completion
	mem        []byte
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
		r.descs = unsafe.Slice((*xsk.Desc)(base), n)
	} else {
		r.addrs = unsafe.Slice((*uint64)(base), n)
	}
	// Our index starts where the kernel's view of it is (0 on a new
	// socket): the consumer's for the rings we read, the producer's for
	// the rings we write.
	r.cached = atomic.LoadUint32(r.prod)
	if pgoff == xsk.PgoffRxRing || pgoff == xsk.PgoffCompletionRng {
		r.cached = atomic.LoadUint32(r.cons)
	}
	return r, nil
}

func (r *ring) unmap() {
	if r != nil && r.mem != nil {
		_ = unix.Munmap(r.mem)
		r.mem = nil
	}
}

// free is how many entries a producer may write now.
func (r *ring) free() uint32 {
	used := r.cached - atomic.LoadUint32(r.cons)
	if used > r.size { // the kernel's index is not one it could have written
		return 0
	}
	return r.size - used
}

// ready is how many entries a consumer may read now, never more than the
// ring holds whatever the producer's index says.
func (r *ring) ready() uint32 {
	n := atomic.LoadUint32(r.prod) - r.cached
	if n > r.size {
		return r.size
	}
	return n
}

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

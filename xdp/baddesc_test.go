package xdp

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/xdp/internal/xsk"
)

// memRing is a ring in Go memory, standing in for one the kernel maps.
func memRing(n uint32, desc bool) *ring {
	r := &ring{prod: new(uint32), cons: new(uint32), flags: new(uint32), mask: n - 1, size: n}
	if desc {
		r.setEntries(make([]xsk.Desc, n), nil)
	} else {
		r.setEntries(nil, make([]uint64, n))
	}
	return r
}

// memQueue is an RX queue over rings in memory (no kernel, no socket):
// a UMEM of frames of fs bytes, its pool, an RX ring of 8 and a fill ring
// refill has filled with every buffer.
func memQueue(t *testing.T, frames, fs int) (*queue, *pool.Pool) {
	t.Helper()
	region, err := dma.Alloc(umemMapper{}, frames*fs, dma.Options{Attr: dma.Attr{Name: "bad descriptors"}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { region.Close() })
	pl, err := pool.New(region, pool.Config{Name: "bad descriptors", Count: frames, BufSize: fs, Headroom: xsk.PacketHeadroom})
	if err != nil {
		t.Fatal(err)
	}
	p := &port{spec: "xdp:test", cfg: driver.Config{PortID: 3}}
	q := &queue{p: p, frameMask: uint64(fs - 1), nframes: uint64(frames), rxPool: pl,
		rxSlot: make([]*pool.Packet, frames*fs>>slotShift), txSlot: make([]*pool.Packet, frames*fs>>slotShift),
		rx: memRing(8, true), fill: memRing(uint32(frames), false)}
	q.rxOwner, q.appOwner = pl.Owner("fill ring"), pl.Owner("caller")
	q.refill()
	return q, pl
}

// TestRxBadDescriptors: RxBurst takes the frames of good descriptors and
// drops, counts as bad_descriptor and never hands out the others: an
// address past the UMEM, a frame with no buffer posted, a length past the
// frame, a length of zero. No kernel is needed: the rings are in memory.
func TestRxBadDescriptors(t *testing.T) {
	const frames, fs = 16, 2048
	q, pl := memQueue(t, frames, fs)
	if *q.fill.prod != frames {
		t.Fatalf("refill posted %d buffers, want %d", *q.fill.prod, frames)
	}
	at := func(slot int) uint64 { return uint64(slot*fs + xsk.PacketHeadroom) }
	descs := []xsk.Desc{
		{Addr: at(0), Len: 60},            // good
		{Addr: frames * fs, Len: 60},      // past the UMEM
		{Addr: at(0), Len: 60},            // frame 0 again: no buffer posted now
		{Addr: 2*fs - 100, Len: 200},      // past frame 1's end
		{Addr: at(2), Len: 0},             // empty
		{Addr: at(3) + 10, Len: fs - 266}, // good, up to the frame's end
	}
	copy(q.rx.descs, descs)
	*q.rx.prod = uint32(len(descs))
	var pkts [32]*pool.Packet
	got := (*rxQueue)(q).RxBurst(pkts[:])
	if got != 2 {
		t.Fatalf("RxBurst took %d frames, want the 2 good ones", got)
	}
	if pkts[0].Len() != 60 || pkts[0].IOVA() != at(0) || pkts[1].Len() != fs-266 || pkts[1].IOVA() != at(3)+10 {
		t.Errorf("frames: %d bytes at %#x, %d bytes at %#x; want 60 at %#x, %d at %#x",
			pkts[0].Len(), pkts[0].IOVA(), pkts[1].Len(), pkts[1].IOVA(), at(0), fs-266, at(3)+10)
	}
	st := q.rxc.Snapshot()
	if st.Packets != 2 || st.Drops[driver.CauseBadDescriptor] != 4 {
		t.Errorf("counted %d frames and %d bad descriptors, want 2 and 4", st.Packets, st.Drops[driver.CauseBadDescriptor])
	}
	if *q.rx.cons != uint32(len(descs)) {
		t.Errorf("RX ring released up to %d, want %d", *q.rx.cons, len(descs))
	}
	// The buffers of frames 1 and 2 went back to the pool: with the frames
	// taken and the buffers still posted freed, the pool closes with
	// every buffer home.
	pool.FreeBulk(pkts[:got])
	for i, pk := range q.rxSlot {
		if pk != nil {
			if i == 1 || i == 2 {
				t.Errorf("frame %d's buffer is still posted after its descriptor was dropped", i)
			}
			pk.Free()
		}
	}
	if err := pl.Close(time.Second); err != nil {
		t.Errorf("a dropped descriptor's buffer did not go back: %v", err)
	}
}

// With frames of 4096 bytes the RX slots are kept per 2048 bytes of UMEM:
// a descriptor in a frame's second half names no buffer posted and is
// dropped as bad_descriptor (the kernel points RX descriptors at a frame's
// start plus the headroom), while a frame up to its last byte is taken.
func TestRxBadDescriptorsLargeFrames(t *testing.T) {
	const frames, fs = 8, 4096
	q, pl := memQueue(t, frames, fs)
	at := func(f int) uint64 { return uint64(f*fs + xsk.PacketHeadroom) }
	descs := []xsk.Desc{
		{Addr: at(0), Len: fs - xsk.PacketHeadroom},     // good, the whole frame
		{Addr: 1*fs + 2048, Len: 60},                    // frame 1's second half
		{Addr: at(2), Len: fs - xsk.PacketHeadroom + 1}, // one byte past frame 2
		{Addr: at(1), Len: 60},                          // good
	}
	copy(q.rx.descs, descs)
	*q.rx.prod = uint32(len(descs))
	var pkts [8]*pool.Packet
	got := (*rxQueue)(q).RxBurst(pkts[:])
	if got != 2 || pkts[0].IOVA() != at(0) || pkts[0].Len() != fs-xsk.PacketHeadroom || pkts[1].IOVA() != at(1) {
		t.Fatalf("RxBurst took %d frames, want frames 0 and 1", got)
	}
	if st := q.rxc.Snapshot(); st.Drops[driver.CauseBadDescriptor] != 2 {
		t.Errorf("counted %d bad descriptors, want 2", st.Drops[driver.CauseBadDescriptor])
	}
	pool.FreeBulk(pkts[:got])
	for _, pk := range q.rxSlot {
		if pk != nil {
			pk.Free()
		}
	}
	if err := pl.Close(time.Second); err != nil {
		t.Errorf("a buffer did not go back: %v", err)
	}
}

// The ring indices the kernel writes are checked where they are read: a
// producer index more than the ring ahead offers the ring's size and no
// more; a consumer index ahead of the entries produced, or behind the one
// read before, leaves the room as it was.
func TestRingIndicesChecked(t *testing.T) {
	rx := memRing(8, true)
	*rx.prod = 1000
	if n := rx.avail(); n != 8 {
		t.Errorf("producer index 1000 on an empty ring of 8: %d entries offered, want 8", n)
	}
	fill := memRing(8, false)
	fill.cached = 5 // five entries produced, none consumed
	*fill.cons = 7
	if n := fill.room(8); n != 3 {
		t.Errorf("consumer index 7 past the producer's 5: room %d, want 3", n)
	}
	*fill.cons = 4
	if n := fill.room(8); n != 7 {
		t.Errorf("consumer index 4: room %d, want 7", n)
	}
	*fill.cons = 2
	if n := fill.room(8); n != 7 {
		t.Errorf("consumer index back from 4 to 2: room %d, want 7", n)
	}
}

package pool

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/sim/simdma"
)

func newRegion(t testing.TB, m dma.Mapper, size int) *dma.Region {
	t.Helper()
	r, err := dma.Alloc(m, size, dma.Options{Attr: dma.Attr{Name: t.Name()}, Hugepages: dma.HugeNever})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func newPool(t testing.TB, cfg Config) *Pool {
	t.Helper()
	if cfg.BufSize == 0 {
		cfg.BufSize = DefaultBufSize
	}
	r := newRegion(t, simdma.NewIOMMU(false), cfg.Offset+cfg.Count*cfg.BufSize)
	p, err := New(r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAllocFreeRoundTrip(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "rt", Count: 256})
	seen := map[*Packet]bool{}
	var got []*Packet
	for {
		pk := p.Alloc()
		if pk == nil {
			break
		}
		if seen[pk] {
			t.Fatalf("buffer %d handed out twice", pk.idx)
		}
		seen[pk] = true
		if pk.Len() != 0 || pk.Headroom() != DefaultHeadroom || pk.BufSize() != DefaultBufSize {
			t.Fatalf("fresh buffer: len %d headroom %d size %d", pk.Len(), pk.Headroom(), pk.BufSize())
		}
		got = append(got, pk)
	}
	if len(got) != 256 {
		t.Fatalf("allocated %d buffers, pool has 256", len(got))
	}
	if n := p.InFlight(); n != 256 {
		t.Fatalf("InFlight = %d, want 256", n)
	}
	// Buffers do not overlap and their IOVAs follow the layout.
	for _, pk := range got {
		if want := pk.pool.hdrs[0].iova + uint64(pk.idx)*DefaultBufSize; pk.BufIOVA() != want {
			t.Fatalf("buffer %d IOVA %#x, want %#x", pk.idx, pk.BufIOVA(), want)
		}
	}
	for i, pk := range got {
		if i%2 == 0 {
			pk.Free()
		} else {
			p.Recycle(pk)
		}
	}
	if n := p.InFlight(); n != 0 {
		t.Fatalf("InFlight after freeing all = %d", n)
	}
	s := p.OwnerStats()
	if s.RecycleRing != 128 || s.RecycleCached+s.RecycleCacheFull != 128 {
		t.Fatalf("recycle counts: %+v", s)
	}
	if s.AllocEmpty != 1 || s.AllocFast+s.AllocSlow != 256 {
		t.Fatalf("alloc counts: %+v", s)
	}
	if err := p.Close(time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestDataWindow(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Count: 4, BufSize: 256, Headroom: 64})
	pk := p.Alloc()
	copy(pk.Append(10), "0123456789")
	if string(pk.Data()) != "0123456789" || pk.IOVA() != pk.BufIOVA()+64 {
		t.Fatalf("data %q iova %#x", pk.Data(), pk.IOVA())
	}
	copy(pk.Prepend(4), "abcd")
	if string(pk.Data()) != "abcd0123456789" || pk.Headroom() != 60 {
		t.Fatalf("after prepend: %q headroom %d", pk.Data(), pk.Headroom())
	}
	if pk.Append(pk.Tailroom()+1) != nil || pk.Prepend(61) != nil || pk.SetData(200, 57) {
		t.Fatal("a window past the buffer was accepted")
	}
	if pk.Len() != 14 {
		t.Fatalf("refused growth changed the length to %d", pk.Len())
	}
	pk.Free()
	// A recycled buffer comes back with a fresh window.
	pk = p.Alloc()
	if pk.Headroom() != 64 || pk.Len() != 0 {
		t.Fatalf("recycled buffer window: headroom %d len %d", pk.Headroom(), pk.Len())
	}
	pk.Free()
}

func TestRefusedFrees(t *testing.T) {
	// Serial: it asserts how much the process-wide ForgedFrees grew, which a
	// parallel test's forged free would add to.
	a := newPool(t, Config{Name: "a", Count: 8})
	b := newPool(t, Config{Name: "b", Count: 8})

	// Double free through the owner path.
	pk := a.Alloc()
	a.Recycle(pk)
	a.Recycle(pk)
	if s := a.OwnerStats(); s.RefusedDouble != 1 {
		t.Fatalf("owner double free: RefusedDouble = %d", s.RefusedDouble)
	}

	// Double free through the shared path: detected when the owner drains.
	pk = a.Alloc()
	pk.Free()
	pk.Free()
	if n := a.InFlight(); n != 0 {
		t.Fatalf("InFlight = %d", n)
	}
	if s := a.OwnerStats(); s.RefusedDouble != 2 {
		t.Fatalf("shared double free: RefusedDouble = %d", s.RefusedDouble)
	}
	// The duplicate did not put the buffer in the pool twice.
	seen := map[*Packet]bool{}
	for pk := a.Alloc(); pk != nil; pk = a.Alloc() {
		if seen[pk] {
			t.Fatalf("buffer %d handed out twice after a double free", pk.idx)
		}
		seen[pk] = true
	}
	if len(seen) != 8 {
		t.Fatalf("pool a yields %d buffers, want 8", len(seen))
	}
	for pk := range seen {
		a.Recycle(pk)
	}

	// Foreign: b's buffer handed to a's owner path.
	pb := b.Alloc()
	a.Recycle(pb)
	if s := a.OwnerStats(); s.RefusedForeign != 1 {
		t.Fatalf("RefusedForeign = %d", s.RefusedForeign)
	}
	if n := b.InFlight(); n != 1 {
		t.Fatalf("pool b InFlight = %d after its buffer was refused by a", n)
	}
	pb.Free() // goes home to b
	if n := b.InFlight(); n != 0 {
		t.Fatalf("pool b InFlight = %d", n)
	}

	// Forged: a header made by the caller, and a copy of a real one.
	before := ForgedFrees()
	(&Packet{}).Free()
	real := a.Alloc()
	fake := new(Packet)
	*fake = Packet{buf: real.buf, iova: real.iova, pool: real.pool, idx: real.idx}
	fake.Free()
	a.Recycle(fake)
	FreeBulk([]*Packet{fake})
	if got := ForgedFrees() - before; got != 4 {
		t.Fatalf("ForgedFrees grew by %d, want 4", got)
	}
	real.Free()
	if a.InFlight() != 0 || b.InFlight() != 0 {
		t.Fatal("buffers still out")
	}
	if a.Available() != 8 {
		t.Fatalf("pool a has %d buffers available, want 8", a.Available())
	}
}

// Recycle's fast path (the cache has room) makes its own checks: a double
// free, a chain and a header of another pool must be refused or recycled
// whole there too, not only when a full cache sends them the slow way.
// A stale duplicate: a buffer freed twice through the shared ring, whose
// first entry brought it home and out again before the second one arrived.
// The buffer is out then, so only the generation the entry carries tells
// the duplicate from a real return: it must be refused, never handed out a
// second time to a new holder.
func TestStaleDuplicateRefused(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "stale", Count: 1}) // cache and refill of 1: one entry per refill
	a := p.Alloc()
	a.Free()
	a.Free() // the duplicate, queued behind the real return
	// The refill takes the first entry: a comes home and goes out again.
	if pk := p.Alloc(); pk != a {
		t.Fatalf("the pool's one buffer did not come back: got %v", pk)
	}
	// The stale entry is next in the ring: refused, and the pool is empty.
	if pk := p.Alloc(); pk != nil {
		t.Fatalf("buffer %d handed out while its holder has it: a stale duplicate was accepted", pk.idx)
	}
	if s := p.OwnerStats(); s.RefusedDouble != 1 {
		t.Fatalf("RefusedDouble = %d, want 1", s.RefusedDouble)
	}
	p.Recycle(a)
	if n := p.InFlight(); n != 0 || p.Available() != 1 {
		t.Fatalf("%d out, %d available after the holder returned it; want 0 and 1", n, p.Available())
	}
}

func TestRecycleFastPathChecks(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "fast", Count: 16})
	q := newPool(t, Config{Name: "other", Count: 16})
	a, b := p.Alloc(), p.Alloc()
	p.Recycle(a)
	p.Recycle(a) // the cache has room: the generation must refuse it
	if s := p.OwnerStats(); s.RefusedDouble != 1 || s.RecycleCached != 1 {
		t.Fatalf("fast-path double free: RefusedDouble = %d, RecycleCached = %d, want 1 and 1", s.RefusedDouble, s.RecycleCached)
	}
	c := p.Alloc()
	b.SetNext(c)
	p.Recycle(b) // a chain: both segments go home
	if n := p.InFlight(); n != 0 {
		t.Fatalf("Recycle of a two-segment chain with room in the cache left %d out", n)
	}
	pq := q.Alloc()
	p.Recycle(pq)
	if s := p.OwnerStats(); s.RefusedForeign != 1 {
		t.Fatalf("fast-path foreign free: RefusedForeign = %d", s.RefusedForeign)
	}
	q.Recycle(pq)
	seen := map[*Packet]bool{}
	for pk := p.Alloc(); pk != nil; pk = p.Alloc() {
		if seen[pk] {
			t.Fatalf("buffer %d handed out twice after a fast-path double free", pk.idx)
		}
		seen[pk] = true
	}
	if len(seen) != 16 {
		t.Fatalf("pool yields %d buffers, want 16", len(seen))
	}
}

// The free fast paths tell a chain from a single buffer by the flag SetNext
// keeps in the state word: every way of linking and unlinking a segment must
// keep it, or a fast path would take a chain's head alone and its tail
// would never come back.
func TestChainFlagFollowsSetNext(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "flag", Count: 8})
	own := p.Owner("tx ring")
	a, b, c := p.Alloc(), p.Alloc(), p.Alloc()
	a.SetNext(b)
	a.SetNext(nil) // single again: Recycle takes a alone, b stays out
	p.Recycle(a)
	if n := p.InFlight(); n != 2 {
		t.Fatalf("after unlinking and recycling the head, %d out, want 2", n)
	}
	b.SetNext(c)
	b.SetNext(c) // linked twice: still one chain
	p.Recycle(b)
	if n := p.InFlight(); n != 0 {
		t.Fatalf("Recycle of a relinked chain left %d out", n)
	}

	// A chain through each bulk fast run, then through the shared ring from
	// another goroutine: home whole every time.
	for _, free := range []struct {
		name string
		fn   func(pk *Packet)
	}{
		{"RecycleBulk", func(pk *Packet) { p.RecycleBulk([]*Packet{pk}) }},
		{"FreeBulkDirect", func(pk *Packet) { p.FreeBulkDirect([]*Packet{pk}) }},
		{"FreeSlots", func(pk *Packet) {
			if n := FreeSlots(p, []*Packet{pk, nil}); n != 1 {
				t.Fatalf("FreeSlots freed %d frames, want 1", n)
			}
		}},
		{"Free from another goroutine", func(pk *Packet) {
			done := make(chan struct{})
			go func() { pk.Free(); close(done) }()
			<-done
		}},
	} {
		head, mid, tail := p.Alloc(), p.Alloc(), p.Alloc()
		head.SetNext(mid)
		mid.SetNext(tail)
		head.SetOwner(own)
		free.fn(head)
		if n := p.InFlight(); n != 0 {
			t.Fatalf("%s of a three-segment chain left %d out", free.name, n)
		}
	}

	// What came back through the ring was unlinked on the way: all eight
	// buffers are single now, and every one comes back alone.
	var all []*Packet
	for pk := p.Alloc(); pk != nil; pk = p.Alloc() {
		if pk.Next() != nil {
			t.Fatalf("buffer %d allocated with a next segment", pk.idx)
		}
		all = append(all, pk)
	}
	if len(all) != 8 {
		t.Fatalf("pool yields %d buffers, want 8", len(all))
	}
	for _, pk := range all[:4] {
		p.Recycle(pk)
		p.Recycle(pk) // and a second time: refused
	}
	p.RecycleBulk(all[4:])
	if s := p.OwnerStats(); s.RefusedDouble != 4 || p.InFlight() != 0 {
		t.Fatalf("RefusedDouble = %d, %d out; want 4 and 0", s.RefusedDouble, p.InFlight())
	}
}

// Every allocation hands out fresh metadata, whatever the last holder left:
// data at the headroom, no bytes, one segment, every other field zero. The
// fast pop, the bulk take, the slow path after a refill from the ring and a
// split page's piece each write it their way.
func TestAllocResetsMetadata(t *testing.T) {
	t.Parallel()
	dirty := func(pk *Packet) {
		pk.SetData(10, 20)
		pk.SetOwner(3)
		pk.Port, pk.Queue, pk.NSegs, pk.PktLen = 1, 2, 6, 7
		pk.SetRxMeta(RxMeta{Ptype: 3, VLAN: 4, Flags: FlagRSSHash | FlagParseError, Hash: 5})
	}
	check := func(how string, pk *Packet) {
		t.Helper()
		if pk == nil {
			t.Fatalf("%s: no buffer", how)
		}
		want := meta{metaTail{}, metaHead{off: DefaultHeadroom, NSegs: 1}}
		if pk.meta != want || pk.Headroom() != DefaultHeadroom || pk.Len() != 0 || len(pk.Data()) != 0 {
			t.Fatalf("%s: metadata %+v, want %+v", how, pk.meta, want)
		}
	}
	p := newPool(t, Config{Name: "meta", Count: 4, CacheSize: 2, Refill: 1})
	a := p.Alloc()
	dirty(a)
	p.Recycle(a)
	check("Alloc from the cache", p.Alloc())

	var burst [2]*Packet
	n := p.AllocBulk(burst[:])
	for _, pk := range burst[:n] {
		dirty(pk)
	}
	p.RecycleBulk(burst[:n])
	if p.AllocBulk(burst[:]) != n {
		t.Fatal("AllocBulk did not take back what RecycleBulk returned")
	}
	for _, pk := range burst[:n] {
		check("AllocBulk", pk)
	}

	// A buffer back through the shared ring comes out of the slow path.
	for p.Alloc() != nil {
	}
	b := burst[0]
	dirty(b)
	done := make(chan struct{})
	go func() { b.Free(); close(done) }()
	<-done
	check("Alloc after a refill from the ring", p.Alloc())

	sp := newPool(t, Config{Name: "meta-split", Count: 4, PerPage: 2})
	var pieces []*Packet
	for pk := sp.Alloc(); pk != nil; pk = sp.Alloc() {
		dirty(pk)
		pieces = append(pieces, pk)
	}
	for _, pk := range pieces {
		sp.Recycle(pk)
	}
	for range pieces {
		check("a split page's piece", sp.Alloc())
	}
}

func TestChainsFreeWhole(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Count: 16})
	head := p.Alloc()
	seg := head
	for i := 0; i < 3; i++ {
		n := p.Alloc()
		seg.SetNext(n)
		seg = n
	}
	head.NSegs = 4
	if p.InFlight() != 4 {
		t.Fatal("chain not out")
	}
	head.Free()
	if n := p.InFlight(); n != 0 {
		t.Fatalf("freeing the head left %d segments out", n)
	}
	head = p.Alloc()
	head.SetNext(p.Alloc())
	FreeBulk([]*Packet{head})
	if n := p.InFlight(); n != 0 {
		t.Fatalf("FreeBulk of a chain left %d out", n)
	}
}

func TestSplitPages(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "split", Count: 8, BufSize: 2048, PerPage: 2})
	a, b := p.Alloc(), p.Alloc()
	if a.idx/2 != b.idx/2 {
		t.Fatalf("pieces %d and %d are not halves of one page", a.idx, b.idx)
	}
	if b.BufIOVA() != a.BufIOVA()+2048 {
		t.Fatalf("second half at %#x, first at %#x", b.BufIOVA(), a.BufIOVA())
	}
	page := a.idx / 2
	a.Free()
	// The page must not come back while its other half is out.
	for _, pk := range drainAllocs(p) {
		if pk.idx/2 == page {
			t.Fatalf("page %d handed out again while piece %d is still held", page, b.idx)
		}
		p.Recycle(pk)
	}
	a.Free() // double free of a piece
	if s := p.OwnerStats(); s.RefusedDouble != 1 {
		t.Fatalf("piece double free: RefusedDouble = %d", s.RefusedDouble)
	}
	p.Recycle(b)
	found := false
	for _, pk := range drainAllocs(p) {
		found = found || pk.idx/2 == page
		pk.Free()
	}
	if !found {
		t.Fatal("page did not recycle after its last piece returned")
	}
	if n := p.InFlight(); n != 0 {
		t.Fatalf("InFlight = %d", n)
	}
	if err := p.Close(time.Second); err != nil {
		t.Fatal(err)
	}
}

func drainAllocs(p *Pool) []*Packet {
	var out []*Packet
	for pk := p.Alloc(); pk != nil; pk = p.Alloc() {
		out = append(out, pk)
	}
	return out
}

func TestSyncCoversOnlyDirtiedBytes(t *testing.T) {
	t.Parallel()
	iommu := simdma.NewIOMMU(true)
	r := newRegion(t, iommu, 4*2048)
	p, err := New(r, Config{Count: 4, BufSize: 2048, Headroom: 128})
	if err != nil {
		t.Fatal(err)
	}
	pk := p.Alloc()
	copy(pk.Append(100), strings.Repeat("D", 100))
	// Bytes past the data window, beyond the cache line the data ends in.
	copy(pk.Buf()[1024:], "BEYOND")
	copy(pk.Buf()[0:], "HEAD") // headroom the CPU did not prepend into
	iova := pk.BufIOVA()
	pk.Free()
	dev := iommu.Slice(iova, 2048, false)
	if got := string(dev[128:228]); got != strings.Repeat("D", 100) {
		t.Fatalf("device does not see the frame after free: %q", got[:10])
	}
	if string(dev[1024:1030]) == "BEYOND" || string(dev[0:4]) == "HEAD" {
		t.Fatal("free synced bytes outside the data window")
	}
	// Prepending into the headroom widens the synced range.
	pk = p.Alloc()
	for pk.BufIOVA() != iova {
		defer pk.Free()
		pk = p.Alloc()
	}
	pk.SetData(128, 0)
	copy(pk.Prepend(64), strings.Repeat("P", 64))
	pk.Free()
	if string(dev[64:128]) != strings.Repeat("P", 64) {
		t.Fatal("prepended bytes were not synced")
	}
}

func TestCloseReportsLeak(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "leaky", Count: 8})
	app := p.Owner("application")
	a, b := p.Alloc(), p.Alloc()
	b.SetOwner(app)
	start := time.Now()
	err := p.Close(50 * time.Millisecond)
	var le *LeakError
	if !errors.As(err, &le) {
		t.Fatalf("Close with buffers out returned %v", err)
	}
	if le.Count != 2 || le.ByOwner["application"] != 1 || le.ByOwner["pool leaky"] != 1 {
		t.Fatalf("leak report %+v", le)
	}
	if !strings.Contains(err.Error(), `pool "leaky": 2 buffers never came back (1 held by application, 1 held by pool leaky)`) {
		t.Fatalf("message %q does not name the holders", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("Close did not give up")
	}
	_ = a
	if err := p.Close(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseWaitsForLateReturn(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Count: 8})
	pk := p.Alloc()
	go func() { time.Sleep(20 * time.Millisecond); pk.Free() }()
	if err := p.Close(10 * time.Second); err != nil {
		t.Fatalf("Close did not see the late return: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	r := newRegion(t, simdma.NewIOMMU(false), 64*2048)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Count: 0}, "count 0"},
		{Config{Count: 4, BufSize: 100}, "multiple of 64"},
		{Config{Count: 4, Headroom: 4096}, "headroom"},
		{Config{Count: 5, PerPage: 2}, "multiple of the 2 buffers per page"},
		{Config{Count: 65}, "need 133120 bytes"},
		{Config{Count: 4, Refill: 200}, "refill"},
		{Config{Count: 4, Offset: 3}, "offset"},
	} {
		_, err := New(r, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want error containing %q", tc.cfg, err, tc.want)
		}
	}
}

// TestConcurrentInterleavings drives random alloc, bulk alloc, recycle,
// split-page and cross-goroutine free operations and checks that no buffer
// is ever handed out twice and that every buffer comes home. Run with -race.
func TestConcurrentInterleavings(t *testing.T) {
	t.Parallel()
	for _, perPage := range []int{1, 2} {
		perPage := perPage
		t.Run(map[int]string{1: "whole", 2: "split"}[perPage], func(t *testing.T) {
			const count = 512
			p := newPool(t, Config{Name: "prop", Count: count, BufSize: 1024, PerPage: perPage, CacheSize: 32, Refill: 16})
			held := make([]atomic.Int32, count) // 1 while a holder has the buffer
			take := func(pk *Packet) {
				if !held[pk.idx].CompareAndSwap(0, 1) {
					t.Errorf("buffer %d handed out while held", pk.idx)
				}
				pk.Append(8)[0] = byte(pk.idx)
			}
			give := func(pk *Packet) {
				if pk.Data()[0] != byte(pk.idx) {
					t.Errorf("buffer %d data changed while held", pk.idx)
				}
				held[pk.idx].Store(0)
			}
			const workers = 3
			chans := make([]chan []*Packet, workers)
			var wg sync.WaitGroup
			for w := range chans {
				chans[w] = make(chan []*Packet, 4)
				wg.Add(1)
				go func(w int, in chan []*Packet) {
					defer wg.Done()
					rng := rand.New(rand.NewSource(int64(w)))
					for batch := range in {
						for _, pk := range batch {
							give(pk)
						}
						if rng.Intn(2) == 0 {
							FreeBulk(batch)
						} else {
							for _, pk := range batch {
								pk.Free()
							}
						}
					}
				}(w, chans[w])
			}
			rng := rand.New(rand.NewSource(42))
			var mine []*Packet
			buf := make([]*Packet, 24)
			for step := 0; step < 20000; step++ {
				switch op := rng.Intn(7); op {
				case 0, 1:
					if pk := p.Alloc(); pk != nil {
						take(pk)
						mine = append(mine, pk)
					}
				case 2:
					n := p.AllocBulk(buf[:1+rng.Intn(len(buf))])
					for _, pk := range buf[:n] {
						take(pk)
						mine = append(mine, pk)
					}
				case 3:
					if len(mine) > 0 {
						i := rng.Intn(len(mine))
						give(mine[i])
						p.Recycle(mine[i])
						mine = append(mine[:i], mine[i+1:]...)
					}
				case 6:
					if len(mine) > 0 { // the owner's direct return of a batch
						k := 1 + rng.Intn(len(mine))
						for _, pk := range mine[:k] {
							give(pk)
						}
						p.FreeBulkDirect(mine[:k])
						mine = mine[k:]
					}
				case 4, 5:
					if len(mine) > 0 {
						k := 1 + rng.Intn(len(mine))
						batch := append([]*Packet(nil), mine[:k]...)
						mine = mine[k:]
						chans[rng.Intn(workers)] <- batch
					}
				}
			}
			for _, pk := range mine {
				give(pk)
				p.Recycle(pk)
			}
			for _, c := range chans {
				close(c)
			}
			wg.Wait()
			if n := p.InFlight(); n != 0 {
				t.Fatalf("%d buffers still out after everyone freed", n)
			}
			if a := p.Available(); a != count {
				t.Fatalf("Available = %d, want %d", a, count)
			}
			s := p.OwnerStats()
			if s.RefusedDouble != 0 || s.RefusedForeign != 0 || s.RecycleRingFull != 0 {
				t.Fatalf("refusals in a correct run: %+v", s)
			}
			if err := p.Close(time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FreeBulkDirect on the owner: the pool's own buffers go straight into its
// cache (no ring), another pool's buffers to that pool's ring, and double,
// forged and chained frees keep their guarantees.
func TestFreeBulkDirect(t *testing.T) {
	// Serial: it asserts how much the process-wide ForgedFrees grew, which a
	// parallel test's forged free would add to.
	a := newPool(t, Config{Name: "a", Count: 1024})
	b := newPool(t, Config{Name: "b", Count: 8})

	// A reclaim batch of 256 (half a 512-entry ring) fits the default cache.
	var held []*Packet
	for i := 0; i < 256; i++ {
		held = append(held, a.Alloc())
	}
	fb := b.Alloc()
	held = append(held, fb)
	a.FreeBulkDirect(held)
	s := a.OwnerStats()
	if s.RecycleCached != 256 || s.RecycleCacheFull != 0 || s.RecycleRing != 0 {
		t.Fatalf("pool a after a direct free of 256: %+v", s)
	}
	if sb := b.OwnerStats(); sb.RecycleRing != 1 || sb.RefusedForeign != 0 {
		t.Fatalf("pool b's buffer did not go home through its ring: %+v", sb)
	}
	if a.InFlight() != 0 || b.InFlight() != 0 {
		t.Fatalf("still out: a %d, b %d", a.InFlight(), b.InFlight())
	}

	// Double free through the direct path: refused and counted, the buffer
	// handed out once.
	pk := a.Alloc()
	a.FreeBulkDirect([]*Packet{pk, pk})
	if s := a.OwnerStats(); s.RefusedDouble != 1 {
		t.Fatalf("direct double free: RefusedDouble = %d", s.RefusedDouble)
	}
	seen := map[*Packet]bool{}
	for q := a.Alloc(); q != nil; q = a.Alloc() {
		if seen[q] {
			t.Fatal("a buffer freed twice came out twice")
		}
		seen[q] = true
	}
	if len(seen) != 1024 {
		t.Fatalf("pool yields %d buffers, want 1024", len(seen))
	}
	all := make([]*Packet, 0, len(seen))
	for q := range seen {
		all = append(all, q)
	}
	// A chain: every segment comes back. A forged header: counted.
	all[0].SetNext(all[1])
	before := ForgedFrees()
	a.FreeBulkDirect(append([]*Packet{all[0], {}}, all[2:]...))
	if got := ForgedFrees() - before; got != 1 {
		t.Fatalf("ForgedFrees grew by %d, want 1", got)
	}
	if n := a.InFlight(); n != 0 {
		t.Fatalf("InFlight = %d after freeing everything", n)
	}
	fb = b.Alloc()
	b.Recycle(fb)
	if err := a.Close(time.Second); err != nil {
		t.Fatal(err)
	}
}

// The cache size follows the pool: a small pool's default cache is the
// pool, an explicit size too large for the refill is refused.
func TestCacheSizeDefaults(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Count: 16})
	if cap(p.cache) != 16 || p.refill != 16 {
		t.Fatalf("16-buffer pool: cache %d refill %d, want 16 and 16", cap(p.cache), p.refill)
	}
	p = newPool(t, Config{Count: 2048})
	if cap(p.cache) != DefaultCacheSize || p.refill != DefaultRefill {
		t.Fatalf("2048-buffer pool: cache %d refill %d", cap(p.cache), p.refill)
	}
}

// TestDataAfterClose: a packet the application freed and kept a pointer to
// (a use after free) still reads after the pool closed cleanly and its
// region was unmapped: Data is its old window over a zeroed buffer in Go
// memory, not the unmapped DMA memory (a fault that kills the process),
// writes land there too, and Reach is 0, so no TX queue takes it.
func TestDataAfterClose(t *testing.T) {
	t.Parallel()
	r := newRegion(t, simdma.NewIOMMU(false), 64*DefaultBufSize)
	p, err := New(r, Config{Name: "uaf", Count: 64})
	if err != nil {
		t.Fatal(err)
	}
	pk := p.Alloc()
	if pk == nil || pk.Append(60) == nil {
		t.Fatal("no buffer")
	}
	copy(pk.Data(), "frame bytes")
	pk.Free()
	if err := p.Close(time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	d := pk.Data() // faults here if the header still points into the region
	if len(d) != 60 {
		t.Fatalf("Data after Close: %d bytes, want the old window's 60", len(d))
	}
	for i, b := range d {
		if b != 0 {
			t.Fatalf("Data after Close: byte %d is %#x, want the zeroed stand-in buffer", i, b)
		}
	}
	d[0] = 1 // a write goes nowhere that matters
	if pk.Reach() != 0 || pk.BufSize() != DefaultBufSize {
		t.Fatalf("after Close: Reach %d, BufSize %d; want 0 (no TX queue takes it) and %d", pk.Reach(), pk.BufSize(), DefaultBufSize)
	}
}

// TestStatsLiveWithoutRefill: a loop whose frees keep the owner's cache
// full never refills it, yet another goroutine's Stats sees its
// allocations, published every publishRuns bulk allocations (whole
// buffers) or units (split pages).
func TestStatsLiveWithoutRefill(t *testing.T) {
	t.Parallel()
	for _, perPage := range []int{1, 2} {
		p := newPool(t, Config{Count: 64, BufSize: 1024, PerPage: perPage})
		var burst [8]*Packet
		// Warm up: the first allocation may refill the cache.
		p.RecycleBulk(burst[:p.AllocBulk(burst[:])])
		p.Publish()
		stats := func() Stats { // as a scraper reads them
			c := make(chan Stats)
			go func() { c <- p.Stats() }()
			return <-c
		}
		before := stats()
		runs := publishRuns
		if perPage > 1 {
			runs = publishRuns * perPage / len(burst) // a unit per perPage pieces
		}
		for i := 0; i < runs; i++ {
			n := p.AllocBulk(burst[:])
			if n != len(burst) {
				t.Fatalf("perPage %d: AllocBulk got %d of %d", perPage, n, len(burst))
			}
			for _, pk := range burst[:n] {
				p.Recycle(pk)
			}
		}
		after := stats()
		if after.AllocRefill != before.AllocRefill {
			t.Fatalf("perPage %d: the loop refilled the cache (%d -> %d refills): the test proves nothing", perPage, before.AllocRefill, after.AllocRefill)
		}
		// Allocations count whole buffers, or units of perPage pieces.
		allocs := runs * len(burst) / perPage
		got := after.AllocFast + after.AllocSlow - before.AllocFast - before.AllocSlow
		if min := uint64(allocs - len(burst)); got < min {
			t.Errorf("perPage %d: after %d allocations Stats shows %d (%+v), want at least %d", perPage, allocs, got, after, min)
		}
	}
}

// The bulk paths take their runs a turn of buffers at a time: a bad entry
// at any place in a turn (a buffer already home, the same buffer twice in
// one bulk, a chain, another pool's buffer, a forged header, nil) must stop the
// run exactly there, be refused and counted or (a chain) freed whole, and
// leave every other buffer of the bulk home once, whatever lane it took.
// The bulk allocation must hand out fresh metadata in every lane too.
func TestBulkEveryLane(t *testing.T) {
	// Serial: it asserts how much the process-wide ForgedFrees grew.
	const bulk = 19 // two turns of eight and a tail of three
	other := newPool(t, Config{Name: "other", Count: 4})
	for _, bad := range []string{"home", "twice", "chain", "foreign", "forged", "nil"} {
		for at := 0; at < bulk; at++ {
			p := newPool(t, Config{Name: "lanes", Count: 32})
			pkts := make([]*Packet, bulk)
			if got := p.AllocBulk(pkts); got != bulk {
				t.Fatalf("AllocBulk: %d of %d", got, bulk)
			}
			for _, pk := range pkts {
				pk.SetData(10, 20)
				pk.Port, pk.PktLen = 1, 3
				pk.SetRxMeta(RxMeta{Hash: 2})
			}
			var extra *Packet // the buffer the bad entry took the place of
			wantDouble, wantForeign, wantForged := uint64(0), uint64(0), uint64(0)
			forged := ForgedFrees()
			switch bad {
			case "home":
				h := p.Alloc()
				p.Recycle(h)
				extra = pkts[at]
				pkts[at] = h // already home: a double free
				wantDouble = 1
			case "twice":
				if at == 0 {
					continue
				}
				extra = pkts[at]
				pkts[at] = pkts[at-1] // its second free in the same bulk
				wantDouble = 1
			case "chain":
				tail := p.Alloc()
				pkts[at].SetNext(tail)
			case "foreign":
				extra = pkts[at]
				pkts[at] = other.Alloc()
				wantForeign = 1
			case "forged":
				extra = pkts[at]
				real := pkts[at]
				pkts[at] = &Packet{buf: real.buf, iova: real.iova, pool: real.pool, idx: real.idx}
				wantForged = 1
			case "nil":
				extra = pkts[at]
				pkts[at] = nil
			}
			// Every header of p in the bulk must come out of it with its
			// state word stepped exactly once if it was out (home, its
			// generation one up), and untouched if it was home: the turns
			// that take buffers unchecked and undo themselves on a refusal
			// must leave no trace of either.
			before := map[*Packet]uint32{}
			for _, pk := range pkts {
				if p.owns(pk) {
					before[pk] = pk.state
				}
			}
			p.RecycleBulk(pkts)
			for pk, st := range before {
				want := st &^ stChained // a chain is unchained on its way home
				if st&stHome == 0 {
					want += toHome
				}
				if pk.state != want {
					t.Fatalf("%s at %d: buffer %d state %#x after the bulk, want %#x (was %#x)", bad, at, pk.idx, pk.state, want, st)
				}
			}
			if extra != nil {
				p.Recycle(extra)
			}
			if bad == "foreign" {
				other.Recycle(pkts[at])
			}
			s := p.OwnerStats()
			if s.RefusedDouble != wantDouble || s.RefusedForeign != wantForeign || ForgedFrees()-forged != wantForged {
				t.Fatalf("%s at %d: RefusedDouble %d RefusedForeign %d forged %d, want %d %d %d",
					bad, at, s.RefusedDouble, s.RefusedForeign, ForgedFrees()-forged, wantDouble, wantForeign, wantForged)
			}
			if n := p.InFlight(); n != 0 {
				t.Fatalf("%s at %d: %d buffers still out", bad, at, n)
			}
			all := make([]*Packet, 40)
			got := p.AllocBulk(all)
			if got != 32 {
				t.Fatalf("%s at %d: the pool yields %d buffers, want 32", bad, at, got)
			}
			seen := map[*Packet]bool{}
			for _, pk := range all[:got] {
				if seen[pk] {
					t.Fatalf("%s at %d: buffer %d handed out twice", bad, at, pk.idx)
				}
				seen[pk] = true
				want := meta{metaTail{}, metaHead{off: DefaultHeadroom, NSegs: 1}}
				if pk.meta != want {
					t.Fatalf("%s at %d: AllocBulk handed out metadata %+v, want %+v", bad, at, pk.meta, want)
				}
			}
		}
	}
}

// RecycleBulk puts a bulk into the cache while it has room for it, the
// part past the room into the ring, and refuses a bulk of buffers already
// home; an empty bulk changes nothing. Every buffer comes back once.
func TestRecycleBulkRoom(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "room", Count: 48, CacheSize: 16, Refill: 16})
	var pkts []*Packet
	for pk := p.Alloc(); pk != nil; pk = p.Alloc() {
		pkts = append(pkts, pk)
	}
	if len(pkts) != 48 {
		t.Fatalf("pool yields %d buffers, want 48", len(pkts))
	}
	before := p.OwnerStats()
	p.RecycleBulk(pkts[:0])
	p.RecycleBulk(pkts[:10])   // room for all ten
	p.RecycleBulk(pkts[10:26]) // room for six: ten to the ring
	p.RecycleBulk(pkts[:10])   // already home, the cache full: refused
	p.RecycleBulk(pkts[26:])   // all to the ring
	s := p.OwnerStats()
	cached, full, double := s.RecycleCached-before.RecycleCached, s.RecycleCacheFull-before.RecycleCacheFull, s.RefusedDouble-before.RefusedDouble
	if cached != 16 || full != 32 || double != 10 {
		t.Fatalf("RecycleCached %d RecycleCacheFull %d RefusedDouble %d, want 16 32 10", cached, full, double)
	}
	if n := p.InFlight(); n != 0 {
		t.Fatalf("%d buffers still out", n)
	}
	seen := map[*Packet]bool{}
	for pk := p.Alloc(); pk != nil; pk = p.Alloc() {
		if seen[pk] {
			t.Fatalf("buffer %d handed out twice", pk.idx)
		}
		seen[pk] = true
	}
	if len(seen) != 48 {
		t.Fatalf("pool yields %d buffers after the bulks, want 48", len(seen))
	}
}

// Recycle on non-coherent memory syncs what the CPU may have written and
// nothing else: the data window (widened to the headroom's start when data
// was prepended), nothing after MarkClean. Its fast path keeps the owner's
// checks: a second Recycle of the same buffer is refused, a chain comes
// home whole.
func TestRecycleNonCoherent(t *testing.T) {
	t.Parallel()
	iommu := simdma.NewIOMMU(true)
	r := newRegion(t, iommu, 4*2048)
	p, err := New(r, Config{Count: 4, BufSize: 2048, Headroom: 128})
	if err != nil {
		t.Fatal(err)
	}
	pk := p.Alloc()
	dev := iommu.Slice(pk.BufIOVA(), 2048, false)
	copy(pk.Append(100), strings.Repeat("D", 100))
	copy(pk.Buf()[1024:], "BEYOND")
	copy(pk.Buf()[0:], "HEAD")
	p.Recycle(pk)
	if got := string(dev[128:228]); got != strings.Repeat("D", 100) {
		t.Fatalf("device does not see the frame after Recycle: %q", got[:10])
	}
	if string(dev[1024:1030]) == "BEYOND" || string(dev[0:4]) == "HEAD" {
		t.Fatal("Recycle synced bytes outside the dirty span")
	}
	p.Recycle(pk)
	if s := p.OwnerStats(); s.RefusedDouble != 1 || s.RecycleCached != 1 {
		t.Fatalf("RefusedDouble %d RecycleCached %d, want 1 and 1", s.RefusedDouble, s.RecycleCached)
	}

	pk = p.Alloc()
	pk.SetData(128, 0)
	copy(pk.Prepend(64), strings.Repeat("P", 64))
	p.Recycle(pk)
	if string(dev[64:128]) != strings.Repeat("P", 64) {
		t.Fatal("prepended bytes were not synced")
	}

	pk = p.Alloc()
	copy(pk.Append(8), "CLEANED!")
	pk.MarkClean() // the TX path synced the frame: the free syncs nothing
	copy(pk.Buf()[128:], "LATER!!!")
	p.Recycle(pk)
	if string(dev[128:136]) == "LATER!!!" {
		t.Fatal("Recycle synced a buffer marked clean")
	}

	a, b := p.Alloc(), p.Alloc()
	a.SetNext(b)
	p.Recycle(a)
	if n := p.InFlight(); n != 0 {
		t.Fatalf("Recycle of a chain on non-coherent memory left %d out", n)
	}
}

// A pool of a port names, in a leak report, itself and that port's
// holders by their roles, leaving the port to the caller, who names it
// once; a holder of another port (its TX ring holding a frame received
// here) is named with that port. Owner by a role is the same holder as
// Holder with that role.
func TestLeakNamesHoldersByRole(t *testing.T) {
	t.Parallel()
	const a, b = "sim:enetc1?chip=x", "sim:enetc2?chip=x"
	p := newPool(t, Config{Name: "rx0", Port: a, Count: 8})
	if p.Name() != a+" rx0" || p.Port() != a {
		t.Fatalf("Name %q, Port %q", p.Name(), p.Port())
	}
	ring := p.Holder(Holder{Role: "rx ring 0"})
	app := p.Holder(Holder{Role: "rx queue 0 caller"})
	if id := p.Owner("rx queue 0 caller"); id != app {
		t.Errorf("Owner by the role: id %d, want %d (the same holder as Holder registers)", id, app)
	}
	if id := p.Holder(Holder{Port: a, Role: "rx ring 0"}); id != ring {
		t.Errorf("Holder with the pool's own port: id %d, want %d", id, ring)
	}
	other := p.Holder(Holder{Port: b, Role: "tx ring 1"})
	if other == ring || other == app {
		t.Fatal("a holder of another port shares an id")
	}
	for _, id := range []uint16{ring, ring, app, other, other, other} {
		p.Alloc().SetOwner(id)
	}
	err := fmt.Errorf("RX queue 0: %w", p.Close(0))
	var le *LeakError
	if !errors.As(err, &le) {
		t.Fatalf("Close with buffers out: %v", err)
	}
	if le.Count != 6 || le.Pool != a+" rx0" || le.Port != a {
		t.Errorf("LeakError %+v", le)
	}
	want := map[Holder]int{{a, "rx ring 0"}: 2, {a, "rx queue 0 caller"}: 1, {b, "tx ring 1"}: 3}
	for h, n := range want {
		if le.ByHolder[h] != n || le.ByOwner[h.String()] != n {
			t.Errorf("holder %+v: %d by holder, %d by name; want %d", h, le.ByHolder[h], le.ByOwner[h.String()], n)
		}
	}
	msg := err.Error()
	if strings.Contains(msg, a) {
		t.Errorf("%q names the pool's port, which the caller names", msg)
	}
	if strings.Count(msg, b) != 1 {
		t.Errorf("%q does not name the other port once", msg)
	}
	if w := `RX queue 0: pool "rx0": 6 buffers never came back (1 held by rx queue 0 caller, 2 held by rx ring 0, 3 held by ` + b + ` tx ring 1); their memory stays mapped`; msg != w {
		t.Errorf("message\n%s\nwant\n%s", msg, w)
	}
	// One buffer, of the pool itself.
	q := newPool(t, Config{Name: "rx1", Port: a, Count: 8})
	q.Alloc()
	if err := q.Close(0); err == nil || err.Error() != `pool "rx1": 1 buffer never came back (1 held by pool rx1); their memory stays mapped` {
		t.Errorf("one buffer of the pool itself: %v", err)
	}
}

// The bulk free proves four addresses with one compare of their OR against
// a power of two: the header array's storage must reach that far, or an
// address past the headers (another object's) would pass as the pool's.
func TestHeaderReach(t *testing.T) {
	t.Parallel()
	size := unsafe.Sizeof(Packet{})
	for _, count := range []int{1, 2, 3, 7, 64, 1000, 1024, 1261, 1262, 4096, 5000} {
		hdrs := newHeaders(count)
		reach := headerReach(hdrs)
		if len(hdrs) != count || reach&(reach-1) != 0 || reach < uintptr(count)*size || uintptr(cap(hdrs))*size < reach {
			t.Errorf("count %d: %d headers, storage for %d (%d bytes), reach %d", count, len(hdrs), cap(hdrs), uintptr(cap(hdrs))*size, reach)
		}
	}
	p := newPool(t, Config{Count: 1000})
	if p.fastSpan != headerReach(p.hdrs) || p.fastSpan < p.hdrSpan {
		t.Fatalf("fastSpan %d, header span %d", p.fastSpan, p.hdrSpan)
	}
}

// ringClaimer holds buffers of pool p as a TX ring would: held until it
// frees them; back returns one of them while it claims.
type ringClaimer struct {
	p    *Pool
	h    Holder
	held []*Packet
	back *Packet
}

func (c *ringClaimer) ClaimHeld(p *Pool) {
	if p != c.p {
		return // another test's pool
	}
	id := p.Holder(c.h)
	for _, pk := range c.held {
		pk.SetOwner(id)
	}
	if c.back != nil {
		c.back.Free()
	}
}

// TestLeakNamesClaimedBuffers: a pool about to report a leak asks the
// claimers, and the buffers one holds are named by it, not by the holder
// their allocation gave them; a buffer that comes back meanwhile is not
// counted.
func TestLeakNamesClaimedBuffers(t *testing.T) {
	t.Parallel()
	const a, b = "sim:enetc1?chip=y", "sim:enetc2?chip=y"
	p := newPool(t, Config{Name: "rx0", Port: a, Count: 8})
	app := p.Holder(Holder{Role: "rx queue 0 caller"})
	pks := make([]*Packet, 4)
	for i := range pks {
		pks[i] = p.Alloc()
		pks[i].SetOwner(app)
	}
	c := &ringClaimer{p: p, h: Holder{Port: b, Role: "tx ring 1"}, held: pks[:2], back: pks[2]}
	AddClaimer(c)
	t.Cleanup(func() { RemoveClaimer(c) })
	err := p.Close(0)
	var le *LeakError
	if !errors.As(err, &le) {
		t.Fatalf("Close with buffers out: %v", err)
	}
	want := map[Holder]int{{b, "tx ring 1"}: 2, {a, "rx queue 0 caller"}: 1}
	if le.Count != 3 || len(le.ByHolder) != len(want) {
		t.Fatalf("LeakError %+v, want 3 buffers: %v", le, want)
	}
	for h, n := range want {
		if le.ByHolder[h] != n {
			t.Errorf("holder %+v: %d, want %d", h, le.ByHolder[h], n)
		}
	}
	// All back during the claim: Close succeeds.
	q := newPool(t, Config{Name: "rx1", Port: a, Count: 8})
	d := &ringClaimer{p: q, back: q.Alloc()}
	AddClaimer(d)
	t.Cleanup(func() { RemoveClaimer(d) })
	if err := q.Close(0); err != nil {
		t.Errorf("Close with the one buffer out freed by a claimer: %v", err)
	}
	RemoveClaimer(d)
	RemoveClaimer(d) // a second removal changes nothing
	claimers.mu.Lock()
	for _, x := range claimers.list {
		if x == Claimer(d) {
			t.Error("RemoveClaimer left the claimer in the list")
		}
	}
	claimers.mu.Unlock()
}

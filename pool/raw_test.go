package pool

import (
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/sim/simdma"
)

// AllocBulkRaw hands out buffers marked out and held by the given owner,
// with the last holder's metadata left in place; SetRx then sets every
// field, so what a receive path hands on carries nothing of the last frame.
func TestAllocBulkRawAndSetRx(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "raw", Count: 11}) // a turn of eight and a tail of three
	ring := p.Owner("rx ring")
	app := p.Owner("rx caller")

	// A holder leaves metadata behind.
	pk := p.Alloc()
	pk.SetData(10, 20)
	pk.Port, pk.Queue, pk.NSegs, pk.PktLen = 1, 2, 6, 7
	pk.SetRxMeta(RxMeta{Ptype: 3, VLAN: 4, Flags: FlagL4CsumBad, Hash: 5})
	p.Recycle(pk)

	out := make([]*Packet, 11)
	if n := p.AllocBulkRaw(out, ring); n != 11 {
		t.Fatalf("AllocBulkRaw got %d of 11", n)
	}
	seen := map[*Packet]bool{}
	for _, h := range out {
		if seen[h] {
			t.Fatal("a buffer handed out twice")
		}
		seen[h] = true
		if !h.out() {
			t.Fatal("a raw allocation is not marked out: a free of it would be refused")
		}
	}
	if p.AllocBulkRaw(make([]*Packet, 1), ring) != 0 || p.Alloc() != nil {
		t.Fatal("an empty pool handed out a buffer")
	}
	// The ring holds them all: a leak report would name it.
	if n, by := p.outstanding(); n != 11 || by[ring] != 11 {
		t.Fatalf("%d out, by holder %v: want 11 held by the ring (%d)", n, by, ring)
	}

	last := out[0]
	for _, h := range out {
		if h == pk {
			last = h
		}
	}
	if last != pk {
		t.Fatal("the recycled buffer did not come back from the LIFO cache")
	}
	pk.SetRx(DefaultHeadroom, 60, app, 9, 1, 0x42, 100, FlagVLANStripped, 0xABCD)
	if pk.Offset() != DefaultHeadroom || pk.Len() != 60 || len(pk.Data()) != 60 || pk.PktLen != 60 || pk.NSegs != 1 {
		t.Fatalf("window/length: off %d len %d pktlen %d nsegs %d", pk.Offset(), pk.Len(), pk.PktLen, pk.NSegs)
	}
	if pk.Port != 9 || pk.Queue != 1 || pk.Ptype() != 0x42 || pk.VLAN() != 100 || pk.Flags() != FlagVLANStripped || pk.Hash() != 0xABCD || pk.owner != app {
		t.Fatalf("fields: %+v", pk.meta)
	}
	if pk.IOVA() != pk.BufIOVA()+DefaultHeadroom {
		t.Fatal("IOVA does not follow the window SetRx set")
	}

	// A window past the buffer panics and changes nothing.
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("SetRx took a window past the buffer")
			}
		}()
		pk.SetRx(DefaultHeadroom, uint16(DefaultBufSize-DefaultHeadroom+1), app, 0, 0, 0, 0, 0, 0)
	}()
	if pk.Len() != 60 || pk.Port != 9 {
		t.Fatal("a refused SetRx changed the header")
	}

	// SetSegment: a later segment looks like a fresh allocation with data.
	seg := out[1]
	if seg == pk {
		seg = out[2]
	}
	seg.Port, seg.PktLen = 5, 99
	seg.SetRxMeta(RxMeta{Flags: FlagParseError})
	if !seg.SetSegment(DefaultHeadroom, 30, app) {
		t.Fatal("SetSegment refused a window that fits")
	}
	if seg.Len() != 30 || seg.Offset() != DefaultHeadroom || seg.Port != 0 || seg.RxMeta() != (RxMeta{}) || seg.PktLen != 0 || seg.NSegs != 1 || seg.owner != app {
		t.Fatalf("segment: %+v", seg.meta)
	}
	if seg.SetSegment(DefaultBufSize, 1, app) || seg.SetSegment(-1, 2, app) {
		t.Fatal("SetSegment took a window outside the buffer")
	}
	p.RecycleBulk(out)
	if p.InFlight() != 0 {
		t.Fatalf("InFlight %d after recycling every buffer", p.InFlight())
	}
}

// FreeSlots frees a TX ring's slots in place: nil slots are skipped,
// the owner's buffers go to its cache, other pools' through their rings,
// and double, foreign and forged frees are refused and counted, as for
// FreeBulkDirect. The slots are left as they were.
func TestFreeSlots(t *testing.T) {
	// Serial: it asserts how much the process-wide ForgedFrees grew, which a
	// parallel test's forged free would add to.
	a := newPool(t, Config{Name: "a", Count: 64})
	b := newPool(t, Config{Name: "b", Count: 8})

	slots := make([]*Packet, 0, 40)
	for i := 0; i < 32; i++ {
		slots = append(slots, a.Alloc())
	}
	slots[5] = nil // a chained frame's other BD
	chainTail := a.Alloc()
	slots[6].SetNext(chainTail)
	fb := b.Alloc()
	slots = append(slots, fb, nil)
	before := append([]*Packet(nil), slots...)
	freed := FreeSlots(a, slots)
	if freed != 32 { // 31 of a's heads (the chain's tail comes with its head) and b's
		t.Fatalf("FreeSlots freed %d, want 32", freed)
	}
	for i := range slots {
		if slots[i] != before[i] {
			t.Fatal("FreeSlots changed a slot")
		}
	}
	if n := a.InFlight(); n != 1 { // slots[5]'s buffer was never put in a slot
		t.Fatalf("pool a InFlight %d, want 1", n)
	}
	if s := b.OwnerStats(); s.RecycleRing != 1 || b.InFlight() != 0 {
		t.Fatalf("pool b: %+v, InFlight %d", s, b.InFlight())
	}
	if s := a.OwnerStats(); s.RecycleRing != 0 {
		t.Fatalf("pool a's buffers went through its ring: %+v", s)
	}

	// Freeing the same slots again: every buffer of a is already free.
	dbl := a.OwnerStats().RefusedDouble
	forged := ForgedFrees()
	FreeSlots(a, []*Packet{slots[0], slots[1], {}})
	if got := a.OwnerStats().RefusedDouble - dbl; got != 2 {
		t.Fatalf("RefusedDouble grew by %d, want 2", got)
	}
	if got := ForgedFrees() - forged; got != 1 {
		t.Fatalf("ForgedFrees grew by %d, want 1", got)
	}

	// Without an owner every buffer goes through its pool's ring.
	pk := a.Alloc()
	if FreeSlots(nil, []*Packet{nil, pk}) != 1 {
		t.Fatal("FreeSlots(nil) did not count the buffer")
	}
	if s := a.OwnerStats(); s.RecycleRing != 1 {
		t.Fatalf("shared free: %+v", s)
	}
	if err := b.Close(time.Second); err != nil {
		t.Fatal(err)
	}
}

// DirtySpan is what a free syncs; after MarkClean a free syncs nothing (a
// TX path cleaned the span already), and the bytes written since stay the
// CPU's: the device keeps what it saw at the clean.
func TestDirtySpanMarkClean(t *testing.T) {
	t.Parallel()
	iommu := simdma.NewIOMMU(true)
	r := newRegion(t, iommu, 4*2048)
	p, err := New(r, Config{Count: 4, BufSize: 2048, Headroom: 128})
	if err != nil {
		t.Fatal(err)
	}
	pk := p.Alloc()
	copy(pk.Append(100), strings.Repeat("D", 100))
	if off, n := pk.DirtySpan(); off != 128 || n != 100 {
		t.Fatalf("DirtySpan %d+%d, want 128+100", off, n)
	}
	copy(pk.Prepend(8), "PPPPPPPP")
	if off, n := pk.DirtySpan(); off != 120 || n != 108 {
		t.Fatalf("DirtySpan after a prepend %d+%d, want 120+108", off, n)
	}
	pk.SetData(130, 98) // a header stripped: the span starts at the headroom still
	if off, n := pk.DirtySpan(); off != 128 || n != 100 {
		t.Fatalf("DirtySpan after a strip %d+%d, want 128+100 (from the headroom start)", off, n)
	}
	off, n := pk.DirtySpan()
	r.SyncForDevice(int(pk.BufIOVA()-r.IOVA())+off, n) // what a TX path does
	pk.MarkClean()
	if pk.Len() != 0 {
		t.Fatal("MarkClean left a data window")
	}
	copy(pk.Buf()[128:], "LATE") // not the device's: it has the clean's bytes
	iova := pk.BufIOVA()
	pk.Free()
	if n := p.InFlight(); n != 0 {
		t.Fatalf("InFlight %d", n)
	}
	dev := iommu.Slice(iova, 2048, false)
	if got := string(dev[128:132]); got != "DDDD" {
		t.Fatalf("device sees %q at the data start: the free after MarkClean synced again", got)
	}
}

// On non-coherent memory the owner's bulk frees sync each buffer's dirty
// span, and nothing for a buffer marked clean; double and foreign frees
// are refused there as on coherent memory.
func TestBulkFreeNonCoherent(t *testing.T) {
	t.Parallel()
	iommu := simdma.NewIOMMU(true)
	r := newRegion(t, iommu, 8*2048)
	p, err := New(r, Config{Count: 8, BufSize: 2048, Headroom: 128})
	if err != nil {
		t.Fatal(err)
	}
	other := newPool(t, Config{Name: "other", Count: 2})
	dirty, clean := p.Alloc(), p.Alloc()
	copy(dirty.Append(4), "DIRT")
	copy(clean.Append(4), "OLD!")
	off, n := clean.DirtySpan()
	r.SyncForDevice(int(clean.BufIOVA()-r.IOVA())+off, n)
	clean.MarkClean()
	copy(clean.Buf()[128:], "NEW!")
	foreign := other.Alloc()
	p.FreeBulkDirect([]*Packet{dirty, clean, dirty, foreign})
	if got := string(iommu.Slice(dirty.BufIOVA()+128, 4, false)); got != "DIRT" {
		t.Fatalf("device sees %q: the dirty buffer was not synced", got)
	}
	if got := string(iommu.Slice(clean.BufIOVA()+128, 4, false)); got != "OLD!" {
		t.Fatalf("device sees %q: the clean buffer was synced again", got)
	}
	s := p.OwnerStats()
	if s.RecycleCached != 2 || s.RefusedDouble != 1 {
		t.Fatalf("stats %+v: want 2 cached, 1 double free refused", s)
	}
	if p.InFlight() != 0 || other.InFlight() != 0 {
		t.Fatalf("still out: %d, other %d", p.InFlight(), other.InFlight())
	}
}

// EtherAddrs is the first 12 bytes of the data window, wherever the window
// lies in the buffer (at its start, after the headroom, ending at its
// last byte), and nil for a segment shorter than 12 bytes: the window's
// own bounds, which every setter checks, are what make the length test
// enough.
func TestEtherAddrs(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "addrs", Count: 2})
	pk := p.Alloc()
	defer pk.Free()
	if pk.EtherAddrs() != nil {
		t.Fatal("a fresh buffer (no data) has addresses")
	}
	size := pk.BufSize()
	for _, w := range []struct{ off, n int }{{0, 12}, {DefaultHeadroom, 60}, {size - 12, 12}, {size - 64, 64}} {
		if !pk.SetData(w.off, w.n) {
			t.Fatalf("SetData(%d, %d) refused", w.off, w.n)
		}
		h := pk.EtherAddrs()
		if h == nil {
			t.Fatalf("window %d+%d: no addresses", w.off, w.n)
		}
		if &h[0] != &pk.Data()[0] || &h[11] != &pk.Buf()[w.off+11] {
			t.Fatalf("window %d+%d: the addresses are not the window's first 12 bytes", w.off, w.n)
		}
		h[0], h[11] = 0xAA, 0xBB
		if d := pk.Data(); d[0] != 0xAA || d[11] != 0xBB {
			t.Fatalf("window %d+%d: a write through EtherAddrs is not in Data", w.off, w.n)
		}
	}
	for _, n := range []int{0, 1, 11} {
		pk.SetData(DefaultHeadroom, n)
		if pk.EtherAddrs() != nil {
			t.Fatalf("a %d-byte segment has addresses", n)
		}
	}
	pk.SetData(size-11, 11)
	if pk.EtherAddrs() != nil {
		t.Fatal("an 11-byte window at the buffer's end has addresses")
	}
	if pk.MarkClean(); pk.EtherAddrs() != nil {
		t.Fatal("an emptied window has addresses")
	}
}

package pool

import (
	"sync"
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/sim/simdma"
)

// The fast path: the owner allocates from its cache and recycles into it.
func BenchmarkAllocFree(b *testing.B) {
	p := newPool(b, Config{Count: 1024})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pk := p.Alloc()
		p.Recycle(pk)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/buf")
}

// The same loop in bulks of 32, as a driver refills and an XDP_DROP path frees.
func BenchmarkAllocFreeBulk32(b *testing.B) {
	p := newPool(b, Config{Count: 1024})
	var burst [32]*Packet
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 32 {
		n := p.AllocBulk(burst[:])
		p.RecycleBulk(burst[:n])
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/buf")
}

// The drivers' form of the same loop: AllocBulkRaw, as an RX refill takes
// buffers whose every field the receive path sets (no reset), and
// RecycleBulk. It is the pool's part alone, as rte_mempool's bulk get and
// put are (the mbuf reset is rte_pktmbuf_alloc_bulk's, not the mempool's).
func BenchmarkAllocRawFreeBulk32(b *testing.B) {
	p := newPool(b, Config{Count: 1024})
	owner := p.Holder(Holder{Role: "rx ring 0"})
	var burst [32]*Packet
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 32 {
		n := p.AllocBulkRaw(burst[:], owner)
		p.RecycleBulk(burst[:n])
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/buf")
}

// Side by side: sync.Pool holding the same headers.
func BenchmarkSyncPool(b *testing.B) {
	p := newPool(b, Config{Count: 1024})
	var sp sync.Pool
	for pk := p.Alloc(); pk != nil; pk = p.Alloc() {
		sp.Put(pk)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pk := sp.Get().(*Packet)
		sp.Put(pk)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/buf")
}

// Side by side: a buffered channel used as a free list.
func BenchmarkChanFreeList(b *testing.B) {
	p := newPool(b, Config{Count: 1024})
	ch := make(chan *Packet, 1024)
	for pk := p.Alloc(); pk != nil; pk = p.Alloc() {
		ch <- pk
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pk := <-ch
		ch <- pk
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/buf")
}

// Free through the shared ring (the path of every goroutine but the owner),
// timed alone: the whole pool is allocated untimed, then freed one by one
// through the ring with the timer running.
func BenchmarkFreeViaRing(b *testing.B) {
	p := newPool(b, Config{Count: 1024})
	held := make([]*Packet, 0, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		b.StopTimer()
		held = held[:0]
		for len(held) < cap(held) && len(held) < b.N-i {
			pk := p.Alloc()
			if pk == nil {
				break
			}
			held = append(held, pk)
		}
		b.StartTimer()
		for _, pk := range held {
			pk.Free()
		}
		i += len(held)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/buf")
}

// Frees really from another goroutine: the owner allocates bursts of 32 and
// hands them to a second goroutine, which frees them one by one through the
// ring while the owner goes on allocating (a forwarder's TX completion on
// another core). Reported per buffer for the whole pipeline.
func BenchmarkFreeRemote(b *testing.B) {
	p := newPool(b, Config{Count: 4096})
	const burst = 32
	batches := make(chan *[burst]*Packet, 16)
	spare := make(chan *[burst]*Packet, 32)
	for i := 0; i < 32; i++ {
		spare <- new([burst]*Packet)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for bt := range batches {
			for _, pk := range bt {
				pk.Free()
			}
			spare <- bt
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += burst {
		bt := <-spare
		got := 0
		for got < burst {
			got += p.AllocBulk(bt[got:]) // waits for the remote frees when empty
		}
		batches <- bt
	}
	close(batches)
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/buf")
}

// slowFreeList is the "recycling off" baseline of the drop experiment: every
// buffer goes through a shared, locked free list, and is synced on its way
// back exactly as the pool syncs it (its dirty span), so the two differ in
// the free list alone.
type slowFreeList struct {
	mu   sync.Mutex
	free []*Packet
}

// dropSink keeps the fresh buffers of the naive baseline on the heap.
var dropSink []byte

// BenchmarkDropLoop is the page_pool seed experiment in our terms: alloc,
// touch 64 bytes, drop, on the simulated IOMMU's non-coherent model so a
// sync moves real bytes. Side by side in one run:
//
//	recycle          the pool: owner cache, sync of the dirtied bytes only
//	no-recycle       a locked shared free list, the same sync
//	fresh-go-buffer  a new 2 KiB Go buffer per packet, left to the GC: what
//	                 a naive Go driver does (it would still have to map it)
//	map-unmap        a per-packet map and unmap of the buffer through the
//	                 DMA mapper (the simulated IOMMU: a table update under
//	                 its lock and, non-coherent, an mmap/munmap of the
//	                 device-side copy): what the kernel paid before page_pool
//
// Each baseline also reports x-recycle: its ns/pkt over that of the recycle
// run just before it. Linux's mvpp2 went from 962 to 2047 kpps in a drop
// test, 2.13x, when its page_pool began recycling (the Linux commit
// "mvpp2: recycle buffers", 2021).
func BenchmarkDropLoop(b *testing.B) {
	setup := func(b *testing.B) (*Pool, *simdma.IOMMU) {
		m := simdma.NewIOMMU(true)
		r, err := dma.Alloc(m, 1024*2048, dma.Options{Hugepages: dma.HugeNever})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		p, err := New(r, Config{Count: 1024})
		if err != nil {
			b.Fatal(err)
		}
		return p, m
	}
	var recycleNs float64
	report := func(b *testing.B, baseline bool) {
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(ns, "ns/pkt")
		if !baseline {
			recycleNs = ns
		} else if recycleNs > 0 {
			b.ReportMetric(ns/recycleNs, "x-recycle")
		}
	}
	b.Run("recycle", func(b *testing.B) {
		p, _ := setup(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			pk := p.Alloc()
			d := pk.Append(64)
			d[0], d[63] = byte(i), byte(i)
			p.Recycle(pk)
		}
		b.StopTimer()
		report(b, false)
	})
	b.Run("no-recycle", func(b *testing.B) {
		p, _ := setup(b)
		fl := &slowFreeList{}
		for pk := p.Alloc(); pk != nil; pk = p.Alloc() {
			fl.free = append(fl.free, pk)
		}
		r := p.Region()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			fl.mu.Lock()
			pk := fl.free[len(fl.free)-1]
			fl.free = fl.free[:len(fl.free)-1]
			fl.mu.Unlock()
			pk.SetData(p.Headroom(), 0)
			d := pk.Append(64)
			d[0], d[63] = byte(i), byte(i)
			// The bytes the recycle path syncs: the dirty span alone.
			off, n := pk.DirtySpan()
			r.SyncForDevice(int(pk.BufIOVA()-r.IOVA())+off, n)
			fl.mu.Lock()
			fl.free = append(fl.free, pk)
			fl.mu.Unlock()
		}
		b.StopTimer()
		report(b, true)
	})
	b.Run("fresh-go-buffer", func(b *testing.B) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			buf := make([]byte, DefaultBufSize)
			d := buf[DefaultHeadroom : DefaultHeadroom+64]
			d[0], d[63] = byte(i), byte(i)
			dropSink = buf
		}
		b.StopTimer()
		dropSink = nil
		report(b, true)
	})
	b.Run("map-unmap", func(b *testing.B) {
		p, m := setup(b)
		bufs := make([][]byte, 0, p.Count())
		for pk := p.Alloc(); pk != nil; pk = p.Alloc() {
			bufs = append(bufs, pk.Buf())
			defer pk.Free()
		}
		attr := dma.Attr{Name: "drop-map-unmap"}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			buf := bufs[i%len(bufs)]
			mp, err := m.Map(buf, attr)
			if err != nil {
				b.Fatal(err)
			}
			d := buf[DefaultHeadroom : DefaultHeadroom+64]
			d[0], d[63] = byte(i), byte(i)
			m.SyncForDevice(buf, mp, DefaultHeadroom, 64)
			if err := m.Unmap(buf, mp); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		report(b, true)
	})
}

package bench

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc" // registers the ENETC driver
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
	"github.com/gopmd/gopmd/sim/simdma"
)

// The whole forwarding path with a per-packet buffer allocation and DMA
// map/unmap, against the same path with recycling: the form of Linux's
// mvpp2 figure, 962 -> 2047 kpps (2.13x) in a drop test when its page_pool
// began recycling (the Linux commit "mvpp2: recycle buffers", 2021). The driver always recycles;
// the per-packet variants add, around each forwarded packet, what a driver
// without a pool pays at the least (perPacket.pay), so they are a lower
// bound of such a driver: the kernel maps on RX refill and unmaps on RX
// completion, and maps and unmaps again for TX, where this pays one map
// and one unmap per packet.

var enetcSeq atomic.Int32

// fwdPair is two simulated ENETC ports (synchronous model, 512-entry
// rings) and the loop that forwards 64-byte frames from the first port's RX
// queue 0 to the second port's TX queue 0, as BenchmarkForward in the enetc
// package does, through the public API only.
type fwdPair struct {
	a, c       driver.Port
	ma, mc     *model.Device
	rx         driver.RxQueue
	tx         driver.TxQueue
	frame      []byte
	pkts       []*pool.Packet
	injected   int
	forwarded  int
	txRefused  int
	bufSize    int
	st0a, st0c model.Stats
}

func openFwdPair(tb testing.TB) *fwdPair {
	tb.Helper()
	cfg := driver.Config{RxRingSize: 512, TxRingSize: 512, PoolSize: 2048, StopTimeout: 200 * time.Millisecond}
	f := &fwdPair{pkts: make([]*pool.Packet, 32)}
	open := func() (driver.Port, *model.Device) {
		name := fmt.Sprintf("enetc%d", 1900+enetcSeq.Add(1))
		p, err := driver.OpenConfig("sim:"+name+"?link-poll=0&chip=bench-"+name, cfg)
		if err != nil {
			tb.Fatal(err)
		}
		if err := p.Start(); err != nil {
			tb.Fatal(err)
		}
		return p, sim.ENETCModel(name)
	}
	f.a, f.ma = open()
	f.c, f.mc = open()
	f.mc.SetWire(nil) // the model's counting discard
	f.rx, f.tx = f.a.RxQueue(0), f.c.TxQueue(0)
	// One goroutine drives both queues, as a forwarder's worker does: TX
	// reclaim returns the buffers straight into the RX pool's cache.
	if err := f.tx.(driver.DirectRecycler).RecycleDirect(f.rx); err != nil {
		tb.Fatal(err)
	}
	// A broadcast UDP-sized frame: 60 bytes without FCS (64 on the wire).
	f.frame = make([]byte, 60)
	for i := range f.frame {
		f.frame[i] = byte(i*29 + 1)
	}
	copy(f.frame[0:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(f.frame[12:14], []byte{0x88, 0xB5})
	f.st0a, f.st0c = f.ma.Stats(), f.mc.Stats()
	return f
}

// run forwards n frames, injecting up to 32 at a time into port a's model
// and sending every frame its RX burst returns out of port c. pay, if not
// nil, runs once per burst for the frames received. It returns an error
// (and stops) when a burst receives nothing or a per-packet payment fails.
func (f *fwdPair) run(n int, pay *perPacket) error {
	in := f.ma.Port()
	for done := 0; done < n; {
		k := min(32, n-done)
		for i := 0; i < k; i++ {
			in.Receive(f.frame)
		}
		f.injected += k
		got := f.rx.RxBurst(f.pkts)
		if got == 0 {
			return fmt.Errorf("no frame received after %d injected (%d forwarded)", k, f.forwarded)
		}
		if f.bufSize == 0 {
			f.bufSize = f.pkts[0].BufSize()
		}
		if pay != nil {
			if err := pay.pay(got, f.bufSize); err != nil {
				pool.FreeBulk(f.pkts[:got])
				return err
			}
		}
		sent := f.tx.TxBurst(f.pkts[:got])
		if sent < got {
			pool.FreeBulk(f.pkts[sent:got])
			f.txRefused += got - sent
		}
		f.forwarded += sent
		done += got
	}
	return nil
}

// check closes both ports and reports every way the forward could have
// lost or not done its work: each injected frame received by a's model,
// taken by RxBurst and sent by c's model onto its wire, no TX refusal, no
// driver drop, no DMA fault, every buffer back at Close.
func (f *fwdPair) check() error {
	var errs []error
	sa, sc := f.ma.Stats(), f.mc.Stats()
	ps, pc := f.a.Stats(), f.c.Stats()
	rxFrames, txFrames := sa.RxFrames-f.st0a.RxFrames, sc.TxFrames-f.st0c.TxFrames
	wire := sc.WireDiscards - f.st0c.WireDiscards
	if f.txRefused != 0 {
		errs = append(errs, fmt.Errorf("%d frames refused by TxBurst", f.txRefused))
	}
	if rxFrames != uint64(f.injected) || txFrames != uint64(f.forwarded) || wire != uint64(f.forwarded) || f.forwarded != f.injected {
		errs = append(errs, fmt.Errorf("injected %d, RX model wrote %d, forwarded %d, TX model sent %d, wire took %d", f.injected, rxFrames, f.forwarded, txFrames, wire))
	}
	if d := ps.Rx.TotalDrops() + ps.Tx.TotalDrops(); d != 0 {
		errs = append(errs, fmt.Errorf("RX port counted %d drops: %+v", d, ps.Rx.Drops))
	}
	if d := pc.Rx.TotalDrops() + pc.Tx.TotalDrops(); d != 0 {
		errs = append(errs, fmt.Errorf("TX port counted %d drops: %+v", d, pc.Tx.Drops))
	}
	if sa.DMAFaults+sc.DMAFaults != 0 || sa.NoBufferDrops != f.st0a.NoBufferDrops {
		errs = append(errs, fmt.Errorf("DMA faults %d/%d, no-buffer drops %d", sa.DMAFaults, sc.DMAFaults, sa.NoBufferDrops-f.st0a.NoBufferDrops))
	}
	for _, p := range []driver.Port{f.c, f.a} {
		if err := p.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s (buffers back): %w", p.Info().Name, err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("forward of %d frames: %w", f.injected, errors.Join(errs...))
}

// perPacket is what each forwarded packet pays on top of the forward in
// the per-packet-mapping variants: a fresh Go buffer of the pool's buffer
// size, left to the GC (what a driver without a pool allocates), and a Map,
// a 64-byte write synced for the device (when the mapper keeps a device
// copy) and an Unmap of a page-aligned 4 KiB buffer through mapper (none
// when mapper is nil: the fresh buffer alone).
type perPacket struct {
	mapper dma.Mapper
	syncer dma.Syncer // nil when the mapper is coherent (no sync calls)
	page   []byte
	attr   dma.Attr
	// check, if set, is called with every IOVA a map returned.
	check          func(iova uint64) error
	maps, unmaps   int
	mapNs, unmapNs time.Duration // only when timed
	timed          bool
	sink           []byte
}

func newPerPacket(tb testing.TB, m dma.Mapper) *perPacket {
	tb.Helper()
	page, err := unix.Mmap(-1, 0, dma.PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		tb.Fatalf("a 4 KiB page for the per-packet buffer: %v", err)
	}
	tb.Cleanup(func() { unix.Munmap(page) })
	pp := &perPacket{mapper: m, page: page, attr: dma.Attr{Name: "per-packet-buffer"}}
	if m == nil {
		return pp
	}
	if s, ok := m.(dma.Syncer); ok {
		if sm, ok := m.(*simdma.IOMMU); !ok || sm.NonCoherent() {
			pp.syncer = s
		}
	}
	return pp
}

func (pp *perPacket) pay(n, bufSize int) error {
	for i := 0; i < n; i++ {
		buf := make([]byte, bufSize)
		buf[pool.DefaultHeadroom] = byte(i)
		pp.sink = buf
		if pp.mapper == nil {
			continue
		}
		var t0 time.Time
		if pp.timed {
			t0 = time.Now()
		}
		m, err := pp.mapper.Map(pp.page, pp.attr)
		if err != nil {
			return fmt.Errorf("per-packet map %d: %w", pp.maps, err)
		}
		pp.maps++
		var t1 time.Time
		if pp.timed {
			t1 = time.Now()
			pp.mapNs += t1.Sub(t0)
		}
		pp.page[pool.DefaultHeadroom], pp.page[pool.DefaultHeadroom+63] = byte(i), byte(i)
		if pp.syncer != nil {
			pp.syncer.SyncForDevice(pp.page, m, pool.DefaultHeadroom, 64)
		}
		if pp.check != nil {
			if err := pp.check(m.IOVA); err != nil {
				pp.mapper.Unmap(pp.page, m)
				return err
			}
		}
		if pp.timed {
			t1 = time.Now()
		}
		if err := pp.mapper.Unmap(pp.page, m); err != nil {
			return fmt.Errorf("per-packet unmap %d (IOVA %#x): %w", pp.unmaps, m.IOVA, err)
		}
		pp.unmaps++
		if pp.timed {
			pp.unmapNs += time.Since(t1)
		}
	}
	return nil
}

// BenchmarkENETCForwardMapping forwards 64-byte frames (bursts of 32)
// between two simulated ENETC ports, model included, in three variants in
// one run:
//
//	recycle                  the driver as it is: buffers recycled by the pool
//	map-per-packet           the same forward, and per packet a fresh Go
//	                         buffer of the pool's buffer size plus a Map, a
//	                         64-byte device sync and an Unmap of a 4 KiB
//	                         buffer on a non-coherent simulated IOMMU (its
//	                         device-side copy is real, as in pool's
//	                         BenchmarkDropLoop/map-unmap)
//	map-per-packet-coherent  the same on the ports' own (coherent) simulated
//	                         IOMMU: the map is its table update alone
//	fresh-buffer-only        the fresh Go buffer per packet and no map: the
//	                         allocation's share of the two above
//
// x-recycle is a variant's ns/pkt over the recycle run's in the same
// process (mvpp2's form: whole path with per-packet mapping over whole
// path with recycling; mvpp2 measured 2.13x). b.N counts packets.
func BenchmarkENETCForwardMapping(b *testing.B) {
	var recycleNs float64
	report := func(b *testing.B, f *fwdPair, base bool) {
		ns := float64(b.Elapsed().Nanoseconds()) / float64(f.forwarded)
		b.ReportMetric(ns, "ns/pkt")
		b.ReportMetric(1e3/ns, "Mpps")
		if base {
			recycleNs = ns
		} else if recycleNs > 0 {
			b.ReportMetric(ns/recycleNs, "x-recycle")
		}
	}
	variant := func(b *testing.B, pay bool, mapper func(*fwdPair) dma.Mapper) {
		f := openFwdPair(b)
		var pp *perPacket
		if pay {
			var m dma.Mapper
			if mapper != nil {
				m = mapper(f)
			}
			pp = newPerPacket(b, m)
		}
		b.ReportAllocs()
		b.ResetTimer()
		err := f.run(b.N, pp)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if err := f.check(); err != nil {
			b.Fatal(err)
		}
		if mapper != nil && (pp.maps != f.forwarded || pp.unmaps != f.forwarded) {
			b.Fatalf("%d maps and %d unmaps for %d packets", pp.maps, pp.unmaps, f.forwarded)
		}
		report(b, f, !pay)
	}
	b.Run("recycle", func(b *testing.B) { variant(b, false, nil) })
	b.Run("map-per-packet", func(b *testing.B) {
		variant(b, true, func(*fwdPair) dma.Mapper { return simdma.NewIOMMU(true) })
	})
	b.Run("map-per-packet-coherent", func(b *testing.B) {
		variant(b, true, func(f *fwdPair) dma.Mapper { return f.ma.IOMMU() })
	})
	b.Run("fresh-buffer-only", func(b *testing.B) { variant(b, true, nil) })
}

// TestENETCForwardMapping runs each variant of the benchmark's loop over
// 1000 frames and checks what it must have done: every frame injected was
// received, forwarded and sent onto the wire with no drop or fault, every
// buffer is back at Close, each per-packet variant made one successful map
// and one unmap per packet, the non-coherent mapper's sync moved the
// written byte to its device-side copy, and the recycle variant allocated
// nothing per packet.
func TestENETCForwardMapping(t *testing.T) {
	const n = 1000
	t.Run("recycle", func(t *testing.T) {
		f := openFwdPair(t)
		if err := f.run(64, nil); err != nil { // warm the pools and rings
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(10, func() {
			if err := f.run(n/10, nil); err != nil {
				t.Fatal(err)
			}
		})
		if err := f.check(); err != nil {
			t.Fatal(err)
		}
		if f.forwarded != 64+11*n/10 {
			t.Errorf("forwarded %d, want %d", f.forwarded, 64+11*n/10)
		}
		if allocs != 0 {
			t.Errorf("%.0f allocations per %d forwarded frames, want 0", allocs, n/10)
		}
	})
	for _, nc := range []bool{true, false} {
		name := "map-per-packet"
		if !nc {
			name += "-coherent"
		}
		t.Run(name, func(t *testing.T) {
			f := openFwdPair(t)
			m := f.ma.IOMMU()
			if nc {
				m = simdma.NewIOMMU(true)
			}
			pp := newPerPacket(t, m)
			var seen int
			pp.check = func(iova uint64) error {
				seen++
				if !nc {
					return nil
				}
				var b [1]byte
				if !m.Read(iova+pool.DefaultHeadroom+63, b[:]) || b[0] != pp.page[pool.DefaultHeadroom+63] {
					return fmt.Errorf("device-side copy at IOVA %#x holds %#x, CPU wrote %#x", iova, b[0], pp.page[pool.DefaultHeadroom+63])
				}
				return nil
			}
			allocs := testing.AllocsPerRun(1, func() {
				if err := f.run(n, pp); err != nil {
					t.Fatal(err)
				}
			})
			if err := f.check(); err != nil {
				t.Fatal(err)
			}
			if f.forwarded != 2*n || pp.maps != 2*n || pp.unmaps != 2*n || seen != 2*n {
				t.Errorf("forwarded %d, maps %d, unmaps %d, IOVAs seen %d; want %d each", f.forwarded, pp.maps, pp.unmaps, seen, 2*n)
			}
			if (pp.syncer != nil) != nc {
				t.Errorf("sync calls %v on a mapper with non-coherent=%v", pp.syncer != nil, nc)
			}
			// At least the fresh buffer per packet.
			if allocs < n {
				t.Errorf("%.0f allocations for %d per-packet-mapped frames, want at least one each", allocs, n)
			}
		})
	}
}

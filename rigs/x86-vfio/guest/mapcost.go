package main

import (
	"bytes"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/rigtest"
	"github.com/gopmd/gopmd/pci"
	"github.com/gopmd/gopmd/pool"
)

// The per-packet mapping baseline: what a driver pays that maps every
// buffer when it hands it to the device and unmaps it when the device is
// done (the kernel's way before page_pool), against the pool's recycle of
// buffers mapped once. Both are timed in rounds and the figure is the
// median round; map and unmap are timed apart (two clock readings per
// pair, a small share of a pair's cost), recycles with one clock reading
// per round. After every fourth round, outside the timer, one more map is
// checked with edu's DMA engine: the device reads and writes the buffer at
// the IOVA the map returned, and after the unmap a write to that IOVA no
// longer reaches the page. A pool buffer is checked the same way after the
// first and the last round.
const (
	mapRounds    = 16
	mapPerRound  = 128  // map + unmap pairs per round
	recyPerRound = 8192 // pool recycles per round
	touch        = 64   // bytes written per buffer, as the drop benchmark does
	// edu's engine takes 100 ms of virtual time per transfer (its DMA
	// timer), so a map is DMA-checked after every sampleEvery-th round.
	sampleEvery = 4
)

// mapCostChecks opens edu again through the "pci" backend and measures
// VFIO_IOMMU_MAP_DMA + VFIO_IOMMU_UNMAP_DMA of one 2 KiB buffer in a 4 KiB
// page through pci.Container (the dma.Mapper a per-packet-mapping driver
// would call), then Alloc + touch + Recycle through a pool on a region
// mapped once in the same container. It prints PASS/FAIL for what the
// device saw and INFO lines with the figures; under TCG both figures are
// those of an emulated CPU and an emulated IOMMU.
func mapCostChecks(edu *pci.Device) {
	t0 := time.Now()
	spec, _ := driver.ParseSpec("pci:" + edu.Address.String())
	dev, err := pci.Host.OpenPCI(spec, driver.Config{})
	if err != nil {
		fail("mapcost-open", "%v", err)
		return
	}
	defer dev.Release()
	c, ok := dev.Mapper.(*pci.Container)
	if !ok {
		fail("mapcost-open", "mapper is %T (%s), want the type1 container", dev.Mapper, dev.Mapper.Name())
		return
	}
	c.DMALimit = eduDMALimit
	w := dev.Regions[0].(*pci.Window)

	page, err := unix.Mmap(-1, 0, dma.PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		fail("mapcost-map", "a 4 KiB page for the buffer: %v", err)
		return
	}
	defer unix.Munmap(page)
	ms, ok := timeMapUnmap(c, w, page)
	if !ok {
		return
	}

	r, err := dma.Alloc(c, 2<<20, dma.Options{Attr: dma.Attr{Name: "mapcost-pool"}})
	if err != nil {
		fail("mapcost-recycle", "pool region: %v", err)
		return
	}
	defer r.Close()
	p, err := pool.New(r, pool.Config{Name: "mapcost", Count: 1024})
	if err != nil {
		fail("mapcost-recycle", "%v", err)
		return
	}
	rec, ok := timeRecycle(p, w)
	if !ok {
		return
	}
	info("mapcost", "map+unmap %.0f ns/pair (map %.0f, unmap %.0f; rounds %.0f..%.0f; median of %d rounds of %d; %.1f allocs/pair), recycle %.1f ns/buf (rounds %.1f..%.1f; median of %d rounds of %d; %.2f allocs/buf), ratio %.0f; TCG-emulated CPU and intel-iommu, not silicon",
		ms.pair, ms.mapNs, ms.unmapNs, ms.lo, ms.hi, mapRounds, mapPerRound, ms.allocs, rec.med, rec.lo, rec.hi, mapRounds, recyPerRound, rec.allocs, ms.pair/rec.med)
	// The form the host side parses.
	info("mapcost-figures", "map_unmap_ns=%.0f map_ns=%.0f unmap_ns=%.0f recycle_ns=%.1f ratio=%.1f pairs=%d recycles=%d took_s=%.1f",
		ms.pair, ms.mapNs, ms.unmapNs, rec.med, ms.pair/rec.med, mapRounds*mapPerRound, mapRounds*recyPerRound, time.Since(t0).Seconds())
}

// mapStats are the map + unmap figures: medians over the rounds of the
// per-pair means, the fastest and slowest round, and heap allocations.
type mapStats struct {
	pair, lo, hi, mapNs, unmapNs, allocs float64
}

// timeMapUnmap times map + touch + unmap pairs of page's first 2 KiB
// through c and checks a sampled map with edu between rounds.
func timeMapUnmap(c *pci.Container, w *pci.Window, page []byte) (mapStats, bool) {
	attr := dma.Attr{Name: "per-packet-buffer"}
	buf := page[:xfer]
	iovas := make([]uint64, 0, mapRounds*mapPerRound)
	var pairs, maps, unmaps []float64
	var mallocs uint64
	var ms runtime.MemStats
	checked, blocked := 0, 0
	for round := 0; round < mapRounds; round++ {
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		var inMap, inUnmap time.Duration
		ta := time.Now()
		for i := 0; i < mapPerRound; i++ {
			m, err := c.Map(page, attr)
			tb := time.Now()
			if err != nil {
				fail("mapcost-map", "map %d of round %d: %v", i, round, err)
				return mapStats{}, false
			}
			buf[pool.DefaultHeadroom], buf[pool.DefaultHeadroom+touch-1] = byte(i), byte(i)
			iovas = append(iovas, m.IOVA)
			if err := c.Unmap(page, m); err != nil {
				fail("mapcost-map", "unmap %d of round %d (IOVA %#x): %v", i, round, m.IOVA, err)
				return mapStats{}, false
			}
			tc := time.Now()
			inMap += tb.Sub(ta)
			inUnmap += tc.Sub(tb)
			ta = tc
		}
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - m0
		pairs = append(pairs, float64((inMap+inUnmap).Nanoseconds())/mapPerRound)
		maps = append(maps, float64(inMap.Nanoseconds())/mapPerRound)
		unmaps = append(unmaps, float64(inUnmap.Nanoseconds())/mapPerRound)

		// The sample, untimed: the device reads and writes the buffer at
		// the IOVA this map returned; after the unmap its write no longer
		// lands in the page.
		if round%sampleEvery != sampleEvery-1 {
			continue
		}
		m, err := c.Map(page, attr)
		if err != nil {
			fail("mapcost-map", "sample map after round %d: %v", round, err)
			return mapStats{}, false
		}
		pat := pattern(byte(round))
		copy(buf, pat)
		ok1 := runDMA(w, m.IOVA, eduBuf, 0)
		clear(buf)
		ok2 := runDMA(w, eduBuf, m.IOVA, cmdToRAM)
		if !ok1 || !ok2 || !bytes.Equal(buf, pat) {
			fail("mapcost-map", "sample after round %d: edu DMA through IOVA %#x: done %v/%v, bytes back %q", round, m.IOVA, ok1, ok2, buf[:24])
			c.Unmap(page, m)
			return mapStats{}, false
		}
		checked++
		if err := c.Unmap(page, m); err != nil {
			fail("mapcost-map", "sample unmap after round %d (IOVA %#x): %v", round, m.IOVA, err)
			return mapStats{}, false
		}
		for i := range buf {
			buf[i] = 0x5a
		}
		runDMA(w, eduBuf, m.IOVA, cmdToRAM) // the engine finishes; the IOMMU drops the write
		if bytes.Count(buf, []byte{0x5a}) != len(buf) {
			fail("mapcost-map", "after the unmap of IOVA %#x (round %d) edu's write still reached the page: a stale translation", m.IOVA, round)
			return mapStats{}, false
		}
		blocked++
	}
	var bad []uint64
	for _, v := range iovas {
		if v%dma.PageSize != 0 || v < 1<<20 || v+dma.PageSize-1 > eduDMALimit {
			bad = append(bad, v)
		}
	}
	slices.Sort(iovas)
	distinct := len(slices.Compact(iovas))
	if len(bad) > 0 {
		fail("mapcost-map", "%d of %d maps gave an IOVA outside [1 MiB, edu's 28-bit limit] or not page-aligned: %#x", len(bad), mapRounds*mapPerRound, bad[:min(len(bad), 4)])
		return mapStats{}, false
	}
	pass("mapcost-map", "%d map+unmap pairs through %s, every one succeeded with a page-aligned IOVA below edu's 28-bit limit (%d distinct, %#x..%#x); %d sampled maps carried edu's DMA both ways, and after each of their %d unmaps edu's write to the old IOVA left the page untouched",
		mapRounds*mapPerRound, c.Name(), distinct, iovas[0], iovas[distinct-1], checked, blocked)
	return mapStats{
		pair: rigtest.Median(pairs), lo: slices.Min(pairs), hi: slices.Max(pairs),
		mapNs: rigtest.Median(maps), unmapNs: rigtest.Median(unmaps),
		allocs: float64(mallocs) / (mapRounds * mapPerRound),
	}, true
}

// timeRecycle times Alloc + touch + Recycle through p, checks a sampled
// buffer with edu between rounds and that every buffer is back at the end.
// recStats are the recycle figures: the median, fastest and slowest round
// and heap allocations per buffer.
type recStats struct{ med, lo, hi, allocs float64 }

func timeRecycle(p *pool.Pool, w *pci.Window) (recStats, bool) {
	rounds := make([]float64, 0, mapRounds)
	var mallocs uint64
	var ms runtime.MemStats
	for round := 0; round < mapRounds; round++ {
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		t0 := time.Now()
		for i := 0; i < recyPerRound; i++ {
			pk := p.Alloc()
			if pk == nil {
				fail("mapcost-recycle", "pool empty at recycle %d of round %d", i, round)
				return recStats{}, false
			}
			d := pk.Append(touch)
			d[0], d[touch-1] = byte(i), byte(i)
			p.Recycle(pk)
		}
		el := time.Since(t0)
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - m0
		rounds = append(rounds, float64(el.Nanoseconds())/recyPerRound)

		if round != 0 && round != mapRounds-1 {
			continue // edu takes 100 ms of virtual time per transfer: sample the first and last round
		}
		pk := p.Alloc()
		if pk == nil {
			fail("mapcost-recycle", "pool empty after round %d", round)
			return recStats{}, false
		}
		b := pk.Buf()[:xfer]
		pat := pattern(byte(0x80 + round))
		copy(b, pat)
		ok1 := runDMA(w, pk.BufIOVA(), eduBuf, 0)
		clear(b)
		ok2 := runDMA(w, eduBuf, pk.BufIOVA(), cmdToRAM)
		p.Recycle(pk)
		if !ok1 || !ok2 || !bytes.Equal(b, pat) {
			fail("mapcost-recycle", "sample after round %d: edu DMA through pool buffer IOVA %#x: done %v/%v, bytes back %q", round, pk.BufIOVA(), ok1, ok2, b[:24])
			return recStats{}, false
		}
	}
	if err := p.Close(time.Second); err != nil {
		fail("mapcost-recycle", "%v", err)
		return recStats{}, false
	}
	pass("mapcost-recycle", "%d Alloc+Recycle through pool %q (%d buffers on one region mapped once at IOVA %#x); a buffer after the first and the last round carried edu's DMA both ways; every buffer back at Close",
		mapRounds*recyPerRound, p.Name(), p.Count(), p.Region().IOVA())
	return recStats{med: rigtest.Median(rounds), lo: slices.Min(rounds), hi: slices.Max(rounds), allocs: float64(mallocs) / (mapRounds * recyPerRound)}, true
}

package fec

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
)

var internalSeq atomic.Int32

// openInternal opens a started sim port for tests that need the driver's
// knobs; it is closed (and checked for leaks) at the end of the test.
func openInternal(t testing.TB, opts string) (*Port, *model.Device) {
	t.Helper()
	name := fmt.Sprintf("fec%d", 1000+internalSeq.Add(1))
	p, err := driver.Open("sim:" + name + "?" + opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	return p.(*Port), sim.FECModel(name)
}

// fuzzPorts holds one port per option set for the fuzz targets. Each
// iteration starts it (every BD written afresh, rings rewound) and stops it
// instead of opening a new port: fuzzing runs millions of iterations, and
// the sim devices of a process share one simulated IOMMU address space,
// which fresh ports would walk past the 4 GiB the FEC can address.
var fuzzPorts sync.Map // options -> *fuzzPort

type fuzzPort struct {
	p *Port
	m *model.Device
}

// startFuzzPort starts the fuzz targets' port for opts; it is stopped at
// the end of the iteration.
func startFuzzPort(t *testing.T, opts string) (*Port, *model.Device) {
	t.Helper()
	v, ok := fuzzPorts.Load(opts)
	if !ok {
		name := fmt.Sprintf("fec%d", 1000+internalSeq.Add(1))
		dp, err := driver.Open("sim:" + name + "?" + opts)
		if err != nil {
			t.Fatal(err)
		}
		v, _ = fuzzPorts.LoadOrStore(opts, &fuzzPort{dp.(*Port), sim.FECModel(name)})
	}
	fp := v.(*fuzzPort)
	if err := fp.p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fp.p.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return fp.p, fp.m
}

type wireCapture struct{ frames [][]byte }

func (w *wireCapture) Transmit(f []byte) { w.frames = append(w.frames, append([]byte(nil), f...)) }

func patternFrame(n, seed int) []byte {
	f := make([]byte, n)
	for i := range f {
		f[i] = byte(i*29 + seed*3 + 1)
	}
	copy(f[12:14], []byte{0x88, 0xB5})
	return f
}

// TestNonCoherentRxNeedsSyncForCPU shows the RX cache invalidate matters:
// on a non-coherent model the CPU's view of a buffer the MAC just filled is
// stale, and the frame RxBurst returns from it is intact.
func TestNonCoherentRxNeedsSyncForCPU(t *testing.T) {
	t.Parallel()
	// docs/hardware-fec.md §4.7 takes every i.MX FEC as non-coherent; the model's
	// profiles and the driver's quirk table agree (TestProfilesMatchModel).
	if prof, _ := model.LookupProfile("imx8mp"); !prof.NonCoherent {
		t.Fatal("imx8mp model profile is coherent, against docs/hardware-fec.md §4.7: this test would prove nothing")
	}
	p, m := openInternal(t, "soc=imx8mp&rx-ring=8")
	q := p.rx[0]
	f := patternFrame(300, 7)
	m.Port().Receive(f)
	// The CPU's view of the buffer before the driver syncs it.
	at := q.headroom + q.shift
	if bytes.Equal(q.bufs[q.ntc].Buf()[at:at+len(f)], f) {
		t.Fatal("without SyncForCPU the frame is already visible to the CPU: the model does not show cache effects, so this test proves nothing")
	}
	pkts := make([]*pool.Packet, 1)
	if q.RxBurst(pkts) != 1 {
		t.Fatal("no frame")
	}
	same := bytes.Equal(pkts[0].Data(), f)
	pkts[0].Free()
	if !same {
		t.Fatal("with SyncForCPU the frame arrived corrupted")
	}
}

// TestNonCoherentTxNeedsSyncForDevice shows the TX cache clean matters: the
// device's view of a frame the CPU just wrote is stale, and the wire gets
// the right bytes from TxBurst.
func TestNonCoherentTxNeedsSyncForDevice(t *testing.T) {
	t.Parallel()
	if prof, _ := model.LookupProfile("imx8mp"); !prof.NonCoherent {
		t.Fatal("imx8mp model profile is coherent, against docs/hardware-fec.md §4.7: this test would prove nothing")
	}
	p, m := openInternal(t, "soc=imx8mp&tx-ring=8")
	w := &wireCapture{}
	m.SetWire(w)
	f := patternFrame(200, 9)
	pk := p.rx[0].pool.Alloc()
	copy(pk.Append(len(f)), f)
	dev := make([]byte, len(f))
	if !m.IOMMU().Read(pk.IOVA(), dev) {
		t.Fatal("frame not readable through the IOMMU")
	}
	if bytes.Equal(dev, f) {
		t.Fatal("without SyncForDevice the device already sees the frame: the check cannot fail")
	}
	if p.tx[0].TxBurst([]*pool.Packet{pk}) != 1 {
		t.Fatal("refused")
	}
	p.tx[0].Reclaim()
	if len(w.frames) != 1 {
		t.Fatalf("%d frames on the wire", len(w.frames))
	}
	if !bytes.Equal(w.frames[0], f) {
		t.Fatal("with SyncForDevice the wire got stale bytes")
	}
}

// TestOneDoorbellPerBurst counts doorbell writes: one RDAR per RX poll and
// one TDAR per TX burst, against one per frame for the naive variant.
func TestOneDoorbellPerBurst(t *testing.T) {
	t.Parallel()
	for _, naive := range []bool{false, true} {
		p, m := openInternal(t, "soc=imx6ul&rx-ring=64&tx-ring=64")
		for i := 0; i < 16; i++ {
			m.Port().Receive(patternFrame(100, i))
		}
		before := m.Stats()
		pkts := make([]*pool.Packet, 32)
		var n, sent int
		if naive {
			n, sent = forwardNaive(p.rx[0], p.tx[0], pkts)
		} else {
			n = p.rx[0].RxBurst(pkts)
			sent = p.tx[0].TxBurst(pkts[:n])
		}
		if sent != n || n != 16 {
			t.Fatalf("forwarded %d of 16", n)
		}
		after := m.Stats()
		rdar, tdar := after.RDARWrites-before.RDARWrites, after.TDARWrites-before.TDARWrites
		want := uint64(1)
		if naive {
			want = 16
		}
		if rdar != want || tdar != want {
			t.Fatalf("naive=%v: %d RDAR and %d TDAR writes for 16 frames, want %d each", naive, rdar, tdar, want)
		}
		p.tx[0].Reclaim()
	}
}

// TestZeroAllocHotPath: RxBurst, TxBurst and reclaim allocate nothing.
// Serial: testing.AllocsPerRun counts the mallocs of the whole process, so a
// parallel test allocating at the same time would be counted here.
func TestZeroAllocHotPath(t *testing.T) {
	p, m := openInternal(t, "soc=imx8mp&rx-ring=64&tx-ring=64")
	f := patternFrame(128, 1)
	pkts := make([]*pool.Packet, 32)
	allocs := testing.AllocsPerRun(50, func() {
		for i := 0; i < 16; i++ {
			m.Port().Receive(f)
		}
		n := p.rx[0].RxBurst(pkts)
		p.tx[0].TxBurst(pkts[:n])
		p.tx[0].Reclaim()
	})
	// The model's Receive may allocate; measure the driver alone.
	mallocsModel := testing.AllocsPerRun(50, func() {
		for i := 0; i < 16; i++ {
			m.Port().Receive(f)
		}
		n := p.rx[0].RxBurst(pkts)
		pool.FreeBulk(pkts[:n])
	})
	if allocs > mallocsModel {
		t.Fatalf("forwarding allocates %.1f times per burst beyond receiving (%.1f)", allocs, mallocsModel)
	}
}

// FuzzRxDescriptor writes arbitrary status, length and esc values into
// the RX descriptors the device owns, as a broken or hostile device would:
// the driver must never hand out data outside a buffer, must count every
// consumed descriptor as a frame or a drop, and must leak no buffer.
func FuzzRxDescriptor(f *testing.F) {
	f.Add(uint32(0x0800_0040), uint32(0), uint32(0), false)           // L, 64 bytes
	f.Add(uint32(0x0800_FFFF), uint32(0), uint32(0), true)            // L, length past the buffer
	f.Add(uint32(0x0000_0780), uint32(0x0800_0900), uint32(0), false) // two-BD frame
	f.Add(uint32(0x0804_0100), uint32(0), uint32(1<<31), true)        // CR, ME
	f.Add(uint32(0x0800_0003), uint32(0), uint32(0), false)           // runt
	f.Add(uint32(0x0000_0000), uint32(0x0000_0000), uint32(0), false) // no L at all
	f.Add(uint32(0x0000_FFFF), uint32(0x0800_0001), uint32(0xFFFFFFFF), true)
	f.Fuzz(func(t *testing.T, w0a, w0b, esc uint32, enhanced bool) {
		bd := "legacy"
		if enhanced {
			bd = "enhanced"
		}
		p, _ := startFuzzPort(t, "soc=imx8mp&rx-ring=8&pool-size=32&link-poll=0&bd="+bd)
		q := p.rx[0]
		drops0 := q.stats.Snapshot().TotalDrops()
		// Play the device: write back the first two posted BDs.
		for i, w := range []uint32{w0a, w0b} {
			if enhanced {
				q.ring.set(i, wESC, esc)
			}
			q.ring.publish(i, w)
		}
		pkts := make([]*pool.Packet, 8)
		n := q.RxBurst(pkts)
		// ntc moved past every BD the driver took back; each must have
		// become part of a delivered frame or of a counted drop.
		consumed := q.ntc
		accounted := uint64(n) + q.stats.Snapshot().TotalDrops() - drops0
		if consumed > 0 && accounted == 0 || accounted > uint64(consumed) {
			t.Fatalf("%d BDs taken back, %d frames delivered and %d drops counted", consumed, n, accounted-uint64(n))
		}
		for i := 0; i < n; i++ {
			total := 0
			for s := pkts[i]; s != nil; s = s.Next() {
				if s.Offset() < 0 || s.Offset()+s.Len() > s.BufSize() || s.Len() <= 0 {
					t.Fatalf("segment window [%d,+%d) outside its %d-byte buffer", s.Offset(), s.Len(), s.BufSize())
				}
				total += s.Len()
			}
			if total != pkts[i].PktLen {
				t.Fatalf("segments hold %d bytes, PktLen says %d", total, pkts[i].PktLen)
			}
		}
		pool.FreeBulk(pkts[:n])
		if q.posted != q.ring.size {
			t.Fatalf("%d of %d BDs posted after the poll's refill", q.posted, q.ring.size)
		}
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
		if in := q.pool.InFlight(); in != 0 {
			t.Fatalf("%d buffers leaked", in)
		}
	})
}

// TestPagemapRingMustFitAPage: pagemap memory is refused while the kernel
// may migrate mlocked pages; without an IOMMU or a carve-out only one
// 4 KiB page is known to be physically contiguous, so a larger ring is
// refused with the fix; and a non-coherent device without uncached memory
// is refused too.
func TestPagemapRingMustFitAPage(t *testing.T) {
	t.Parallel()
	m, err := model.New(model.Config{Name: "pm", SoC: "imx8mp"})
	if err != nil {
		t.Fatal(err)
	}
	dev := func(opts string) *driver.Device {
		s, err := driver.ParseSpec("platform:30be0000.ethernet" + opts)
		if err != nil {
			t.Fatal(err)
		}
		return &driver.Device{Spec: s, Backend: "devmem", Bus: "platform", NonCoherent: true,
			Compatible: []string{"fsl,imx8mp-fec", "fsl,imx8mq-fec"}, Regions: []driver.Regs{m}, Mapper: &dma.Pagemap{}}
	}
	// Pagemap memory needs vm.compact_unevictable_allowed=0: refused
	// otherwise, with the fix.
	sysctl := t.TempDir() + "/compact_unevictable_allowed"
	defer func(old string) { compactSysctl = old }(compactSysctl)
	compactSysctl = sysctl
	os.WriteFile(sysctl, []byte("1\n"), 0o644)
	_, err = New(dev("?dma-coherent=1"), driver.Config{})
	if err == nil || !strings.Contains(err.Error(), "vm.compact_unevictable_allowed=0") {
		t.Fatalf("pagemap memory with compaction of mlocked pages allowed: %v", err)
	}
	os.WriteFile(sysctl, []byte("0\n"), 0o644)
	_, err = New(dev("?dma-coherent=1&bd=enhanced"), driver.Config{RxRingSize: 512})
	if err == nil || !strings.Contains(err.Error(), "rx-ring=128") {
		t.Fatalf("512 enhanced BDs in pagemap memory: %v", err)
	}
	_, err = New(dev(""), driver.Config{})
	if err == nil || !strings.Contains(err.Error(), "dma-carveout=ADDR+SIZE") || !strings.Contains(err.Error(), "reserved-memory node with no-map") ||
		!strings.Contains(err.Error(), "mem=") || !strings.Contains(err.Error(), "nicctl info") || !strings.Contains(err.Error(), "huge pages do not help") {
		t.Fatalf("non-coherent device with pagemap memory: %v", err)
	}
}

// TestProfilesMatchModel cross-checks the driver's quirk table against the
// model's, transcribed independently from the same reference.
func TestProfilesMatchModel(t *testing.T) {
	t.Parallel()
	for _, soc := range model.Profiles() {
		mp, _ := model.LookupProfile(soc)
		dp, ok := lookupProfile(mp.Compatible)
		if !ok {
			t.Errorf("%s (%v): no driver profile", soc, mp.Compatible)
			continue
		}
		for _, c := range []struct {
			name       string
			model, drv bool
		}{
			{"gigabit", mp.Gigabit, dp.has(qGBIT)},
			{"enhanced BD", mp.EnhancedBD, dp.has(qBufDescEx)},
			{"multi-queue", mp.MultiQueue, dp.has(qAVB)},
			{"RACC", mp.RACC, dp.has(qRACC)},
			{"ERR006358", mp.ERR006358, dp.has(qERR006358)},
			{"ERR007885", mp.ERR007885, dp.has(qERR007885)},
			{"CLEAR_SETUP_MII", mp.ClearSetupMII, dp.has(qClearSetupMII)},
			{"DBSWP (ENET-MAC)", mp.DBSWP, dp.has(qENETMAC)},
			{"non-coherent", mp.NonCoherent, !dp.has(qCoherent)},
			{"jumbo frames", mp.Jumbo, dp.has(qJumbo)},
		} {
			if c.model != c.drv {
				t.Errorf("%s (%s): %s is %v in the model, %v in the driver", soc, dp.compatible, c.name, c.model, c.drv)
			}
		}
	}
}

// FuzzTxWriteback plays a broken or hostile device on the TX side: it
// writes arbitrary status/length and esc words into BDs the driver handed
// over. Whatever the device writes, reclaim must free each frame exactly
// once and only after R clears on its last BD, count the frames the device
// flags as failed, and leave nothing behind once the device has finished.
func FuzzTxWriteback(f *testing.F) {
	f.Add(uint32(0x0000_0040), uint32(0x8000_0040), uint32(0), false)          // first done, second still owned
	f.Add(uint32(0x2800_FFFF), uint32(0x0000_0000), uint32(1<<15), true)       // W and L from the device, TXE
	f.Add(uint32(0xFFFF_FFFF), uint32(0xFFFF_FFFF), uint32(0xFFFF_FFFF), true) // every bit set
	f.Add(uint32(0x8000_0000), uint32(0x0000_0000), uint32(1<<11), true)       // out of order: second done first
	f.Fuzz(func(t *testing.T, w0a, w0b, esc uint32, enhanced bool) {
		bd := "legacy"
		if enhanced {
			bd = "enhanced"
		}
		p, m := startFuzzPort(t, "soc=imx8mp&rx-ring=8&tx-ring=8&pool-size=32&link-poll=0&bd="+bd)
		m.SetTxStall(true) // the model takes TDAR but fetches nothing: the test is the device
		q, pl := p.tx[0], p.rx[0].pool
		drops0, dbl0 := q.stats.Snapshot().TotalDrops(), pl.OwnerStats().RefusedDouble
		const frames = 3
		pkts := make([]*pool.Packet, frames)
		for i := range pkts {
			pkts[i] = pl.Alloc()
			copy(pkts[i].Append(100), patternFrame(100, i))
		}
		if q.TxBurst(pkts) != frames {
			t.Fatal("TxBurst refused frames on an empty ring")
		}
		for i, w := range []uint32{w0a, w0b} {
			if enhanced {
				q.ring.set(i, wESC, esc)
			}
			q.ring.publish(i, w)
		}
		done := q.Reclaim()
		if done > frames || q.Pending() != frames-done {
			t.Fatalf("reclaimed %d of %d frames, %d still pending", done, frames, q.Pending())
		}
		// The device finishes: R clears everywhere, whatever else it left.
		for i := 0; i < frames; i++ {
			q.ring.publish(i, q.ring.status(i)&^(txbd_R<<16))
		}
		done += q.Reclaim()
		if done != frames || q.Pending() != 0 {
			t.Fatalf("after the device finished: %d of %d frames reclaimed, %d pending", done, frames, q.Pending())
		}
		if d := q.stats.Snapshot().TotalDrops() - drops0; d > frames || !enhanced && d != 0 {
			t.Fatalf("%d TX errors counted for %d frames (enhanced %v)", d, frames, enhanced)
		}
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
		if in, dbl := pl.InFlight(), pl.OwnerStats().RefusedDouble-dbl0; in != 0 || dbl != 0 {
			t.Fatalf("%d buffers leaked, %d freed twice", in, dbl)
		}
	})
}

// TestRingsRxIndices: Rings reports an RX ring's next-to-clean (the next
// BD the MAC completes) and next-to-use (the next empty BD to refill) the
// right way round; nicctl rings used to print them swapped for FEC RX
// rings, which showed only when they differed: here, after a frame whose
// slot the empty pool cannot refill.
func TestRingsRxIndices(t *testing.T) {
	t.Parallel()
	p, m := openInternal(t, "soc=imx6ul&rx-ring=8")
	q := p.rx[0]
	var held []*pool.Packet
	for pk := q.pool.Alloc(); pk != nil; pk = q.pool.Alloc() {
		held = append(held, pk) // empty the pool: the refill after the frame finds nothing
	}
	m.Port().Receive(patternFrame(100, 3))
	pkts := make([]*pool.Packet, 1)
	if q.RxBurst(pkts) != 1 {
		t.Fatal("no frame")
	}
	pkts[0].Free()
	var rs driver.RingState
	for _, r := range p.Rings() {
		if r.Kind == "rx" && r.Queue == 0 {
			rs = r
		}
	}
	if rs.NextToClean != 1 || rs.NextToUse != 0 || rs.Owned != 7 {
		t.Errorf("rx ring after one frame and no refill: next-to-clean %d, next-to-use %d, owned %d; want 1, 0, 7", rs.NextToClean, rs.NextToUse, rs.Owned)
	}
	for _, pk := range held {
		pk.Free()
	}
}

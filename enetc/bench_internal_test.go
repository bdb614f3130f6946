package enetc

import (
	"sync/atomic"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// BenchmarkForwardDriverOnly is the driver's own cost of forwarding: RX on
// one port, TX on another, 64-byte frames (60 without FCS), bursts of 32,
// against the cheapest possible device: the RX "device" only stores buf_len
// and the status word of 32 posted BDs per burst, the TX "device" moves
// TBCIR to TBPIR on the doorbell. Compare BenchmarkForward (package
// enetc_test), which runs the same loop against the device model.
func BenchmarkForwardDriverOnly(b *testing.B) {
	// split: 2048-byte halves of 4 KiB pages (the default, half-page
	// reuse); whole: one 4 KiB buffer per page, to show the split pages'
	// own cost in the pool.
	b.Run("split-2048", func(b *testing.B) { benchForwardFake(b, 2048) })
	b.Run("whole-4096", func(b *testing.B) { benchForwardFake(b, 4096) })
}

func benchForwardFake(b *testing.B, bufSize int) {
	fa, da := newFakeDev(b, true)
	fb, db := newFakeDev(b, true)
	fa.keep, fb.keep = false, false
	fb.fastTx = true
	// Both ports in one DMA domain, as l2fwd's ports are: TX refuses
	// buffers from another domain.
	fb.iommu = fa.iommu.Share()
	db.Mapper = fb.iommu
	cfg := smallCfg()
	cfg.RxRingSize, cfg.TxRingSize, cfg.PoolSize, cfg.BufSize = 512, 512, 2048, bufSize
	pa, pb := newQuiet(b, da, cfg), newQuiet(b, db, cfg)
	rx, tx := pa.rx[0], pb.tx[0]
	// One goroutine drives both queues, as a forwarder's worker does: TX
	// reclaim returns A's buffers straight into A's pool cache.
	if err := tx.RecycleDirect(rx); err != nil {
		b.Fatal(err)
	}
	n := uint32(len(rx.bds))
	devPI := uint32(0)
	buf := make([]*pool.Packet, burst)
	st := uint32(rxbd_LSTATUS_R | rxbd_LSTATUS_F)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		// Device: write back up to 32 posted BDs.
		ci := fa.regs[rxRingReg(0, regRBCIR)/4]
		for k := 0; k < burst && (devPI+1)%n != ci; k++ {
			bd := &rx.bds[devPI]
			bd.bufLen = 60
			atomic.StoreUint32(&bd.lstatus, st)
			devPI = (devPI + 1) % n
		}
		got := rx.RxBurst(buf)
		sent := tx.TxBurst(buf[:got])
		if sent < got {
			pool.FreeBulk(buf[sent:got])
		}
		done += sent
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/pkt")
	b.ReportMetric(float64(tx.doorbells.Load())/float64(b.N), "doorbells/pkt")
	if d := rx.ctr.Snapshot().TotalDrops(); d != 0 {
		b.Fatalf("RX drops %d", d)
	}
	if d := tx.ctr.Snapshot().Drops; d != ([driver.NumCauses]uint64{}) {
		b.Fatalf("TX drops %v: the loop did not forward", d)
	}
	closeClean(b, pb)
	closeClean(b, pa)
}

const burst = 32

// newQuiet brings a port up without the link watcher (no MDIO during the
// measurement).
func newQuiet(b *testing.B, d *driver.Device, cfg driver.Config) *Port {
	p, err := New(d, cfg)
	if err != nil {
		b.Fatal(err)
	}
	p.linkPoll = 0
	b.Cleanup(func() { finalCheck(b, p) })
	if err := p.Start(); err != nil {
		b.Fatal(err)
	}
	return p
}

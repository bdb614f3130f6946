package bench

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/fec" // registers the FEC driver
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
)

var fecSeq atomic.Int32

// BenchmarkFECForward receives bursts of 32 64-byte frames from the
// simulated i.MX8MP FEC (synchronous mode, no MMIO cost, non-coherent DMA
// as on the SoC) and sends them back out, one TX doorbell per burst. The
// model's work (frame injection and DMA) runs inside the loop but belongs to
// other packages, so per-package instruction counts separate it from the
// driver's and the pool's. b.N counts packets. The link watcher reads the
// PHY only at Start (link-poll=0): its timed reads are housekeeping, not
// per-packet work, and how many fall in a run depends on the run's wall
// time, which made the count move by up to 0.9 a packet.
func BenchmarkFECForward(b *testing.B) {
	name := fmt.Sprintf("fec%d", 1900+fecSeq.Add(1))
	p, err := driver.Open("sim:" + name + "?soc=imx8mp&rx-ring=256&tx-ring=256&mmio-cost=0&link-poll=0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			b.Errorf("close: %v", err)
		}
	}()
	if err := p.Start(); err != nil {
		b.Fatal(err)
	}
	m := sim.FECModel(name)
	rx, tx := p.RxQueue(0), p.TxQueue(0)
	// One goroutine drives both queues, as a forwarder's worker does: TX
	// reclaim returns the buffers straight into the RX pool's cache.
	if err := tx.(driver.DirectRecycler).RecycleDirect(rx); err != nil {
		b.Fatal(err)
	}
	const burst = 32
	frame := make([]byte, 60)
	for i := range frame {
		frame[i] = byte(i*29 + 1)
	}
	copy(frame[12:14], []byte{0x88, 0xB5})
	pkts := make([]*pool.Packet, burst)
	st0 := m.Stats()
	var forwarded int
	b.ReportAllocs()
	b.ResetTimer()
	for forwarded < b.N {
		k := min(burst, b.N-forwarded)
		for i := 0; i < k; i++ {
			m.Port().Receive(frame)
		}
		n := rx.RxBurst(pkts)
		if n == 0 {
			b.Fatalf("no frame received after %d injected (%d forwarded)", k, forwarded)
		}
		sent := 0
		for sent < n {
			sent += tx.TxBurst(pkts[sent:n])
		}
		forwarded += n
	}
	b.StopTimer()
	st := m.Stats()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(forwarded), "ns/pkt")
	b.ReportMetric(float64(st.TDARWrites-st0.TDARWrites)/float64(forwarded), "tx-doorbells/pkt")
}

package fec

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/pool"
)

// benchMMIOCost is the model's cost of one register access in the forward
// benchmark: 150 ns, in the range of an uncached access to an i.MX8M/i.MX93
// peripheral from a Cortex-A53/A55 (a read stalls for the interconnect round
// trip; a doorbell write after the DSB that publishes descriptors waits for
// the write buffer to drain). The bulk/per-packet ratio, not the absolute
// figure, is the result.
const benchMMIOCost = "150ns"

// BenchmarkForward receives bursts of 32 frames from the model and sends
// them back out (l2fwd's "tx" action) on a simulated i.MX8MP FEC, with bulk
// doorbells (one RDAR per poll, one TDAR per burst) and with the
// per-packet-doorbell variant a naive driver uses. It reports ns/pkt and
// doorbells/pkt; frame injection by the model is not timed. The
// per-packet-doorbell run also reports x-bulk-ns: its ns/pkt over that of
// the bulk run just before it.
func BenchmarkForward(b *testing.B) {
	var bulkNs float64 // ns/pkt of the last bulk run
	for _, mode := range []string{"bulk", "per-packet-doorbell"} {
		b.Run(fmt.Sprintf("%s/mmio=%s", mode, benchMMIOCost), func(b *testing.B) {
			p, m := openInternal(b, "soc=imx8mp&rx-ring=256&tx-ring=256&mmio-cost="+benchMMIOCost)
			naive := mode != "bulk"
			rx, tx := p.rx[0], p.tx[0]
			const burst = 32
			frame := patternFrame(64, 1)
			pkts := make([]*pool.Packet, burst)
			st0 := m.Stats()
			var forwarded uint64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += burst {
				b.StopTimer()
				for k := 0; k < burst; k++ {
					m.Port().Receive(frame)
				}
				b.StartTimer()
				var n int
				if naive {
					n, _ = forwardNaive(rx, tx, pkts)
				} else {
					n = rx.RxBurst(pkts)
					sent := 0
					for sent < n {
						sent += tx.TxBurst(pkts[sent:n])
					}
				}
				forwarded += uint64(n)
			}
			b.StopTimer()
			st := m.Stats()
			if forwarded == 0 {
				b.Fatal("nothing forwarded")
			}
			doorbells := (st.RDARWrites - st0.RDARWrites) + (st.TDARWrites - st0.TDARWrites)
			nsPkt := float64(b.Elapsed().Nanoseconds()) / float64(forwarded)
			b.ReportMetric(nsPkt, "ns/pkt")
			if !naive {
				bulkNs = nsPkt
			} else if bulkNs > 0 {
				b.ReportMetric(nsPkt/bulkNs, "x-bulk-ns")
			}
			b.ReportMetric(float64(doorbells)/float64(forwarded), "doorbells/pkt")
			b.ReportMetric(float64(st.RegReads-st0.RegReads+st.RegWrites-st0.RegWrites)/float64(forwarded), "mmio/pkt")
			b.ReportMetric(0, "ns/op")
		})
	}
}

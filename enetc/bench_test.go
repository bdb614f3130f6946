package enetc_test

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// BenchmarkForward forwards 64-byte frames (60 bytes without FCS) from one
// sim port to another in synchronous mode, bursts of 32: the model writes
// each frame into A's ring (Receive), A's RxBurst takes 32, B's TxBurst
// sends them with one doorbell, on which B's model fetches and transmits
// them into a discarding wire; their buffers return to A's pool on B's
// reclaim. Reported per packet: ns (all of it), allocs, TX doorbell writes,
// and model-rx-ns: the part spent in the model's Receive. The model's TX
// work runs inside TxBurst's doorbell write; BenchmarkForwardDriverOnly
// (internal) runs the same loop without the model, so the model's share is
// ns/pkt here minus ns/pkt there.
func BenchmarkForward(b *testing.B) {
	cfg := driver.Config{RxRingSize: 512, TxRingSize: 512, PoolSize: 2048}
	a := openSim(b, "link-poll=0", cfg)
	c := openSim(b, "link-poll=0", cfg)
	c.model.SetWire(nil) // the model's counting discard
	rx, tx := a.port.RxQueue(0), c.port.TxQueue(0)
	frame := udp4(b, 60, 1)
	in := a.model.Port()
	buf := make([]*pool.Packet, 32)
	var modelRx time.Duration
	lost := 0
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		t0 := time.Now()
		for k := 0; k < 32; k++ {
			in.Receive(frame)
		}
		modelRx += time.Since(t0)
		n := rx.RxBurst(buf)
		m := tx.TxBurst(buf[:n])
		if m < n {
			pool.FreeBulk(buf[m:n])
			lost += n - m
		}
		done += m
	}
	b.StopTimer()
	db := c.port.TxDoorbells(0)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/pkt")
	b.ReportMetric(float64(modelRx.Nanoseconds())/float64(b.N), "model-rx-ns/pkt")
	b.ReportMetric(float64(db)/float64(b.N), "doorbells/pkt")
	if lost != 0 {
		b.Errorf("%d frames refused by TxBurst", lost)
	}
	c.close(false)
	a.close(false)
}

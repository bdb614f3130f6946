package enetc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
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

// BenchmarkForwardPump is BenchmarkForward with the frames coming from the
// sim's generator (64 bytes) and leaving into its sink, as in l2fwd's
// default run, in synchronous mode: each poll pumps the generator through
// the model's staged delivery (and so does each RBCIR write of A's refill),
// every TxBurst on B sends through the model into the sink, all on this
// goroutine. It measures
// what a frame costs the model and the driver together without the cache
// traffic between two cores that engine mode adds.
func BenchmarkForwardPump(b *testing.B) {
	cfg := driver.Config{RxRingSize: 512, TxRingSize: 512, PoolSize: 2048, StopTimeout: 50 * time.Millisecond}
	open := func(spec string) driver.Port {
		p, err := driver.OpenConfig(spec, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Start(); err != nil {
			b.Fatal(err)
		}
		return p
	}
	simSeq.Lock()
	simSeq.n += 2
	na, nb := 100+simSeq.n-1, 100+simSeq.n
	simSeq.Unlock()
	pa := open(fmt.Sprintf("sim:enetc%d?gen=1&link-poll=0", na))
	pb := open(fmt.Sprintf("sim:enetc%d?sink=1&link-poll=0", nb))
	rx, tx := pa.RxQueue(0), pb.TxQueue(0)
	src := sim.ENETCModel(fmt.Sprintf("enetc%d", na))
	buf := make([]*pool.Packet, 32)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		src.Pump() // as l2fwd's lane does in synchronous mode
		n := rx.RxBurst(buf)
		m := tx.TxBurst(buf[:n])
		if m < n {
			pool.FreeBulk(buf[m:n])
		}
		done += m
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/pkt")
	for _, p := range []driver.Port{pb, pa} {
		if err := p.Close(); err != nil {
			b.Error(err)
		}
	}
}

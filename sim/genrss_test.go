package sim_test

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc" // the ENETC driver, which programs RSS
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
)

// TestGeneratorFlowsSpreadOverQueues: a handful of generated flows reach
// every RX queue of an ENETC with RSS, through the driver's default key
// and indirection table and the model's Toeplitz hash, evenly.
func TestGeneratorFlowsSpreadOverQueues(t *testing.T) {
	for i, c := range []struct{ queues, flows int }{{2, 16}, {4, 16}, {4, 4}, {2, 2}, {8, 64}} {
		t.Run(fmt.Sprintf("%d queues %d flows", c.queues, c.flows), func(t *testing.T) {
			const perFlow = 8
			count := c.flows * perFlow
			spec := fmt.Sprintf("sim:enetc%d?queues=%d&gen=1&gen-flows=%d&gen-count=%d&link-poll=0&chip=genrss%d", 140+i, c.queues, c.flows, count, i)
			p, err := driver.Open(spec)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			got := make([]int, c.queues)
			pkts := make([]*driver.Packet, 64)
			g := sim.GeneratorOf(spec)
			for total, idle := 0, 0; total < count && idle < 1000; {
				n := 0
				for q := 0; q < c.queues; q++ {
					k := p.RxQueue(q).RxBurst(pkts)
					got[q] += k
					n += k
					pool.FreeBulk(pkts[:k])
				}
				total += n
				if n == 0 {
					idle++
				}
			}
			if g.Stats().Frames != uint64(count) {
				t.Fatalf("generator sent %d of %d frames", g.Stats().Frames, count)
			}
			for q, n := range got {
				if want := count / c.queues; n != want {
					t.Errorf("queue %d received %d frames, want %d (per queue: %v)", q, n, want, got)
				}
			}
		})
	}
}

package fec_test

import (
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestTxErrorsCountedOnReclaim: frames the MAC could not send (their data
// read faulted, so it wrote TXE into their esc words) are counted as frame
// errors when reclaim takes their BDs back, one each, whether they lead
// the burst or sit among good frames; the good ones reach the wire and
// every buffer comes back.
func TestTxErrorsCountedOnReclaim(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&bd=enhanced&tx-ring=16&link-poll=0")
	w := &capture{}
	m.SetWire(w)
	own, txq := p.RxQueue(0).Pool(), p.TxQueue(0)
	mk := func(n int) []*pool.Packet {
		var b []*pool.Packet
		for i := 0; i < n; i++ {
			f := udpFrame(t, 100+i, -1, i)
			pk := own.Alloc()
			copy(pk.Append(len(f)), f)
			b = append(b, pk)
		}
		return b
	}
	for _, c := range []struct{ burst, faults int }{{6, 2}, {5, 3}, {4, 0}} {
		m.InjectTxDMAFault(c.faults) // the burst's first frames
		before := p.Stats().Tx.Drops[driver.CauseFrame]
		if n := txq.TxBurst(mk(c.burst)); n != c.burst {
			t.Fatalf("TxBurst took %d of %d", n, c.burst)
		}
		txq.Reclaim()
		if got := len(w.take()); got != c.burst-c.faults {
			t.Fatalf("burst of %d with %d faults: %d frames on the wire, want %d", c.burst, c.faults, got, c.burst-c.faults)
		}
		if d := p.Stats().Tx.Drops[driver.CauseFrame] - before; d != uint64(c.faults) {
			t.Fatalf("burst of %d with %d faults: %d frame errors counted", c.burst, c.faults, d)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := own.InFlight(); n != 0 {
		t.Fatalf("%d buffers still out after Stop", n)
	}
}

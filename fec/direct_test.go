package fec_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestTxRecycleDirect: with RecycleDirect the TX reclaim returns the RX
// pool's buffers into its cache, none through the shared ring (without it,
// through the ring), and every frame reaches the wire intact; an RX queue
// of another driver is refused by name.
func TestTxRecycleDirect(t *testing.T) {
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	w := &capture{}
	m.SetWire(w)
	rx, tx := p.RxQueue(0), p.TxQueue(0)
	dr := tx.(driver.DirectRecycler)
	if err := dr.RecycleDirect(struct{ driver.RxQueue }{}); err == nil || !strings.Contains(err.Error(), "RecycleDirect takes an RX queue of a FEC port") {
		t.Fatalf("foreign RX queue: err = %v", err)
	}
	pkts := make([]*pool.Packet, 16)
	forward := func(rounds int) {
		t.Helper()
		var sent [][]byte
		for r := 0; r < rounds; r++ {
			for i := 0; i < 16; i++ {
				f := udpFrame(t, 64+(r*16+i)%300, -1, r*16+i)
				m.Port().Receive(f)
				sent = append(sent, f[:len(f)-4]) // the MAC strips the FCS
			}
			n := rx.RxBurst(pkts)
			if k := tx.TxBurst(pkts[:n]); k != n || n != 16 {
				t.Fatalf("round %d: RxBurst %d, TxBurst %d, want 16", r, n, k)
			}
		}
		for i := 0; i < 100 && tx.Pending() > 0; i++ {
			tx.Reclaim()
		}
		got := w.take()
		if len(got) != len(sent) {
			t.Fatalf("%d frames on the wire, want %d", len(got), len(sent))
		}
		for i := range sent {
			if !bytes.HasPrefix(got[i], sent[i][:60]) {
				t.Fatalf("frame %d differs on the wire", i)
			}
		}
	}
	forward(20)
	before := rx.Pool().OwnerStats()
	if before.RecycleRing == 0 {
		t.Fatalf("without RecycleDirect no buffer went through the shared ring: %+v", before)
	}
	if err := dr.RecycleDirect(rx); err != nil {
		t.Fatal(err)
	}
	forward(20)
	after := rx.Pool().OwnerStats()
	if after.RecycleRing != before.RecycleRing {
		t.Errorf("RecycleDirect: %d buffers went through the shared ring, want 0", after.RecycleRing-before.RecycleRing)
	}
	if c := after.RecycleCached - before.RecycleCached; c < 320 {
		t.Errorf("RecycleDirect: %d buffers recycled into the cache, want the 320 sent", c)
	}
}

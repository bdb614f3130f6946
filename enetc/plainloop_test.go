package enetc_test

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/pool"
	_ "github.com/gopmd/gopmd/sim"
)

// TestPlainLoopReceivesGenerated: with the default (synchronous) model
// and the spec a user copies from the README (gen=1), a plain
// RxBurst/TxBurst loop between two ports gets every generated frame with
// no Pump or other simulator call: the model pulls its sources when the
// driver enables receive and at each RX refill doorbell.
func TestPlainLoopReceivesGenerated(t *testing.T) {
	for i, kind := range []string{"enetc"} {
		t.Run(kind, func(t *testing.T) {
			const n = 3000
			in, err := driver.Open(fmt.Sprintf("sim:%s%d?gen=1&gen-count=%d&link-poll=0", kind, 9090+2*i, n))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			out, err := driver.Open(fmt.Sprintf("sim:%s%d?link-poll=0", kind, 9091+2*i))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			for _, p := range []driver.Port{in, out} {
				if err := p.Start(); err != nil {
					t.Fatal(err)
				}
			}
			burst := make([]*pool.Packet, 32)
			got := 0
			for polls := 0; polls < 100*n && got < n; polls++ {
				k := in.RxQueue(0).RxBurst(burst)
				s := out.TxQueue(0).TxBurst(burst[:k])
				pool.FreeBulk(burst[s:k])
				got += k
			}
			out.Stop()
			in.Stop()
			st, ot := in.Stats(), out.Stats()
			if got != n || st.Rx.Packets != n || ot.Tx.Packets != n {
				t.Fatalf("loop received %d, port counted rx %d, out sent %d: want %d each (rx drops %v)", got, st.Rx.Packets, ot.Tx.Packets, n, st.Rx.Drops)
			}
		})
	}
}

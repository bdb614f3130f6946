package drvtest

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// PlainLoop checks that, with the default (synchronous) model and the spec
// a user copies from the README (gen=1), a plain RxBurst/TxBurst loop
// between two simulated ports of kind ("enetc", "fec") gets every
// generated frame with no Pump or other simulator call: the model pulls
// its sources when the driver enables receive and at each RX refill
// doorbell. The ports are sim:<kind><base> and sim:<kind><base+1>; the
// caller links the driver and the sim package into the test.
func PlainLoop(t *testing.T, kind string, base int) {
	t.Helper()
	const n = 3000
	in, err := driver.Open(fmt.Sprintf("sim:%s%d?gen=1&gen-count=%d&link-poll=0", kind, base, n))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := driver.Open(fmt.Sprintf("sim:%s%d?link-poll=0", kind, base+1))
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
}

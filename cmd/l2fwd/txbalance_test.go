package main

import (
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/tap"
)

// TestBalanceTxSide: the accounting's TX identity, frames handed to a
// port's TX (by the lanes and down from its TAP twin) = sent + dropped on
// transmit by cause, holds with every TX cause counted and fails, naming
// the port and the shortfall, when a frame is missing or counted twice.
func TestBalanceTxSide(t *testing.T) {
	t.Parallel()
	a := &app{specs: []string{"sim:fec0"}}
	snap := func(sent uint64, drops map[driver.Cause]uint64) []portSnap {
		var st driver.PortStats
		st.Tx.Packets = sent
		for c, n := range drops {
			st.Tx.Drops[c] = n
		}
		return []portSnap{{stats: st, toTx: 90, tap: tap.Stats{DownFrames: 10}}}
	}
	causes := map[driver.Cause]uint64{driver.CauseLinkDown: 3, driver.CauseStopped: 2, driver.CauseFrame: 1, driver.CauseTooBig: 4}
	if out := a.balance(snap(90, causes)); len(out) != 0 {
		t.Fatalf("100 frames handed to TX, 90 sent and 10 dropped by cause: %v", out)
	}
	for _, c := range []struct {
		sent uint64
		want string
	}{{89, "1 frames unaccounted for"}, {91, "1 frames counted twice"}} {
		out := a.balance(snap(c.sent, causes))
		if len(out) != 1 || !strings.Contains(out[0], "port 0 (sim:fec0)") || !strings.Contains(out[0], c.want) || !strings.Contains(out[0], "link_down=3") {
			t.Errorf("%d sent of 100 handed, 10 dropped: %v, want one line naming the port, the causes and %q", c.sent, out, c.want)
		}
	}
}

package fec_test

import (
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim"
)

// TestLinkDownLossCounted: frames the MAC sends after the PHY lost its
// link, before the driver noticed (no link watcher here), are lost between
// MAC and wire and counted there, as phy:link_down among the port's
// losses (which l2fwd's accounting lists), never silently.
func TestLinkDownLossCounted(t *testing.T) {
	p, err := driver.Open("sim:fec183?sink=1&link-poll=0")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	sim.FECModel("fec183").SetLink(false)
	const n = 10
	for i := 0; i < n; i++ {
		pk := p.RxQueue(0).Pool().Alloc()
		if pk == nil || !pk.SetLen(60) {
			t.Fatal("no buffer to send from")
		}
		clear(pk.Data())
		if p.TxQueue(0).TxBurst([]*driver.Packet{pk}) != 1 {
			t.Fatal("TxBurst took nothing")
		}
	}
	v := sim.ViewOf("sim:fec183")
	lost := map[string]uint64{}
	for _, l := range v.Losses() {
		lost[l.Cause] = l.N
	}
	if lost["phy:link_down"] != n || v.Sink().Stats().Frames != 0 || v.Carried() != n {
		t.Fatalf("%d frames sent with the link down: losses %v, sink %d, carried %d", n, lost, v.Sink().Stats().Frames, v.Carried())
	}
}

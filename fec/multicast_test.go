package fec_test

import (
	"hash/crc32"
	"net"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

// TestMulticastFilter: with promiscuous mode off a FEC port receives
// broadcast, its own unicast and the groups it joined (GAUR/GALR); a group
// in a bucket not set is rejected by the model's filter, counted there
// (RxFiltered) and by the driver (RMON_R_DROP, rx:mac_discard: the FEC has
// no filter counter of its own); all-multicast lets every group in.
func TestMulticastFilter(t *testing.T) {
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	if err := p.SetPromiscuous(false); err != nil {
		t.Fatal(err)
	}
	bucket := func(a net.HardwareAddr) uint32 { return ^crc32.ChecksumIEEE(a) >> 26 }
	g1 := net.HardwareAddr{0x33, 0x33, 0xff, 0x00, 0x00, 0x0b} // fe80::b's solicited-node group
	var g2 net.HardwareAddr
	for i := 2; i < 256; i++ {
		g := net.HardwareAddr{0x01, 0x00, 0x5e, 0x00, 0x00, byte(i)}
		if bucket(g) != bucket(g1) {
			g2 = g
			break
		}
	}
	recv := func(what string, dst net.HardwareAddr, want bool) {
		t.Helper()
		f := udpFrame(t, 100, -1, 1)
		copy(f, dst)
		before, mf := p.Stats().Rx, m.Stats().RxFiltered
		m.Receive(f)
		got := drainRx(p, 1)
		after := p.Stats().Rx
		dropped := after.Drops[driver.CauseMACDiscard] - before.Drops[driver.CauseMACDiscard]
		filtered := m.Stats().RxFiltered - mf
		switch {
		case want && (got != 1 || dropped != 0):
			t.Errorf("%s: received %d, dropped %d: want it received", what, got, dropped)
		case !want && (got != 0 || dropped != 1 || filtered != 1):
			t.Errorf("%s: received %d, dropped %d, model filtered %d: want it filtered and counted", what, got, dropped, filtered)
		}
	}
	recv("broadcast", net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, true)
	recv("own unicast", p.MAC(), true)
	recv("unicast for another station", net.HardwareAddr{2, 0, 0, 0, 0x77, 0x77}, false)
	recv("group not joined", g1, false)
	if err := p.AddMulticast(g1); err != nil {
		t.Fatal(err)
	}
	recv("joined group", g1, true)
	recv("group in another bucket", g2, false)
	if err := p.SetAllMulticast(true); err != nil {
		t.Fatal(err)
	}
	recv("any group with all-multicast", g2, true)
	if err := p.SetAllMulticast(false); err != nil {
		t.Fatal(err)
	}
	if err := p.RemoveMulticast(g1); err != nil {
		t.Fatal(err)
	}
	recv("group left", g1, false)
	if err := p.AddMulticast(p.MAC()); err == nil {
		t.Error("AddMulticast took the port's unicast address")
	}
	if err := p.RemoveMulticast(g2); err == nil {
		t.Error("RemoveMulticast of a group never added: no error")
	}
}

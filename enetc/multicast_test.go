package enetc_test

import (
	"net"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/pool"
)

// ndFrames builds an IPv6 neighbour solicitation from src for target
// (to target's solicited-node group) and the advertisement that answers it
// (unicast back to src).
func ndFrames(t testing.TB, src, dst net.HardwareAddr, srcIP, target net.IP) (ns, na []byte, group net.HardwareAddr) {
	t.Helper()
	group = net.HardwareAddr{0x33, 0x33, 0xff, target[13], target[14], target[15]}
	snIP := net.IP{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, target[13], target[14], target[15]}
	ip := &layers.IPv6{Version: 6, HopLimit: 255, NextHeader: layers.IPProtocolICMPv6, SrcIP: srcIP, DstIP: snIP}
	ic := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeNeighborSolicitation, 0)}
	_ = ic.SetNetworkLayerForChecksum(ip)
	sol := &layers.ICMPv6NeighborSolicitation{TargetAddress: target,
		Options: layers.ICMPv6Options{{Type: layers.ICMPv6OptSourceAddress, Data: src}}}
	ns = build(t, 0, &layers.Ethernet{SrcMAC: src, DstMAC: group, EthernetType: layers.EthernetTypeIPv6}, ip, ic, sol)
	ip2 := &layers.IPv6{Version: 6, HopLimit: 255, NextHeader: layers.IPProtocolICMPv6, SrcIP: target, DstIP: srcIP}
	ic2 := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeNeighborAdvertisement, 0)}
	_ = ic2.SetNetworkLayerForChecksum(ip2)
	adv := &layers.ICMPv6NeighborAdvertisement{Flags: 0x60, TargetAddress: target,
		Options: layers.ICMPv6Options{{Type: layers.ICMPv6OptTargetAddress, Data: dst}}}
	na = build(t, 0, &layers.Ethernet{SrcMAC: dst, DstMAC: src, EthernetType: layers.EthernetTypeIPv6}, ip2, ic2, adv)
	return ns, na, group
}

// TestMulticastFilter: with promiscuous mode off a port receives
// broadcast, its own unicast and the groups it joined; a group not joined
// (in another hash bucket) and unicast for another station are filtered,
// counted by the model's filter counters (MFDMF, UFDMF) and by the driver
// as rx:filtered; all-multicast lets every group in. Then an IPv6
// neighbour discovery exchange between two non-promiscuous ports: the
// solicitation to the target's solicited-node group reaches the port that
// joined it, the advertisement comes back unicast.
func TestMulticastFilter(t *testing.T) {
	t.Parallel()
	a := openSim(t, "", driver.Config{})
	b := openSim(t, "", driver.Config{})
	for _, s := range []*simPort{a, b} {
		if err := s.port.SetPromiscuous(false); err != nil {
			t.Fatal(err)
		}
	}
	s := b
	mac := s.port.MAC()
	g1 := net.HardwareAddr{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}
	var g2 net.HardwareAddr
	for i := 2; i < 256; i++ { // a group in another bucket than g1
		g := net.HardwareAddr{0x01, 0x00, 0x5e, 0x00, 0x00, byte(i)}
		if enetc.MACHashBucket(g) != enetc.MACHashBucket(g1) {
			g2 = g
			break
		}
	}
	frameTo := func(dst net.HardwareAddr) []byte {
		f := udp4(t, 64, 1)
		copy(f, dst)
		return f
	}
	recv := func(what string, f []byte, want bool) {
		t.Helper()
		before := s.port.Stats().Rx
		s.model.Port().Receive(f)
		got := s.rxAll(0, 1, 50)
		pool.FreeBulk(got)
		after := s.port.Stats().Rx
		filtered := after.Drops[driver.CauseFiltered] - before.Drops[driver.CauseFiltered]
		switch {
		case want && (len(got) != 1 || filtered != 0):
			t.Errorf("%s: received %d, filtered %d: want it received", what, len(got), filtered)
		case !want && (len(got) != 0 || filtered != 1):
			t.Errorf("%s: received %d, filtered %d: want it filtered and counted", what, len(got), filtered)
		}
	}
	bcast := net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	recv("broadcast", frameTo(bcast), true)
	recv("own unicast", frameTo(mac), true)
	recv("unicast for another station", frameTo(net.HardwareAddr{2, 0, 0, 0, 0x77, 0x77}), false)
	recv("group not joined", frameTo(g1), false)
	mf0 := s.model.Read32(modelReg("MFDMF"))
	if err := s.port.AddMulticast(g1); err != nil {
		t.Fatal(err)
	}
	recv("joined group", frameTo(g1), true)
	recv("group in another bucket", frameTo(g2), false)
	if mf := s.model.Read32(modelReg("MFDMF")); mf != mf0+1 {
		t.Errorf("the model's MFDMF moved from %d to %d, want one more", mf0, mf)
	}
	if err := s.port.SetAllMulticast(true); err != nil {
		t.Fatal(err)
	}
	recv("any group with all-multicast", frameTo(g2), true)
	if err := s.port.SetAllMulticast(false); err != nil {
		t.Fatal(err)
	}
	if err := s.port.RemoveMulticast(g1); err != nil {
		t.Fatal(err)
	}
	recv("group left", frameTo(g1), false)
	for _, bad := range []net.HardwareAddr{mac, bcast, {1, 2, 3}} {
		if err := s.port.AddMulticast(bad); err == nil {
			t.Errorf("AddMulticast(%v) took a non-multicast address", bad)
		}
	}
	if err := s.port.RemoveMulticast(g2); err == nil {
		t.Error("RemoveMulticast of a group never added: no error")
	}

	// Neighbour discovery: A (fe80::a) asks for B (fe80::b).
	ipA := net.ParseIP("fe80::a")
	ipB := net.ParseIP("fe80::b")
	ns, na, sn := ndFrames(t, a.port.MAC(), b.port.MAC(), ipA, ipB)
	recv("NS before B joined its solicited-node group", ns, false)
	if err := b.port.AddMulticast(sn); err != nil {
		t.Fatal(err)
	}
	recv("NS to B's solicited-node group", ns, true)
	a.model.Port().Receive(na)
	got := a.rxAll(0, 1, 50)
	if len(got) != 1 || string(frameOf(got[0])) != string(na) {
		t.Errorf("A got %d frames, want the neighbour advertisement", len(got))
	}
	pool.FreeBulk(got)
	a.close(false)
	b.close(false)
}

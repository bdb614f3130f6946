package tap

import (
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/pool"
)

var (
	ownMAC   = net.HardwareAddr{0x02, 0x00, 0x5e, 0x00, 0x00, 0x01}
	otherMAC = net.HardwareAddr{0x02, 0x00, 0x5e, 0x00, 0x00, 0x99}
	bcastMAC = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	mcastMAC = net.HardwareAddr{0x01, 0x00, 0x5e, 0x00, 0x00, 0x05} // 224.0.0.5, OSPF
)

// frame builds an Ethernet frame: dst, src, optional VLAN tag (vlan >= 0),
// EtherType, payload.
func frame(dst net.HardwareAddr, vlan int, etype uint16, payload []byte) []byte {
	b := append([]byte{}, dst...)
	b = append(b, otherMAC...)
	if vlan >= 0 {
		b = binary.BigEndian.AppendUint16(b, etherVLAN)
		b = binary.BigEndian.AppendUint16(b, uint16(vlan))
	}
	b = binary.BigEndian.AppendUint16(b, etype)
	return append(b, payload...)
}

// ipv4 is a 20-byte IPv4 header (protocol proto, to dst) and 8 bytes.
func ipv4(proto uint8, dst string) []byte {
	h := make([]byte, 28)
	h[0] = 0x45
	h[9] = proto
	a := netip.MustParseAddr(dst).As4()
	copy(h[16:], a[:])
	return h
}

func ipv6(next uint8, dst string) []byte {
	h := make([]byte, 48)
	h[0] = 0x60
	h[6] = next
	a := netip.MustParseAddr(dst).As16()
	copy(h[24:], a[:])
	return h
}

// arpRequest asks who has tpa.
func arpRequest(tpa string) []byte {
	b := make([]byte, 28)
	binary.BigEndian.PutUint16(b[0:], 1)      // Ethernet
	binary.BigEndian.PutUint16(b[2:], 0x0800) // IPv4
	b[4], b[5] = 6, 4
	binary.BigEndian.PutUint16(b[6:], 1) // request
	a := netip.MustParseAddr(tpa).As4()
	copy(b[24:], a[:])
	return b
}

func TestClassify(t *testing.T) {
	rules := Rules{
		MAC: ownMAC, Broadcast: Copy, Multicast: Forward,
		EtherTypes: []uint16{0x88cc},
		VLANs:      []uint16{100, 4095},
		Addrs:      []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")},
		Protocols:  []uint8{112},
	}
	c, err := NewClassifier(rules)
	if err != nil {
		t.Fatal(err)
	}
	def, err := NewClassifier(DefaultRules(ownMAC))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		b         []byte
		want, dfl Verdict
	}{
		{"unicast to the port", frame(ownMAC, -1, etherIPv4, ipv4(6, "198.51.100.7")), Up, Up},
		{"unicast to the port, tagged", frame(ownMAC, 7, etherIPv4, ipv4(6, "198.51.100.7")), Up, Up},
		{"unicast elsewhere", frame(otherMAC, -1, etherIPv4, ipv4(6, "198.51.100.7")), Forward, Forward},
		{"ARP request for another host", frame(bcastMAC, -1, etherARP, arpRequest("192.0.2.9")), Copy, Copy},
		{"ARP request for the host", frame(bcastMAC, -1, etherARP, arpRequest("192.0.2.1")), Up, Copy},
		{"ARP request for the host, cut short", frame(bcastMAC, -1, etherARP, arpRequest("192.0.2.1")[:20]), Copy, Copy},
		{"DHCP broadcast", frame(bcastMAC, -1, etherIPv4, ipv4(17, "255.255.255.255")), Copy, Copy},
		{"OSPF multicast", frame(mcastMAC, -1, etherIPv4, ipv4(89, "224.0.0.5")), Forward, Forward},
		{"VRRP by protocol", frame(mcastMAC, -1, etherIPv4, ipv4(112, "224.0.0.18")), Up, Forward},
		{"VRRP over IPv6 by next header", frame(otherMAC, -1, etherIPv6, ipv6(112, "ff02::12")), Up, Forward},
		{"IPv4 to the host's address", frame(otherMAC, -1, etherIPv4, ipv4(6, "192.0.2.1")), Up, Forward},
		{"IPv6 to the host's address", frame(otherMAC, -1, etherIPv6, ipv6(6, "2001:db8::1")), Up, Forward},
		{"IPv6 elsewhere", frame(otherMAC, -1, etherIPv6, ipv6(6, "2001:db8::2")), Forward, Forward},
		{"IPv4 header cut short", frame(otherMAC, -1, etherIPv4, ipv4(112, "192.0.2.1")[:19]), Forward, Forward},
		{"not IPv4 inside", frame(otherMAC, -1, etherIPv4, append([]byte{0x65}, ipv4(112, "192.0.2.1")[1:]...)), Forward, Forward},
		{"LLDP by EtherType", frame(net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0x0e}, -1, 0x88cc, make([]byte, 30)), Up, Forward},
		{"LLDP by EtherType behind a tag", frame(otherMAC, 5, 0x88cc, make([]byte, 30)), Up, Forward},
		{"VLAN 100", frame(otherMAC, 100, etherIPv4, ipv4(6, "198.51.100.7")), Up, Forward},
		{"VLAN 4095", frame(otherMAC, 0xf000|4095, etherIPv4, ipv4(6, "198.51.100.7")), Up, Forward},
		{"VLAN 101", frame(otherMAC, 101, etherIPv4, ipv4(6, "198.51.100.7")), Forward, Forward},
		{"IPv4 to the host behind a tag", frame(otherMAC, 101, etherIPv4, ipv4(6, "192.0.2.1")), Up, Forward},
		{"13-byte runt to the port", frame(ownMAC, -1, etherIPv4, nil)[:13], Forward, Forward},
		{"empty", nil, Forward, Forward},
	} {
		if got := c.Classify(tc.b); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if got := def.Classify(tc.b); got != tc.dfl {
			t.Errorf("%s (default rules): %v, want %v", tc.name, got, tc.dfl)
		}
	}
}

// A tag the device stripped counts as the frame's VLAN.
func TestClassifyStrippedVLAN(t *testing.T) {
	c, err := NewClassifier(Rules{VLANs: []uint16{100}})
	if err != nil {
		t.Fatal(err)
	}
	pl := newPool(t, 4)
	p := pl.Alloc()
	defer pl.Recycle(p)
	b := frame(otherMAC, -1, etherIPv4, ipv4(6, "198.51.100.7"))
	p.SetLen(len(b))
	copy(p.Data(), b)
	if v := c.ClassifyPacket(p); v != Forward {
		t.Fatalf("untagged frame: %v, want forward", v)
	}
	p.SetRxMeta(pool.RxMeta{Flags: pool.FlagVLANStripped, VLAN: 0x2000 | 100}) // priority 1, VLAN 100
	if v := c.ClassifyPacket(p); v != Up {
		t.Fatalf("frame whose VLAN 100 tag the device stripped: %v, want up", v)
	}
}

func TestRulesRefused(t *testing.T) {
	for _, tc := range []struct {
		r    Rules
		want string
	}{
		{Rules{MAC: bcastMAC}, "not a 6-byte unicast"},
		{Rules{MAC: net.HardwareAddr{1, 2, 3}}, "not a 6-byte unicast"},
		{Rules{VLANs: []uint16{4096}}, "VLAN ID 4096 out of range"},
		{Rules{Addrs: []netip.Addr{{}}}, "neither IPv4 nor IPv6"},
		{Rules{Addrs: []netip.Addr{netip.MustParseAddr("::ffff:192.0.2.1")}}, "neither IPv4 nor IPv6"},
		{Rules{Broadcast: 7}, "use Forward, Up or Copy"},
	} {
		if _, err := NewClassifier(tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewClassifier(%+v) = %v, want an error with %q", tc.r, err, tc.want)
		}
	}
	if v, err := ParseVerdict("copy"); err != nil || v != Copy || v.String() != "copy" {
		t.Errorf("ParseVerdict(copy) = %v, %v", v, err)
	}
	if _, err := ParseVerdict("pass"); err == nil {
		t.Error("ParseVerdict accepted pass")
	}
}

func BenchmarkClassify(b *testing.B) {
	c, _ := NewClassifier(Rules{MAC: ownMAC, Broadcast: Copy, Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.1")}, Protocols: []uint8{89, 112}})
	f := frame(otherMAC, -1, etherIPv4, ipv4(6, "198.51.100.7"))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if c.Classify(f) == Forward {
			n++
		}
	}
	if n != b.N {
		b.Fatal("a forwarded frame was not forwarded")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/pkt")
}

func TestParseRules(t *testing.T) {
	r, err := ParseRules(DefaultRules(ownMAC), "addr=192.0.2.1, addr=2001:db8::1,addr=::ffff:198.51.100.1,ethertype=0x88cc,vlan=100,proto=89,broadcast=up,multicast=copy")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Addrs) != 3 || r.Addrs[2] != netip.MustParseAddr("198.51.100.1") || r.EtherTypes[0] != 0x88cc || r.VLANs[0] != 100 ||
		r.Protocols[0] != 89 || r.Broadcast != Up || r.Multicast != Copy || r.MAC.String() != ownMAC.String() {
		t.Fatalf("parsed %+v", r)
	}
	c, _ := NewClassifier(r)
	if v := c.Classify(frame(otherMAC, -1, etherIPv4, ipv4(6, "198.51.100.1"))); v != Up {
		t.Fatalf("a packet to the IPv4-mapped address given: %v, want up", v)
	}
	for _, tc := range []struct{ in, want string }{
		{"addr=192.0.2", "not an IPv4 or IPv6 address"},
		{"addr=fe80::1%eth0", "not an IPv4 or IPv6 address"},
		{"ethertype=0x05dc", "not an EtherType"},
		{"vlan=4096", "not a VLAN ID"},
		{"proto=256", "not an IP protocol"},
		{"broadcast=pass", "use forward, up or copy"},
		{"port=22", "unknown key"},
		{"vlan", "not key=value"},
	} {
		if _, err := ParseRules(Rules{}, tc.in); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.in) {
			t.Errorf("ParseRules(%q) = %v, want an error naming the rule and %q", tc.in, err, tc.want)
		}
	}
}

// icmp6 is an IPv6 packet from src to dst carrying an ICMPv6 message of
// type typ, after a hop-by-hop options header when hbh (as MLD sends).
func icmp6(typ uint8, dst string, hbh bool) []byte {
	h := ipv6(ipProtoICMPv6, dst)[:ipv6Hdr]
	if hbh {
		h[ipv6NextOff] = ipProtoHopByHop
		// Next header ICMPv6, length 0 (8 bytes): a router alert and padding.
		h = append(h, ipProtoICMPv6, 0, 5, 2, 0, 0, 1, 0)
	}
	return append(h, typ, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

// IPv6 to the host works with the default rules: a neighbour solicitation
// for the host's address arrives at its solicited-node group
// (33:33:ff:xx:xx:xx), router advertisements and MLD queries at all-nodes
// (33:33:00:00:00:01): each is copied up and forwarded. Other IPv6
// multicast, MLD reports of other hosts and ND between other hosts'
// unicast addresses are forwarded only.
func TestClassifyIPv6NeighbourDiscovery(t *testing.T) {
	def, err := NewClassifier(DefaultRules(ownMAC))
	if err != nil {
		t.Fatal(err)
	}
	solicited := net.HardwareAddr{0x33, 0x33, 0xff, 0x00, 0x00, 0x10}
	allNodes := net.HardwareAddr{0x33, 0x33, 0, 0, 0, 1}
	mldv2 := net.HardwareAddr{0x33, 0x33, 0, 0, 0, 0x16}
	ns := frame(solicited, -1, etherIPv6, icmp6(135, "ff02::1:ff00:10", false))
	for _, tc := range []struct {
		name string
		b    []byte
		want Verdict
	}{
		{"neighbour solicitation to the solicited-node group", ns, Copy},
		{"neighbour solicitation behind a tag", frame(solicited, 7, etherIPv6, icmp6(135, "ff02::1:ff00:10", false)), Copy},
		{"router advertisement to all nodes", frame(allNodes, -1, etherIPv6, icmp6(134, "ff02::1", false)), Copy},
		{"router solicitation", frame(net.HardwareAddr{0x33, 0x33, 0, 0, 0, 2}, -1, etherIPv6, icmp6(133, "ff02::2", false)), Copy},
		{"unsolicited neighbour advertisement", frame(allNodes, -1, etherIPv6, icmp6(136, "ff02::1", false)), Copy},
		{"MLD query with a router alert", frame(allNodes, -1, etherIPv6, icmp6(130, "ff02::1", true)), Copy},
		{"MLDv2 report of another host", frame(mldv2, -1, etherIPv6, icmp6(143, "ff02::16", true)), Forward},
		{"echo request to all nodes", frame(allNodes, -1, etherIPv6, icmp6(128, "ff02::1", false)), Forward},
		{"UDP to a group", frame(allNodes, -1, etherIPv6, ipv6(17, "ff02::1")), Forward},
		{"neighbour solicitation between other hosts, unicast", frame(otherMAC, -1, etherIPv6, icmp6(135, "2001:db8::9", false)), Forward},
		{"neighbour solicitation to the host's MAC", frame(ownMAC, -1, etherIPv6, icmp6(135, "2001:db8::1", false)), Up},
		{"neighbour solicitation cut in its ICMPv6 header", ns[:ethHdrLen+ipv6Hdr+2], Forward},
		{"hop-by-hop header longer than the packet", frame(allNodes, -1, etherIPv6, icmp6(130, "ff02::1", true)[:ipv6Hdr+8]), Forward},
		{"not IPv6 inside", frame(solicited, -1, etherIPv6, append([]byte{0x45}, icmp6(135, "ff02::1:ff00:10", false)[1:]...)), Forward},
	} {
		if got := def.Classify(tc.b); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// nd= and multicast= change the verdict: nd=forward as before ND had a
	// rule, nd=up takes ND from the forwarded network, multicast=up takes
	// every group frame.
	for _, tc := range []struct {
		rules string
		want  Verdict
	}{{"nd=forward", Forward}, {"nd=up", Up}, {"multicast=up", Up}, {"nd=forward,multicast=copy", Copy}} {
		r, err := ParseRules(DefaultRules(ownMAC), tc.rules)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := NewClassifier(r)
		if got := c.Classify(ns); got != tc.want {
			t.Errorf("%s: a neighbour solicitation to the solicited-node group: %v, want %v", tc.rules, got, tc.want)
		}
	}
	if _, err := ParseRules(Rules{}, "nd=maybe"); err == nil || !strings.Contains(err.Error(), "use forward, up or copy") {
		t.Errorf("nd=maybe: %v", err)
	}
}

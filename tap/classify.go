package tap

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// Verdict is what the exception path does with one received frame.
type Verdict uint8

const (
	// Forward leaves the frame to the application (the forwarding path).
	Forward Verdict = iota
	// Up takes the frame: it goes to the kernel through the TAP and is
	// freed; the application never sees it.
	Up
	// Copy sends a copy up and leaves the frame to the application too:
	// for broadcasts that the kernel and the forwarded network both need.
	Copy
)

var verdictNames = [...]string{"forward", "up", "copy"}

// String is the verdict's name: forward, up or copy.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", v)
}

// ParseVerdict parses "forward", "up" or "copy".
func ParseVerdict(s string) (Verdict, error) {
	for i, n := range verdictNames {
		if n == s {
			return Verdict(i), nil
		}
	}
	return 0, fmt.Errorf("verdict %q: use forward, up or copy", s)
}

// Rules say which received frames belong to the host behind the TAP. A
// frame goes Up if it matches any of MAC, EtherTypes, VLANs, Addrs (or is
// an ARP request for one of them) or Protocols; otherwise a broadcast gets
// the Broadcast verdict, an IPv6 neighbour discovery or MLD query message
// to a group address the ND verdict (unless Multicast is Up), another
// group address the Multicast verdict, and everything else is forwarded.
type Rules struct {
	// MAC is the host's unicast address (the port's MAC): frames to it go up.
	MAC net.HardwareAddr
	// Broadcast is the verdict for ff:ff:ff:ff:ff:ff frames no rule took
	// (ARP requests, DHCP): Copy lets the host and the forwarded network
	// both see them.
	Broadcast Verdict
	// Multicast is the verdict for other group addresses (OSPF, LLDP,
	// STP, IPv4 multicast) no rule took.
	Multicast Verdict
	// ND is the verdict for IPv6 neighbour discovery (ICMPv6 router and
	// neighbour solicitations and advertisements, redirects; RFC 4861) and
	// MLD queries (RFC 2710, RFC 3810) sent to a group address: a
	// neighbour solicitation for the host's address goes to its
	// solicited-node group (33:33:ff:xx:xx:xx, RFC 4291 2.7.1), which the
	// host must see to answer, as must every node of the link. Copy lets
	// the host and the forwarded network both see them. ND to the host's
	// MAC goes up with every other frame to it.
	ND Verdict
	// EtherTypes go up whatever their destination (e.g. 0x88cc LLDP,
	// 0x888e EAPOL). The EtherType after one VLAN tag counts.
	EtherTypes []uint16
	// VLANs: frames tagged with these VLAN IDs (0-4095) go up, whether the
	// tag is in the frame or the device stripped it.
	VLANs []uint16
	// Addrs: IPv4 and IPv6 packets to these addresses go up, and so do ARP
	// packets whose target is one of them.
	Addrs []netip.Addr
	// Protocols: IPv4 and IPv6 packets of these IP protocols go up (89
	// OSPF, 112 VRRP, ...). For IPv6 the fixed header's Next Header is
	// matched; extension headers are not walked.
	Protocols []uint8
}

// DefaultRules are the rules an appliance port starts from, what IPv4 and
// IPv6 to the host behind the TAP need: unicast to its MAC goes up;
// broadcasts (ARP requests, DHCP) are copied up; IPv6 neighbour discovery
// and MLD queries to group addresses (neighbour solicitations to the
// host's solicited-node group among them) are copied up; other multicast
// is forwarded.
func DefaultRules(mac net.HardwareAddr) Rules {
	return Rules{MAC: mac, Broadcast: Copy, Multicast: Forward, ND: Copy}
}

// Classifier applies compiled Rules to frames. It is read-only after
// NewClassifier, so any number of goroutines may use it at once; it never
// allocates.
type Classifier struct {
	mac        [6]byte
	hasMAC     bool
	bcast      Verdict
	mcast      Verdict
	nd         Verdict
	etypes     []uint16
	vlans      [4096 / 64]uint64 // bit per VLAN ID
	hasVLANs   bool
	v4         [][4]byte
	v6         [][16]byte
	protos     [256 / 64]uint64 // bit per IP protocol
	hasProtos  bool
	needsIPHdr bool
	// l2Only: only the destination address decides (the default rules),
	// so the EtherType and what follows are never read.
	l2Only bool
	// mac4 and mac2 are mac as passesOn reads a frame's destination; a
	// classifier without a MAC holds a group address there, which no
	// unicast frame matches.
	mac4 uint32
	mac2 uint16
}

// EtherTypes the classifier looks into.
const (
	etherIPv4 = 0x0800
	etherARP  = 0x0806
	etherIPv6 = 0x86dd
	etherVLAN = 0x8100 // IEEE 802.1Q C-tag
	etherQinQ = 0x88a8 // IEEE 802.1ad S-tag
)

// Frame offsets and lengths.
const (
	ethHdrLen  = 14
	vlanTagLen = 4
	maxVLANID  = 4095
)

// NewClassifier checks and compiles r.
func NewClassifier(r Rules) (*Classifier, error) {
	c := &Classifier{bcast: r.Broadcast, mcast: r.Multicast, nd: r.ND, etypes: append([]uint16(nil), r.EtherTypes...)}
	if r.Broadcast > Copy || r.Multicast > Copy || r.ND > Copy {
		return nil, fmt.Errorf("tap rules: broadcast %v / multicast %v / nd %v: use Forward, Up or Copy", r.Broadcast, r.Multicast, r.ND)
	}
	if r.MAC != nil {
		if len(r.MAC) != 6 || r.MAC[0]&1 != 0 {
			return nil, fmt.Errorf("tap rules: MAC %v is not a 6-byte unicast Ethernet address", r.MAC)
		}
		copy(c.mac[:], r.MAC)
		c.hasMAC = true
	}
	for _, v := range r.VLANs {
		if v > maxVLANID {
			return nil, fmt.Errorf("tap rules: VLAN ID %d out of range: use 0 to %d", v, maxVLANID)
		}
		c.vlans[v/64] |= 1 << (v % 64)
		c.hasVLANs = true
	}
	for _, a := range r.Addrs {
		switch {
		case a.Is4():
			c.v4 = append(c.v4, a.As4())
		case a.Is6() && !a.Is4In6():
			c.v6 = append(c.v6, a.As16())
		default:
			return nil, fmt.Errorf("tap rules: address %v is neither IPv4 nor IPv6 (give plain addresses such as 192.0.2.1 or 2001:db8::1)", a)
		}
	}
	for _, p := range r.Protocols {
		c.protos[p/64] |= 1 << (p % 64)
		c.hasProtos = true
	}
	c.needsIPHdr = len(c.v4) > 0 || len(c.v6) > 0 || c.hasProtos
	c.l2Only = !c.needsIPHdr && !c.hasVLANs && len(c.etypes) == 0
	m := c.mac
	if !c.hasMAC {
		m = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	c.mac4, c.mac2 = binary.LittleEndian.Uint32(m[0:4]), binary.LittleEndian.Uint16(m[4:6])
	return c, nil
}

// Classify decides for one frame (Ethernet header first, no FCS).
func (c *Classifier) Classify(frame []byte) Verdict { return c.classify(frame, -1) }

// ClassifyPacket decides for a received packet: it reads the first
// segment and the VLAN tag the device stripped, if any.
func (c *Classifier) ClassifyPacket(p *driver.Packet) Verdict {
	d := p.Data()
	if c.passesOn(d) {
		return Forward
	}
	vlan := -1
	if m := p.RxMeta(); m.Flags&pool.FlagVLANStripped != 0 {
		vlan = int(m.VLAN & maxVLANID)
	}
	return c.classify(d, vlan)
}

// passesOn is the common case, small enough to be inlined into loops:
// with the default rules, a unicast frame to another host is forwarded on
// its first six bytes (read as one 32-bit and one 16-bit word).
func (c *Classifier) passesOn(d []byte) bool {
	return c.l2Only && len(d) >= ethHdrLen && d[0]&1 == 0 &&
		(binary.LittleEndian.Uint32(d[0:4]) != c.mac4 || binary.LittleEndian.Uint16(d[4:6]) != c.mac2)
}

// classify is the decision; vlan is a stripped tag's ID or -1. Every
// offset is checked against the frame's length: a short frame matches
// only the rules its bytes cover.
func (c *Classifier) classify(b []byte, vlan int) Verdict {
	if len(b) < ethHdrLen {
		return Forward
	}
	if c.hasMAC && [6]byte(b[0:6]) == c.mac {
		return Up
	}
	if c.l2Only && b[0]&1 == 0 { // unicast to another host: the common case
		return Forward
	}
	et := uint16(b[12])<<8 | uint16(b[13])
	l3 := ethHdrLen
	if (et == etherVLAN || et == etherQinQ) && len(b) >= ethHdrLen+vlanTagLen {
		vlan = int(uint16(b[14])<<8|uint16(b[15])) & maxVLANID
		et = uint16(b[16])<<8 | uint16(b[17])
		l3 += vlanTagLen
	}
	if c.hasVLANs && vlan >= 0 && c.vlans[vlan/64]&(1<<(vlan%64)) != 0 {
		return Up
	}
	for _, t := range c.etypes {
		if t == et {
			return Up
		}
	}
	if c.needsIPHdr && c.ipMatch(et, b[l3:]) {
		return Up
	}
	if b[0]&1 != 0 { // group bit: broadcast or multicast
		if [6]byte(b[0:6]) == [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} {
			return c.bcast
		}
		if c.nd != Forward && c.mcast != Up && et == etherIPv6 && ndOrMLDQuery(b[l3:]) {
			return c.nd
		}
		return c.mcast
	}
	return Forward
}

// ICMPv6 as neighbour discovery and MLD use it.
const (
	ipProtoHopByHop = 0
	ipProtoICMPv6   = 58
	icmp6MLDQuery   = 130 // RFC 2710 3, RFC 3810 5.1
	icmp6NDFirst    = 133 // router solicitation (RFC 4861 4.1)
	icmp6NDLast     = 137 // redirect (RFC 4861 4.5)
)

// ndOrMLDQuery reports whether an IPv6 packet is an ICMPv6 neighbour
// discovery message (types 133 to 137) or an MLD query (130), after at
// most one hop-by-hop options header (MLD carries a router alert there,
// RFC 2711). Every offset is checked against the packet's length.
func ndOrMLDQuery(l3 []byte) bool {
	if len(l3) < ipv6Hdr || l3[0]>>4 != 6 {
		return false
	}
	next, off := l3[ipv6NextOff], ipv6Hdr
	if next == ipProtoHopByHop {
		if len(l3) < off+2 {
			return false
		}
		next = l3[off]
		off += (int(l3[off+1]) + 1) * 8
	}
	if next != ipProtoICMPv6 || len(l3) < off+4 {
		return false
	}
	t := l3[off]
	return t == icmp6MLDQuery || (t >= icmp6NDFirst && t <= icmp6NDLast)
}

// IPv4, IPv6 and ARP offsets the address and protocol rules read.
const (
	ipv4MinHdr   = 20
	ipv4ProtoOff = 9
	ipv4DstOff   = 16
	ipv6Hdr      = 40
	ipv6NextOff  = 6
	ipv6DstOff   = 24
	arpLen       = 28 // Ethernet/IPv4 ARP
	arpTPAOff    = 24 // target protocol address
)

// ipMatch applies the address and protocol rules to the L3 bytes.
func (c *Classifier) ipMatch(et uint16, l3 []byte) bool {
	switch et {
	case etherIPv4:
		if len(l3) < ipv4MinHdr || l3[0]>>4 != 4 {
			return false
		}
		if c.protoOn(l3[ipv4ProtoOff]) {
			return true
		}
		dst := [4]byte(l3[ipv4DstOff : ipv4DstOff+4])
		for _, a := range c.v4 {
			if a == dst {
				return true
			}
		}
	case etherIPv6:
		if len(l3) < ipv6Hdr || l3[0]>>4 != 6 {
			return false
		}
		if c.protoOn(l3[ipv6NextOff]) {
			return true
		}
		dst := [16]byte(l3[ipv6DstOff : ipv6DstOff+16])
		for _, a := range c.v6 {
			if a == dst {
				return true
			}
		}
	case etherARP:
		if len(l3) < arpLen {
			return false
		}
		tpa := [4]byte(l3[arpTPAOff : arpTPAOff+4])
		for _, a := range c.v4 {
			if a == tpa {
				return true
			}
		}
	}
	return false
}

func (c *Classifier) protoOn(p uint8) bool {
	return c.hasProtos && c.protos[p/64]&(1<<(p%64)) != 0
}

// RulesSyntax describes what ParseRules takes, for error messages and help.
const RulesSyntax = "comma-separated key=value items: addr=IP (IPv4 or IPv6; ARP for an IPv4 one too), ethertype=0xNNNN, vlan=ID (0-4095), proto=N (IP protocol, e.g. 89 OSPF, 112 VRRP), broadcast=forward|up|copy (default copy), multicast=forward|up|copy (default forward), nd=forward|up|copy (IPv6 neighbour discovery and MLD queries to group addresses, default copy); keys may repeat"

// ParseRules adds to base the rules written in s (see RulesSyntax), as a
// command line or a configuration file gives them.
func ParseRules(base Rules, s string) (Rules, error) {
	r := base
	r.EtherTypes = append([]uint16(nil), base.EtherTypes...)
	r.VLANs = append([]uint16(nil), base.VLANs...)
	r.Addrs = append([]netip.Addr(nil), base.Addrs...)
	r.Protocols = append([]uint8(nil), base.Protocols...)
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		bad := func(why string) (Rules, error) {
			return base, fmt.Errorf("tap rule %q: %s (rules are %s)", item, why, RulesSyntax)
		}
		if !ok || v == "" {
			return bad("not key=value")
		}
		switch k {
		case "addr":
			a, err := netip.ParseAddr(v)
			if err != nil || a.Zone() != "" {
				return bad("not an IPv4 or IPv6 address")
			}
			r.Addrs = append(r.Addrs, a.Unmap())
		case "ethertype":
			n, err := strconv.ParseUint(v, 0, 16)
			if err != nil || n < 0x600 {
				return bad("not an EtherType from 0x0600 to 0xffff")
			}
			r.EtherTypes = append(r.EtherTypes, uint16(n))
		case "vlan":
			n, err := strconv.ParseUint(v, 10, 16)
			if err != nil || n > maxVLANID {
				return bad(fmt.Sprintf("not a VLAN ID from 0 to %d", maxVLANID))
			}
			r.VLANs = append(r.VLANs, uint16(n))
		case "proto":
			n, err := strconv.ParseUint(v, 10, 8)
			if err != nil {
				return bad("not an IP protocol number from 0 to 255")
			}
			r.Protocols = append(r.Protocols, uint8(n))
		case "broadcast", "multicast", "nd":
			vd, err := ParseVerdict(v)
			if err != nil {
				return bad(err.Error())
			}
			switch k {
			case "broadcast":
				r.Broadcast = vd
			case "multicast":
				r.Multicast = vd
			default:
				r.ND = vd
			}
		default:
			return bad("unknown key")
		}
	}
	if _, err := NewClassifier(r); err != nil {
		return base, err
	}
	return r, nil
}

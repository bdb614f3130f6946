package model

import "encoding/binary"

// parsed is what the model's frame parser found: the parse summary of the
// RX BD (§3.7) and the RSS hash input.
type parsed struct {
	summary uint16
	hashLen int      // bytes of in used; 0 = not hashable (hash 0)
	in      [36]byte // src addr, dst addr[, src port, dst port]
	vlan    bool     // outer VLAN tag present
	tpid    uint16
	// noL3Check: the port's parser does not check IPv4 header checksums
	// (PAR_PORT_CFG L3 bit set, §2.3). Set by the caller; parseFrame
	// keeps it.
	noL3Check bool
}

// IP protocol numbers and Ethernet types the parser knows.
const (
	etIPv4 = 0x0800
	etIPv6 = 0x86DD
	etVLAN = 0x8100
	etQinQ = 0x88A8

	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoESP    = 50
	protoICMPv6 = 58
	protoSCTP   = 132
)

// parseFrame fills p from frame f. The parse summary follows §3.7: 0x0060
// for anything that is not IP (ARP included), IPv4 0x0000 / IPv6 0x0020 /
// IPv6 with extension headers 0x0080, OR-ed with the L4 code (TCP 0x10,
// UDP 0x11, SCTP 0x13, ICMP 0x03, ESP 0x05, fragment 0x01), and bit 15
// (ParseError) for an error in the last layer the code names. Bit 15 is
// the parser's one error bit, not an IPv4 checksum bit: DPDK's net/enetc
// (enetc_rxtx.c, its slow parsing path) reads it with an L3-only code as
// "IP checksum bad" and with an L4 code as "IP checksum good, L4
// checksum bad"; FreeBSD's enetc (if_enetc.c) takes any bit 15 as "IP
// not valid". So an L3 error (a truncated or malformed IP header, a bad
// IPv4 header checksum) stops the parse with the L3 code alone, and an L4
// error (a TCP or UDP header cut short) sets bit 15 beside the L4 code.
// L4 checksums are not checked; the IPv4 header checksum is not checked
// when p.noL3Check is set. The RSS input is the Toeplitz input of the
// usual RSS definition: source and destination address, then source and
// destination port for TCP and UDP (not for fragments, nor after an L3
// error); other frames hash to 0.
func parseFrame(f []byte, p *parsed) {
	p.summary, p.hashLen, p.vlan, p.tpid = ParseL2Only, 0, false, 0
	if len(f) < 14 {
		return
	}
	et := binary.BigEndian.Uint16(f[12:14])
	off := 14
	for i := 0; i < 2 && (et == etVLAN || et == etQinQ); i++ {
		if i == 0 {
			p.vlan, p.tpid = true, et
		}
		if len(f) < off+4 {
			return
		}
		et = binary.BigEndian.Uint16(f[off+2 : off+4])
		off += 4
	}
	switch et {
	case etIPv4:
		parseIPv4(f[off:], p)
	case etIPv6:
		parseIPv6(f[off:], p)
	}
}

func parseIPv4(h []byte, p *parsed) {
	p.summary = ParseIPv4
	if len(h) < 20 || h[0]>>4 != 4 {
		p.summary |= ParseError
		return
	}
	ihl := int(h[0]&0xF) * 4
	if ihl < 20 || len(h) < ihl {
		p.summary |= ParseError
		return
	}
	// Header checksum: ones'-complement sum of 32-bit words (the folds
	// below turn it into the 16-bit sum), ihl being a multiple of 4.
	var sum uint64
	for i := 0; i+4 <= ihl; i += 4 {
		sum += uint64(binary.BigEndian.Uint32(h[i : i+4]))
	}
	for sum>>16 != 0 {
		sum = sum&0xFFFF + sum>>16 // ones'-complement fold
	}
	copy(p.in[0:8], h[12:20])
	p.hashLen = 8
	if sum != 0xFFFF && !p.noL3Check {
		p.summary |= ParseError // an L3 error: no L4 code (see parseFrame)
		return
	}
	if binary.BigEndian.Uint16(h[6:8])&0x3FFF != 0 { // MF or a fragment offset
		p.summary |= ParseFrag
		return
	}
	l4(h[9], h[ihl:], p, 8)
}

func parseIPv6(h []byte, p *parsed) {
	p.summary = ParseIPv6
	if len(h) < 40 || h[0]>>4 != 6 {
		p.summary |= ParseError
		return
	}
	copy(p.in[0:32], h[8:40])
	p.hashLen = 32
	nh, off := h[6], 40
ext:
	for i := 0; i < 8; i++ {
		switch nh {
		case 0, 43, 60: // hop-by-hop, routing, destination options
			p.summary = p.summary&^ParseIPv6 | ParseIPv6Ext
			if len(h) < off+8 {
				p.summary |= ParseError
				return
			}
			nh, off = h[off], off+(int(h[off+1])+1)*8
			continue
		case 44: // fragment
			p.summary = p.summary&^ParseIPv6 | ParseIPv6Ext | ParseFrag
			return
		default:
			break ext
		}
	}
	if off > len(h) {
		p.summary |= ParseError
		return
	}
	l4(nh, h[off:], p, 32)
}

// l4 adds the L4 code and, for TCP and UDP, the ports to the hash input.
func l4(proto byte, h []byte, p *parsed, at int) {
	switch proto {
	case protoTCP, protoUDP:
		p.summary |= ParseTCP
		if proto == protoUDP {
			p.summary |= ParseUDP
		}
		if len(h) < 4 {
			p.summary |= ParseError
			return
		}
		copy(p.in[at:at+4], h[0:4])
		p.hashLen = at + 4
	case protoSCTP:
		p.summary |= ParseSCTP
	case protoICMP, protoICMPv6:
		p.summary |= ParseICMP
	case protoESP:
		p.summary |= ParseESP
	}
}

// rssKey returns byte i of the 40-byte key: PRSSK(n) holds bytes 4n..4n+3,
// byte 4n in bits 7:0 (the byte order a driver copying the key as
// little-endian words produces; the reference does not say).
func (d *Device) rssKey(k *[RSSKeyLen]byte) {
	for n := 0; n < RSSKeyLen/4; n++ {
		binary.LittleEndian.PutUint32(k[4*n:], d.get(regPRSSK+uint32(4*n)))
	}
}

// buildToeplitz derives the per-byte lookup table from the key: entry
// [i][b] is the XOR of the 32-bit key windows for the set bits of input
// byte i with value b.
func buildToeplitz(key *[RSSKeyLen]byte, t *[36][256]uint32) {
	window := func(bit int) uint32 {
		var w uint32
		for k := 0; k < 32; k++ {
			p := bit + k
			if key[p/8]&(0x80>>(p%8)) != 0 {
				w |= 1 << (31 - k)
			}
		}
		return w
	}
	for i := 0; i < 36; i++ {
		var w [8]uint32
		for k := range w {
			w[k] = window(i*8 + k)
		}
		for b := 0; b < 256; b++ {
			var v uint32
			for k := 0; k < 8; k++ {
				if b&(0x80>>k) != 0 {
					v ^= w[k]
				}
			}
			t[i][b] = v
		}
	}
}

// Toeplitz computes the RSS hash of input with key the slow way (bit by
// bit); the device uses an equivalent lookup table. Exported for tests of
// drivers that predict the ring a flow lands on.
func Toeplitz(key *[RSSKeyLen]byte, input []byte) uint32 {
	var h uint32
	for i, b := range input {
		for k := 0; k < 8; k++ {
			if b&(0x80>>k) == 0 {
				continue
			}
			bit := i*8 + k
			var w uint32
			for j := 0; j < 32; j++ {
				p := bit + j
				if key[p/8]&(0x80>>(p%8)) != 0 {
					w |= 1 << (31 - j)
				}
			}
			h ^= w
		}
	}
	return h
}

// rssHash hashes p's input with the device's current key.
func (d *Device) rssHash(p *parsed) uint32 {
	if p.hashLen == 0 {
		return 0
	}
	if g := d.keyGen.Load(); g != d.tabGen {
		var key [RSSKeyLen]byte
		d.rssKey(&key)
		buildToeplitz(&key, &d.toep)
		d.tabGen = g
	}
	var h uint32
	for i := 0; i < p.hashLen; i++ {
		h ^= d.toep[i][p.in[i]]
	}
	return h
}

// FlowHash computes the RSS hash the device reports for frame f with its
// current key, and the parse summary: for tests that predict ring choice.
func (d *Device) FlowHash(f []byte) (hash uint32, summary uint16) {
	var p parsed
	parseFrame(f, &p)
	var key [RSSKeyLen]byte
	d.rssKey(&key)
	return Toeplitz(&key, p.in[:p.hashLen]), p.summary
}

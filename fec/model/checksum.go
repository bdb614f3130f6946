package model

import "encoding/binary"

// l3 locates the IP header of a frame: its offset, its ethertype and
// whether a VLAN tag precedes it.
func l3(f []byte) (off int, etype uint16, vlan bool) {
	if len(f) < 14 {
		return 0, 0, false
	}
	off, etype = 14, binary.BigEndian.Uint16(f[12:])
	if etype == 0x8100 && len(f) >= 18 {
		off, etype, vlan = 18, binary.BigEndian.Uint16(f[16:]), true
	}
	return off, etype, vlan
}

// sum16 adds b as big-endian 16-bit words to s (one's complement, unfolded).
func sum16(s uint32, b []byte) uint32 {
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	return uint16(s)
}

// ipInfo is what checksum insertion and checking need of an IP packet.
type ipInfo struct {
	hdr      int // IP header offset in the frame
	hlen     int // IP header length (IPv4) or 40 (IPv6)
	l4       int // transport header offset
	l4len    int
	proto    byte
	v6, frag bool
	ok       bool
}

func parseIP(f []byte) ipInfo {
	off, et, _ := l3(f)
	var in ipInfo
	switch et {
	case 0x0800:
		if len(f) < off+20 || f[off]>>4 != 4 {
			return in
		}
		hlen := int(f[off]&0xF) * 4
		tot := int(binary.BigEndian.Uint16(f[off+2:]))
		if hlen < 20 || tot < hlen || off+tot > len(f) {
			return in
		}
		fr := binary.BigEndian.Uint16(f[off+6:])
		in = ipInfo{hdr: off, hlen: hlen, l4: off + hlen, l4len: tot - hlen, proto: f[off+9],
			frag: fr&0x3FFF != 0, ok: true}
	case 0x86DD:
		if len(f) < off+40 {
			return in
		}
		pl := int(binary.BigEndian.Uint16(f[off+4:]))
		if off+40+pl > len(f) {
			return in
		}
		in = ipInfo{hdr: off, hlen: 40, l4: off + 40, l4len: pl, proto: f[off+6], v6: true, ok: true}
	}
	return in
}

// l4Sum is the transport checksum over pseudo header and segment, with
// the checksum field counted as it stands.
func l4Sum(f []byte, in ipInfo) uint16 {
	var s uint32
	if in.v6 {
		s = sum16(s, f[in.hdr+8:in.hdr+40])
	} else {
		s = sum16(s, f[in.hdr+12:in.hdr+20])
	}
	s += uint32(in.proto) + uint32(in.l4len)
	s = sum16(s, f[in.l4:in.l4+in.l4len])
	return ^fold(s)
}

// csumField is the offset of the TCP/UDP checksum, or -1.
func csumField(in ipInfo) int {
	switch {
	case in.proto == 6 && in.l4len >= 20:
		return in.l4 + 16
	case in.proto == 17 && in.l4len >= 8:
		return in.l4 + 6
	}
	return -1
}

// insertChecksums fills in the IPv4 header checksum (ip) and the TCP/UDP
// checksum (l4) of a frame, as TACC IPCHK/PROCHK and TxBD IINS/PINS ask.
func insertChecksums(f []byte, ip, l4 bool) {
	in := parseIP(f)
	if !in.ok {
		return
	}
	if ip && !in.v6 {
		h := f[in.hdr : in.hdr+in.hlen]
		h[10], h[11] = 0, 0
		binary.BigEndian.PutUint16(h[10:], ^fold(sum16(0, h)))
	}
	if l4 && !in.frag {
		if c := csumField(in); c >= 0 {
			f[c], f[c+1] = 0, 0
			v := l4Sum(f, in)
			if v == 0 && in.proto == 17 {
				v = 0xFFFF
			}
			binary.BigEndian.PutUint16(f[c:], v)
		}
	}
}

// checkChecksums reports IPv4 header and TCP/UDP checksum errors of a
// received frame, and the esc bits describing it.
func checkChecksums(f []byte) (ipBad, l4Bad bool, esc uint32) {
	if _, et, _ := l3(f); et == 0x86DD {
		esc |= rxbd_IPV6
	}
	in := parseIP(f)
	if !in.ok {
		return false, false, esc
	}
	if !in.v6 {
		ipBad = fold(sum16(0, f[in.hdr:in.hdr+in.hlen])) != 0xFFFF
	}
	if in.frag {
		esc |= rxbd_FRAG
		return ipBad, false, esc
	}
	if c := csumField(in); c >= 0 {
		if !(in.proto == 17 && f[c] == 0 && f[c+1] == 0 && !in.v6) {
			l4Bad = l4Sum(f, in) != 0
		}
	}
	return ipBad, l4Bad, esc
}

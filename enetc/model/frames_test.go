package model

import (
	"encoding/binary"
	"net"
)

// Frames built by hand (the model package imports only the standard
// library, gopacket is for the driver's tests).

var (
	macA  = []byte{0x02, 0, 0, 0xe1, 0, 1}
	macB  = []byte{0x02, 0, 0, 0xe1, 0, 2}
	bcast = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
)

func ether(dst, src []byte, et uint16, payload []byte) []byte {
	f := make([]byte, 14, 14+len(payload))
	copy(f, dst)
	copy(f[6:], src)
	binary.BigEndian.PutUint16(f[12:], et)
	return append(f, payload...)
}

func vlanTag(f []byte, tci uint16) []byte {
	out := make([]byte, 0, len(f)+4)
	out = append(out, f[:12]...)
	out = binary.BigEndian.AppendUint16(out, etVLAN)
	out = binary.BigEndian.AppendUint16(out, tci)
	return append(out, f[12:]...)
}

func arp() []byte {
	p := make([]byte, 28)
	binary.BigEndian.PutUint16(p[0:], 1)
	binary.BigEndian.PutUint16(p[2:], 0x0800)
	p[4], p[5] = 6, 4
	binary.BigEndian.PutUint16(p[6:], 1)
	copy(p[8:], macB)
	copy(p[14:], net.IPv4(10, 0, 0, 2).To4())
	copy(p[24:], net.IPv4(10, 0, 0, 1).To4())
	return pad(ether(bcast, macB, 0x0806, p))
}

func pad(f []byte) []byte {
	for len(f) < MinFrame {
		f = append(f, 0)
	}
	return f
}

func csum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	return ^uint16(s)
}

func ipv4(src, dst net.IP, proto byte, l4 []byte) []byte {
	h := make([]byte, 20, 20+len(l4))
	h[0] = 0x45
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(l4)))
	h[8] = 64
	h[9] = proto
	copy(h[12:], src.To4())
	copy(h[16:], dst.To4())
	binary.BigEndian.PutUint16(h[10:], csum(h))
	return append(h, l4...)
}

func ipv6(src, dst net.IP, nh byte, l4 []byte) []byte {
	h := make([]byte, 40, 40+len(l4))
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(len(l4)))
	h[6] = nh
	h[7] = 64
	copy(h[8:], src.To16())
	copy(h[24:], dst.To16())
	return append(h, l4...)
}

func ports(sp, dp uint16, n int) []byte {
	b := make([]byte, n)
	binary.BigEndian.PutUint16(b[0:], sp)
	binary.BigEndian.PutUint16(b[2:], dp)
	return b
}

func udp4(sp, dp uint16, size int) []byte {
	f := ether(macA, macB, etIPv4, ipv4(net.IPv4(10, 0, 0, 2), net.IPv4(10, 0, 0, 1), protoUDP, ports(sp, dp, 8)))
	for len(f) < size {
		f = append(f, byte(len(f)))
	}
	return f
}

func tcp4(src, dst net.IP, sp, dp uint16) []byte {
	return pad(ether(macA, macB, etIPv4, ipv4(src, dst, protoTCP, ports(sp, dp, 20))))
}

func tcp6(sp, dp uint16) []byte {
	return pad(ether(macA, macB, etIPv6, ipv6(net.ParseIP("2001:db8::2"), net.ParseIP("2001:db8::1"), protoTCP, ports(sp, dp, 20))))
}

func udp6(sp, dp uint16) []byte {
	return pad(ether(macA, macB, etIPv6, ipv6(net.ParseIP("2001:db8::2"), net.ParseIP("2001:db8::1"), protoUDP, ports(sp, dp, 8))))
}

// sized returns a frame of n bytes (without FCS) to macA.
func sized(n int) []byte {
	return udp4(1000, 2000, n)[:n]
}

package model

import (
	"encoding/binary"
	"testing"
)

// FuzzRegistersAndFrames programs registers with arbitrary values, then
// sends and receives frames: whatever the driver writes, the model must
// record errors, never panic or touch memory outside its mappings.
func FuzzRegistersAndFrames(f *testing.F) {
	f.Add([]byte{0x00, 0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, []byte("frame"))
	f.Add([]byte{0x20, 0x81, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x08, 0x81, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00}, make([]byte, 200))
	f.Add([]byte{0x18, 0x80, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00}, udp4(1, 2, 70))
	f.Fuzz(func(t *testing.T, prog []byte, frame []byte) {
		h := newHarness(t, Config{PF: true, TxRings: 2, RxRings: 2})
		h.up()
		h.setupTx(0, 16)
		h.setupRx(0, 16, 256, 0)
		for len(prog) >= 8 {
			off := binary.LittleEndian.Uint32(prog[0:]) % (PFBAR0Size + 64)
			v := binary.LittleEndian.Uint32(prog[4:])
			prog = prog[8:]
			h.d.Write32(off&^3, v)
			h.d.Read32(off)
			h.d.Read64(off)
		}
		h.d.Receive(frame)
		h.d.Receive(pad(append([]byte(nil), frame...)))
		h.send(0, 2, pad(append([]byte(nil), frame...)))
		h.d.Pump()
		h.d.Stats()
	})
}

// FuzzParse feeds arbitrary frames to the parser and the RSS hash.
func FuzzParse(f *testing.F) {
	f.Add(tcp6(1, 2))
	f.Add(vlanTag(udp4(1, 2, 80), 5))
	f.Add(arp())
	f.Fuzz(func(t *testing.T, frame []byte) {
		h := newHarness(t, Config{PF: true})
		setKey(h.d, &msKey)
		var p parsed
		parseFrame(frame, &p)
		if p.hashLen > len(p.in) {
			t.Fatalf("hash input %d bytes", p.hashLen)
		}
		if got, want := h.d.rssHash(&p), Toeplitz(&msKey, p.in[:p.hashLen]); got != want {
			t.Fatalf("table hash %#x, bitwise %#x", got, want)
		}
		// The header checksum check against the textbook 16-bit sum. Bit
		// 15 with the IPv4 code alone is an L3 error (DPDK net/enetc: IP
		// checksum bad); with an L4 code it is an L4 error (IP checksum
		// good), such as a UDP header cut short (testdata/fuzz).
		if len(frame) >= 14+20 && frame[12] == 0x08 && frame[13] == 0 && frame[14]>>4 == 4 {
			h := frame[14:]
			ihl := int(h[0]&0xF) * 4
			if ihl >= 20 && len(h) >= ihl {
				var sum uint32
				for i := 0; i < ihl; i += 2 {
					sum += uint32(h[i])<<8 | uint32(h[i+1])
				}
				for sum>>16 != 0 {
					sum = sum&0xFFFF + sum>>16
				}
				if l3bad := p.summary == ParseIPv4|ParseError; l3bad != (sum != 0xFFFF) {
					t.Fatalf("IPv4 header sum %#x: parse summary %#x", sum, p.summary)
				}
				if code := p.summary &^ ParseError; p.summary&ParseError != 0 && sum == 0xFFFF && code != ParseTCP && code != ParseUDP {
					t.Fatalf("good IPv4 header: parse error without a TCP or UDP code (summary %#x)", p.summary)
				}
			}
		}
	})
}

// TestIPv4HeaderChecksum: a good header parses clean, any flipped bit of
// it is an L3 error: the parse error bit (§3.7 bit 15) with the IPv4 code
// alone, no UDP code (which would read as a bad L4 checksum).
func TestIPv4HeaderChecksum(t *testing.T) {
	t.Parallel()
	f := udp4(1, 2, 80)
	var p parsed
	parseFrame(f, &p)
	if p.summary != ParseIPv4|ParseUDP {
		t.Fatalf("good frame: parse summary %#x, want %#x", p.summary, ParseIPv4|ParseUDP)
	}
	for bit := 0; bit < 20*8; bit++ {
		g := append([]byte(nil), f...)
		g[14+bit/8] ^= 1 << (bit % 8)
		parseFrame(g, &p)
		if p.summary != ParseIPv4|ParseError {
			t.Fatalf("header bit %d flipped: parse summary %#x, want %#x", bit, p.summary, ParseIPv4|ParseError)
		}
	}
	// A good header before a UDP header cut short is an L4 error.
	parseFrame(f[:14+20+2], &p)
	if want := uint16(ParseIPv4 | ParseUDP | ParseError); p.summary != want {
		t.Fatalf("UDP header of 2 bytes: parse summary %#x, want %#x", p.summary, want)
	}
}

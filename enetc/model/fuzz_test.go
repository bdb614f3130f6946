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
	})
}

// Package frames builds the test frames the ARM rig's host program and
// guest program exchange, so both sides know every byte to expect.
package frames

import (
	"encoding/binary"
	"fmt"
)

// EtherType is the IEEE local experimental EtherType the rig's frames carry.
const EtherType = 0x88B5

// Directions of a frame: host to guest (received by RxBurst) and guest to
// host (sent by TxBurst).
const (
	ToGuest = 1
	ToHost  = 2
	Hello   = 3 // the guest's "ready" frame on each port
)

// Frame returns frame k of direction dir on port: broadcast destination, a
// source naming the port, the experimental EtherType, a header (magic, dir,
// port, k) and a pattern. Lengths cycle through 60..1514 bytes.
func Frame(dir, port, k int) []byte {
	sizes := []int{60, 64, 128, 333, 512, 1000, 1514, 61}
	n := sizes[k%len(sizes)]
	if dir == Hello {
		n = 60
	}
	b := make([]byte, n)
	for i := 0; i < 6; i++ {
		b[i] = 0xFF
	}
	copy(b[6:12], []byte{0x02, 0x67, 0x6F, 0x70, byte(dir), byte(port)})
	binary.BigEndian.PutUint16(b[12:14], EtherType)
	copy(b[14:20], "GOPMD!")
	b[20], b[21] = byte(dir), byte(port)
	binary.BigEndian.PutUint32(b[22:26], uint32(k))
	for i := 26; i < n; i++ {
		b[i] = byte(i*7 + k*13 + dir*31 + port)
	}
	return b
}

// Parse reads dir, port and k from a rig frame, or ok=false.
func Parse(b []byte) (dir, port, k int, ok bool) {
	if len(b) < 26 || binary.BigEndian.Uint16(b[12:14]) != EtherType || string(b[14:20]) != "GOPMD!" {
		return 0, 0, 0, false
	}
	return int(b[20]), int(b[21]), int(binary.BigEndian.Uint32(b[22:26])), true
}

// Diff describes how got differs from want, or "" when they are equal.
func Diff(got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("byte %d is %#02x, want %#02x", i, got[i], want[i])
		}
	}
	return ""
}

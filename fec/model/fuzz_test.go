package model

import (
	"encoding/binary"
	"testing"
)

// FuzzModel scribbles over descriptor memory and registers the way a buggy
// driver might and runs both DMA directions: the model must never panic,
// never hang and never touch memory outside the IOMMU's mappings.
func FuzzModel(f *testing.F) {
	f.Add([]byte{0x80, 0x0c, 0x40, 0, 0, 0, 0, 0x40}, uint8(0), false)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4}, uint8(3), true)
	socs := Profiles()
	f.Fuzz(func(t *testing.T, data []byte, socIdx uint8, enh bool) {
		td := newTDrv(t, tOpts{soc: socs[int(socIdx)%len(socs)], enh: enh, nrx: 4, ntx: 4})
		ring := td.ring.Bytes()
		// The first half of data lands on the TX ring, the rest drives
		// register writes.
		half := len(data) / 2
		copy(ring[td.txBD(0, 0):], data[:half])
		regs := Registers()
		for p := half; p+5 <= len(data); p += 5 {
			r := regs[int(data[p])%len(regs)]
			td.d.Write32(r.Offset, binary.LittleEndian.Uint32(data[p+1:]))
			td.d.Read32(r.Offset)
		}
		td.d.Write32(regTDAR, 0)
		td.d.Receive(testFrame(ourMAC, len(data)%1600, 1))
		td.d.Write32(regRDAR, 0)
		td.d.Receive(testFrame([6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 60, 2))
		td.d.RxRoom()
		if err := td.d.Err(); err != nil {
			t.Fatalf("in-window accesses reported %v", err)
		}
	})
}

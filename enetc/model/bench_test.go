package model

import (
	"encoding/binary"
	"strconv"
	"testing"
)

const benchBurst = 32

// BenchmarkModelRx measures the model alone delivering 64-byte frames into
// posted buffers (synchronous mode): per burst of 32 the "driver" only
// zeroes the status words and writes RBCIR once.
func BenchmarkModelRx(b *testing.B) {
	for _, size := range []int{64, 1514} {
		b.Run(strconv.Itoa(size)+"B", func(b *testing.B) {
			h := newHarness(b, Config{PF: true})
			h.up()
			const l = 512
			h.setupRx(0, l, 2048, 0)
			s := &h.rx[0]
			f := sized(size)
			b.ReportAllocs()
			b.ResetTimer()
			frames := 0
			for frames < b.N {
				for k := 0; k < benchBurst; k++ {
					if !h.d.Receive(f) {
						b.Fatal("dropped")
					}
				}
				frames += benchBurst
				// Refill: next_to_use = RBCIR; re-post the consumed BDs.
				ci := h.d.Read32(regRBCIR)
				for k := uint32(0); k < benchBurst; k++ {
					slot := (ci + k) % l
					bd := s.ring.b[slot*BDSize:]
					binary.LittleEndian.PutUint64(bd[0:], s.bufs.iova+uint64(slot)*uint64(s.bs))
					binary.LittleEndian.PutUint32(bd[12:], 0)
				}
				h.d.Write32(regRBCIR, (ci+benchBurst)%l)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/pkt")
			b.ReportMetric(float64(frames)/b.Elapsed().Seconds()/1e6, "Mpps")
			if h.d.Stats().NoBufferDrops != 0 {
				b.Fatal("drops")
			}
		})
	}
}

// BenchmarkModelTx measures the model alone sending bursts of 32 one-BD
// 64-byte frames (BDs written once; each burst is one TBPIR write) into
// the counting discard wire.
func BenchmarkModelTx(b *testing.B) {
	h := newHarness(b, Config{PF: true})
	h.up()
	h.d.SetWire(nil)
	const l = 512
	h.setupTx(0, l)
	s := &h.tx[0]
	f := sized(64)
	for slot := uint32(0); slot < l; slot++ {
		copy(s.bufs.b[int(slot)*s.bufSize:], f)
		bd := s.ring.b[slot*BDSize:]
		binary.LittleEndian.PutUint64(bd[0:], s.bufs.iova+uint64(slot)*uint64(s.bufSize))
		binary.LittleEndian.PutUint16(bd[8:], 64)
		binary.LittleEndian.PutUint16(bd[10:], 64)
		bd[15] = TxFlagF
	}
	b.ReportAllocs()
	b.ResetTimer()
	pi, frames := uint32(0), 0
	for frames < b.N {
		pi = (pi + benchBurst) % l
		h.d.Write32(regTBPIR, pi)
		frames += benchBurst
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/pkt")
	if got := h.d.Stats().TxFrames; got != uint64(frames) {
		b.Fatalf("sent %d of %d", got, frames)
	}
}

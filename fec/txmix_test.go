package fec_test

import (
	"bytes"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestTxMixedBurst: one burst mixing one-BD frames (TxBurst's fast loop)
// with what that loop hands to the general path (a frame too short, a
// chained frame, a frame misaligned for a single-queue part's TX): every
// good frame reaches the wire byte for byte
// and in order, every other one is counted by cause, every buffer comes
// back, on a non-coherent multi-queue part and a single-queue one.
func TestTxMixedBurst(t *testing.T) {
	for _, soc := range []string{"imx8mp", "imx6q"} {
		t.Run(soc, func(t *testing.T) {
			t.Parallel()
			p, m := openSim(t, "soc="+soc+"&link-poll=0")
			w := &capture{}
			m.SetWire(w)
			own := p.RxQueue(0).Pool()
			var want [][]byte
			mk := func(seed int, off int) *pool.Packet {
				f := udpFrame(t, 100+seed, -1, seed)
				pk := own.Alloc()
				pk.SetData(off, 0)
				copy(pk.Append(len(f)), f)
				return pk
			}
			good := func(seed int) *pool.Packet {
				pk := mk(seed, pool.DefaultHeadroom)
				want = append(want, append([]byte(nil), pk.Data()...))
				return pk
			}
			short := own.Alloc()
			copy(short.Append(10), "too short!")
			head, tail := mk(7, pool.DefaultHeadroom), own.Alloc()
			copy(tail.Append(40), bytes.Repeat([]byte{0xAB}, 40))
			head.SetNext(tail)
			burst := []*pool.Packet{good(1), good(2), short, good(3)}
			want = append(want, append(append([]byte(nil), head.Data()...), tail.Data()...))
			burst = append(burst, head, good(4))
			odd := mk(8, pool.DefaultHeadroom+3) // misaligned for a 16-byte TX alignment
			want = append(want, append([]byte(nil), odd.Data()...))
			burst = append(burst, odd, good(5), good(6))
			if n := p.TxQueue(0).TxBurst(burst); n != len(burst) {
				t.Fatalf("TxBurst took %d of %d", n, len(burst))
			}
			// The model sends on the doorbell: reclaim takes every frame
			// back, the chained one once.
			if n, left := p.TxQueue(0).Reclaim(), p.TxQueue(0).Pending(); n != len(want) || left != 0 {
				t.Fatalf("reclaim took %d frames, %d pending: want %d, 0", n, left, len(want))
			}
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			got := w.take()
			if len(got) != len(want) {
				t.Fatalf("%d frames on the wire, want %d", len(got), len(want))
			}
			for i := range want {
				// The wire frame may carry the FCS the MAC appended.
				if !bytes.Equal(got[i][:len(want[i])], want[i]) {
					t.Fatalf("frame %d on the wire differs from the one sent", i)
				}
			}
			st := p.Stats()
			if st.Tx.Packets != uint64(len(want)) || st.Tx.Drops[driver.CauseFrame] != 1 {
				t.Fatalf("sent %d, frame drops %d: want %d sent, 1 refused as too short", st.Tx.Packets, st.Tx.Drops[driver.CauseFrame], len(want))
			}
			var total uint64
			for _, f := range want {
				total += uint64(len(f))
			}
			if st.Tx.Bytes != total {
				t.Fatalf("%d bytes counted, want %d: the frames sent, the chained one whole", st.Tx.Bytes, total)
			}
			if n := own.InFlight(); n != 0 {
				t.Fatalf("%d buffers still out after Stop: a frame's buffer did not come back", n)
			}
		})
	}
}

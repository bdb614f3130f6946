package enetc_test

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/pool"
)

// TestConsecutiveLostWriteBacks loses the write-backs of 1, 2, 3 and 20
// frames in a row (the model writes their data and leaves their status
// words zero) in the middle of a stream, and once more at the ring's end
// (the BDs wrap): the ring must not stall. Each lost frame is counted as
// bad_descriptor, every other frame arrives in order, and every buffer
// comes back.
func TestConsecutiveLostWriteBacks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ lost, at int }{{1, 17}, {2, 17}, {3, 17}, {20, 5}, {4, 61}} {
		t.Run(fmt.Sprintf("%d from frame %d", c.lost, c.at), func(t *testing.T) {
			t.Parallel()
			const frames = 100
			s := openSim(t, "link-poll=0", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
			q := s.port.RxQueue(0)
			var got []*pool.Packet
			buf := make([]*pool.Packet, 8)
			for i := 0; i < frames; i++ {
				if i == c.at {
					if err := s.model.CorruptRxWriteback(model.CorruptZeroStatus, c.lost); err != nil {
						t.Fatal(err)
					}
				}
				if i >= c.at && i < c.at+c.lost+1 {
					// The lost frames and the one after them go in together,
					// with no poll between: the ring holds them in a row.
					s.model.Port().Receive(udp4(t, 200, uint16(i)))
					if i < c.at+c.lost {
						continue
					}
				} else {
					s.model.Port().Receive(udp4(t, 200, uint16(i)))
				}
				// A ring that stalls takes no more: poll until this frame
				// arrived, as far as a stuck BD's give-up allows.
				for p := 0; p < 4096*(c.lost+1) && len(got) < i+1-c.lost*btoi(i >= c.at); p++ {
					n := q.RxBurst(buf)
					got = append(got, buf[:n]...)
				}
			}
			var order []uint16
			for _, pk := range got {
				f := frameOf(pk)
				order = append(order, uint16(f[34])<<8|uint16(f[35])) // the UDP source port
			}
			pool.FreeBulk(got)
			st := q.Stats()
			if want := frames - c.lost; len(got) != want {
				t.Fatalf("received %d frames, want %d: the ring stalled after %d lost write-backs in a row (drops %v)", len(got), want, c.lost, st.Drops)
			}
			for k, i := 0, 0; i < frames; i++ {
				if i >= c.at && i < c.at+c.lost {
					continue
				}
				if order[k] != uint16(i) {
					t.Fatalf("frame %d of those received is frame %d, want %d", k, order[k], i)
				}
				k++
			}
			if n := st.Drops[driver.CauseBadDescriptor]; n != uint64(c.lost) {
				t.Errorf("bad_descriptor = %d, want %d, one per lost write-back (all: %v)", n, c.lost, st.Drops)
			}
			s.close(false)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

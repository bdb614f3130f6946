package enetc_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
)

// ringCauses are the drop causes of frames the device wrote into a ring
// (the others count frames lost before any ring, or refills).
var ringCauses = []driver.Cause{driver.CauseCRC, driver.CauseOversize, driver.CauseFrame,
	driver.CauseBadDescriptor, driver.CauseDMAFault, driver.CauseStopped}

// TestStopUnderTrafficCountsRingFrames: a port stopped and started again,
// N times, while frames keep arriving, each time with frames the device
// has written back into the RX ring and no RxBurst has taken. Stop
// recycles their buffers; every one must still be counted: the frames the
// model wrote into posted buffers equal, exactly, those the driver
// received plus those it dropped by a ring cause, with the frames Stop
// found under stopped (once per frame, a two-BD one too) and an errored
// one under its error's cause (frame). In engine mode a rate-limited
// generator sends; in sync mode the test calls Receive. Run with -race.
func TestStopUnderTrafficCountsRingFrames(t *testing.T) {
	t.Parallel()
	const cycles = 5
	for _, c := range []struct {
		name, opts string
		engine     bool
	}{
		{"engine, generator", "mode=engine&gen=1&gen-rate=20k", true},
		// 1 KiB buffers, so a 1200-byte frame spans two BDs.
		{"sync, Receive", "mode=sync&buf-size=1024", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := openSim(t, c.opts, driver.Config{RxRingSize: 256, TxRingSize: 64, PoolSize: 512})
			p, m := s.port, s.model
			q := p.RxQueue(0)
			pkts, big := make([]*driver.Packet, 8), make([]*driver.Packet, 64)
			var got uint64
			burst := func(pkts []*driver.Packet) int {
				n := q.RxBurst(pkts)
				for _, pk := range pkts[:n] {
					pk.Free()
				}
				got += uint64(n)
				return n
			}
			var left uint64 // frames the test knows sit unread in the ring at a Stop
			for i := 0; i < cycles; i++ {
				if c.engine {
					// Receive some until the ring is empty, then stop
					// polling and wait until the device has written 10
					// more frames the ring now holds.
					rx := m.Stats().RxFrames
					for deadline := time.Now().Add(20 * time.Second); ; {
						if time.Now().After(deadline) {
							t.Fatalf("cycle %d: the generator's frames did not arrive by the deadline (model %+v)", i, m.Stats())
						}
						if burst(big) == 0 {
							if m.Stats().RxFrames >= rx+20 {
								break
							}
							runtime.Gosched()
						}
					}
					// A generator catching up may fill the ring at once:
					// frames it then finds no buffer for say the ring is
					// full, of more than 10.
					rx, nb := m.Stats().RxFrames, m.Stats().NoBufferDrops
					for deadline := time.Now().Add(20 * time.Second); m.Stats().RxFrames < rx+10 && m.Stats().NoBufferDrops == nb; {
						if time.Now().After(deadline) {
							t.Fatalf("cycle %d: no 10 frames written into the ring by the deadline (model %+v)", i, m.Stats())
						}
						time.Sleep(50 * time.Microsecond)
					}
					left += 10
				} else {
					// 30 frames: 8 taken, the rest (a CRC error and a
					// two-BD frame among them) left in the ring.
					for k := 0; k < 30; k++ {
						size := 200
						switch k {
						case 20:
							if err := m.InjectRxErrors(model.RxCRC, 1); err != nil {
								t.Fatal(err)
							}
						case 25:
							size = 1200
						}
						if !m.Port().Receive(udp4(t, size, uint16(k))) {
							t.Fatalf("cycle %d: frame %d did not reach a ring (model %+v, errors %v)", i, k, m.Stats(), m.ModelErrors())
						}
					}
					if n := burst(pkts); n != len(pkts) {
						t.Fatalf("cycle %d: RxBurst took %d frames of 30, want %d", i, n, len(pkts))
					}
					left += 30 - uint64(len(pkts))
				}
				if err := p.Stop(); err != nil {
					t.Fatal(err)
				}
				if n := q.Pool().InFlight(); n != 0 {
					t.Fatalf("cycle %d: %d RX buffers still in flight after Stop", i, n)
				}
				if !c.engine {
					for k := 0; k < 3; k++ {
						m.Port().Receive(udp4(t, 200, uint16(k))) // to the disabled port: counted by it, not written
					}
				}
				if err := p.Start(); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Stop(); err != nil { // the rings disabled: the model writes no more
				t.Fatal(err)
			}
			st, ms := p.Stats(), m.Stats()
			written := st.Rx.Packets
			for _, cause := range ringCauses {
				written += st.Rx.Drops[cause]
			}
			if st.Rx.Packets != got {
				t.Errorf("driver counts %d frames received, RxBurst returned %d", st.Rx.Packets, got)
			}
			if written != ms.RxFrames {
				t.Errorf("the model wrote %d frames into the ring, the driver received %d and dropped %d by a ring cause (%v): %d lost uncounted",
					ms.RxFrames, st.Rx.Packets, written-st.Rx.Packets, st.Rx.Drops, int64(ms.RxFrames)-int64(written))
			}
			if got := st.Rx.Drops[driver.CauseFrame]; got != ms.RxErrorFrames {
				t.Errorf("driver counts %d frame errors, the model wrote %d frames with an error byte", got, ms.RxErrorFrames)
			}
			stopped := st.Rx.Drops[driver.CauseStopped]
			if stopped < left-ms.RxErrorFrames {
				t.Errorf("driver counts %d stopped, at least %d frames were in the ring at a Stop", stopped, left-ms.RxErrorFrames)
			}
			if !c.engine {
				if stopped != cycles*(30-8-1) || ms.RxErrorFrames != cycles {
					t.Errorf("driver counts %d stopped and the model %d errored frames, want %d and %d: every frame past the burst, the errored one by its own cause", stopped, ms.RxErrorFrames, cycles*(30-8-1), cycles)
				}
			}
			if got := p.RxQueue(0).Stats().Drops[driver.CauseStopped]; got != stopped {
				t.Errorf("queue 0 counts %d stopped, the port %d", got, stopped)
			}
		})
	}
}

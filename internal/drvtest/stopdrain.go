package drvtest

import (
	"runtime"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// RingCauses are the drop causes of frames a device wrote into an RX ring
// (the others count frames lost before any ring, or refills).
var RingCauses = []driver.Cause{driver.CauseCRC, driver.CauseOversize, driver.CauseFrame,
	driver.CauseBadDescriptor, driver.CauseDMAFault, driver.CauseStopped}

// StopRig is what StopUnderTraffic needs around one started port and the
// model behind it.
type StopRig struct {
	Port driver.Port
	// Engine says a rate-limited generator feeds the port (engine mode);
	// otherwise the test delivers frames itself with Receive.
	Engine bool
	// Written is the number of frames the model wrote into posted RX
	// buffers so far; NoBuffer the number it found no buffer for.
	Written, NoBuffer func() uint64
	// Errored is the number of frames the model wrote with an error (its
	// error bit or byte), which the driver counts under ErrorCause.
	Errored    func() uint64
	ErrorCause driver.Cause
	// InjectError makes the next frame the model receives carry a receive
	// (CRC) error.
	InjectError func() error
	// Receive delivers a frame of size bytes (frame k of a cycle) to the
	// model's wire side and reports whether it reached memory.
	Receive func(size, k int) bool
	// BigSize is a frame size that spans more than one RX buffer.
	BigSize int
	// Describe says what the model counted and last reported, for failures.
	Describe func() string
}

// StopUnderTraffic stops and starts r.Port again, N times, while frames
// keep arriving, each time with frames the device has written into the RX
// ring and no RxBurst has taken. Stop recycles their buffers; every one
// must still be counted: the frames the model wrote into posted buffers
// equal, exactly, those the driver received plus those it dropped by a
// ring cause, with the frames Stop found under stopped (once per frame, a
// multi-buffer one too) and an errored one under its error's cause. In
// engine mode a rate-limited generator sends; otherwise the test calls
// Receive. Run with -race.
func StopUnderTraffic(t *testing.T, r StopRig) {
	t.Helper()
	const cycles = 5
	p := r.Port
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
		if r.Engine {
			// Receive some until the ring is empty, so it has room, then
			// stop polling and wait until the device has written 10 more
			// frames the ring now holds.
			rx := r.Written()
			for deadline := time.Now().Add(20 * time.Second); ; {
				if time.Now().After(deadline) {
					t.Fatalf("cycle %d: the generator's frames did not arrive by the deadline (model %s)", i, r.Describe())
				}
				if burst(big) == 0 {
					if r.Written() >= rx+20 {
						break
					}
					runtime.Gosched()
				}
			}
			// A generator catching up may fill the ring at once: frames
			// it then finds no buffer for say the ring is full, of more
			// than 10.
			rx, nb := r.Written(), r.NoBuffer()
			for deadline := time.Now().Add(20 * time.Second); r.Written() < rx+10 && r.NoBuffer() == nb; {
				if time.Now().After(deadline) {
					t.Fatalf("cycle %d: no 10 frames written into the ring by the deadline (model %s)", i, r.Describe())
				}
				time.Sleep(50 * time.Microsecond)
			}
			left += 10
		} else {
			// 30 frames: 8 taken, the rest (a CRC error and a
			// multi-buffer frame among them) left in the ring.
			for k := 0; k < 30; k++ {
				size := 200
				switch k {
				case 20:
					if err := r.InjectError(); err != nil {
						t.Fatal(err)
					}
				case 25:
					size = r.BigSize
				}
				if !r.Receive(size, k) {
					t.Fatalf("cycle %d: frame %d did not reach memory (model %s)", i, k, r.Describe())
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
		if !r.Engine {
			for k := 0; k < 3; k++ {
				r.Receive(200, k) // to the disabled port: counted by it, not written
			}
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Stop(); err != nil { // receive disabled: the model writes no more
		t.Fatal(err)
	}
	st, written, errored := p.Stats(), r.Written(), r.Errored()
	ring := st.Rx.Packets
	for _, cause := range RingCauses {
		ring += st.Rx.Drops[cause]
	}
	if st.Rx.Packets != got {
		t.Errorf("driver counts %d frames received, RxBurst returned %d", st.Rx.Packets, got)
	}
	if ring != written {
		t.Errorf("the model wrote %d frames into the ring, the driver received %d and dropped %d by a ring cause (%v): %d lost uncounted",
			written, st.Rx.Packets, ring-st.Rx.Packets, st.Rx.Drops, int64(written)-int64(ring))
	}
	if got := st.Rx.Drops[r.ErrorCause]; got != errored {
		t.Errorf("driver counts %d %s, the model wrote %d frames with an error", got, r.ErrorCause, errored)
	}
	stopped := st.Rx.Drops[driver.CauseStopped]
	if stopped < left-errored {
		t.Errorf("driver counts %d stopped, at least %d frames were in the ring at a Stop", stopped, left-errored)
	}
	if !r.Engine {
		if stopped != cycles*(30-8-1) || errored != cycles {
			t.Errorf("driver counts %d stopped and the model %d errored frames, want %d and %d: every frame past the burst, the errored one by its own cause", stopped, errored, cycles*(30-8-1), cycles)
		}
	}
	if got := p.RxQueue(0).Stats().Drops[driver.CauseStopped]; got != stopped {
		t.Errorf("queue 0 counts %d stopped, the port %d", got, stopped)
	}
}

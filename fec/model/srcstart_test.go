package model

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// wireSource is a rate-limited source (not lossless: a wire that runs on
// regardless) with n frames ready at once; it counts the frames it gave.
type wireSource struct {
	n    int
	next atomic.Int64
}

func (s *wireSource) Next(dst []byte) (int, bool) {
	i := int(s.next.Load())
	if i >= s.n {
		return 0, false
	}
	s.next.Add(1)
	return copy(dst, testFrame(ourMAC, 60, i)), true
}

func (s *wireSource) Lossless() bool { return false }

// TestEngineSourceStartsWithReceiver: an engine-mode model pulls no frame
// of a rate-limited source before its receiver first runs (ETHEREN and an
// RDAR write that finds empty BDs), so none is discarded where no driver
// counts it yet; from then on every frame is received. Run with -race.
func TestEngineSourceStartsWithReceiver(t *testing.T) {
	t.Parallel()
	const n = 8
	td := newTDrv(t, tOpts{soc: "imx8mp", engine: true, nrx: n, noStart: true})
	src := &wireSource{n: n}
	td.d.AddSource(src)
	// The engine looks at its sources every 20 µs while idle: give it
	// hundreds of chances with the MAC disabled, then with the MAC enabled
	// but no RDAR write yet.
	time.Sleep(10 * time.Millisecond)
	if got, st := src.next.Load(), td.d.Stats(); got != 0 || st.RxDropped != 0 || st.RxNoBuffer != 0 {
		t.Fatalf("MAC disabled: the engine took %d frames from the source (%d dropped, %d for want of a buffer); want none before the receiver runs", got, st.RxDropped, st.RxNoBuffer)
	}
	td.d.Write32(regECR, ecr_ETHEREN|ecr_DBSWP|ecr_SPEED)
	time.Sleep(10 * time.Millisecond)
	if got, st := src.next.Load(), td.d.Stats(); got != 0 || st.RxDropped != 0 || st.RxNoBuffer != 0 {
		t.Fatalf("MAC enabled, no RDAR write: the engine took %d frames (%d dropped, %d for want of a buffer); want none before the MAC has buffers", got, st.RxDropped, st.RxNoBuffer)
	}
	td.d.Write32(regRDAR, 0)
	got := 0
	for deadline := time.Now().Add(10 * time.Second); got < n; {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d frames after RDAR; model %+v", got, n, td.d.Stats())
		}
		r, ok := td.recv(0)
		if !ok {
			runtime.Gosched()
			continue
		}
		f := testFrame(ourMAC, 60, got)
		mustEqual(t, "frame", r.data[:len(f)], f)
		got++
	}
	st := td.d.Stats()
	if st.RxFrames != n || st.RxDropped != 0 || st.RxNoBuffer != 0 || src.next.Load() != n {
		t.Fatalf("source gave %d frames, model received %d, dropped %d, %d for want of a buffer: want all %d received", src.next.Load(), st.RxFrames, st.RxDropped, st.RxNoBuffer, n)
	}
	// The MIB counters agree: every frame in RMON_R_PACKETS, none dropped.
	if p, drop := td.d.Read32(mibRPackets), td.d.Read32(mibRDrop); p != n || drop != 0 {
		t.Fatalf("RMON_R_PACKETS %d, RMON_R_DROP %d: want %d and 0", p, drop, n)
	}
}

package model

import (
	"bytes"
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
	return copy(dst, sized(64+i)), true
}

func (s *wireSource) Lossless() bool { return false }

// rxDrops sums the model's receive discards of every cause.
func rxDrops(s Stats) uint64 {
	return s.NoBufferDrops + s.RxLinkDown + s.RxMACDisabled + s.RxSIDisabled + s.RxFiltered + s.RxFIFOLocked + s.RxRunts + s.RxRingDisabled
}

// TestEngineSourceStartsWithReceiver: an engine-mode model pulls no frame
// of a rate-limited source before its receive side first runs (SIMR.EN and
// ring 0's RBMR.EN), so none is discarded before a driver has started the
// port; from then on every frame is received. Run with -race.
func TestEngineSourceStartsWithReceiver(t *testing.T) {
	t.Parallel()
	const n = 8
	h := newHarness(t, Config{PF: true, Engine: true})
	if err := h.d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.d.Stop)
	src := &wireSource{n: n}
	h.d.AddSource(src)
	// The engine naps 50 µs at most between rounds: give it hundreds of
	// chances with the port disabled, then with MAC and SI enabled but no
	// RX ring yet.
	time.Sleep(10 * time.Millisecond)
	if got, s := src.next.Load(), h.d.Stats(); got != 0 || rxDrops(s) != 0 {
		t.Fatalf("port disabled: the engine took %d frames from the source, %d discarded; want none before the receive side runs", got, rxDrops(s))
	}
	h.up()
	time.Sleep(10 * time.Millisecond)
	if got, s := src.next.Load(), h.d.Stats(); got != 0 || rxDrops(s) != 0 {
		t.Fatalf("no RX ring enabled: the engine took %d frames, %d discarded; want none before ring 0 runs", got, rxDrops(s))
	}
	h.setupRx(0, 16, 2048, 0)
	got := 0
	for deadline := time.Now().Add(10 * time.Second); got < n; {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d frames once ring 0 ran; model %+v", got, n, h.d.Stats())
		}
		bds, ok := h.recvNoFatal(0)
		if !ok {
			runtime.Gosched()
			continue
		}
		if !bytes.Equal(frameOf(bds), sized(64+got)) {
			t.Fatalf("frame %d differs", got)
		}
		got++
	}
	if s := h.d.Stats(); s.RxFrames != n || rxDrops(s) != 0 || src.next.Load() != n {
		t.Fatalf("source gave %d frames, model received %d and discarded %d: want all %d received", src.next.Load(), s.RxFrames, rxDrops(s), n)
	}
	h.noModelErrors()
}

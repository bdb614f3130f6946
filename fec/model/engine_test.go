package model

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// seqSource produces n test frames, numbered, to our address.
type seqSource struct {
	n, next  int
	lossless bool
}

func (s *seqSource) Next(dst []byte) (int, bool) {
	if s.next >= s.n {
		return 0, false
	}
	f := testFrame(ourMAC, 60+s.next%300, s.next)
	s.next++
	return copy(dst, f), true
}

func (s *seqSource) Lossless() bool { return s.lossless }

func TestPumpLosslessSource(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp", nrx: 4})
	src := &seqSource{n: 10, lossless: true}
	td.d.AddSource(src)
	got := 0
	for round := 0; round < 10 && got < 10; round++ {
		if n := td.d.Pump(); n > 4 {
			t.Fatalf("Pump offered %d frames to a 4-BD ring", n)
		}
		for {
			r, ok := td.recv(0)
			if !ok {
				break
			}
			f := testFrame(ourMAC, 60+got%300, got)
			mustEqual(t, "pumped frame", r.data[:len(f)], f)
			got++
		}
	}
	if got != 10 || td.d.Stats().RxNoBuffer != 0 {
		t.Fatalf("received %d of 10, %d dropped: a lossless source lost frames", got, td.d.Stats().RxNoBuffer)
	}
}

// TestEngineMode drives TX and RX concurrently with the engine goroutine
// and a wire-side goroutine; run it with -race.
func TestEngineMode(t *testing.T) {
	t.Parallel()
	const n = 400
	td := newTDrv(t, tOpts{soc: "imx8mp", engine: true, enh: true, nrx: 16, ntx: 16})
	w := &capture{}
	td.d.SetWire(w)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() { // the far end of the cable
		defer close(done)
		for i := 0; i < n && !stop.Load(); {
			if td.d.Receive(testFrame(ourMAC, 60+i%500, i)) {
				i++
			} else {
				runtime.Gosched()
			}
		}
	}()
	defer func() { stop.Store(true); <-done }()

	sent, got, inflight, dirty := 0, 0, 0, 0
	deadline := time.Now().Add(30 * time.Second)
	for sent < n || got < n || inflight > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("timeout: sent %d (in flight %d), received %d", sent, inflight, got)
		}
		// Reclaim finished TX BDs in order.
		for inflight > 0 {
			if sc, _ := td.w0(td.txBD(0, dirty)); sc&txbd_R != 0 {
				break
			}
			dirty = (dirty + 1) % td.ntx
			inflight--
		}
		if sent < n && inflight < td.ntx-1 {
			td.send(0, testFrame([6]byte{2, 0, 0, 0, 0, 2}, 60+sent%700, sent))
			sent++
			inflight++
		}
		for {
			r, ok := td.recv(0)
			if !ok {
				break
			}
			f := testFrame(ourMAC, 60+got%500, got)
			if r.sc&(bd_L|rxErrBits) != bd_L || int(r.length) != len(f)+4 {
				t.Fatalf("frame %d: sc %#x length %d", got, r.sc, r.length)
			}
			mustEqual(t, "RX frame", r.data[:len(f)], f)
			got++
		}
		runtime.Gosched()
	}
	for deadline := time.Now().Add(5 * time.Second); len(w.get()) < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	frames := w.get()
	if len(frames) != n {
		t.Fatalf("wire got %d frames, want %d", len(frames), n)
	}
	for i, f := range frames {
		mustEqual(t, "TX frame", f, testFrame([6]byte{2, 0, 0, 0, 0, 2}, 60+i%700, i))
	}
}

func TestEngineSourceAndStall(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx93", engine: true, nrx: 8})
	src := &seqSource{n: 50, lossless: true}
	td.d.AddSource(src)
	got := 0
	for deadline := time.Now().Add(10 * time.Second); got < 50; {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of 50 from the source", got)
		}
		if r, ok := td.recv(0); ok {
			f := testFrame(ourMAC, 60+got%300, got)
			mustEqual(t, "frame", r.data[:len(f)], f)
			got++
		} else {
			runtime.Gosched()
		}
	}
	// A TX stall holds TDAR set until released, in engine mode too.
	w := &capture{}
	td.d.SetWire(w)
	td.d.SetTxStall(true)
	td.send(0, testFrame(ourMAC, 60, 1))
	time.Sleep(5 * time.Millisecond)
	if len(w.get()) != 0 || td.d.Read32(regTDAR) == 0 {
		t.Fatal("stalled engine sent a frame or cleared TDAR")
	}
	td.d.SetTxStall(false)
	for deadline := time.Now().Add(5 * time.Second); len(w.get()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("engine did not resume after the stall")
		}
		time.Sleep(100 * time.Microsecond)
	}
	if err := td.d.Start(); err == nil {
		t.Fatal("second Start accepted")
	}
}

func TestStartNeedsEngineMode(t *testing.T) {
	t.Parallel()
	d, _ := New(Config{})
	if err := d.Start(); err == nil {
		t.Fatal("Start accepted in synchronous mode")
	}
}

func TestMMIOCost(t *testing.T) {
	t.Parallel()
	d, _ := New(Config{MMIOCost: 20 * time.Microsecond})
	start := time.Now()
	for i := 0; i < 50; i++ {
		d.Read32(regECR)
	}
	if el := time.Since(start); el < time.Millisecond {
		t.Fatalf("50 accesses at 20µs took %v", el)
	}
}

// TestNoAllocationPerFrame: the synchronous data path does not allocate.
// Serial: testing.AllocsPerRun counts the mallocs of the whole process, so a
// parallel test allocating at the same time would be counted here.
func TestNoAllocationPerFrame(t *testing.T) {
	td := newTDrv(t, tOpts{soc: "imx8mp", enh: true})
	f := testFrame(ourMAC, 200, 1)
	d := td.d
	allocs := testing.AllocsPerRun(200, func() {
		d.Receive(f)
		// Re-arm the BD by hand (td.recv copies, which allocates).
		i := td.rxPos[0]
		rsc := uint16(rxbd_E)
		if i == td.nrx-1 {
			rsc |= bd_W
		}
		td.setW0(td.rxBD(0, i), rsc, 0)
		td.rxPos[0] = (i + 1) % td.nrx
		d.Write32(regRDAR, 0)
		off := td.txBD(0, td.txPos[0])
		td.setWord(off+bdAddr, uint32(td.buf.IOVAAt(td.txBuf(0, 0))))
		sc := uint16(txbd_R | bd_L | txbd_TC)
		if td.txPos[0] == td.ntx-1 {
			sc |= bd_W
		}
		td.setW0(off, sc, 100)
		td.txPos[0] = (td.txPos[0] + 1) % td.ntx
		d.Write32(regTDAR, 0)
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per RX+TX frame", allocs)
	}
}

// BenchmarkSyncFrame measures the model's own cost for one frame received
// and one sent in synchronous mode, doorbells included.
func BenchmarkSyncFrame(b *testing.B) {
	td := newTDrv(b, tOpts{soc: "imx8mp", enh: true, nrx: 64, ntx: 64})
	f := testFrame(ourMAC, 200, 1)
	d := td.d
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Receive(f)
		ri := td.rxPos[0]
		rsc := uint16(rxbd_E)
		if ri == td.nrx-1 {
			rsc |= bd_W
		}
		td.setW0(td.rxBD(0, ri), rsc, 0)
		td.rxPos[0] = (ri + 1) % td.nrx
		d.Write32(regRDAR, 0)
		off := td.txBD(0, td.txPos[0])
		td.setWord(off+bdAddr, uint32(td.buf.IOVAAt(td.txBuf(0, 0))))
		sc := uint16(txbd_R | bd_L | txbd_TC)
		if td.txPos[0] == td.ntx-1 {
			sc |= bd_W
		}
		td.setW0(off, sc, uint16(len(f)))
		td.txPos[0] = (td.txPos[0] + 1) % td.ntx
		d.Write32(regTDAR, 0)
	}
}

package drvtest

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// RestartRig is what RestartUnderTraffic needs around one started port
// and the model behind it.
type RestartRig struct {
	Port driver.Port
	// Receive puts frame on the model's wire side, towards the port's MAC;
	// it is called from a goroutine of its own.
	Receive func(frame []byte)
	// Sent returns the frames the model put on its wire since the last
	// call (a capturing wire).
	Sent func() [][]byte
	// Describe says what the model counted, for failures.
	Describe func() string
}

// restartType is the EtherType of RestartUnderTraffic's frames (IEEE
// 802's local experimental one); the sequence number follows it.
const restartType = 0x88B5

// RestartUnderTraffic stops and starts r.Port again, cycles times, while
// one goroutine puts numbered frames on the wire and another, the queue
// goroutine, keeps forwarding RX queue 0 to TX queue 0 of the same port
// with RxBurst and TxBurst (freeing what TxBurst does not take), through
// every Stop and Start: nothing tells it the port stops. The frames the
// port puts on its wire must come in the order received, none twice; once
// the port is stopped for good every pool buffer must be back and Close
// clean; and the counters must balance: every frame put on the wire is
// received or dropped by cause, RxBurst returned exactly the frames
// counted received, every frame TxBurst took is sent or dropped by cause,
// and the frames sent are those on the wire. Run with -race.
func RestartUnderTraffic(t *testing.T, r RestartRig) {
	t.Helper()
	const (
		cycles = 20
		frames = 30000
		// restartWindow is how far the wire may run ahead of the frames
		// forwarded: less than an RX ring, so pacing alone drops nothing.
		restartWindow = 256
	)
	p := r.Port
	mac := p.Info().MAC
	var (
		produced  atomic.Uint64 // frames put on the wire
		forwarded atomic.Uint64 // frames TxBurst took
		stop      atomic.Bool
		wg        sync.WaitGroup
		rxGot     uint64 // frames RxBurst returned (queue goroutine; read after wg.Wait)
		freed     uint64 // frames TxBurst did not take, freed by the queue goroutine
		panicked  any
	)
	wg.Add(2)
	go func() { // the wire
		defer wg.Done()
		f := make([]byte, 64)
		copy(f[0:6], mac)
		copy(f[6:12], []byte{0x02, 0, 0, 0, 0x5e, 0x01})
		binary.BigEndian.PutUint16(f[12:], restartType)
		for seq := uint64(0); seq < frames && !stop.Load(); seq++ {
			binary.BigEndian.PutUint64(f[14:], seq)
			r.Receive(f)
			produced.Add(1)
			if seq%16 == 15 {
				runtime.Gosched() // let the queue goroutine keep up: a full ring drops, counted
				// On a loaded machine the wire could put every frame out
				// before the queue goroutine ran once, and no restart would
				// meet traffic: keep at most a window of frames ahead of
				// what it forwarded, waiting a bounded time.
				for wait := time.Now().Add(10 * time.Millisecond); seq >= forwarded.Load()+restartWindow && !stop.Load() && time.Now().Before(wait); {
					runtime.Gosched()
				}
			}
		}
	}()
	go func() { // the queue goroutine
		defer wg.Done()
		defer func() { panicked = recover() }()
		rx, tx := p.RxQueue(0), p.TxQueue(0)
		buf := make([]*pool.Packet, 32)
		for !stop.Load() {
			n := rx.RxBurst(buf)
			rxGot += uint64(n)
			if n == 0 {
				tx.Reclaim()
				runtime.Gosched()
				continue
			}
			s := tx.TxBurst(buf[:n])
			forwarded.Add(uint64(s))
			pool.FreeBulk(buf[s:n]) // stopped, or a full ring: the caller's to drop
			freed += uint64(n - s)
		}
	}()
	for i := 0; i < cycles; i++ {
		// Traffic flows between two restarts: wait for the queue goroutine
		// to forward some frames (a bound only for a port that forwards
		// nothing at all).
		from := forwarded.Load()
		for deadline := time.Now().Add(20 * time.Second); forwarded.Load() < from+64 && produced.Load() < frames; {
			if time.Now().After(deadline) {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("cycle %d: no frame forwarded by the deadline (model %s)", i, r.Describe())
			}
			runtime.Gosched()
		}
		if err := p.Stop(); err != nil {
			t.Errorf("cycle %d: Stop: %v", i, err)
		}
		runtime.Gosched() // the queue goroutine meets the stopped port
		if err := p.Start(); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("cycle %d: Start: %v", i, err)
		}
	}
	// Let the wire finish, and the queue goroutine take what it left.
	for deadline := time.Now().Add(20 * time.Second); produced.Load() < frames && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if panicked != nil {
		t.Fatalf("the queue goroutine panicked: %v", panicked)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("final Stop: %v", err)
	}
	for i := 0; i < p.Info().RxQueues; i++ {
		if n := p.RxQueue(i).Pool().InFlight(); n != 0 {
			t.Errorf("RX queue %d: %d of its pool's buffers still out after the final Stop", i, n)
		}
	}
	st := p.Stats()

	// The sink: in order, none twice.
	var seen, dups, reordered uint64
	got := map[uint64]bool{}
	last := int64(-1)
	for _, f := range r.Sent() {
		if len(f) < 22 || binary.BigEndian.Uint16(f[12:]) != restartType {
			continue
		}
		seen++
		seq := binary.BigEndian.Uint64(f[14:])
		switch {
		case got[seq]:
			dups++
		case int64(seq) < last:
			reordered++
		}
		got[seq] = true
		last = max(last, int64(seq))
	}
	if dups != 0 || reordered != 0 {
		t.Errorf("the port sent %d frames, %d of them a second time and %d out of order (%d restarts under traffic)", seen, dups, reordered, cycles)
	}
	if seen == 0 {
		t.Errorf("the port sent no frame")
	}

	// The counters.
	if rxGot != st.Rx.Packets {
		t.Errorf("RxBurst returned %d frames, the driver counts %d received", rxGot, st.Rx.Packets)
	}
	if n := produced.Load(); st.Rx.Packets+st.Rx.TotalDrops() != n {
		t.Errorf("%d frames put on the wire, the port received %d and dropped %d (%s): %d unaccounted for (model %s)",
			n, st.Rx.Packets, st.Rx.TotalDrops(), dropsByCause(st.Rx), int64(n)-int64(st.Rx.Packets+st.Rx.TotalDrops()), r.Describe())
	}
	if fw := forwarded.Load(); fw+freed != rxGot {
		t.Errorf("the queue goroutine received %d frames, TxBurst took %d and %d were freed", rxGot, fw, freed)
	}
	if fw := forwarded.Load(); st.Tx.Packets+st.Tx.TotalDrops() != fw {
		t.Errorf("TxBurst took %d frames, the driver counts %d sent and %d dropped (%s): %d unaccounted for",
			fw, st.Tx.Packets, st.Tx.TotalDrops(), dropsByCause(st.Tx), int64(fw)-int64(st.Tx.Packets+st.Tx.TotalDrops()))
	}
	if st.Tx.Packets != seen {
		t.Errorf("the driver counts %d frames sent, %d reached the wire", st.Tx.Packets, seen)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

package enetc_test

import (
	"fmt"
	"github.com/gopmd/gopmd/internal/testnote"
	"math/rand"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/pool"
)

// rxBufLenSoak is RBBSR with buf-size=1024: 1024 minus the 128-byte headroom.
const rxBufLenSoak = 896

// TestSoak forwards frames between two sim ports in engine mode (each model
// runs its own DMA-engine goroutine) while faults are injected at random:
// RX CRC/oversize/DMA errors and corrupted write-backs on the receiving
// port, TX DMA faults, bogus consumer indices, link flaps and link-down
// periods on the sending
// port, bursts faster than the forwarder (no-buffer drops). Afterwards
// every counter must balance and every buffer be back.
//
// 10^6 frames by default (10^5 with -short); GOPMD_SOAK=1 runs 10^8.
func TestSoak(t *testing.T) {
	total := uint64(1_000_000)
	switch {
	case os.Getenv("GOPMD_SOAK") == "1":
		total = 100_000_000
	case testing.Short():
		total = 100_000
		t.Logf("short soak of %d frames; the long one: GOPMD_SOAK=1 go test ./enetc -run TestSoak -timeout 3h", total)
	default:
		testnote.Note(t, fmt.Sprintf("ran the ENETC soak at %d frames; the long one (10^8): GOPMD_SOAK=1 go test ./enetc -run TestSoak -timeout 3h", total))
	}
	cfg := driver.Config{RxRingSize: 256, TxRingSize: 256, PoolSize: 1024}
	a := openSim(t, "mode=engine&buf-size=1024&link-poll=0", cfg)
	b := openSim(t, "mode=engine&link-poll=10ms", cfg)
	a.wire.keep = false
	b.model.SetWire(nil)
	rx, tx := a.port.RxQueue(0), b.port.TxQueue(0)

	var (
		stop     atomic.Bool
		fwdFreed uint64 // frames the forwarder freed because TxBurst refused them
		wg       sync.WaitGroup
	)
	wg.Add(1)
	go func() { // the forwarder: owns A's RX queue and B's TX queue
		defer wg.Done()
		buf := make([]*pool.Packet, 32)
		idle := 0
		for {
			n := rx.RxBurst(buf)
			if n == 0 {
				if stop.Load() {
					idle++
					if idle > 10000 { // well past the skipped-BD patience (2048 polls)
						return
					}
				}
				runtime.Gosched()
				continue
			}
			idle = 0
			m := tx.TxBurst(buf[:n])
			for try := 0; m < n && try < 64; try++ {
				runtime.Gosched() // let B's engine drain its ring
				tx.Reclaim()
				m += tx.TxBurst(buf[m:n])
			}
			if m < n {
				pool.FreeBulk(buf[m:n])
				fwdFreed += uint64(n - m)
			}
		}
	}()

	rng := rand.New(rand.NewSource(1))
	frames := make([][]byte, 16)
	for i := range frames {
		frames[i] = udp4(t, 60+rng.Intn(1459), uint16(i))
	}
	in := a.model.Port()
	var offered, faults, linkUpAt uint64
	var kinds [12]int
	bLinkDown := false
	start := time.Now()
	for offered < total {
		if bLinkDown && offered >= linkUpAt {
			b.model.SetLink(true)
			bLinkDown = false
		}
		if in.RxRoom() <= 0 {
			runtime.Gosched()
			continue
		}
		if rng.Intn(5000) == 0 {
			faults++
			oneBD := len(frames[offered%uint64(len(frames))]) <= rxBufLenSoak
			kind := rng.Intn(12)
			kinds[kind]++
			var err error
			switch kind {
			case 0:
				err = a.model.InjectRxErrors(model.RxCRC, 1)
			case 1:
				err = a.model.InjectRxErrors(model.RxOversize, 1)
			case 2:
				a.model.InjectRxDMAFault(1)
			case 3:
				err = a.model.CorruptRxWriteback(model.CorruptLength, 1)
			case 4:
				// A lost or garbled status (F bit) on the first BD of a
				// multi-BD frame leaves its tail looking like a frame of its
				// own, which no driver can tell apart: inject these two on
				// one-BD frames only.
				if oneBD {
					err = a.model.CorruptRxWriteback(model.CorruptZeroStatus, 1)
				}
			case 5:
				err = a.model.CorruptRxWriteback(model.CorruptNoFinal, 1)
			case 6:
				if oneBD {
					err = a.model.CorruptRxWriteback(model.CorruptBogus, 1)
				}
			case 7:
				b.model.InjectTxDMAFault(1)
			case 8:
				b.model.InjectBogusTxCI(1)
			case 9:
				b.model.FlapLink(1)
			case 10:
				// B's link down for a while: its watcher notices, TX drops
				// and counts; frames queued before it noticed stay queued.
				if !bLinkDown {
					b.model.SetLink(false)
					bLinkDown, linkUpAt = true, offered+20000
				}
			case 11:
				// A burst faster than the forwarder: no-buffer drops.
				for k := 0; k < 300 && offered < total; k++ {
					in.Receive(frames[offered%uint64(len(frames))])
					offered++
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		in.Receive(frames[offered%uint64(len(frames))])
		offered++
	}
	if bLinkDown {
		b.model.SetLink(true)
	}
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)

	sb := b.stopCheck()
	sa := a.stopCheck()
	ma, mb := a.model.Stats(), b.model.Stats()
	rxs, txs := sa.Rx, sb.Tx
	t.Logf("faults by kind %v; driver HW %v", kinds, sa.HW)
	t.Logf("%d frames offered in %v (%.0f ns/frame), %d faults injected; A: rx %d drops %v; B: tx %d drops %v; forwarder freed %d; model A rx-written %d no-buffer %d link-down %d; model B sent %d errors %d",
		offered, elapsed, float64(elapsed.Nanoseconds())/float64(offered), faults, rxs.Packets, rxs.Drops, txs.Packets, txs.Drops, fwdFreed, ma.RxFrames, ma.NoBufferDrops, ma.RxLinkDown, mb.TxFrames, mb.TxErrors)

	// RX: every frame the model wrote into a ring was delivered or dropped
	// with a cause (no-buffer drops happen before the ring, no_mem counts
	// short refills, not frames).
	rxDrops := rxs.TotalDrops() - rxs.Drops[driver.CauseNoMem] - rxs.Drops[driver.CauseNoBuffer]
	if rxs.Packets+rxDrops != ma.RxFrames {
		t.Errorf("RX: delivered %d + dropped %d != %d frames the model wrote", rxs.Packets, rxDrops, ma.RxFrames)
	}
	if got := rxs.Drops[driver.CauseNoBuffer]; got != ma.NoBufferDrops {
		t.Errorf("RX no_buffer drops %d (RBDCR), model counted %d", got, ma.NoBufferDrops)
	}
	if offered != ma.RxFrames+ma.NoBufferDrops {
		t.Errorf("model A: %d offered != %d written + %d no-buffer", offered, ma.RxFrames, ma.NoBufferDrops)
	}
	// Forwarding: every received frame was queued on B, dropped there with
	// a cause, or freed by the forwarder after B's ring stayed full.
	if rxs.Packets != txs.Packets+txs.TotalDrops()+fwdFreed {
		t.Errorf("forward: received %d != queued %d + dropped %d + freed %d", rxs.Packets, txs.Packets, txs.TotalDrops(), fwdFreed)
	}
	// TX: every queued frame left the model (sent), or failed there (a DMA
	// fault: a frame error), or was dropped while the link was down.
	if txs.Packets != mb.TxFrames || txs.Drops[driver.CauseFrame] != mb.TxErrors || txs.TotalDrops() != txs.Drops[driver.CauseLinkDown]+mb.TxErrors || (kinds[10] > 0 && txs.Drops[driver.CauseLinkDown] == 0) {
		t.Errorf("TX: sent %d, model sent %d; frame errors %d, model failed %d (drops %v)", txs.Packets, mb.TxFrames, txs.Drops[driver.CauseFrame], mb.TxErrors, txs.Drops)
	}
	if rxs.Packets < total/2 {
		t.Errorf("only %d of %d frames delivered", rxs.Packets, total)
	}
	b.close(true)
	a.close(true)
}

package enetc

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// forwardRounds receives rounds*20 frames on rx and sends them on tx,
// reclaiming at the end, and checks every frame reached the wire intact.
func forwardRounds(t *testing.T, f *fakeDev, rx *rxQueue, tx *txQueue, rounds int) {
	t.Helper()
	f.wire = nil
	var sent [][]byte
	pk := make([]*pool.Packet, 32)
	for round := 0; round < rounds; round++ {
		for i := 0; i < 20; i++ {
			fr := fakeFrame(60+(round*31+i*17)%200, byte(round+i))
			if !f.receive(0, fr) {
				t.Fatalf("round %d: ring full", round)
			}
			sent = append(sent, fr)
		}
		got := rx.RxBurst(pk)
		if n := tx.TxBurst(pk[:got]); n != got || got != 20 {
			t.Fatalf("round %d: RxBurst %d, TxBurst %d, want 20", round, got, n)
		}
	}
	tx.Reclaim()
	if tx.Pending() != 0 {
		t.Fatalf("%d frames still pending after Reclaim", tx.Pending())
	}
	if len(f.wire) != len(sent) {
		t.Fatalf("%d frames on the wire, want %d", len(f.wire), len(sent))
	}
	for i := range sent {
		if !bytes.Equal(f.wire[i], sent[i]) {
			t.Fatalf("frame %d differs on the wire", i)
		}
	}
}

// TestTxRecycleDirect: with RecycleDirect the TX reclaim returns the RX
// pool's buffers straight into its cache (no shared-ring push), without it
// through the ring; the frames on the wire are the same either way.
func TestTxRecycleDirect(t *testing.T) {
	f, d := newFakeDev(t, true)
	f.keep = true
	p := mustNew(t, d, smallCfg())
	rx, tx := p.rx[0], p.tx[0]

	forwardRounds(t, f, rx, tx, 10)
	before := rx.pool.OwnerStats()
	if before.RecycleRing == 0 {
		t.Fatalf("without RecycleDirect no buffer went through the shared ring: %+v", before)
	}

	if err := tx.RecycleDirect(rx); err != nil {
		t.Fatal(err)
	}
	forwardRounds(t, f, rx, tx, 10)
	after := rx.pool.OwnerStats()
	if after.RecycleRing != before.RecycleRing {
		t.Errorf("RecycleDirect: %d buffers went through the shared ring, want 0", after.RecycleRing-before.RecycleRing)
	}
	if c := after.RecycleCached - before.RecycleCached; c < 200 {
		t.Errorf("RecycleDirect: %d buffers recycled into the cache, want the 200 sent", c)
	}

	if err := tx.RecycleDirect(nil); err != nil {
		t.Fatal(err)
	}
	forwardRounds(t, f, rx, tx, 10)
	if again := rx.pool.OwnerStats(); again.RecycleRing == after.RecycleRing {
		t.Error("after RecycleDirect(nil) the reclaim still bypasses the shared ring")
	}
	closeClean(t, p)
}

// otherRx is an RX queue of no ENETC port.
type otherRx struct{ driver.RxQueue }

// TestTxRecycleDirectRefused: RecycleDirect refuses an RX queue of
// another driver by name, and a reclaim that finds the paired RX queue
// inside a burst of another goroutine panics with ConcurrentUse, frees
// nothing and leaves the TX queue usable.
func TestTxRecycleDirectRefused(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg())
	rx, tx := p.rx[0], p.tx[0]
	err := tx.RecycleDirect(otherRx{})
	if err == nil || !strings.Contains(err.Error(), "RecycleDirect takes an RX queue of an ENETC port") {
		t.Fatalf("foreign RX queue: err = %v", err)
	}
	if err := tx.RecycleDirect(rx); err != nil {
		t.Fatal(err)
	}
	pk := make([]*pool.Packet, 32)
	for i := 0; i < 8; i++ {
		f.receive(0, fakeFrame(60, byte(i)))
	}
	got := rx.RxBurst(pk)
	if n := tx.TxBurst(pk[:got]); n != 8 || got != 8 {
		t.Fatalf("RxBurst %d, TxBurst %d, want 8", got, n)
	}
	rx.burst.Enter(rx.gate) // another goroutine inside RxBurst
	func() {
		defer func() {
			var cu *driver.ConcurrentUse
			e, _ := recover().(error)
			if !errors.As(e, &cu) || !strings.Contains(cu.Call, "RecycleDirect") {
				t.Errorf("Reclaim with the paired RX queue busy: recovered %v, want *driver.ConcurrentUse naming RecycleDirect", e)
			}
		}()
		tx.Reclaim()
	}()
	if tx.Pending() != 8 {
		t.Errorf("the refused reclaim freed frames: %d pending, want 8", tx.Pending())
	}
	if tx.burst.Active() {
		t.Error("the refused reclaim left the TX queue marked busy")
	}
	rx.burst.Leave()
	if n := tx.Reclaim(); n != 8 {
		t.Errorf("Reclaim after the RX burst left: %d, want 8", n)
	}
	closeClean(t, p)
}

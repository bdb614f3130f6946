package enetc_test

import (
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestLeakNamesAnotherPortsTxRing: frames received on port A and queued on
// port B's TX rings (one sent and not yet reclaimed, two that B's device
// never sends) are held there when A closes: A's leak report names B's
// rings, with B's port, where it named A's RX queue's caller, the holder
// the frames had before B's TxBurst took them. The frame A's caller still
// holds stays named as its. B's TX path runs on after the report.
func TestLeakNamesAnotherPortsTxRing(t *testing.T) {
	t.Parallel()
	a := openSim(t, "", driver.Config{})
	b := openSim(t, "", driver.Config{TxQueues: 2})
	for i := range 4 {
		a.model.Port().Receive(udp4(t, 100, uint16(i)))
	}
	got := a.rxAll(0, 4, 10)
	if len(got) != 4 {
		t.Fatalf("A received %d frames, want 4", len(got))
	}
	// B's rings keep the frames until their next reclaim, which no burst
	// calls here; ring 1's are not even sent.
	if n := b.port.TxQueue(0).TxBurst(got[:1]); n != 1 {
		t.Fatalf("B's TX ring 0 took %d of 1", n)
	}
	b.model.SetTxStall(true)
	if n := b.port.TxQueue(1).TxBurst(got[1:3]); n != 2 {
		t.Fatalf("B's TX ring 1 took %d of 2", n)
	}
	err := a.port.Close()
	var le *pool.LeakError
	if !errors.As(err, &le) {
		t.Fatalf("Close of A with 3 frames on B's TX rings and 1 held: %v, want a LeakError", err)
	}
	want := map[pool.Holder]int{
		{Port: b.spec, Role: "tx ring 0"}:         1,
		{Port: b.spec, Role: "tx ring 1"}:         2,
		{Port: a.spec, Role: "rx queue 0 caller"}: 1,
	}
	if le.Count != 4 || !maps.Equal(le.ByHolder, want) {
		t.Errorf("leak report: %d buffers by holder %v, want 4: %v", le.Count, le.ByHolder, want)
	}
	msg := err.Error()
	for _, s := range []string{"1 held by " + b.spec + " tx ring 0", "2 held by " + b.spec + " tx ring 1", "1 held by rx queue 0 caller"} {
		if !strings.Contains(msg, s) {
			t.Errorf("leak report %q does not say %q", msg, s)
		}
	}
	got[3].Free()

	// The gate B's rings were read behind is open again: B sends and
	// reclaims.
	b.model.SetTxStall(false)
	own := b.port.RxQueue(0).Pool().Alloc()
	copy(own.Append(100), udp4(t, 100, 9))
	if n := b.port.TxQueue(1).TxBurst([]*pool.Packet{own}); n != 1 {
		t.Fatalf("B's TX ring 1 took %d of 1 after A's leak report", n)
	}
	if n := b.port.TxQueue(0).Reclaim() + b.port.TxQueue(1).Reclaim(); n != 4 {
		t.Errorf("B reclaimed %d frames, want 4", n)
	}
	if n := len(b.wire.take()); n != 4 {
		t.Errorf("%d frames on B's wire, want 4", n)
	}
}

// TestLeakNamesTxRingOfAnAppPool: the buffers of a pool of the
// application's own (no port), on a TX ring when the application closes
// the pool, the segments of a chained frame among them, are named by that
// ring and its port; before, the report named the holder the allocation
// gave them.
func TestLeakNamesTxRingOfAnAppPool(t *testing.T) {
	t.Parallel()
	b := openSim(t, "", driver.Config{TxQueues: 2})
	ap, _ := appPool(t, b, "app", 16)
	frame := udp4(t, 100, 1)
	single := ap.Alloc()
	copy(single.Append(len(frame)), frame)
	head, tail := ap.Alloc(), ap.Alloc()
	copy(head.Append(60), frame[:60])
	copy(tail.Append(len(frame)-60), frame[60:])
	head.SetNext(tail)
	b.model.SetTxStall(true)
	if n := b.port.TxQueue(1).TxBurst([]*pool.Packet{single, head}); n != 2 {
		t.Fatalf("TX ring 1 took %d of 2", n)
	}
	err := ap.Close(10 * time.Millisecond)
	var le *pool.LeakError
	want := map[pool.Holder]int{{Port: b.spec, Role: "tx ring 1"}: 3}
	if !errors.As(err, &le) || le.Count != 3 || !maps.Equal(le.ByHolder, want) {
		t.Fatalf("Close of a pool with 2 frames (3 buffers) on a TX ring: %v, want a LeakError: %v", err, want)
	}
	if msg := err.Error(); !strings.Contains(msg, "3 held by "+b.spec+" tx ring 1") {
		t.Errorf("leak report %q: want the 3 buffers held by %s tx ring 1", msg, b.spec)
	}
	b.model.SetTxStall(false)
	if n := b.port.TxQueue(1).Reclaim(); n != 2 {
		t.Errorf("reclaimed %d frames after the stall, want 2", n)
	}
}

// TestLeakReportWhileTxRuns: A's leak report reads B's TX rings while
// another goroutine keeps sending on B's ring 0: the report names the
// frame on ring 1, and the sender goes on after it (its bursts wait the
// read out). Run with -race, this checks that the read is ordered against
// the sender's writes.
func TestLeakReportWhileTxRuns(t *testing.T) {
	t.Parallel()
	a := openSim(t, "", driver.Config{})
	b := openSim(t, "", driver.Config{TxQueues: 2})
	b.wire.keep = false
	a.model.Port().Receive(udp4(t, 100, 1))
	got := a.rxAll(0, 1, 10)
	if len(got) != 1 {
		t.Fatalf("A received %d frames, want 1", len(got))
	}
	if n := b.port.TxQueue(1).TxBurst(got); n != 1 {
		t.Fatalf("B's TX ring 1 took %d of 1", n)
	}
	sp, reg := appPool(t, b, "sender", 64)
	frame := udp4(t, 100, 2)
	var (
		wg            sync.WaitGroup
		before, after int // frames ring 0 took before A's report and after it
	)
	reported := make(chan struct{})
	wg.Add(1)
	go func() { // the sender: sp's owner goroutine and ring 0's
		defer wg.Done()
		q := b.port.TxQueue(0)
		burst := make([]*pool.Packet, 8)
		done := false
		for after < 256 {
			if !done {
				select {
				case <-reported:
					done = true
				default:
				}
			}
			n := sp.AllocBulk(burst)
			for _, pk := range burst[:n] {
				copy(pk.Append(len(frame)), frame)
			}
			k := q.TxBurst(burst[:n])
			pool.FreeBulk(burst[k:n]) // a full ring: the caller keeps them
			if done {
				after += k
			} else {
				before += k
			}
			q.Reclaim()
		}
	}()
	err := a.port.Close()
	close(reported)
	var le *pool.LeakError
	want := map[pool.Holder]int{{Port: b.spec, Role: "tx ring 1"}: 1}
	if !errors.As(err, &le) || le.Count != 1 || !maps.Equal(le.ByHolder, want) {
		t.Errorf("Close of A with its frame on B's TX ring 1: %v, want a LeakError: %v", err, want)
	}
	wg.Wait()
	if before == 0 {
		t.Error("the sender sent nothing while A closed")
	}
	q := b.port.TxQueue(0)
	for i := 0; q.Pending() > 0 && i < 1000; i++ {
		q.Reclaim()
		time.Sleep(100 * time.Microsecond)
	}
	if err := sp.Close(time.Second); err != nil {
		t.Errorf("the sender's pool: %v", err)
	}
	if err := reg.Close(); err != nil {
		t.Error(err)
	}
}

// appPool makes an application's own pool (no port) of count buffers,
// named name, in the memory s's simulated IOMMU maps, and returns it with
// its region.
func appPool(t *testing.T, s *simPort, name string, count int) (*pool.Pool, *dma.Region) {
	t.Helper()
	reg, err := dma.Alloc(s.model.IOMMU(), count*pool.DefaultBufSize, dma.Options{Attr: dma.Attr{Name: name}})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pool.New(reg, pool.Config{Name: name, Count: count})
	if err != nil {
		t.Fatal(err)
	}
	return pl, reg
}

package xdp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"golang.org/x/sys/unix"
)

// forwardShared sends n test frames from in's peer, receives them on rx and
// sends them on tx, then reclaims until TX has nothing pending, and checks
// every frame reached out's peer.
func forwardShared(t *testing.T, in, out *vethPair, rx driver.RxQueue, tx driver.TxQueue, n int) {
	t.Helper()
	src, dst := in.packetSocket(), out.packetSocket()
	f := frame(in.hostMAC, in.peerMAC, 3)
	res := make(chan int)
	go func() { res <- len(recvFrames(t, dst, n)) }()
	var burst [32]*pool.Packet
	for done := 0; done < n; {
		k := min(len(burst), n-done)
		for i := 0; i < k; i++ {
			if err := unix.Send(src, f, 0); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for got := 0; got < k; {
			got += rx.RxBurst(burst[got:k])
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d frames came", got, k)
			}
		}
		if m := tx.TxBurst(burst[:k]); m != k {
			t.Fatalf("TxBurst took %d of %d", m, k)
		}
		done += k
	}
	for deadline := time.Now().Add(10 * time.Second); tx.Pending() > 0 && time.Now().Before(deadline); {
		if tx.Reclaim() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	if tx.Pending() != 0 {
		t.Fatalf("%d frames still pending", tx.Pending())
	}
	if got := <-res; got != n {
		t.Fatalf("%d of %d frames reached %s", got, n, out.peer)
	}
}

// TestRecycleDirect: over a shared UMEM, with RecycleDirect the TX reclaim
// returns the received frames' buffers straight into the RX pool's cache
// (none through its shared ring), without it through the ring; the frames
// forwarded are the same either way.
func TestRecycleDirect(t *testing.T) {
	in, out := newPair(t, false), newPair(t, false)
	pin := openPort(t, "xdp:"+in.host+"?mode=native&umem=direct"+in.host)
	pout := openPort(t, "xdp:"+out.host+"?mode=native&umem=direct"+in.host)
	rx, tx := pin.RxQueue(0), pout.TxQueue(0)
	rxPool := rx.Pool()

	forwardShared(t, in, out, rx, tx, 200)
	before := rxPool.OwnerStats()
	if before.RecycleRing == 0 {
		t.Fatalf("without RecycleDirect no buffer went through the shared ring: %+v", before)
	}
	if err := tx.(driver.DirectRecycler).RecycleDirect(rx); err != nil {
		t.Fatal(err)
	}
	forwardShared(t, in, out, rx, tx, 200)
	after := rxPool.OwnerStats()
	if after.RecycleRing != before.RecycleRing {
		t.Errorf("RecycleDirect: %d buffers went through the shared ring, want 0", after.RecycleRing-before.RecycleRing)
	}
	if c := after.RecycleCached - before.RecycleCached; c < 200 {
		t.Errorf("RecycleDirect: %d buffers recycled into the cache, want the 200 sent", c)
	}
	if err := tx.(driver.DirectRecycler).RecycleDirect(nil); err != nil {
		t.Fatal(err)
	}
	forwardShared(t, in, out, rx, tx, 64)
	if again := rxPool.OwnerStats(); again.RecycleRing == after.RecycleRing {
		t.Error("after RecycleDirect(nil) the reclaim still bypasses the shared ring")
	}
}

// otherRx is an RX queue of no xdp: port.
type otherRx struct{ driver.RxQueue }

// TestRecycleDirectRefused: RecycleDirect refuses an RX queue of another
// driver by name, and a reclaim that finds the paired RX queue inside a
// burst of another goroutine panics with ConcurrentUse, frees nothing and
// leaves the TX queue usable.
func TestRecycleDirectRefused(t *testing.T) {
	in, out := newPair(t, false), newPair(t, false)
	pin := openPort(t, "xdp:"+in.host+"?mode=native&umem=refused"+in.host)
	pout := openPort(t, "xdp:"+out.host+"?mode=native&umem=refused"+in.host)
	rx, tx := pin.RxQueue(0), pout.TxQueue(0)
	dr := tx.(driver.DirectRecycler)
	if err := dr.RecycleDirect(otherRx{}); err == nil || !strings.Contains(err.Error(), "RecycleDirect takes an RX queue of an xdp: port") {
		t.Fatalf("foreign RX queue: err = %v", err)
	}
	if err := dr.RecycleDirect(rx); err != nil {
		t.Fatal(err)
	}
	q := (*queue)(rx.(*rxQueue))
	q.rxFlag.Enter(&q.p.g) // another goroutine inside RxBurst
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
	if (*queue)(tx.(*txQueue)).txFlag.Active() {
		t.Error("the refused reclaim left the TX queue marked busy")
	}
	q.rxFlag.Leave()
	forwardShared(t, in, out, rx, tx, 64)
}

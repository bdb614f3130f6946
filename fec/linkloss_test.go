package fec_test

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// txFrames allocates n frames of 100 bytes from pl.
func txFrames(t *testing.T, pl *pool.Pool, n int) []*pool.Packet {
	t.Helper()
	b := make([]*pool.Packet, n)
	for i := range b {
		pk := pl.Alloc()
		if pk == nil {
			t.Fatal("pool empty")
		}
		copy(pk.Append(100), udpFrame(t, 100, -1, i))
		b[i] = pk
	}
	return b
}

// TestLinkLossSeenWhileSending pulls the cable of a port that keeps
// sending, with link-poll=1h: the watcher reads the PHY at its fast pace
// while frames flow and sees the link go down long before an hour. From
// then on TxBurst counts every frame as link_down and none is sent into
// the dead link; every frame TxBurst took is sent or counted.
func TestLinkLossSeenWhileSending(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&link-poll=1h")
	m.SetWire(&capture{})
	pl, tx := p.RxQueue(0).Pool(), p.TxQueue(0)
	var handed uint64
	send := func() {
		b := txFrames(t, pl, 8)
		n := tx.TxBurst(b)
		pool.FreeBulk(b[n:])
		handed += uint64(n)
		tx.Reclaim()
	}
	for i := 0; i < 10; i++ {
		send() // traffic flows: the watcher notices
	}
	m.SetLink(false)
	for deadline := time.Now().Add(20 * time.Second); p.Link().Up; {
		if time.Now().After(deadline) {
			t.Fatal("the port kept sending with the cable pulled and did not see the link go down (link-poll=1h)")
		}
		send()
		time.Sleep(time.Millisecond)
	}
	void := m.Stats().TxLinkDown
	before := p.Stats().Tx.Drops[driver.CauseLinkDown]
	for i := 0; i < 10; i++ {
		send()
	}
	if d := p.Stats().Tx.Drops[driver.CauseLinkDown] - before; d != 80 {
		t.Errorf("80 frames offered with the link seen down, %d counted link_down", d)
	}
	if v := m.Stats().TxLinkDown; v != void {
		t.Errorf("%d frames sent into the dead link after the driver saw it down", v-void)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats().Tx; st.Packets+st.TotalDrops() != handed {
		t.Errorf("TxBurst took %d frames: %d sent, %d dropped (%v)", handed, st.Packets, st.TotalDrops(), st.Drops)
	}
}

// TestQueuedFramesWaitForLink: frames queued on the ring when the driver
// finds the link down are not sent into it (no TDAR write while it is down,
// not even Reclaim's ERR006358 re-kick): they leave once the link is back,
// counted sent; none reaches the dead link.
func TestQueuedFramesWaitForLink(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	w := &capture{}
	m.SetWire(w)
	pl, tx := p.RxQueue(0).Pool(), p.TxQueue(0)
	m.SetTxStall(true) // the frames stay queued until the link is down
	if n := tx.TxBurst(txFrames(t, pl, 5)); n != 5 {
		t.Fatalf("TxBurst took %d of 5", n)
	}
	m.SetLink(false)
	if p.UpdateLink().Up {
		t.Fatal("the driver did not see the link down")
	}
	m.SetTxStall(false)
	for i := 0; i < 10; i++ {
		tx.Reclaim()
	}
	if v := m.Stats().TxLinkDown; v != 0 {
		t.Fatalf("%d queued frames were sent into the dead link", v)
	}
	m.SetLink(true)
	if !p.UpdateLink().Up {
		t.Fatal("the driver did not see the link back")
	}
	for i := 0; i < 100 && tx.Pending() > 0; i++ {
		tx.Reclaim()
	}
	if got := len(w.take()); got != 5 || m.Stats().TxLinkDown != 0 {
		t.Fatalf("%d of the 5 queued frames left once the link was back, %d went into the dead link", got, m.Stats().TxLinkDown)
	}
	if st := p.Stats().Tx; st.Packets != 5 || st.TotalDrops() != 0 {
		t.Fatalf("TX counts %d sent, drops %v; want the 5 sent", st.Packets, st.Drops)
	}
}

// TestTxBytesAcrossRestart queues frames behind a hung TX engine on a ring
// whose next slot is not its first, then renegotiates the link's speed:
// the MAC restart turns the ring so that slot becomes the first, and the
// frames, sent after it, count sent with their bytes, once.
func TestTxBytesAcrossRestart(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	w := &capture{}
	m.SetWire(w)
	pl, tx := p.RxQueue(0).Pool(), p.TxQueue(0)
	reclaim := func() {
		for i := 0; i < 100 && tx.Pending() > 0; i++ {
			tx.Reclaim()
		}
	}
	if n := tx.TxBurst(txFrames(t, pl, 3)); n != 3 { // the next slot is 3
		t.Fatalf("TxBurst took %d of 3", n)
	}
	reclaim()
	m.SetTxStall(true)
	if n := tx.TxBurst(txFrames(t, pl, 5)); n != 5 {
		t.Fatalf("TxBurst took %d of 5", n)
	}
	if err := m.SetLinkSpeed(100); err != nil {
		t.Fatal(err)
	}
	p.UpdateLink() // the DMA is busy: the restart holds the MAC disabled
	m.SetTxStall(false)
	if l := p.UpdateLink(); !l.Up || l.SpeedMbps != 100 || p.MACRestarts() == 0 {
		t.Fatalf("link %+v after the speed change, %d MAC restarts", l, p.MACRestarts())
	}
	reclaim()
	st := p.Stats().Tx
	if got := len(w.take()); got != 8 || st.Packets != 8 || st.Bytes != 8*100 || st.TotalDrops() != 0 {
		t.Fatalf("%d frames on the wire; TX counts %d sent, %d bytes, drops %v; want 8, 800, none", got, st.Packets, st.Bytes, st.Drops)
	}
}

package drvtest

import (
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TxRig is what TxCauses needs around one started port and the model
// behind it.
type TxRig struct {
	Port driver.Port
	// Wire is the number of frames the model put on its wire so far.
	Wire func() int
	// InjectDMAFault makes the next n frames the device sends read their
	// data from an address it cannot reach.
	InjectDMAFault func(n int)
	// SetLink takes the link down or up and has the driver see it (its
	// UpdateLink).
	SetLink func(up bool)
	// SetStall stops (true) or resumes the device's TX engine.
	SetStall func(on bool)
	// TooBig is a frame length the port refuses to send.
	TooBig int
}

// TxCauses checks that TX counts a frame sent only once the device sent it
// and every other outcome under one cause: good frames (sent, on the
// wire), frames whose data read faults (frame, not sent, not on the wire),
// a frame too long (too_big), frames offered while the link is down
// (link_down) and frames still queued when Stop finds the TX engine hung
// (stopped, with Stop's error). At the end every frame TxBurst took is
// sent or dropped by cause, the frames sent are those on the wire, and
// every buffer is back in its pool.
func TxCauses(t *testing.T, r TxRig) {
	t.Helper()
	p := r.Port
	tx := p.TxQueue(0)
	pl := p.RxQueue(0).Pool()
	mac := p.Info().MAC
	mk := func(n, size int) []*pool.Packet {
		b := make([]*pool.Packet, n)
		for i := range b {
			pk := pl.Alloc()
			if pk == nil {
				t.Fatal("the RX pool has no buffer for a TX frame")
			}
			d := pk.Append(size)
			clear(d)
			copy(d[0:6], mac)
			copy(d[6:12], []byte{0x02, 0, 0, 0, 0x5e, 0x02})
			d[12], d[13], d[14] = 0x88, 0xB5, byte(i)
			b[i] = pk
		}
		return b
	}
	var handed uint64
	send := func(b []*pool.Packet) {
		t.Helper()
		if n := tx.TxBurst(b); n != len(b) {
			t.Fatalf("TxBurst took %d of %d", n, len(b))
		}
		handed += uint64(len(b))
		for i := 0; i < 100 && tx.Pending() > 0; i++ {
			tx.Reclaim() // the device is done with them: counted now
		}
	}
	step := func(name string, sent uint64, cause driver.Cause, dropped uint64, wire int, run func()) {
		t.Helper()
		before, w0 := p.Stats().Tx, r.Wire()
		run()
		after, w1 := p.Stats().Tx, r.Wire()
		if d := after.Packets - before.Packets; d != sent {
			t.Errorf("%s: %d frames counted sent, want %d", name, d, sent)
		}
		if d := after.TotalDrops() - before.TotalDrops(); d != dropped || after.Drops[cause]-before.Drops[cause] != dropped {
			t.Errorf("%s: %d frames dropped (%s), want %d as %s", name, d, dropsByCause(after), dropped, cause)
		}
		if d := w1 - w0; d != wire {
			t.Errorf("%s: %d frames on the wire, want %d", name, d, wire)
		}
	}
	b0 := p.Stats().Tx.Bytes
	step("good frames", 10, driver.CauseFrame, 0, 10, func() { send(mk(10, 100)) })
	if b := p.Stats().Tx.Bytes - b0; b != 10*100 {
		t.Errorf("good frames: %d bytes counted sent, want %d", b, 10*100)
	}
	step("TX DMA faults", 8, driver.CauseFrame, 2, 8, func() {
		r.InjectDMAFault(2)
		send(mk(10, 100))
	})
	step("a frame too long", 0, driver.CauseTooBig, 1, 0, func() {
		pk := pl.Alloc()
		pk.Append(r.TooBig)
		send([]*pool.Packet{pk})
	})
	step("link down", 0, driver.CauseLinkDown, 5, 0, func() {
		r.SetLink(false)
		send(mk(5, 100))
		r.SetLink(true)
	})
	step("hung TX engine at Stop", 0, driver.CauseStopped, 5, 0, func() {
		r.SetStall(true)
		b := mk(5, 100)
		if n := tx.TxBurst(b); n != 5 {
			t.Fatalf("TxBurst took %d of 5", n)
		}
		handed += 5
		if err := p.Stop(); err == nil {
			t.Error("Stop with the TX engine hung returned no error")
		}
		r.SetStall(false)
	})
	st := p.Stats().Tx
	if st.Packets+st.TotalDrops() != handed {
		t.Errorf("TxBurst took %d frames, the driver counts %d sent and %d dropped (%s)", handed, st.Packets, st.TotalDrops(), dropsByCause(st))
	}
	if st.Packets != uint64(r.Wire()) {
		t.Errorf("the driver counts %d frames sent, %d reached the wire", st.Packets, r.Wire())
	}
	if n := pl.InFlight(); n != 0 {
		t.Errorf("%d buffers still out after Stop", n)
	}
}

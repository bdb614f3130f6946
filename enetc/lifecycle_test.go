package enetc_test

import (
	"github.com/gopmd/gopmd/dma"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/pool"
)

// TestRestartAndMTU: Stop takes every buffer back, SetMTU refuses while
// running and takes effect when stopped, and Start brings the rings back
// (TX indices adopted from the device, which cannot reset them).
func TestRestartAndMTU(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0&ierb=prepared", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	pass := func(size int) bool {
		s.model.Port().Receive(udp4(t, size, 1))
		got := s.rxAll(0, 1, 5)
		if len(got) != 1 {
			return false
		}
		return s.port.TxQueue(0).TxBurst(got) == 1
	}
	for i := 0; i < 100; i++ { // move the TX indices away from 0
		if !pass(100) {
			t.Fatal("traffic before restart failed")
		}
	}
	if err := s.port.SetMTU(9000); err == nil || !strings.Contains(err.Error(), "stop") {
		t.Errorf("SetMTU while running: %v", err)
	}
	s.stopCheck()
	if err := s.port.SetMTU(9000); err != nil {
		t.Fatal(err)
	}
	if err := s.port.Start(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if s.port.Info().MTU != 9000 {
		t.Errorf("MTU %d after SetMTU(9000)", s.port.Info().MTU)
	}
	if !pass(9000) || !pass(60) {
		t.Fatal("traffic after restart failed")
	}
	rs := s.port.Rings()
	if len(rs) != 2 {
		t.Fatalf("ring state after restart: %d rings, want 2", len(rs))
	}
	mr, _ := rs[0].Reg("TBMR(0)")
	pir, _ := rs[0].Reg("TBPIR(0)")
	en, _ := mr.Field("EN")
	pi, _ := pir.Field("INDEX")
	if en != 1 || int(pi) != rs[0].NextToUse {
		t.Errorf("tx ring 0 after restart: TBMR(0).EN %d, TBPIR(0) %d, next-to-use %d; want enabled, producer at next-to-use", en, pi, rs[0].NextToUse)
	}
	if err := s.port.SetMTU(9600); err == nil {
		t.Error("MTU 9600 accepted (max frame would exceed 9600)")
	}
	s.close(false)
}

// TestNoBufferDropsCounted: frames the device drops for lack of a posted
// buffer show up as CauseNoBuffer, matching the device's RBDCR.
func TestNoBufferDropsCounted(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	for i := 0; i < 100; i++ { // the ring holds at most 63 frames
		s.model.Port().Receive(udp4(t, 64, uint16(i)))
	}
	got := s.rxAll(0, 100, 10)
	pool.FreeBulk(got)
	st := s.port.Stats()
	ms := s.model.Stats()
	if ms.NoBufferDrops == 0 || st.Rx.Drops[driver.CauseNoBuffer] != ms.NoBufferDrops {
		t.Errorf("no_buffer drops %d, model counted %d", st.Rx.Drops[driver.CauseNoBuffer], ms.NoBufferDrops)
	}
	if uint64(len(got))+st.Rx.Drops[driver.CauseNoBuffer] != 100 {
		t.Errorf("delivered %d + no-buffer %d != 100", len(got), st.Rx.Drops[driver.CauseNoBuffer])
	}
	s.close(false)
}

// TestTxTooBigCounted: a chained frame of more BDs than a frame may use is
// taken, freed and counted; the burst around it goes out.
func TestTxTooBigCounted(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	pl := s.port.RxQueue(0).Pool()
	segs := make([]*pool.Packet, 16)
	if pl.AllocBulk(segs) != 16 {
		t.Fatal("pool empty")
	}
	for i, p := range segs {
		p.SetLen(64)
		if i > 0 {
			segs[i-1].SetNext(p)
		}
	}
	good := make([]*pool.Packet, 2)
	pl.AllocBulk(good)
	for _, p := range good {
		copy(p.Buf()[p.Offset():], udp4(t, 60, 1))
		p.SetLen(60)
	}
	burst := []*pool.Packet{good[0], segs[0], good[1]}
	if n := s.port.TxQueue(0).TxBurst(burst); n != 3 {
		t.Fatalf("TxBurst = %d, want 3", n)
	}
	if d := s.port.TxQueue(0).Stats().Drops[driver.CauseTooBig]; d != 1 {
		t.Errorf("too_big drops %d, want 1", d)
	}
	if s.wire.count != 2 {
		t.Errorf("%d frames on the wire, want 2", s.wire.count)
	}
	s.close(false)
}

// TestForwardAcrossPortsByteIdentical forwards frames from one sim port to
// another and checks the bytes on the second port's wire. It needs both
// simulated devices to share one IOVA space, as every device opened through
// the pci backend shares one VFIO container: a frame's buffer is mapped once,
// for every device.
func TestForwardAcrossPortsByteIdentical(t *testing.T) {
	t.Parallel()
	a := openSim(t, "link-poll=0", driver.Config{})
	b := openSim(t, "link-poll=0", driver.Config{})
	defer a.close(true)
	defer b.close(true)
	if !dma.SameDomain(a.model.IOMMU(), b.model.IOMMU()) {
		t.Fatal("two sim:enetc devices are in different IOVA spaces: a forwarded buffer would be read from the wrong memory")
	}
	var sent [][]byte
	for i, size := range []int{60, 200, 1514} {
		f := udp4(t, size, uint16(i))
		a.model.Port().Receive(f)
		sent = append(sent, f)
	}
	got := a.rxAll(0, len(sent), 10)
	if n := b.port.TxQueue(0).TxBurst(got); n != len(sent) {
		t.Fatalf("TxBurst = %d", n)
	}
	out := b.wire.take()
	if len(out) != len(sent) {
		t.Fatalf("%d frames on the wire, want %d", len(out), len(sent))
	}
	for i := range sent {
		if string(out[i]) != string(sent[i]) {
			t.Errorf("frame %d changed crossing ports", i)
		}
	}
}

// TestJumboToTheLimit: with the largest MTU (9578) a 9596-byte frame (9600
// with FCS) goes through both ways; MTU 9579 is refused.
func TestJumboToTheLimit(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0&ierb=prepared", driver.Config{MTU: enetc.MaxMTU})
	f := udp4(t, enetc.MaxFrame-4, 3)
	if !s.model.Port().Receive(f) {
		t.Fatal("the model refused a 9600-byte frame")
	}
	got := s.rxAll(0, 1, 5)
	if len(got) != 1 || got[0].PktLen != len(f) || got[0].NSegs != 5 {
		t.Fatalf("received %d frames", len(got))
	}
	if s.port.TxQueue(0).TxBurst(got) != 1 {
		t.Fatal("TxBurst refused the frame")
	}
	if w := s.wire.take(); len(w) != 1 || string(w[0]) != string(f) {
		t.Error("jumbo frame changed on the wire")
	}
	s.close(false)
	if _, err := driver.OpenConfig("sim:enetc99", driver.Config{MTU: enetc.MaxMTU + 1}); err == nil {
		t.Error("MTU past the limit accepted")
	}
}

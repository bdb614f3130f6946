package enetc_test

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/internal/mii"
	"github.com/gopmd/gopmd/pool"
)

// frameDrops sums the drops that stand for lost frames (CauseNoMem counts
// refills that came up short, not frames).
func frameDrops(s driver.QueueStats) uint64 {
	return s.TotalDrops() - s.Drops[driver.CauseNoMem]
}

// TestRxFaultsEndInCounters injects every RX fault the model offers in the
// middle of a stream: each must end as a counted drop with its buffers
// back in the pool, and every other frame must arrive intact.
func TestRxFaultsEndInCounters(t *testing.T) {
	t.Parallel()
	const frames, at = 40, 17
	for _, c := range []struct {
		name   string
		inject func(m *model.Device) error
		cause  driver.Cause
		// dmaFault: the fault makes the model DMA to an unmapped address.
		dmaFault bool
		// opts and size, if set, replace the spec options and frame size.
		opts string
		size int
	}{
		{"crc", func(m *model.Device) error { return m.InjectRxErrors(model.RxCRC, 1) }, driver.CauseFrame, false, "", 0},
		{"oversize", func(m *model.Device) error { return m.InjectRxErrors(model.RxOversize, 1) }, driver.CauseFrame, false, "", 0},
		{"dma fault", func(m *model.Device) error { m.InjectRxDMAFault(1); return nil }, driver.CauseFrame, true, "", 0},
		{"length past buffer", func(m *model.Device) error { return m.CorruptRxWriteback(model.CorruptLength, 1) }, driver.CauseBadDescriptor, false, "", 0},
		{"zero status", func(m *model.Device) error { return m.CorruptRxWriteback(model.CorruptZeroStatus, 1) }, driver.CauseBadDescriptor, false, "", 0},
		{"no final bit", func(m *model.Device) error { return m.CorruptRxWriteback(model.CorruptNoFinal, 1) }, driver.CauseBadDescriptor, false, "", 0},
		{"bogus write-back", func(m *model.Device) error { return m.CorruptRxWriteback(model.CorruptBogus, 1) }, driver.CauseBadDescriptor, false, "", 0},
		{"length past buffer, two-BD frame", func(m *model.Device) error { return m.CorruptRxWriteback(model.CorruptLength, 1) }, driver.CauseBadDescriptor, false, "buf-size=1024", 1200},
		{"crc, two-BD frame", func(m *model.Device) error { return m.InjectRxErrors(model.RxCRC, 1) }, driver.CauseFrame, false, "buf-size=1024", 1200},
	} {
		t.Run(c.name, func(t *testing.T) {
			size := 200
			if c.size != 0 {
				size = c.size
			}
			opts := "link-poll=0"
			if c.opts != "" {
				opts += "&" + c.opts
			}
			s := openSim(t, opts, driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
			var got []*pool.Packet
			buf := make([]*pool.Packet, 8)
			for i := 0; i < frames; i++ {
				if i == at {
					if err := c.inject(s.model); err != nil {
						t.Fatal(err)
					}
				}
				s.model.Port().Receive(udp4(t, size, uint16(i)))
				n := s.port.RxQueue(0).RxBurst(buf)
				got = append(got, buf[:n]...)
			}
			for i := 0; i < 4000 && len(got) < frames-1; i++ { // a skipped BD is given up after 128 looks, one every 16 polls
				n := s.port.RxQueue(0).RxBurst(buf)
				got = append(got, buf[:n]...)
			}
			for _, pk := range got {
				if pk.PktLen != size || len(frameOf(pk)) != size {
					t.Errorf("a delivered frame has %d bytes, want %d", pk.PktLen, size)
				}
			}
			pool.FreeBulk(got)
			st := s.port.RxQueue(0).Stats()
			if st.Drops[c.cause] != 1 {
				t.Errorf("drops[%v] = %d, want 1 (all: %v)", c.cause, st.Drops[c.cause], st.Drops)
			}
			if uint64(len(got))+frameDrops(st) != frames {
				t.Errorf("delivered %d + dropped %d != %d offered", len(got), frameDrops(st), frames)
			}
			if c.dmaFault && s.model.IOMMU().FaultCount() == 0 {
				t.Error("the injected DMA fault did not reach the IOMMU")
			}
			s.close(c.dmaFault)
		})
	}
}

// TestTxFaults: a bogus consumer index is refused and counted, a TX DMA
// fault costs only that frame, and every buffer comes back.
func TestTxFaults(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	s.wire.keep = false
	rx, tx := s.port.RxQueue(0), s.port.TxQueue(0)
	s.model.InjectBogusTxCI(3)
	s.model.InjectTxDMAFault(1)
	buf := make([]*pool.Packet, 16)
	sent := 0
	for round := 0; round < 40; round++ {
		for i := 0; i < 16; i++ {
			s.model.Port().Receive(udp4(t, 100, uint16(i)))
		}
		n := rx.RxBurst(buf)
		m := tx.TxBurst(buf[:n])
		pool.FreeBulk(buf[m:n])
		sent += m
		tx.Reclaim()
	}
	st := s.port.Stats()
	if st.HW["drv_tx0_bad_ci"] == 0 {
		t.Error("bogus TBCIR values not counted")
	}
	if tx.Pending() > 64 {
		t.Errorf("%d frames pending", tx.Pending())
	}
	s.stopCheck()
	if ms := s.model.Stats(); ms.TxFrames+ms.TxErrors != uint64(sent) {
		t.Errorf("model sent %d + %d errors, driver queued %d", ms.TxFrames, ms.TxErrors, sent)
	}
	s.close(true) // the TX DMA fault is recorded by the IOMMU
}

// TestStopWithStalledTx: the TX ring erratum. Frames the device never
// takes make Stop report the ring, count the frames, free their buffers;
// the next Start resets the function (Close would too).
func TestStopWithStalledTx(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	s.model.SetTxStall(true)
	for i := 0; i < 10; i++ {
		s.model.Port().Receive(udp4(t, 100, uint16(i)))
	}
	got := s.rxAll(0, 10, 5)
	if n := s.port.TxQueue(0).TxBurst(got); n != 10 {
		t.Fatalf("TxBurst = %d", n)
	}
	err := s.port.Stop()
	if err == nil || !strings.Contains(err.Error(), "did not drain") {
		t.Fatalf("Stop with a stalled ring: err = %v", err)
	}
	st := s.port.Stats()
	if st.Tx.Drops[driver.CauseStopped] != 10 || st.Tx.TotalDrops() != 10 || st.Tx.Packets != 0 {
		t.Errorf("lost TX frames counted %v, %d sent; want 10 as stopped, none sent", st.Tx.Drops, st.Tx.Packets)
	}
	if n := s.port.RxQueue(0).Pool().InFlight(); n != 0 {
		t.Errorf("%d buffers in flight", n)
	}
	// Start again: the function is reset and set up anew, traffic flows.
	s.model.SetTxStall(false)
	if err := s.port.Start(); err != nil {
		t.Fatalf("Start after a stuck TX ring: %v", err)
	}
	if s.model.Stats().Resets == 0 {
		t.Error("Start did not reset the function after a stuck TX ring")
	}
	before := s.wire.count
	s.model.Port().Receive(udp4(t, 100, 1))
	got = s.rxAll(0, 1, 5)
	if len(got) != 1 || s.port.TxQueue(0).TxBurst(got) != 1 || s.wire.count != before+1 {
		t.Fatal("no traffic after the reset")
	}
	s.close(false)
}

// TestLinkFlap: with the link down TX is refused and counted, the MAC is
// off; frames queued before the driver noticed stay queued and leave when
// the link returns; after the flap traffic flows again.
func TestLinkFlap(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	s.wire.keep = false
	rx, tx := s.port.RxQueue(0), s.port.TxQueue(0)
	pl := rx.Pool()
	mk := func(n int) []*pool.Packet {
		b := make([]*pool.Packet, n)
		got := pl.AllocBulk(b)
		for _, p := range b[:got] {
			copy(p.Buf()[p.Offset():], udp4(t, 60, 1))
			p.SetLen(60)
		}
		return b[:got]
	}
	if !s.port.UpdateLink().Up {
		t.Fatal("link down at start")
	}
	// Down, and the driver knows: refused and counted.
	s.model.SetLink(false)
	if l := s.port.UpdateLink(); l.Up {
		t.Fatal("driver still sees the link up")
	}
	b := mk(8)
	before := s.wire.count
	if n := tx.TxBurst(b); n != 8 || tx.Pending() != 0 || s.wire.count != before {
		t.Fatalf("TxBurst with link down = %d, pending %d: want all 8 taken and dropped", n, tx.Pending())
	}
	if d := tx.Stats().Drops[driver.CauseLinkDown]; d != 8 {
		t.Errorf("link_down drops %d, want 8", d)
	}
	if n := pl.InFlight(); n != s.port.Info().RxRingSize-1 {
		t.Errorf("%d buffers out, want only the %d posted in the RX ring", n, s.port.Info().RxRingSize-1)
	}
	if st := s.port.Stats(); st.HW["link_up"] != 0 {
		t.Error("HW link_up not 0")
	}
	s.model.SetLink(true)
	if !s.port.UpdateLink().Up {
		t.Fatal("link not back")
	}
	if n := tx.TxBurst(mk(8)); n != 8 {
		t.Fatalf("TxBurst after link up = %d", n)
	}
	// Down without the driver polling: frames stay queued in the ring and
	// leave when the link comes back.
	before = s.wire.count
	s.model.SetLink(false)
	b = mk(5)
	if n := tx.TxBurst(b); n != 5 {
		t.Fatalf("TxBurst before the driver noticed = %d", n)
	}
	if s.wire.count != before {
		t.Error("frames left while the link was down")
	}
	s.model.SetLink(true)
	if s.wire.count != before+5 {
		t.Errorf("%d of the 5 queued frames left after link up", s.wire.count-before)
	}
	// Flaps: traffic afterwards.
	s.model.FlapLink(3)
	if !s.port.UpdateLink().Up {
		t.Fatal("link down after flapping")
	}
	s.model.Port().Receive(udp4(t, 64, 2))
	got := s.rxAll(0, 1, 5)
	if len(got) != 1 || tx.TxBurst(got) != 1 {
		t.Fatal("no traffic after link flaps")
	}
	s.close(false)
}

// TestStopAfterLinkReturns: frames queued before the driver saw the link go
// down stay queued while its MAC is off; the link comes back unnoticed by
// the driver; Stop must notice, let them leave and lose nothing.
func TestStopAfterLinkReturns(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	s.wire.keep = false
	for i := 0; i < 5; i++ {
		s.model.Port().Receive(udp4(t, 100, uint16(i)))
	}
	got := s.rxAll(0, 5, 5)
	s.model.SetLink(false)
	if n := s.port.TxQueue(0).TxBurst(got); n != 5 { // the driver has not noticed yet
		t.Fatalf("TxBurst = %d", n)
	}
	s.port.UpdateLink()   // now it has: MAC off
	s.model.SetLink(true) // back, unnoticed
	if err := s.port.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if s.wire.count != 5 {
		t.Errorf("%d of 5 queued frames left", s.wire.count)
	}
	if d := s.port.Stats().Tx.TotalDrops(); d != 0 {
		t.Errorf("%d TX drops", d)
	}
	s.close(false)
}

// TestMDIO reads the PHY's identifiers over clause 22 and its PMA/PMD
// status over clause 45, and runs MDIO while a queue goroutine bursts in
// engine mode: the model must see no register access during MDIO
// (ERR050089, checked in close).
func TestMDIO(t *testing.T) {
	t.Parallel()
	s := openSim(t, "mode=engine&link-poll=10ms", driver.Config{})
	s.wire.keep = false
	a := s.port.PHYAddr()
	if a < 0 {
		t.Fatal("no PHY found")
	}
	id1, err1 := s.port.MDIORead(a, mii.PHYID1)
	id2, err2 := s.port.MDIORead(a, mii.PHYID2)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if id := uint32(id1)<<16 | uint32(id2); id != model.DefaultPHYID {
		t.Errorf("PHY ID %#x, want %#x", id, model.DefaultPHYID)
	}
	if v, err := s.port.MDIORead45(a, model.MMDPMAPMD, model.MMDStatus); err != nil || v&(1<<2) == 0 {
		t.Errorf("C45 PMA/PMD status %#x, err %v: want link bit set", v, err)
	}
	if l := s.port.UpdateLink(); !l.Up || l.SpeedMbps != 1000 || !l.FullDuplex {
		t.Errorf("link %v, want up 1000 full", l)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the queue goroutine: forward whatever arrives
		defer wg.Done()
		buf := make([]*pool.Packet, 32)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := s.port.RxQueue(0).RxBurst(buf)
			m := s.port.TxQueue(0).TxBurst(buf[:n])
			pool.FreeBulk(buf[m:n])
		}
	}()
	for i := 0; i < 300; i++ {
		s.model.Port().Receive(udp4(t, 64, uint16(i)))
		if _, err := s.port.MDIORead(a, mii.BMSR); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	s.close(false)
}

// TestMDIOHoldsOffOtherPorts: ERR050089 spans every ENETC function, so an
// MDIO transaction on one port must hold off the data path and the control
// path of every other port too. Port B's queue goroutine and a statistics
// reader hammer B's registers while A runs MDIO reads; the model, whose
// functions share one chip, records any access that overlaps.
func TestMDIOHoldsOffOtherPorts(t *testing.T) {
	// Serial: it spins goroutines against the data path until enough
	// bursts met them; alone it ends in milliseconds, beside other tests
	// on two cores it takes seconds.
	a := openSim(t, "", driver.Config{})
	b := openSim(t, "", driver.Config{})
	phy := a.port.PHYAddr()
	if phy < 0 {
		t.Fatal("no PHY found")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // B's queue goroutine: TBCIR reads, RBCIR writes
		defer wg.Done()
		buf := make([]*pool.Packet, 32)
		for {
			select {
			case <-stop:
				return
			default:
			}
			b.port.TxQueue(0).Reclaim()
			n := b.port.RxQueue(0).RxBurst(buf)
			pool.FreeBulk(buf[:n])
		}
	}()
	go func() { // B's control path: counters and every register
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			b.port.Stats()
			b.port.Registers()
		}
	}()
	for i := 0; i < 300; i++ {
		if _, err := a.port.MDIORead(phy, mii.BMSR); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if n := b.model.Stats().ERR050089; n != 0 {
		t.Errorf("port B: %d register accesses overlapped port A's MDIO transactions: %q", n, b.model.ModelErrors())
	}
	b.close(false)
	a.close(false)
}

// TestMDIOGateIsPerChip: ERR050089's gate spans the ports of one chip and
// no more. While port A runs MDIO reads back to back, TX bursts on port B
// of A's chip meet the gate and wait (counted in drv_tx0_mdio_waits), and
// bursts on port C of another simulated chip never do; no port's model
// sees a register access during an MDIO transaction of its chip (close).
func TestMDIOGateIsPerChip(t *testing.T) {
	// Serial: it spins goroutines against the data path until enough
	// bursts met them; alone it ends in milliseconds, beside other tests
	// on two cores it takes seconds.
	a := openSim(t, "", driver.Config{})
	b := openSim(t, "", driver.Config{})
	c := openSim(t, "chip="+testChip(t)+"-other", driver.Config{})
	phy := a.port.PHYAddr()
	if phy < 0 {
		t.Fatal("no PHY found")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if _, err := a.port.MDIORead(phy, mii.BMSR); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	frame := udp4(t, 60, 1)
	burst := func(s *simPort) {
		s.wire.keep = false
		txq, pl := s.port.TxQueue(0), s.port.RxQueue(0).Pool()
		buf := make([]*pool.Packet, 32)
		for i := range buf {
			if buf[i] = pl.Alloc(); buf[i] == nil {
				t.Fatalf("%s: pool empty", s.spec)
			}
			copy(buf[i].Append(len(frame)), frame)
		}
		if m := txq.TxBurst(buf); m != len(buf) {
			pool.FreeBulk(buf[m:])
			t.Fatalf("%s: TxBurst took %d of %d frames", s.spec, m, len(buf))
		}
		for txq.Pending() > 256 {
			txq.Reclaim()
		}
	}
	waits := func(s *simPort) uint64 { return s.port.Stats().HW["drv_tx0_mdio_waits"] }
	bursts := 0
	for ; bursts < 200_000 && (bursts < 100 || bursts%16 != 0 || waits(b) < 5); bursts++ {
		burst(b)
		burst(c)
	}
	stop.Store(true)
	wg.Wait()
	if w := waits(b); w == 0 {
		t.Errorf("port B (A's chip): no burst of %d met A's MDIO transactions", bursts)
	}
	if w := waits(c); w != 0 {
		t.Errorf("port C (another chip): %d of %d bursts waited for port A's MDIO transactions", w, bursts)
	}
	for _, s := range []*simPort{c, b, a} {
		s.close(false)
	}
}

// TestVF: a VF reaches only its SI block; traffic works, PF-only operations
// refuse clearly, the link is reported up.
func TestVF(t *testing.T) {
	t.Parallel()
	s := openSim(t, "vf=1", driver.Config{})
	if s.port.PF() || s.port.Info().Device != "1957:ef00 ENETC VF" {
		t.Errorf("VF opened as %q", s.port.Info().Device)
	}
	if !s.port.UpdateLink().Up {
		t.Error("VF link down")
	}
	if _, err := s.port.MDIORead(0, 1); !errors.Is(err, enetc.ErrNotPF) {
		t.Errorf("VF MDIO: %v", err)
	}
	if err := s.port.SetPromiscuous(false); !errors.Is(err, enetc.ErrNotPF) {
		t.Errorf("VF promiscuous: %v", err)
	}
	f := udp4(t, 300, 1)
	s.model.Port().Receive(f)
	got := s.rxAll(0, 1, 5)
	if len(got) != 1 || s.port.TxQueue(0).TxBurst(got) != 1 {
		t.Fatal("VF traffic failed")
	}
	if w := s.wire.take(); len(w) != 1 || string(w[0]) != string(f) {
		t.Error("VF frame not on the wire")
	}
	if regs := s.port.Registers(); len(regs) == 0 {
		t.Error("empty register dump")
	}
	s.close(false)
}

// TestTxWaitsOutMDIO: a TX burst that meets an MDIO transaction (the link
// poll, nicctl mdio) waits for it to end instead of refusing the frames
// (ERR050089 keeps the data path off the registers meanwhile): while
// another goroutine runs MDIO reads back to back, every burst is taken
// whole, every frame reaches the wire, no drop is counted, and the model
// sees no register access during MDIO (checked in close).
func TestTxWaitsOutMDIO(t *testing.T) {
	// Serial: it spins goroutines against the data path until enough
	// bursts met them; alone it ends in milliseconds, beside other tests
	// on two cores it takes seconds.
	s := openSim(t, "", driver.Config{})
	s.wire.keep = false
	phy := s.port.PHYAddr()
	if phy < 0 {
		t.Fatal("no PHY found")
	}
	var stop atomic.Bool
	var reads atomic.Uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if _, err := s.port.MDIORead(phy, mii.BMSR); err != nil {
				t.Error(err)
				return
			}
			reads.Add(1)
		}
	}()
	txq, pl := s.port.TxQueue(0), s.port.RxQueue(0).Pool()
	frame := udp4(t, 60, 1)
	buf := make([]*pool.Packet, 32)
	var sent int
	waits := func() uint64 { return s.port.Stats().HW["drv_tx0_mdio_waits"] }
	for b := 0; b < 200_000 && (b < 100 || waits() < 20); b++ {
		for i := range buf {
			buf[i] = pl.Alloc()
			if buf[i] == nil {
				t.Fatalf("burst %d: pool empty", b)
			}
			copy(buf[i].Append(len(frame)), frame)
		}
		if m := txq.TxBurst(buf); m != len(buf) {
			pool.FreeBulk(buf[m:])
			t.Fatalf("burst %d: TxBurst took %d of %d frames with the ring's room to spare (pending %d)", b, m, len(buf), txq.Pending())
		}
		sent += len(buf)
		for txq.Pending() > 256 {
			txq.Reclaim()
		}
	}
	stop.Store(true)
	wg.Wait()
	st := s.port.Stats()
	if w := st.HW["drv_tx0_mdio_waits"]; w == 0 {
		t.Fatalf("no burst met an MDIO transaction in %d bursts (%d MDIO reads): the test proved nothing", sent/len(buf), reads.Load())
	}
	t.Logf("%d bursts, %d MDIO reads, %d bursts waited, longest wait %d ns, %d ns in all",
		sent/len(buf), reads.Load(), st.HW["drv_tx0_mdio_waits"], st.HW["drv_tx0_mdio_wait_max_ns"], st.HW["drv_tx0_mdio_wait_ns"])
	if to := st.HW["drv_tx0_mdio_wait_timeouts"]; to != 0 {
		t.Errorf("%d bursts gave up waiting for MDIO", to)
	}
	for txq.Pending() > 0 {
		txq.Reclaim()
	}
	if d := st.Tx.TotalDrops(); d != 0 {
		t.Errorf("TX drops %v", st.Tx.Drops)
	}
	s.wire.mu.Lock()
	got := s.wire.count
	s.wire.mu.Unlock()
	if got != sent {
		t.Errorf("the wire got %d frames, %d were sent", got, sent)
	}
	s.close(false)
}

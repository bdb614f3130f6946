package enetc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/pool"
)

func smallCfg() driver.Config {
	return driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256, StopTimeout: 20 * time.Millisecond}
}

func TestBringUpProgramsReference(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg())
	for _, c := range []struct {
		name string
		off  uint32
		want uint32
	}{
		{"PM0_RX_FIFO", regPM0_RX_FIFO, 1},
		{"SICAR0", regSICAR0, 0x2B2B6727},
		{"SICAR1", regSICAR1, 0x00300030}, // MSI-X writes (Linux enetc_configure_si, FreeBSD enetc_init_hw)
		{"PM0_MAXFRM", regPM0_MAXFRM, 1522},
		{"TBMR(0)", txRingReg(0, regTBMR), tbmr_EN},
		{"RBMR(0)", rxRingReg(0, regRBMR), rbmr_EN},
		{"RBBSR(0)", rxRingReg(0, regRBBSR), 1920},
		{"RBLENR(0)", rxRingReg(0, regRBLENR), 64},
		{"RBCIR(0)", rxRingReg(0, regRBCIR), 63}, // every slot but one posted
		{"TBIER(0)", txRingReg(0, regTBIER), 0},
	} {
		if got := f.regs[(c.off)/4]; got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, got, c.want)
		}
	}
	if f.regs[(regSIMR)/4]&simr_EN == 0 || f.regs[(regPMR)/4]&(1<<16) == 0 {
		t.Errorf("SIMR %#x / PMR %#x: SI or port not enabled", f.regs[(regSIMR)/4], f.regs[(regPMR)/4])
	}
	if f.regs[(regPM0_CMD_CFG)/4]&(pm_cmd_cfg_TX_EN|pm_cmd_cfg_RX_EN) != pm_cmd_cfg_TX_EN|pm_cmd_cfg_RX_EN {
		t.Errorf("PM0_CMD_CFG %#x: MAC not enabled with the link up", f.regs[(regPM0_CMD_CFG)/4])
	}
	if p.PHYAddr() != 3 {
		t.Errorf("PHY found at %d, want 3", p.PHYAddr())
	}
	if f.regs[(regPSIPMAR0(0))/4] == 0 && f.regs[(regPSIPMAR1(0))/4] == 0 {
		t.Error("no MAC address programmed")
	}
	closeClean(t, p)
	if f.regs[(txRingReg(0, regTBMR))/4] != 0 || f.regs[(regPM0_CMD_CFG)/4]&pm_cmd_cfg_RX_EN != 0 {
		t.Error("Close left ring or MAC enabled")
	}
	if f.iommu.Mappings() != 0 {
		t.Errorf("%d DMA mappings left after Close", f.iommu.Mappings())
	}
}

func TestBAR0SizeChecked(t *testing.T) {
	f, d := newFakeDev(t, true)
	f.size = 0x20000 // port block present, global block missing
	if _, err := New(d, smallCfg()); err == nil || !strings.Contains(err.Error(), "BAR0") {
		t.Fatalf("PF with a 128 KiB BAR0: err = %v, want a BAR0 size error", err)
	}
	f, d = newFakeDev(t, false)
	f.size = 0x8000
	if _, err := New(d, smallCfg()); err == nil || !strings.Contains(err.Error(), "BAR0") {
		t.Fatalf("VF with a 32 KiB BAR0: err = %v, want a BAR0 size error", err)
	}
}

func TestVFTouchesOnlySI(t *testing.T) {
	f, d := newFakeDev(t, false) // fake reports any access past 64 KiB as a test error
	p := mustNew(t, d, smallCfg())
	if !p.UpdateLink().Up {
		t.Error("VF link reported down")
	}
	if _, err := p.MDIORead(0, 1); !errors.Is(err, ErrNotPF) {
		t.Errorf("VF MDIORead: err = %v, want ErrNotPF", err)
	}
	f.receive(0, fakeFrame(100, 1))
	pk := make([]*pool.Packet, 8)
	if n := p.rx[0].RxBurst(pk); n != 1 {
		t.Fatalf("VF RxBurst = %d, want 1", n)
	}
	if p.tx[0].TxBurst(pk[:1]) != 1 || len(f.wire) != 1 {
		t.Fatal("VF TX did not send")
	}
	_ = p.Stats()
	_ = p.Registers()
	closeClean(t, p)
}

func TestRxTxFakeByteIdentical(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg())
	rx, tx := p.rx[0], p.tx[0]
	var sent [][]byte
	pk := make([]*pool.Packet, 32)
	// Many laps of the 64-BD rings, 60..1518-byte frames.
	for round := 0; round < 50; round++ {
		for i := 0; i < 20; i++ {
			fr := fakeFrame(60+(round*97+i*131)%1459, byte(round+i))
			if !f.receive(0, fr) {
				t.Fatalf("round %d: ring full", round)
			}
			sent = append(sent, fr)
		}
		got := rx.RxBurst(pk)
		if got != 20 {
			t.Fatalf("round %d: RxBurst = %d, want 20", round, got)
		}
		db := f.doorbells
		if n := tx.TxBurst(pk[:got]); n != got {
			t.Fatalf("round %d: TxBurst = %d, want %d", round, n, got)
		}
		if f.doorbells != db+1 {
			t.Fatalf("round %d: %d doorbells for one burst", round, f.doorbells-db)
		}
	}
	if len(f.wire) != len(sent) {
		t.Fatalf("%d frames on the wire, want %d", len(f.wire), len(sent))
	}
	for i := range sent {
		if !bytes.Equal(f.wire[i], sent[i]) {
			t.Fatalf("frame %d differs on the wire", i)
		}
	}
	tx.Reclaim() // TX counts a frame sent once the device consumed it
	st := p.Stats()
	if st.Rx.Packets != uint64(len(sent)) || st.Tx.Packets != uint64(len(sent)) || st.Rx.TotalDrops() != 0 {
		t.Errorf("stats: rx %d tx %d drops %v", st.Rx.Packets, st.Tx.Packets, st.Rx.Drops)
	}
	closeClean(t, p)
}

func TestRxMultiBDFrameAsSegments(t *testing.T) {
	f, d := newFakeDev(t, true)
	cfg := smallCfg()
	cfg.MTU = 9000
	d.Spec = jumboSpec(t)
	p := mustNew(t, d, cfg)
	fr := fakeFrame(9000, 5)
	if !f.receive(0, fr) {
		t.Fatal("ring full")
	}
	pk := make([]*pool.Packet, 4)
	if n := p.rx[0].RxBurst(pk); n != 1 {
		t.Fatalf("RxBurst = %d, want 1", n)
	}
	if pk[0].NSegs != 5 || pk[0].PktLen != 9000 || !bytes.Equal(frameBytes(pk[0]), fr) {
		t.Fatalf("jumbo: %d segments, %d bytes, equal %v", pk[0].NSegs, pk[0].PktLen, bytes.Equal(frameBytes(pk[0]), fr))
	}
	if p.tx[0].TxBurst(pk[:1]) != 1 || len(f.wire) != 1 || !bytes.Equal(f.wire[0], fr) {
		t.Fatal("chained frame not sent byte-identical")
	}
	closeClean(t, p)
}

func TestRxWriteBackChecks(t *testing.T) {
	R, F := uint32(rxbd_LSTATUS_R), uint32(rxbd_LSTATUS_F)
	for _, c := range []struct {
		name  string
		wbs   []fakeWB
		got   int
		cause driver.Cause
		drops uint64
	}{
		{"good", []fakeWB{{data: make([]byte, 64), bufLen: 64, status: R | F}}, 1, 0, 0},
		{"zero length", []fakeWB{{bufLen: 0, status: R | F}}, 0, driver.CauseBadDescriptor, 1},
		{"length past buffer", []fakeWB{{bufLen: 4000, status: R | F}}, 0, driver.CauseBadDescriptor, 1},
		{"length past max frame", []fakeWB{{bufLen: 1600, status: R | F}}, 0, driver.CauseOversize, 1},
		{"error byte", []fakeWB{{bufLen: 64, status: R | F | 0x01<<16}}, 0, driver.CauseFrame, 1},
		{"error on second BD", []fakeWB{{bufLen: 1920, status: R}, {bufLen: 10, status: R | F | 0x80<<16}}, 0, driver.CauseFrame, 1},
		{"F without R", []fakeWB{{bufLen: 64, status: F}}, 0, 0, 0},
		{"second BD not ready", []fakeWB{{bufLen: 1920, status: R}, {noWrite: true}}, 0, 0, 0},
		{"multi-BD too long", []fakeWB{{bufLen: 1920, status: R}, {bufLen: 1920, status: R | F}}, 0, driver.CauseOversize, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, d := newFakeDev(t, true)
			p := mustNew(t, d, smallCfg())
			if !f.writeBack(0, c.wbs...) {
				t.Fatal("ring full")
			}
			pk := make([]*pool.Packet, 8)
			n := p.rx[0].RxBurst(pk)
			if n != c.got {
				t.Errorf("RxBurst = %d, want %d", n, c.got)
			}
			for _, x := range pk[:n] {
				x.Free()
			}
			st := p.rx[0].Stats()
			if st.Drops[c.cause] != c.drops {
				t.Errorf("drops[%v] = %d, want %d (all %v)", c.cause, st.Drops[c.cause], c.drops, st.Drops)
			}
			closeClean(t, p)
		})
	}
}

func TestRxAllReadyNoFinalDropped(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg())
	var wbs []fakeWB
	for i := 0; i < 62; i++ {
		wbs = append(wbs, fakeWB{bufLen: 100, status: rxbd_LSTATUS_R})
	}
	if !f.writeBack(0, wbs...) {
		t.Fatal("ring full")
	}
	pk := make([]*pool.Packet, 8)
	for i := 0; i < 10; i++ {
		p.rx[0].RxBurst(pk)
	}
	if st := p.rx[0].Stats(); st.Drops[driver.CauseBadDescriptor] == 0 {
		t.Fatalf("no bad descriptor counted: %v", st.Drops)
	}
	// The ring works again afterwards.
	fr := fakeFrame(200, 9)
	if !f.receive(0, fr) {
		t.Fatal("ring full after recovery")
	}
	got := 0
	for i := 0; i < 10 && got == 0; i++ {
		got = p.rx[0].RxBurst(pk)
	}
	if got != 1 || !bytes.Equal(pk[0].Data(), fr) {
		t.Fatalf("after recovery RxBurst = %d", got)
	}
	pk[0].Free()
	closeClean(t, p)
}

func TestRxSkippedBDsGivenUp(t *testing.T) {
	R, F := uint32(rxbd_LSTATUS_R), uint32(rxbd_LSTATUS_F)
	for _, c := range []struct {
		name string
		wbs  []fakeWB
	}{
		{"first BD never ready", []fakeWB{{noWrite: true}, {data: make([]byte, 64), bufLen: 64, status: R | F}}},
		{"second BD never ready", []fakeWB{{bufLen: 1920, status: R}, {noWrite: true}, {data: make([]byte, 64), bufLen: 64, status: R | F}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, d := newFakeDev(t, true)
			cfg := smallCfg()
			cfg.MTU = 9000 // frames may span BDs
			d.Spec = jumboSpec(t)
			p := mustNew(t, d, cfg)
			f.writeBack(0, c.wbs...)
			pk := make([]*pool.Packet, 8)
			got := 0
			for i := 0; i < 2*rxStuckPolls*rxPeekEvery && got == 0; i++ {
				got = p.rx[0].RxBurst(pk)
			}
			if got != 1 || pk[0].Len() != 64 {
				t.Fatalf("RxBurst delivered %d frames, want the one after the skipped BD", got)
			}
			pk[0].Free()
			if st := p.rx[0].Stats(); st.Drops[driver.CauseBadDescriptor] != 1 || p.rx[0].skipped.Load() != 1 {
				t.Errorf("drops %v, skipped %d: want one bad descriptor", st.Drops, p.rx[0].skipped.Load())
			}
			closeClean(t, p)
		})
	}
}

func TestTxBogusConsumerIndexIgnored(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg())
	pl := p.rx[0].pool
	f.stall = true
	pk := make([]*pool.Packet, 40)
	for round := 0; round < 2; round++ {
		n := pl.AllocBulk(pk[:20])
		for _, x := range pk[:n] {
			x.SetLen(60)
		}
		if got := p.tx[0].TxBurst(pk[:n]); got != n {
			t.Fatalf("TxBurst = %d, want %d", got, n)
		}
	}
	f.ciOverride = 60000 // outside the ring
	if p.tx[0].Reclaim() != 0 || p.tx[0].Pending() != 40 {
		t.Fatal("a bogus TBCIR freed buffers")
	}
	f.ciOverride = 50 // inside the ring but past TBPIR (40)
	if p.tx[0].Reclaim() != 0 {
		t.Fatal("a TBCIR past TBPIR freed buffers")
	}
	if p.tx[0].badCI.Load() != 2 {
		t.Errorf("bad CI count %d, want 2", p.tx[0].badCI.Load())
	}
	f.ciOverride = -1
	f.stall = false
	f.runTx(0)
	if p.tx[0].Reclaim() != 40 || p.tx[0].Pending() != 0 {
		t.Fatal("real completions not reclaimed")
	}
	closeClean(t, p)
}

func TestTxRefusedWhileLinkDown(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg())
	pl := p.rx[0].pool
	pk := make([]*pool.Packet, 4)
	n := pl.AllocBulk(pk)
	for _, x := range pk[:n] {
		x.SetLen(60)
	}
	f.link = false
	if p.UpdateLink().Up {
		t.Fatal("link still up")
	}
	if f.regs[(regPM0_CMD_CFG)/4]&pm_cmd_cfg_TX_EN != 0 {
		t.Error("MAC TX still enabled with the link down")
	}
	sent := f.txSent
	if got := p.tx[0].TxBurst(pk[:n]); got != n || f.txSent != sent || p.tx[0].Pending() != 0 {
		t.Fatalf("TxBurst with link down = %d (sent %d, pending %d), want all taken and dropped", got, f.txSent-sent, p.tx[0].Pending())
	}
	if st := p.tx[0].Stats(); st.Drops[driver.CauseLinkDown] != uint64(n) || st.Packets != 0 {
		t.Errorf("link-down drops %d, packets %d; want %d, 0", st.Drops[driver.CauseLinkDown], st.Packets, n)
	}
	f.link = true
	if !p.UpdateLink().Up {
		t.Fatal("link not back")
	}
	n = pl.AllocBulk(pk)
	for _, x := range pk[:n] {
		x.SetLen(60)
	}
	if got := p.tx[0].TxBurst(pk[:n]); got != n {
		t.Fatalf("TxBurst after link up = %d", got)
	}
	closeClean(t, p)
}

func TestStopWithStuckTxFreesAndCounts(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg())
	pl := p.rx[0].pool
	f.stall = true
	pk := make([]*pool.Packet, 10)
	n := pl.AllocBulk(pk)
	for _, x := range pk[:n] {
		x.SetLen(60)
	}
	p.tx[0].TxBurst(pk[:n])
	err := p.Stop()
	if err == nil || !strings.Contains(err.Error(), "did not drain") {
		t.Fatalf("Stop with a stuck ring: err = %v", err)
	}
	if st := p.tx[0].Stats(); st.Drops[driver.CauseStopped] != uint64(n) || st.TotalDrops() != uint64(n) || st.Packets != 0 {
		t.Errorf("lost frames counted %v, %d sent; want %d stopped, none sent", st.Drops, st.Packets, n)
	}
	if in := pl.InFlight(); in != 0 {
		t.Errorf("%d buffers in flight after Stop", in)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestRSSTableThroughCBDR(t *testing.T) {
	f, d := newFakeDev(t, true)
	cfg := smallCfg()
	cfg.RxQueues = 4
	p := mustNew(t, d, cfg)
	if f.regs[(regSIMR)/4]&simr_RSSE == 0 || f.regs[(regSIRBGCR)/4] != 4 {
		t.Errorf("SIMR %#x SIRBGCR %d: RSS not enabled for 4 rings", f.regs[(regSIMR)/4], f.regs[(regSIRBGCR)/4])
	}
	tbl := p.RSSTable()
	if len(tbl) != 64 {
		t.Fatalf("RSS table has %d entries, want 64", len(tbl))
	}
	seen := map[byte]bool{}
	for _, e := range tbl {
		seen[e] = true
	}
	if len(seen) != 4 {
		t.Errorf("table uses rings %v", seen)
	}
	if f.regs[(regPRSSK(0))/4] != 0xda565a6d {
		t.Errorf("PRSSK(0) = %#x", f.regs[(regPRSSK(0))/4])
	}
	closeClean(t, p)
}

func TestMDIOClause45(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg())
	if _, err := p.MDIORead45(3, 1, 0x20); err != nil {
		t.Errorf("C45 read: %v", err)
	}
	if f.regs[(regEMDIO+regMDIO_ADDR)/4] != 0x20 || f.regs[(regEMDIO+regMDIO_CFG)/4]&mdio_cfg_ENC45 == 0 {
		t.Errorf("C45 read did not program ADDR/ENC45")
	}
	if _, err := p.MDIORead(7, 2); !errors.Is(err, ErrMDIONoResponse) {
		t.Errorf("read of an absent PHY: err = %v", err)
	}
	if p.gate.Load()&gate.MDIO != 0 {
		t.Error("gate left closed after MDIO")
	}
	closeClean(t, p)
}

// FuzzRxWriteBack feeds arbitrary write-back words into the RX ring: the
// driver must never panic, hand out a frame longer than its buffers allow,
// or lose a buffer.
func FuzzRxWriteBack(f *testing.F) {
	f.Add(uint16(64), uint32(rxbd_LSTATUS_R|rxbd_LSTATUS_F), uint16(1920), uint32(0), uint16(0), uint8(1))
	f.Add(uint16(1920), uint32(rxbd_LSTATUS_R), uint16(100), uint32(rxbd_LSTATUS_R|rxbd_LSTATUS_F), uint16(0x8000), uint8(2))
	f.Add(uint16(0), uint32(rxbd_LSTATUS_R|rxbd_LSTATUS_F), uint16(0xFFFF), uint32(0xFFFFFFFF), uint16(0x11), uint8(3))
	f.Add(uint16(1920), uint32(rxbd_LSTATUS_R), uint16(1920), uint32(rxbd_LSTATUS_R), uint16(0), uint8(40))
	f.Fuzz(func(t *testing.T, len1 uint16, st1 uint32, len2 uint16, st2 uint32, parse uint16, reps uint8) {
		fd, d := newFakeDev(t, true)
		cfg := smallCfg()
		p, err := New(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		q := p.rx[0]
		pk := make([]*pool.Packet, 16)
		var delivered uint64
		for r := 0; r < int(reps%64)+1; r++ {
			fd.writeBack(0, fakeWB{bufLen: len1, status: st1, parse: parse}, fakeWB{bufLen: len2, status: st2, parse: parse})
			n := q.RxBurst(pk)
			for _, x := range pk[:n] {
				tot := 0
				segs := 0
				for s := x; s != nil; s = s.Next() {
					if s.Len() <= 0 || s.Len() > int(q.bufLen) {
						t.Fatalf("segment of %d bytes from a %d-byte buffer", s.Len(), q.bufLen)
					}
					tot += s.Len()
					segs++
				}
				if tot != x.PktLen || segs != int(x.NSegs) || tot > int(q.maxLen) {
					t.Fatalf("frame: PktLen %d NSegs %d, segments sum %d over %d", x.PktLen, x.NSegs, tot, segs)
				}
				delivered++
				x.Free()
			}
		}
		st := q.Stats()
		if st.Packets != delivered {
			t.Fatalf("counted %d packets, delivered %d", st.Packets, delivered)
		}
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
		if n := q.pool.InFlight(); n != 0 {
			t.Fatalf("%d buffers lost", n)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestChipScopesERR050089: ports on devices whose backend names no chip
// (every backend that reaches silicon) share one ERR050089 rule, so an MDIO
// transaction on one closes the other's gate; a port on a named chip is not
// held off by it; and a chip is forgotten with its last port.
func TestChipScopesERR050089(t *testing.T) {
	_, d1 := newFakeDev(t, true)
	_, d2 := newFakeDev(t, true)
	_, d3 := newFakeDev(t, true)
	d3.Chip = "elsewhere"
	p1, p2, p3 := mustNew(t, d1, smallCfg()), mustNew(t, d2, smallCfg()), mustNew(t, d3, smallCfg())
	if p1.chip != p2.chip || p1.chip == p3.chip {
		t.Fatalf("chips %p %p %p: want the first two shared, the third apart", p1.chip, p2.chip, p3.chip)
	}
	p1.lock()
	p1.mdioBegin()
	g2, g3 := p2.gate.Load(), p3.gate.Load()
	p1.mdioEnd()
	p1.unlock()
	if g2&gate.MDIO == 0 || g3&gate.MDIO != 0 {
		t.Errorf("during an MDIO transaction on port 1: port 2's gate %#x, port 3's %#x; want MDIO set on port 2 only", g2, g3)
	}
	if g := p2.gate.Load(); g&gate.MDIO != 0 {
		t.Errorf("port 2's gate %#x after the transaction", g)
	}
	closeClean(t, p3)
	chips.mu.Lock()
	_, kept := chips.m["elsewhere"]
	chips.mu.Unlock()
	if kept {
		t.Error("chip \"elsewhere\" still known after its only port closed")
	}
}

// jumboSpec is the fake device's spec with ierb=prepared, which a PF's
// jumbo MTU needs (ierb.go).
func jumboSpec(t *testing.T) driver.Spec {
	s, err := driver.ParseSpec("sim:enetc0?ierb=prepared") // any spec that parses: the fake reads only its options
	if err != nil {
		t.Fatal(err)
	}
	return s
}

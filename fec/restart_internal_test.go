package fec

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/sim"
)

// restartFaultRegs is the port's register window with two faults the
// model does not have: EIR.GRA never set (a graceful transmit stop that
// does not complete) and RDAR/TDAR reading active (a DMA that does not go
// idle after ECR.ETHEREN is cleared). Only the control path reads through
// it (restartMAC, Stop); the queues keep the window they were given.
type restartFaultRegs struct {
	driver.Regs
	noGRA, dmaBusy atomic.Bool
}

func (f *restartFaultRegs) Read32(off uint32) uint32 {
	v := f.Regs.Read32(off)
	if off == regEIR && f.noGRA.Load() {
		v &^= eir_GRA
	}
	if f.dmaBusy.Load() {
		for i := range regRDARn {
			if off == regRDARn[i] || off == regTDARn[i] {
				v |= dar_ACTIVE
			}
		}
	}
	return v
}

// openRestartFaults starts a synchronous sim port (no link watcher ticks:
// the test calls UpdateLink) whose control path reads through the faults,
// with a short StopTimeout so a wait that runs out costs little.
func openRestartFaults(t *testing.T, soc ...string) (*Port, *model.Device, *restartFaultRegs, *wireCapture) {
	t.Helper()
	name := fmt.Sprintf("fec%d", 1000+internalSeq.Add(1))
	part := "imx8mp"
	if len(soc) > 0 {
		part = soc[0]
	}
	dp, err := driver.Open("sim:" + name + "?soc=" + part + "&link-poll=0&rx-ring=16&tx-ring=16")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dp.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	p := dp.(*Port)
	f := &restartFaultRegs{Regs: p.regs}
	p.regs = f
	p.cfg.StopTimeout = 20 * time.Millisecond
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	m := sim.FECModel(name)
	w := &wireCapture{}
	m.SetWire(w)
	return p, m, f, w
}

// restartScene queues what a restart must keep: TX frames the MAC has not
// sent (its engine held) and RX frames it completed that the application
// has not polled. It returns both, in order.
func restartScene(t *testing.T, p *Port, m *model.Device) (tx, rx [][]byte) {
	t.Helper()
	rxq, txq := p.rx[0], p.tx[0]
	m.SetTxStall(true)
	for i := 0; i < 3; i++ {
		f := patternFrame(200, i)
		pk := rxq.Pool().Alloc()
		copy(pk.Append(len(f)), f)
		if txq.TxBurst([]*driver.Packet{pk}) != 1 {
			t.Fatalf("TxBurst refused frame %d", i)
		}
		tx = append(tx, f)
	}
	for i := 0; i < 2; i++ {
		f := patternFrame(300, 100+i)
		if !m.Receive(f) {
			t.Fatalf("model refused RX frame %d: %v", i, m.LastModelError())
		}
		rx = append(rx, f)
	}
	return tx, rx
}

// checkScene lets the held TX go and checks that the queued TX frames
// left and the unpolled RX frames arrive, each intact and in order.
func checkScene(t *testing.T, p *Port, m *model.Device, w *wireCapture, tx, rx [][]byte) {
	t.Helper()
	m.SetTxStall(false)
	p.tx[0].Reclaim()
	if len(w.frames) != len(tx) {
		t.Fatalf("%d of the %d queued TX frames left after the restart", len(w.frames), len(tx))
	}
	for i, f := range w.frames {
		if !bytes.Equal(f, tx[i]) {
			t.Fatalf("queued TX frame %d left changed or out of order", i)
		}
	}
	pkts := make([]*driver.Packet, 8)
	n := p.rx[0].RxBurst(pkts)
	if n != len(rx) {
		t.Fatalf("%d of the %d RX frames completed before the restart delivered", n, len(rx))
	}
	for i := 0; i < n; i++ {
		if !bytes.Equal(pkts[i].Data(), rx[i]) {
			t.Fatalf("RX frame %d changed or out of order across the restart", i)
		}
		pkts[i].Free()
	}
	if st := m.Stats(); st.RunningReconfig != 0 {
		t.Fatalf("%d speed/duplex writes into a running MAC: %v", st.RunningReconfig, m.LastModelError())
	}
}

// TestRestartWithoutGRA: the graceful transmit stop never completes (a
// frame stays on the wire). The driver must not disable the MAC under it:
// GTS is cleared again, the MAC runs on with its old bits, the port says
// the link is down (its MAC does not match the PHY: TX counts link_down)
// and counts the failure; the next UpdateLink finishes the restart and
// nothing queued is lost.
func TestRestartWithoutGRA(t *testing.T) {
	t.Parallel()
	p, m, f, w := openRestartFaults(t)
	var events []driver.LinkEvent
	cancel := p.OnLinkChange(func(e driver.LinkEvent) { events = append(events, e) })
	defer cancel()
	tx, rx := restartScene(t, p, m)
	f.noGRA.Store(true)
	if err := m.SetLinkSpeed(100); err != nil {
		t.Fatal(err)
	}
	if l := p.UpdateLink(); l.Up || p.Link().Up {
		t.Fatalf("UpdateLink %v, Link %v with the MAC still at 1000 Mb/s: want down", l, p.Link())
	}
	if p.MACRestarts() != 0 || p.MACRestartFailures() != 1 {
		t.Fatalf("%d restarts, %d failures after a stop without GRA; want 0 and 1", p.MACRestarts(), p.MACRestartFailures())
	}
	if ecr, tcr := m.Read32(regECR), m.Read32(regTCR); ecr&ecr_ETHEREN == 0 || ecr&ecr_SPEED == 0 || tcr&tcr_GTS != 0 {
		t.Fatalf("ECR %#x TCR %#x: the MAC must run on at 1000 Mb/s with GTS clear", ecr, tcr)
	}
	if len(events) != 1 || events[0].New.Up {
		t.Fatalf("link events %v: want one, to down", events)
	}
	pk := p.rx[0].Pool().Alloc()
	copy(pk.Append(64), patternFrame(64, 9))
	if n := p.tx[0].TxBurst([]*driver.Packet{pk}); n != 1 || p.tx[0].Stats().Drops[driver.CauseLinkDown] != 1 {
		t.Fatalf("TxBurst with the MAC not at the PHY's speed took %d, drops %v: want it counted as link_down", n, p.tx[0].Stats().Drops)
	}

	f.noGRA.Store(false)
	want := driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}
	if l := p.UpdateLink(); l != want || p.Link() != want {
		t.Fatalf("UpdateLink %v, Link %v after GRA came: want %v", l, p.Link(), want)
	}
	if p.MACRestarts() != 1 || p.MACRestartFailures() != 1 {
		t.Fatalf("%d restarts, %d failures; want 1 and 1", p.MACRestarts(), p.MACRestartFailures())
	}
	if m.Read32(regECR)&ecr_SPEED != 0 {
		t.Fatal("ECR.SPEED still set at 100 Mb/s")
	}
	checkScene(t, p, m, w, tx, rx)
}

// TestRestartDMANotIdle: after ECR.ETHEREN is cleared the DMA stays active.
// The rings must not be turned under it; the MAC stays disabled, every
// burst returns 0 (no frame taken, none dropped), Link says down, each try
// is counted, and once the DMA is idle the next UpdateLink turns the rings
// and enables the MAC with nothing lost or misplaced.
func TestRestartDMANotIdle(t *testing.T) {
	t.Parallel()
	p, m, f, w := openRestartFaults(t)
	tx, rx := restartScene(t, p, m)
	f.dmaBusy.Store(true)
	if err := m.SetLinkSpeed(10); err != nil {
		t.Fatal(err)
	}
	for try := 1; try <= 2; try++ {
		if l := p.UpdateLink(); l.Up {
			t.Fatalf("try %d: UpdateLink %v with the MAC held disabled: want down", try, l)
		}
		if p.MACRestarts() != 0 || p.MACRestartFailures() != uint64(try) {
			t.Fatalf("try %d: %d restarts, %d failures", try, p.MACRestarts(), p.MACRestartFailures())
		}
		if m.Read32(regECR)&ecr_ETHEREN != 0 {
			t.Fatalf("try %d: the MAC was enabled again with its DMA still active", try)
		}
		if g := p.gate.Load(); g&gate.Stopped == 0 {
			t.Fatalf("try %d: gate %#x open while the rings wait to be turned", try, g)
		}
	}
	pk := p.rx[0].Pool().Alloc()
	copy(pk.Append(64), patternFrame(64, 9))
	if n := p.tx[0].TxBurst([]*driver.Packet{pk}); n != 0 || p.tx[0].Stats().TotalDrops() != 0 {
		t.Fatalf("TxBurst with the MAC held took %d frames, drops %v: want 0 taken, none dropped", n, p.tx[0].Stats().Drops)
	}
	pk.Free()
	if n := p.rx[0].RxBurst(make([]*driver.Packet, 8)); n != 0 {
		t.Fatalf("RxBurst returned %d frames while the rings wait to be turned", n)
	}

	f.dmaBusy.Store(false)
	want := driver.Link{Up: true, SpeedMbps: 10, FullDuplex: true}
	if l := p.UpdateLink(); l != want {
		t.Fatalf("UpdateLink %v once the DMA is idle: want %v", l, want)
	}
	if p.MACRestarts() != 1 || p.MACRestartFailures() != 2 {
		t.Fatalf("%d restarts, %d failures; want 1 and 2", p.MACRestarts(), p.MACRestartFailures())
	}
	if m.Read32(regECR)&ecr_ETHEREN == 0 || m.Read32(regRCR)&rcr_RMII_10T == 0 {
		t.Fatalf("ECR %#x RCR %#x: want the MAC enabled at 10 Mb/s", m.Read32(regECR), m.Read32(regRCR))
	}
	checkScene(t, p, m, w, tx, rx)
}

// TestRestartBurstStays: a queue goroutine stays inside a burst past
// StopTimeout. The restart touches nothing, is counted, Link says down;
// once the burst has left the next UpdateLink restarts the MAC.
func TestRestartBurstStays(t *testing.T) {
	t.Parallel()
	p, m, _, w := openRestartFaults(t)
	tx, rx := restartScene(t, p, m)
	if err := m.SetLinkSpeed(100); err != nil {
		t.Fatal(err)
	}
	p.rx[0].burst.Enter(&p.gate) // as RxBurst does on entry
	l := p.UpdateLink()
	p.rx[0].burst.Leave()
	if l.Up || p.MACRestarts() != 0 || p.MACRestartFailures() != 1 {
		t.Fatalf("burst inside: UpdateLink %v, %d restarts, %d failures; want down, 0, 1", l, p.MACRestarts(), p.MACRestartFailures())
	}
	if ecr := m.Read32(regECR); ecr&ecr_ETHEREN == 0 || ecr&ecr_SPEED == 0 || p.gate.Load()&gate.Stopped != 0 {
		t.Fatalf("ECR %#x, gate %#x: the MAC must run on untouched", ecr, p.gate.Load())
	}
	if l := p.UpdateLink(); l != (driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}) || p.MACRestarts() != 1 {
		t.Fatalf("after the burst left: UpdateLink %v, %d restarts", l, p.MACRestarts())
	}
	checkScene(t, p, m, w, tx, rx)
}

// TestSetMTURestartDMANotIdle: an MTU that moves the i.MX8QM's TX FIFO to
// cut-through restarts the MAC; with the DMA still active SetMTU fails
// naming it, keeps the MTU the MAC's FIFO mode fits, holds the MAC
// disabled (Link down) and counts the try; the next UpdateLink finishes
// the restart in store-and-forward, nothing lost.
func TestSetMTURestartDMANotIdle(t *testing.T) {
	t.Parallel()
	p, m, f, w := openRestartFaults(t, "imx8qm")
	tx, rx := restartScene(t, p, m)
	mtu := p.Info().MTU
	f.dmaBusy.Store(true)
	if err := p.SetMTU(9000); err == nil || !strings.Contains(err.Error(), "DMA still active") {
		t.Fatalf("SetMTU(9000) with the DMA busy: %v, want the DMA named", err)
	}
	if p.Info().MTU != mtu || p.Link().Up || p.MACRestartFailures() != 1 || p.MACRestarts() != 0 {
		t.Fatalf("after the failed SetMTU: MTU %d (was %d), Link %v, %d failures, %d restarts", p.Info().MTU, mtu, p.Link(), p.MACRestartFailures(), p.MACRestarts())
	}
	f.dmaBusy.Store(false)
	if l := p.UpdateLink(); !l.Up || p.MACRestarts() != 1 {
		t.Fatalf("UpdateLink %v, %d restarts once the DMA is idle", l, p.MACRestarts())
	}
	if v := m.Read32(regTFWR); v != tfwr_STRFWD {
		t.Fatalf("TFWR %#x after the restart at MTU %d: want store-and-forward", v, mtu)
	}
	checkScene(t, p, m, w, tx, rx)
}

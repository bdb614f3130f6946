package fec_test

import (
	"bytes"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// TestSpeedChangeRestartsGracefully renegotiates the PHY's speed under a
// running port on every profile and descriptor format, with frames
// waiting both ways: TX frames the MAC has not sent yet (its engine held)
// and RX frames it completed that the application has not polled. The
// driver must restart the MAC the reference's way (graceful stop, MAC
// disabled, speed and duplex bits, restart), which the model checks
// (RunningReconfig), and lose nothing: every queued frame leaves in order,
// every received one is delivered, then frames flow at the new speed.
func TestSpeedChangeRestartsGracefully(t *testing.T) {
	t.Parallel()
	for _, o := range socOptions() {
		t.Run(o, func(t *testing.T) {
			t.Parallel()
			p, m := openSim(t, o+"&link-poll=0&tx-ring=16&rx-ring=16")
			w := &capture{}
			m.SetWire(w)
			rxq, txq := p.RxQueue(0), p.TxQueue(0)
			pl := rxq.Pool()
			send := func(seed int) []byte {
				f := udpFrame(t, 200, -1, seed)
				pk := pl.Alloc()
				copy(pk.Append(len(f)), f)
				if txq.TxBurst([]*driver.Packet{pk}) != 1 {
					t.Fatalf("TxBurst refused frame %d", seed)
				}
				return f
			}
			var want [][]byte
			for i := 0; i < 5; i++ { // sent at once: the ring's indices move off 0
				want = append(want, send(i))
			}
			m.SetTxStall(true)
			for i := 5; i < 9; i++ { // queued, not sent
				want = append(want, send(i))
			}
			var rxWant [][]byte
			pkts := make([]*driver.Packet, 8)
			for i := 0; i < 3; i++ {
				f := udpFrame(t, 300, -1, 100+i)
				if !m.Port().Receive(f) {
					t.Fatalf("model refused RX frame %d: %v", i, m.LastModelError())
				}
				rxWant = append(rxWant, f)
			}
			if n := rxq.RxBurst(pkts[:1]); n != 1 || !bytes.Equal(pkts[0].Data(), rxWant[0]) {
				t.Fatal("first RX frame not received before the speed change")
			}
			pkts[0].Free()
			rxWant = rxWant[1:]
			for i := 0; i < 2; i++ { // completed, not polled
				f := udpFrame(t, 300, -1, 200+i)
				if !m.Port().Receive(f) {
					t.Fatalf("model refused RX frame: %v", m.LastModelError())
				}
				rxWant = append(rxWant, f)
			}

			before := m.Stats()
			prof := m.Profile()
			next := 100
			if m.LinkSpeed() == 100 {
				next = 10
			}
			if err := m.SetLinkSpeed(next); err != nil {
				t.Fatal(err)
			}
			if l := p.UpdateLink(); !l.Up || l.SpeedMbps != next {
				t.Fatalf("UpdateLink %v after the PHY went to %d Mb/s", l, next)
			}
			st := m.Stats()
			if st.RunningReconfig != 0 || st.ModelErrors != before.ModelErrors {
				t.Fatalf("the driver reprogrammed a running MAC: %d running reconfigurations, model error %v", st.RunningReconfig, m.LastModelError())
			}
			if p.MACRestarts() != 1 {
				t.Fatalf("%d MAC restarts for one speed change", p.MACRestarts())
			}
			if got := len(w.take()); got != 5 {
				t.Fatalf("%d frames on the wire while TX was held, want the 5 sent before", got)
			}
			m.SetTxStall(false)
			txq.Reclaim()
			out := w.take()
			if len(out) != 4 {
				t.Fatalf("%d of the 4 queued frames left after the restart (model %+v)", len(out), m.Stats())
			}
			for i, f := range out {
				if !bytes.Equal(f, want[5+i]) {
					t.Fatalf("queued frame %d left changed or out of order", i)
				}
			}
			n := rxq.RxBurst(pkts)
			if n != len(rxWant) {
				t.Fatalf("%d of the %d frames received before the restart were delivered (rx stats %+v)", n, len(rxWant), p.Stats().Rx)
			}
			for i := 0; i < n; i++ {
				if !bytes.Equal(pkts[i].Data(), rxWant[i]) {
					t.Fatalf("RX frame %d changed across the restart", i)
				}
				pkts[i].Free()
			}
			checkSpeedBits(t, p, m, next, fmt.Sprintf("%s after the restart", prof.Name))
			// Frames flow both ways at the new speed.
			f := send(50)
			txq.Reclaim()
			if out := w.take(); len(out) != 1 || !bytes.Equal(out[0], f) {
				t.Fatalf("after the restart a frame did not leave intact (%d on the wire)", len(out))
			}
			if d := p.Stats().Tx.Drops; d != ([driver.NumCauses]uint64{}) {
				t.Fatalf("TX drops %v: the restart must drop nothing", d)
			}
		})
	}
}

// TestModelFlagsRunningReconfig is the negative control: writing the
// speed and duplex bits straight into a running MAC, as the driver once
// did, is what the model counts (Stats.RunningReconfig).
func TestModelFlagsRunningReconfig(t *testing.T) {
	t.Parallel()
	_, m := openSim(t, "soc=imx8mp&link-poll=0")
	const ecr, rcr, tcr = 0x024, 0x084, 0x0C4
	m.Write32(ecr, m.Read32(ecr)^1<<5) // ECR.SPEED
	m.Write32(rcr, m.Read32(rcr)^1<<9) // RCR.RMII_10T
	m.Write32(tcr, m.Read32(tcr)^1<<2) // TCR.FDEN
	if n := m.Stats().RunningReconfig; n != 3 {
		t.Fatalf("model counted %d of 3 changes to a running MAC's speed/duplex bits", n)
	}
	// With the MAC disabled the same writes are fine.
	m.Write32(ecr, m.Read32(ecr)&^(1<<1))
	m.Write32(tcr, m.Read32(tcr)^1<<2)
	m.Write32(rcr, m.Read32(rcr)^1<<9)
	m.Write32(ecr, m.Read32(ecr)^1<<5)
	if n := m.Stats().RunningReconfig; n != 3 {
		t.Fatalf("model flagged writes to a disabled MAC (%d)", n)
	}
}

// TestSpeedChangesUnderTraffic renegotiates the PHY again and again while
// a goroutine forwards at full rate and the link watcher (link-poll=1ms)
// restarts the MAC behind it, with the model's DMA engine in its own
// goroutine (run with -race). Every frame the model wrote into memory is
// accounted for: forwarded onto the wire in the order it came in, sent by
// the model into a link that was down, or counted by the driver; the
// driver never wrote speed or duplex bits into a running MAC.
//
// It waits for conditions, not for a number of polls: after each change
// until the port reports the new speed (Link: the MAC runs for it) and a
// restart happened, at the end until the application has every frame the
// model wrote and every forwarded frame is on the wire or counted. On a
// loaded machine or under qemu-user that only takes longer; a frame the
// driver loses never arrives, and the wait fails naming the counts.
func TestSpeedChangesUnderTraffic(t *testing.T) {
	t.Parallel()
	const bound = time.Minute // per wait: generous, a failure is a frame (or a restart) that never comes
	p, m := openSim(t, "soc=imx8mp&mode=engine&link-poll=1ms&rx-ring=64&tx-ring=64")
	w := &capture{}
	m.SetWire(w)
	rxq, txq := p.RxQueue(0), p.TxQueue(0)
	stop, done := make(chan struct{}), make(chan struct{})
	var got, stranded atomic.Uint64
	var pending atomic.Int64 // txq.Pending(), read on the queue's own goroutine
	// The application: forward whatever arrives.
	go func() {
		defer close(done)
		pkts := make([]*driver.Packet, 32)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := rxq.RxBurst(pkts)
			if n == 0 {
				txq.Reclaim()
				pending.Store(int64(txq.Pending()))
				runtime.Gosched()
				continue
			}
			got.Add(uint64(n))
			for sent := 0; sent < n; {
				k := txq.TxBurst(pkts[sent:n])
				if k == 0 { // the gate is closed while the MAC restarts
					select {
					case <-stop: // only when the test already failed
						for _, pk := range pkts[sent:n] {
							pk.Free()
						}
						stranded.Add(uint64(n - sent))
						return
					default:
					}
					txq.Reclaim()
					runtime.Gosched()
				}
				sent += k
			}
		}
	}()
	var wire [][]byte
	waitFor := func(what string, cond func() bool, state func() string) {
		t.Helper()
		for end := time.Now().Add(bound); ; {
			wire = append(wire, w.take()...)
			if cond() {
				return
			}
			if time.Now().After(end) {
				close(stop)
				<-done
				t.Fatalf("after %v still waiting for %s: %s", bound, what, state())
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	speeds := []int{100, 10, 1000}
	var accepted [][]byte // frames the model took into memory, in order
	for i := 0; i < 3000; i++ {
		if i%500 == 499 {
			want := driver.Link{Up: true, SpeedMbps: speeds[(i/500)%len(speeds)], FullDuplex: true}
			before := p.MACRestarts()
			if err := m.SetLinkSpeed(want.SpeedMbps); err != nil {
				t.Fatal(err)
			}
			// Traffic goes on while the watcher follows.
			waitFor(fmt.Sprintf("the watcher to restart the MAC for %v", want),
				func() bool { return p.Link() == want && p.MACRestarts() > before },
				func() string {
					return fmt.Sprintf("link %v, %d MAC restarts (%d before the change), %d failed", p.Link(), p.MACRestarts(), before, p.MACRestartFailures())
				})
		}
		waitFor("room in the RX ring", func() bool { return m.Port().RxRoom() > 0 },
			func() string { return fmt.Sprintf("application got %d, model %+v", got.Load(), m.Stats()) })
		f := udpFrame(t, 128, -1, i)
		if m.Port().Receive(f) {
			accepted = append(accepted, f)
		}
	}
	waitFor("every frame the model wrote to be forwarded or counted", func() bool {
		st, ps := m.Stats(), p.Stats()
		g := got.Load()
		return g == st.RxFrames-st.RxErrors && g == ps.Rx.Packets && pending.Load() == 0 &&
			uint64(len(wire))+st.TxLinkDown+ps.Tx.TotalDrops() >= g
	}, func() string {
		st, ps := m.Stats(), p.Stats()
		return fmt.Sprintf("model wrote %d frames (%d with errors), the application got %d (driver %d, rx drops %v); %d pending, wire %d, sent into a down link %d, tx drops %v",
			st.RxFrames, st.RxErrors, got.Load(), ps.Rx.Packets, ps.Rx.Drops, pending.Load(), len(wire), st.TxLinkDown, ps.Tx.Drops)
	})
	close(stop)
	<-done
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	wire = append(wire, w.take()...)
	st, ps := m.Stats(), p.Stats()
	if st.RunningReconfig != 0 {
		t.Fatalf("%d speed/duplex writes into a running MAC: %v", st.RunningReconfig, m.LastModelError())
	}
	if p.MACRestarts() < 6 {
		t.Fatalf("%d MAC restarts for six speed changes", p.MACRestarts())
	}
	t.Logf("%d MAC restarts, %d failed and retried; %d of 3000 frames taken by the model", p.MACRestarts(), p.MACRestartFailures(), len(accepted))
	g := got.Load()
	if g != st.RxFrames-st.RxErrors || g != ps.Rx.Packets || uint64(len(accepted)) != st.RxFrames || stranded.Load() != 0 {
		t.Fatalf("model wrote %d frames (%d with errors, %d accepted), the application got %d (driver %d, %d stranded)", st.RxFrames, st.RxErrors, len(accepted), g, ps.Rx.Packets, stranded.Load())
	}
	if sum := uint64(len(wire)) + st.TxLinkDown + ps.Tx.TotalDrops(); sum != g {
		t.Fatalf("forwarded %d; wire %d + sent into a down link %d + driver drops %v = %d", g, len(wire), st.TxLinkDown, ps.Tx.Drops, sum)
	}
	// What reached the wire came in that order: no frame misplaced by a
	// ring turned at the wrong slot.
	k := 0
	for i, f := range wire {
		for k < len(accepted) && !bytes.Equal(accepted[k], f) {
			k++
		}
		if k == len(accepted) {
			t.Fatalf("wire frame %d of %d is not the next received frame in order", i, len(wire))
		}
		k++
	}
}

package enetc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/internal/drvtest"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim/simdma"
)

// TestEveryMethodAfterClose: after Close, every exported method of the port
// and its queues fails closed (driver.ErrClosed or a zero value) without a
// register access, and a packet the application kept past Close is still
// readable: Close waited for it, reported it by holder and left its memory
// mapped.
func TestEveryMethodAfterClose(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	frame := udp4(t, 100, 7)
	s.model.Port().Receive(frame)
	got := s.rxAll(0, 1, 5)
	if len(got) != 1 {
		t.Fatalf("received %d frames, want 1", len(got))
	}
	rxq, txq := s.port.RxQueue(0), s.port.TxQueue(0)
	out := rxq.Pool().Alloc()
	copy(out.Append(len(frame)), frame)
	if n := txq.TxBurst([]*pool.Packet{out}); n != 1 {
		t.Fatalf("TxBurst took %d of 1", n)
	}
	err := s.port.Close()
	var le *pool.LeakError
	if !errors.As(err, &le) || le.Count != 1 || le.ByHolder[pool.Holder{Port: s.spec, Role: "rx queue 0 caller"}] != 1 {
		t.Fatalf("Close with one received packet held: %v, want a LeakError naming rx queue 0's caller", err)
	}
	// The caller names the port: the error names the queue, the pool and
	// the holder by their roles.
	if msg := err.Error(); strings.Contains(msg, s.spec) || !strings.Contains(msg, `RX queue 0: pool "rx0": 1 buffer never came back (1 held by rx queue 0 caller)`) {
		t.Errorf("Close's leak report %q: want the queue, the pool and the holder by their roles, the port not named", msg)
	}
	ep := s.port
	drvtest.AfterClose(t, drvtest.Closed{
		Port: ep, Rx: rxq, Tx: txq, Held: got[0], Frame: frame,
		Touches: func() uint64 { m := s.model.Stats(); return m.RegReads + m.RegWrites },
		Extra: map[string]func() error{
			"Port.PF": func() error { return nil }, // a fact of the device found at New
			"Port.DecodeBD": func() error { // decodes bytes the caller gives: no device
				ep.DecodeBD(true, make([]byte, enetc.BDSize))
				return nil
			},
			"Port.Registers": func() error { return wantNil(ep.Registers() == nil, "Registers read registers") },
			"Port.Rings":     func() error { return wantNil(ep.Rings() == nil, "Rings read registers") },
			"Port.LiveRings": func() error { return wantNil(ep.LiveRings() == nil, "LiveRings read registers") },
			"Port.RSSTable":  func() error { return wantNil(ep.RSSTable() == nil, "RSSTable read freed memory") },
			"Port.Clock":     func() error { _, err := ep.Clock(); return drvtest.IsClosed(err) },
			"Port.SetTCMap":  func() error { return drvtest.IsClosed(ep.SetTCMap(driver.TCMap{})) },
			"Port.SetGateList": func() error {
				return drvtest.IsClosed(ep.SetGateList(driver.GateList{}))
			},
			"Port.SetCBS":   func() error { return drvtest.IsClosed(ep.SetCBS(1, 0)) },
			"Port.TSNState": func() error { _, err := ep.TSNState(); return drvtest.IsClosed(err) },
			"Port.SetPreemption": func() error {
				return drvtest.IsClosed(ep.SetPreemption(driver.PreemptConfig{}))
			},
			"Port.PreemptState": func() error { _, err := ep.PreemptState(); return drvtest.IsClosed(err) },
			"Port.SetStream":    func() error { return drvtest.IsClosed(ep.SetStream(driver.Stream{})) },
			"Port.DeleteStream": func() error { return drvtest.IsClosed(ep.DeleteStream(0)) },
			"Port.StreamStats":  func() error { _, err := ep.StreamStats(0); return drvtest.IsClosed(err) },
			"Port.StreamCaps": func() error {
				return wantNil(ep.StreamCaps().Streams == 0, "StreamCaps read registers")
			},
			"Port.TSNCaps": func() error {
				return wantNil(ep.TSNCaps().TrafficClasses == 0, "TSNCaps read registers")
			},
			"Port.MDIORead": func() error { _, err := ep.MDIORead(1, 1); return drvtest.IsClosed(err) },
			"Port.MDIOWrite": func() error {
				return drvtest.IsClosed(ep.MDIOWrite(1, 0, 0))
			},
			"Port.MDIORead45": func() error { _, err := ep.MDIORead45(1, 1, 1); return drvtest.IsClosed(err) },
			"Port.MDIOWrite45": func() error {
				return drvtest.IsClosed(ep.MDIOWrite45(1, 1, 0, 0))
			},
			"Port.PHYAddr":           func() error { ep.PHYAddr(); return nil },           // the driver's memory only
			"Port.MSIXVectors":       func() error { ep.MSIXVectors(); return nil },       // a count, no register
			"Port.PHYChoice":         func() error { ep.PHYChoice(); return nil },         // the driver's memory only
			"Port.PHYSetup":          func() error { ep.PHYSetup(); return nil },          // the driver's memory only
			"Port.SwitchCPUPortLink": func() error { ep.SwitchCPUPortLink(); return nil }, // read at New
			"Port.PHYMode":           func() error { ep.PHYMode(); return nil },           // a fact of the spec and device tree found at New
			"Port.VFMessages":        func() error { ep.VFMessages(); return nil },        // a counter in the driver's memory
			"Port.UpdateLink":        func() error { return wantNil(ep.UpdateLink() == driver.Link{}, "UpdateLink not down") },
			"Port.TxDoorbells": func() error {
				return wantNil(ep.TxDoorbells(0) == 1, "TxDoorbells lost its count")
			},
			"TxQueue.RecycleDirect": func() error {
				return drvtest.IsClosed(txq.(driver.DirectRecycler).RecycleDirect(rxq))
			},
			"RxQueue.RxBurstStamped": func() error {
				n := rxq.(driver.RxTimestamper).RxBurstStamped(make([]*pool.Packet, 1), make([]driver.Time, 1))
				return wantNil(n == 0, "RxBurstStamped returned frames")
			},
			"TxQueue.TxStamped": func() error {
				return wantNil(!txq.(driver.TxTimestamper).TxStamped(nil, 1), "TxStamped took a frame")
			},
			"TxQueue.TxTimestamps": func() error {
				return wantNil(txq.(driver.TxTimestamper).TxTimestamps(make([]driver.TxStamp, 1)) == 0, "TxTimestamps reported stamps")
			},
			"TxQueue.Doorbells": func() error {
				d, ok := txq.(interface{ Doorbells() uint64 })
				return wantNil(ok && d.Doorbells() == 1, "Doorbells lost its count")
			},
		},
	})
}

func wantNil(ok bool, what string) error {
	if ok {
		return nil
	}
	return errors.New(what)
}

// TestConcurrentRxBurstReported: two goroutines polling one RX queue is
// caught at burst entry and reported as a driver.ConcurrentUse panic naming
// the port and queue; the ring is never corrupted: every frame is received
// exactly once and no buffer is lost. Run with -race.
func TestConcurrentRxBurstReported(t *testing.T) {
	// Serial: it spins goroutines against the data path until enough
	// bursts met them; alone it ends in milliseconds, beside other tests
	// on two cores it takes seconds.
	s := openSim(t, "", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	q := s.port.RxQueue(0)
	const frames = 512
	frame := udp4(t, 64, 1)
	cu := drvtest.TwoPollers(t, s.port, frames, func() { s.model.Port().Receive(frame) })
	if cu.Port != s.spec || cu.Queue != "rx 0" || cu.Call != "RxBurst" || !strings.Contains(cu.Error(), "one goroutine") {
		t.Errorf("report %+v (%v) does not name port %s, rx 0 and RxBurst", *cu, cu, s.spec)
	}
	st := s.stopCheck() // every buffer back: none handed out twice, none lost
	if got, drops := st.Rx.Packets, st.Rx.TotalDrops(); got+drops != frames {
		t.Errorf("%d frames received + %d dropped, want %d", got, drops, frames)
	}
	if dbl := q.Pool().Stats().RefusedDouble; dbl != 0 {
		t.Errorf("%d double frees: a buffer was handed out twice", dbl)
	}
}

// TestForeignBufferRefusedOnTx: a buffer from memory mapped for another DMA
// domain (here a second simulated IOMMU, as a FEC's or another VFIO
// container's buffer would be) is refused, freed back to its own pool and
// counted as unreachable; the frames around it go out.
func TestForeignBufferRefusedOnTx(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	other := simdma.NewIOMMU(false)
	reg, err := dma.Alloc(other, 64*pool.DefaultBufSize, dma.Options{Attr: dma.Attr{Name: "foreign"}})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	fp, err := pool.New(reg, pool.Config{Name: "foreign", Count: 64})
	if err != nil {
		t.Fatal(err)
	}
	own := s.port.RxQueue(0).Pool()
	frame := udp4(t, 100, 1)
	mk := func(pl *pool.Pool) *pool.Packet {
		pk := pl.Alloc()
		copy(pk.Append(len(frame)), frame)
		return pk
	}
	burst := []*pool.Packet{mk(own), mk(fp), mk(own)}
	if n := s.port.TxQueue(0).TxBurst(burst); n != 3 {
		t.Fatalf("TxBurst took %d of 3", n)
	}
	st := s.stopCheck()
	if st.Tx.Packets != 2 || st.Tx.Drops[driver.CauseUnreachable] != 1 {
		t.Errorf("sent %d, unreachable %d; want 2 sent and 1 refused", st.Tx.Packets, st.Tx.Drops[driver.CauseUnreachable])
	}
	if n := len(s.wire.take()); n != 2 {
		t.Errorf("%d frames on the wire, want 2", n)
	}
	if f := s.model.IOMMU().FaultCount(); f != 0 {
		t.Errorf("the device faulted %d times: the foreign buffer reached it", f)
	}
	if n := fp.InFlight(); n != 0 {
		t.Errorf("the refused buffer did not return to its pool: %d out", n)
	}
	if err := fp.Close(0); err != nil {
		t.Error(err)
	}
}

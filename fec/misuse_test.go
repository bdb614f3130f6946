package fec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/internal/drvtest"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim/simdma"
)

func wantNil(ok bool, what string) error {
	if ok {
		return nil
	}
	return errors.New(what)
}

// TestEveryMethodAfterClose: after Close, every exported method of the port
// and its queues fails closed (driver.ErrClosed or a zero value) without a
// register access, RxBurst does not read the unmapped ring, and a packet
// the application kept past Close is still readable: Close waited for it,
// reported it by holder and left its memory mapped.
func TestEveryMethodAfterClose(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	w := &capture{}
	m.SetWire(w)
	frame := udpFrame(t, 100, -1, 1)
	m.Port().Receive(frame)
	rxq, txq := p.RxQueue(0), p.TxQueue(0)
	pkts := make([]*driver.Packet, 4)
	if n := rxq.RxBurst(pkts); n != 1 {
		t.Fatalf("received %d frames, want 1", n)
	}
	out := rxq.Pool().Alloc()
	copy(out.Append(len(frame)), frame)
	if n := txq.TxBurst([]*pool.Packet{out}); n != 1 {
		t.Fatalf("TxBurst took %d of 1", n)
	}
	spec := p.Info().Name // before Close: a closed port's Info is zero
	err := p.Close()
	var le *pool.LeakError
	if !errors.As(err, &le) || le.Count != 1 || le.ByHolder[pool.Holder{Port: spec, Role: "rx queue 0 caller"}] != 1 {
		t.Fatalf("Close of %s with one received packet held: %v, want a LeakError naming rx0's caller", spec, err)
	}
	// The caller names the port: the error names the queue, the pool and
	// the holder by their roles.
	if msg := err.Error(); strings.Contains(msg, spec) || !strings.Contains(msg, `pool "rx0": 1 buffer never came back (1 held by rx queue 0 caller)`) {
		t.Errorf("Close's leak report %q: want the pool and the holder by their roles, the port not named", msg)
	}
	drvtest.AfterClose(t, drvtest.Closed{
		Port: p, Rx: rxq, Tx: txq, Held: pkts[0], Frame: frame,
		Touches: func() uint64 { s := m.Stats(); return s.RegReads + s.RegWrites },
		Extra: map[string]func() error{
			"Port.DecodeBD": func() error { // decodes bytes the caller gives: no device
				p.DecodeBD(true, make([]byte, 32))
				return nil
			},
			"Port.Registers":          func() error { return wantNil(p.Registers() == nil, "Registers read registers") },
			"Port.Rings":              func() error { return wantNil(p.Rings() == nil, "Rings read registers") },
			"Port.LiveRings":          func() error { return wantNil(p.LiveRings() == nil, "LiveRings read registers") },
			"Port.Clock":              func() error { _, err := p.Clock(); return drvtest.IsClosed(err) },
			"Port.SetTCMap":           func() error { return drvtest.IsClosed(p.SetTCMap(driver.TCMap{})) },
			"Port.SetGateList":        func() error { return drvtest.IsClosed(p.SetGateList(driver.GateList{})) },
			"Port.SetCBS":             func() error { return drvtest.IsClosed(p.SetCBS(1, 0)) },
			"Port.TSNState":           func() error { _, err := p.TSNState(); return drvtest.IsClosed(err) },
			"Port.TSNCaps":            func() error { return wantNil(p.TSNCaps().TrafficClasses == 0, "TSNCaps answered") },
			"Port.MDIORead":           func() error { _, err := p.MDIORead(1, 1); return drvtest.IsClosed(err) },
			"Port.MDIOWrite":          func() error { return drvtest.IsClosed(p.MDIOWrite(1, 0, 0)) },
			"Port.ProbeIRQ":           func() error { return drvtest.IsClosed(p.ProbeIRQ(0)) },
			"Port.PHYAddr":            func() error { p.PHYAddr(); return nil },            // the driver's memory only
			"Port.FixedLink":          func() error { p.FixedLink(); return nil },          // the driver's memory only
			"Port.IRQLines":           func() error { p.IRQLines(); return nil },           // the driver's memory only
			"Port.MDIOPath":           func() error { p.MDIOPath(); return nil },           // the driver's memory only
			"Port.PHYSetup":           func() error { p.PHYSetup(); return nil },           // the driver's memory only
			"Port.MACRestarts":        func() error { p.MACRestarts(); return nil },        // an atomic counter only
			"Port.MACRestartFailures": func() error { p.MACRestartFailures(); return nil }, // an atomic counter only
			"Port.UpdateLink":         func() error { return wantNil(p.UpdateLink() == driver.Link{}, "UpdateLink not down") },
			"TxQueue.RecycleDirect": func() error {
				return drvtest.IsClosed(txq.(driver.DirectRecycler).RecycleDirect(rxq))
			},
			"RxQueue.RxBurstStamped": func() error {
				return wantNil(rxq.(driver.RxTimestamper).RxBurstStamped(make([]*driver.Packet, 1), make([]driver.Time, 1)) == 0, "RxBurstStamped took a frame")
			},
			"TxQueue.TxStamped": func() error {
				return wantNil(!txq.(driver.TxTimestamper).TxStamped(nil, 1), "TxStamped took a frame")
			},
			"TxQueue.TxTimestamps": func() error {
				return wantNil(txq.(driver.TxTimestamper).TxTimestamps(make([]driver.TxStamp, 1)) == 0, "TxTimestamps reported stamps")
			},
		},
	})
}

// TestConcurrentRxBurstReported: two goroutines polling one RX queue is
// caught at burst entry and reported as a driver.ConcurrentUse panic naming
// the port and queue; the ring is never corrupted: every frame is received
// or counted, none twice, and no buffer is lost. Run with -race.
func TestConcurrentRxBurstReported(t *testing.T) {
	t.Parallel()
	// Engine mode: the model's DMA engine runs on its own goroutine, so
	// Receive from this one may race the pollers' RDAR writes, as on silicon.
	p, m := openSim(t, "soc=imx8mp&link-poll=0&mode=engine")
	q := p.RxQueue(0)
	const frames = 512
	frame := udpFrame(t, 64, -1, 1)
	cu := drvtest.TwoPollers(t, p, frames, func() { m.Port().Receive(frame) })
	if !strings.HasPrefix(cu.Port, "sim:fec") || cu.Queue != "rx 0" || cu.Call != "RxBurst" {
		t.Errorf("report %+v does not name the port, rx 0 and RxBurst", *cu)
	}
	st := p.Stats()
	if got, drops := st.Rx.Packets, st.Rx.TotalDrops(); got+drops != frames {
		t.Errorf("%d frames received + %d dropped, want %d", got, drops, frames)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := q.Pool().InFlight(); n != 0 {
		t.Errorf("%d buffers out after Stop: a buffer was lost", n)
	}
	if dbl := q.Pool().Stats().RefusedDouble; dbl != 0 {
		t.Errorf("%d double frees: a buffer was handed out twice", dbl)
	}
}

// txRefused sends [own, bad, bad, own] on a fresh port and checks that
// both bad frames are refused (the second following one of its own pool),
// freed to their pool and counted as unreachable, and the other two reach
// the wire.
func txRefused(t *testing.T, p *fec.Port, m *model.Device, bad *pool.Pool) {
	t.Helper()
	w := &capture{}
	m.SetWire(w)
	own := p.RxQueue(0).Pool()
	frame := udpFrame(t, 100, -1, 3)
	mk := func(pl *pool.Pool) *pool.Packet {
		pk := pl.Alloc()
		copy(pk.Append(len(frame)), frame)
		return pk
	}
	txq := p.TxQueue(0)
	if n := txq.TxBurst([]*pool.Packet{mk(own), mk(bad), mk(bad), mk(own)}); n != 4 {
		t.Fatalf("TxBurst took %d of 4", n)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if st.Tx.Packets != 2 || st.Tx.Drops[driver.CauseUnreachable] != 2 {
		t.Errorf("sent %d, unreachable %d; want 2 sent and 2 refused", st.Tx.Packets, st.Tx.Drops[driver.CauseUnreachable])
	}
	if n := len(w.take()); n != 2 {
		t.Errorf("%d frames on the wire, want 2", n)
	}
	if f := m.IOMMU().FaultCount(); f != 0 {
		t.Errorf("the device faulted %d times: the refused buffer reached it", f)
	}
	if n := bad.InFlight(); n != 0 {
		t.Errorf("the refused buffers did not return to their pool: %d out", n)
	}
	if err := bad.Close(0); err != nil {
		t.Error(err)
	}
}

// TestForeignBufferRefusedOnTx: a buffer mapped for another DMA domain
// (here a second simulated IOMMU, as an ENETC's buffer would be) is refused
// and counted; the frames around it go out.
func TestForeignBufferRefusedOnTx(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	reg, err := dma.Alloc(simdma.NewIOMMU(false), 64*pool.DefaultBufSize, dma.Options{Attr: dma.Attr{Name: "foreign"}})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	fp, err := pool.New(reg, pool.Config{Name: "foreign", Count: 64})
	if err != nil {
		t.Fatal(err)
	}
	txRefused(t, p, m, fp)
}

// highMapper maps through the device's own IOMMU (same domain) but hands
// out bus addresses 4 GiB higher, as memory above 4 GiB would have.
type highMapper struct{ *simdma.IOMMU }

const above4G = 1 << 32

func (h highMapper) Map(mem []byte, a dma.Attr) (dma.Mapping, error) {
	m, err := h.IOMMU.Map(mem, a)
	m.IOVA += above4G
	return m, err
}

func (h highMapper) Unmap(mem []byte, m dma.Mapping) error {
	m.IOVA -= above4G
	return h.IOMMU.Unmap(mem, m)
}

func (h highMapper) SyncForDevice(mem []byte, m dma.Mapping, off, n int) {
	m.IOVA -= above4G
	h.IOMMU.SyncForDevice(mem, m, off, n)
}

func (h highMapper) SyncForCPU(mem []byte, m dma.Mapping, off, n int) {
	m.IOVA -= above4G
	h.IOMMU.SyncForCPU(mem, m, off, n)
}

// The batched syncs too: the embedded ones would look the mapping up at
// the shifted address.
func (h highMapper) SyncSpansForDevice(mem []byte, m dma.Mapping, spans []dma.Span) {
	m.IOVA -= above4G
	h.IOMMU.SyncSpansForDevice(mem, m, spans)
}

func (h highMapper) SyncSpansForCPU(mem []byte, m dma.Mapping, spans []dma.Span) {
	m.IOVA -= above4G
	h.IOMMU.SyncSpansForCPU(mem, m, spans)
}

// TestTxBufferAbove4GRefused: a buffer the FEC's domain maps above 4 GiB
// cannot be named by a 32-bit BD address: it is refused and counted as
// unreachable instead of being sent from the truncated address.
func TestTxBufferAbove4GRefused(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	hm := highMapper{m.IOMMU()}
	if dma.DomainID(hm) != dma.DomainID(m.IOMMU()) {
		t.Fatal("the high mapper is not in the device's domain: the test would not isolate the 32-bit check")
	}
	reg, err := dma.Alloc(hm, 64*pool.DefaultBufSize, dma.Options{Attr: dma.Attr{Name: "high"}})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if reg.IOVA() < above4G {
		t.Fatalf("region at %#x, want above 4 GiB", reg.IOVA())
	}
	hp, err := pool.New(reg, pool.Config{Name: "high", Count: 64})
	if err != nil {
		t.Fatal(err)
	}
	txRefused(t, p, m, hp)
}

// TestLeakNamesAnotherPortsTxRing: a frame received on port A and queued
// on port B's TX ring is held there when A closes; A's leak report names
// B's ring, with B's port, where it named A's pool before.
func TestLeakNamesAnotherPortsTxRing(t *testing.T) {
	t.Parallel()
	a, ma := openSim(t, "soc=imx8mp&link-poll=0")
	b, mb := openSim(t, "soc=imx8mp&link-poll=0")
	mb.SetWire(&capture{})
	frame := udpFrame(t, 100, -1, 1)
	ma.Port().Receive(frame)
	pkts := make([]*driver.Packet, 4)
	if n := a.RxQueue(0).RxBurst(pkts); n != 1 {
		t.Fatalf("A received %d frames, want 1", n)
	}
	// B's ring keeps the frame until its next reclaim, which no burst
	// calls here.
	if n := b.TxQueue(0).TxBurst(pkts[:1]); n != 1 {
		t.Fatalf("B's TxBurst took %d of 1", n)
	}
	specA, specB := a.Info().Name, b.Info().Name
	err := a.Close()
	var le *pool.LeakError
	if !errors.As(err, &le) || le.Count != 1 || le.ByHolder[pool.Holder{Port: specB, Role: "tx ring 0"}] != 1 {
		t.Fatalf("Close of %s with its frame on %s's TX ring: %v, want a LeakError naming %s tx ring 0", specA, specB, err, specB)
	}
	if msg := err.Error(); !strings.Contains(msg, "1 held by "+specB+" tx ring 0") || strings.Contains(msg, specA) {
		t.Errorf("leak report %q: want B's ring with B's port, A's port left to the caller", msg)
	}
}

package fec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

// DMA1CFG and DMA2CFG (docs/hardware-fec.md §2.10): DMA_CLASS_EN bit 16,
// IDLE_SLOPE bits 15:0.
const (
	offDMA1CFG = 0x1D8
	offDMA2CFG = 0x1DC
	classEN    = 1 << 16
)

// The AVB classes' shapers on an i.MX8MP: an idle slope becomes the
// largest IDLE_SLOPE whose share of the link, s/(s+512), does not exceed
// it; the two classes may not take more than three quarters; 0 gives a
// class Linux's half back; the setting survives Stop and Start.
func TestFECAVBShaper(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&queues=3")
	ts, err := driver.TSNOf(p)
	if err != nil {
		t.Fatal(err)
	}
	if l := p.Link(); !l.Up || l.SpeedMbps != 1000 {
		t.Fatalf("link %v, want up at 1000 Mb/s", l)
	}
	if got := m.Read32(offDMA1CFG); got != classEN|0x200 {
		t.Fatalf("DMA1CFG at start %#x, want CLASS_EN | 0x200 (Linux's half)", got)
	}
	if err := ts.SetCBS(1, 200_000); err != nil { // 20%: 128/(128+512)
		t.Fatal(err)
	}
	if got := m.Read32(offDMA1CFG); got != classEN|128 {
		t.Errorf("DMA1CFG for 200 Mb/s %#x, want CLASS_EN | 128", got)
	}
	if err := ts.SetCBS(2, 600_000); err == nil || !strings.Contains(err.Error(), "more than 75%") {
		t.Errorf("20%% + 60%%: %v, want refused over 75%%", err)
	}
	if err := ts.SetCBS(2, 520_000); err != nil { // 52% rounds down to 50%: 512
		t.Fatal(err)
	}
	if got := m.Read32(offDMA2CFG); got != classEN|512 {
		t.Errorf("DMA2CFG for 520 Mb/s %#x, want CLASS_EN | 512 (50%%, not more than asked)", got)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if a, b := m.Read32(offDMA1CFG), m.Read32(offDMA2CFG); a != classEN|128 || b != classEN|512 {
		t.Errorf("after Stop and Start DMA1CFG %#x, DMA2CFG %#x; want the shapers kept", a, b)
	}
	st, err := ts.TSNState()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.CBS) != 2 || st.CBS[0].IdleSlopeKbps != 200_000 || st.CBS[1].IdleSlopeKbps != 500_000 || st.TCMap.NumTC != 3 {
		t.Errorf("state %+v: want classes 1 and 2 at 200000 and 500000 kbit/s, 3 classes", st)
	}
	if err := ts.SetCBS(1, 0); err != nil {
		t.Fatal(err)
	}
	if got := m.Read32(offDMA1CFG); got != classEN|0x200 {
		t.Errorf("DMA1CFG after idle slope 0 %#x, want Linux's CLASS_EN | 0x200", got)
	}
	for _, c := range []struct {
		tc   int
		kbps int64
		want string
	}{
		{0, 100_000, "ring 0 is best effort"},
		{3, 100_000, "TX rings 1 to 2"},
		{1, 1_000, "under the smallest share"},
		{1, 1_000_000, "the whole 1000 Mb/s link"},
	} {
		if err := ts.SetCBS(c.tc, c.kbps); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetCBS(%d, %d): %v, want an error containing %q", c.tc, c.kbps, err, c.want)
		}
	}
	if err := ts.SetGateList(driver.GateList{Entries: []driver.GateEntry{{Gates: 1, Interval: 1000}}}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("gate list on a FEC: %v, want ErrUnsupported", err)
	}
	m3 := driver.TCMap{NumTC: 2, Queues: []driver.QueueRange{{Count: 2, Offset: 0}, {Count: 1, Offset: 2}}}
	if err := ts.SetTCMap(m3); err == nil || !strings.Contains(err.Error(), "class is its TX ring") {
		t.Errorf("map with two queues in class 0: %v", err)
	}
}

// Parts without AVB rings have no shaper: the error names the SoC.
func TestFECAVBRefusedWithoutAVB(t *testing.T) {
	t.Parallel()
	p, _ := openSim(t, "soc=imx6ul")
	err := p.SetCBS(1, 100_000)
	if err == nil || !strings.Contains(err.Error(), "fsl,imx6ul-fec has no AVB rings") {
		t.Fatalf("CBS on an i.MX6UL: %v, want refused naming its compatible", err)
	}
	if c := p.TSNCaps(); c.CBS || c.TrafficClasses != 0 {
		t.Errorf("caps on an i.MX6UL %+v, want none", c)
	}
}

// The model shapes what the driver set: class 1 at IDLE_SLOPE 128 (20% of
// 1 Gb/s) leaves one 100-byte frame (992 bits on the wire) every 4960 ns,
// 200 Mb/s; ring 0's frames are not shaped and go back to back.
func TestFECAVBShapedRate(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&queues=3&timeline=manual&link-poll=0")
	w := &capture{}
	m.SetWire(w)
	if err := p.SetCBS(1, 200_000); err != nil {
		t.Fatal(err)
	}
	send := func(q, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			pk := p.RxQueue(0).Pool().Alloc()
			f := pk.Append(100)
			clear(f)
			copy(f, []byte{2, 0, 0, 0, 0, 0xb, 2, 0, 0, 0, 0, 0xa, 0x88, 0xb5})
			if p.TxQueue(q).TxBurst([]*driver.Packet{pk}) != 1 {
				t.Fatalf("TX queue %d refused frame %d", q, i)
			}
		}
		p.TxQueue(q).Reclaim()
	}
	send(1, 10)
	send(0, 5)
	deps := m.Departures()
	if len(deps) != 15 || len(w.take()) != 15 {
		t.Fatalf("%d departures, want 15", len(deps))
	}
	for i := 1; i < 10; i++ {
		if deps[i].Ring != 1 || deps[i].Start-deps[i-1].Start != 4960 {
			t.Errorf("ring 1 frame %d left %d ns after the one before (ring %d), want 4960", i, deps[i].Start-deps[i-1].Start, deps[i].Ring)
		}
	}
	rate := float64(10*992) / float64(deps[9].Start+4960-deps[0].Start) * 1000
	if rate != 200 {
		t.Errorf("ring 1 at %.1f Mb/s on the wire, want 200", rate)
	}
	for i := 11; i < 15; i++ {
		if deps[i].Ring != 0 || deps[i].Start-deps[i-1].Start != 992 {
			t.Errorf("ring 0 frame %d left %d ns after the one before, want 992 (back to back)", i-10, deps[i].Start-deps[i-1].Start)
		}
	}
}

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

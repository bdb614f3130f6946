package fec_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/internal/devtree"
)

// newENET builds an i.MX6UL port named name on model m with device-tree
// node ofNode; the caller closes it.
func newENET(t *testing.T, name string, m *model.Device, ofNode, opts string) (*fec.Port, error) {
	t.Helper()
	spec, err := driver.ParseSpec("platform:" + name + opts)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver.Device{Spec: spec, Backend: "sim", Bus: "platform", Compatible: []string{"fsl,imx6ul-fec", "fsl,imx6q-fec"},
		Regions: []driver.Regs{m}, Mapper: m.IOMMU(), NonCoherent: true, Node: devtree.At(ofNode)}
	return fec.New(d, driver.Config{RxRingSize: 16, TxRingSize: 16, PoolSize: 64})
}

// TestSharedMDIOInProcess: on an i.MX6UL-EVK (ENET1's PHY at address 2 on
// ENET2's MDIO bus, ENET1's own MDIO pins unconnected), with ENET2 a port
// of the process, ENET1 reaches its PHY through ENET2's bus: its link
// follows its PHY (frames pass at that speed, a renegotiation reaches its
// MAC), every management frame runs on ENET2's MAC, the two ports' link
// polls share the bus safely, and MDIOPath says so. When ENET2 closes,
// ENET1's PHY reads fail naming the closed owner and its link goes down;
// without ENET2 open, ENET1 is refused with what to do.
func TestSharedMDIOInProcess(t *testing.T) {
	t.Parallel()
	enet1, enet2 := fakeDT(t, nil)
	m2, err := model.New(model.Config{Name: "enet2", SoC: "imx6ul", PHYAddr: 1, LinkSpeed: 100})
	if err != nil {
		t.Fatal(err)
	}
	m1, err := model.New(model.Config{Name: "enet1", SoC: "imx6ul", PHYAddr: 2, PHYBus: m2, LinkSpeed: 10})
	if err != nil {
		t.Fatal(err)
	}

	// ENET1 alone: nobody drives ENET2's bus.
	if _, err := newENET(t, "2188000.ethernet", m1, enet1, ""); err == nil ||
		!strings.Contains(err.Error(), "ethernet@20b4000") || !strings.Contains(err.Error(), "open that MAC's port first") || !strings.Contains(err.Error(), "phy=none") {
		t.Fatalf("ENET1 without ENET2: %v", err)
	}

	p2, err := newENET(t, "20b4000.ethernet", m2, enet2, "?link-poll=0")
	if err != nil {
		t.Fatal(err)
	}
	p1, err := newENET(t, "2188000.ethernet", m1, enet1, "?link-poll=0")
	if err != nil {
		t.Fatalf("ENET1 with ENET2 open: %v", err)
	}
	defer p1.Close()
	if p1.PHYAddr() != 2 {
		t.Fatalf("ENET1's PHY %d, want 2 (its phy-handle)", p1.PHYAddr())
	}
	if mp := p1.MDIOPath(); mp.Kind != "shared" || !strings.HasPrefix(mp.Port, "platform:20b4000.ethernet") || !strings.HasSuffix(mp.Node, "ethernet@20b4000") || !strings.Contains(mp.String(), "shared in process") {
		t.Fatalf("ENET1's MDIO path %+v (%s)", mp, mp)
	}
	if mp := p2.MDIOPath(); mp.Kind != "own" {
		t.Fatalf("ENET2's MDIO path %+v", mp)
	}
	for _, p := range []*fec.Port{p1, p2} {
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if l := p1.Link(); !l.Up || l.SpeedMbps != 10 {
		t.Fatalf("ENET1's link %v, want its PHY's 10 Mb/s", l)
	}
	if l := p2.Link(); !l.Up || l.SpeedMbps != 100 {
		t.Fatalf("ENET2's link %v, want its PHY's 100 Mb/s", l)
	}
	checkSpeedBits(t, p1, m1, 10, "ENET1 through ENET2's bus")
	checkSpeedBits(t, p2, m2, 100, "ENET2")

	// ENET1's PHY renegotiates: ENET1 follows it, over ENET2's MAC only.
	own1, own2 := m1.Stats().MDIOFrames, m2.Stats().MDIOFrames
	if err := m1.SetLinkSpeed(100); err != nil {
		t.Fatal(err)
	}
	if l := p1.UpdateLink(); l.SpeedMbps != 100 {
		t.Fatalf("ENET1 after its PHY went to 100 Mb/s: %v", l)
	}
	checkSpeedBits(t, p1, m1, 100, "ENET1 after renegotiation")
	if m1.Stats().MDIOFrames != own1 || m2.Stats().MDIOFrames == own2 {
		t.Fatalf("management frames: ENET1's MAC ran %d, ENET2's %d; want none on ENET1's, all on ENET2's",
			m1.Stats().MDIOFrames-own1, m2.Stats().MDIOFrames-own2)
	}

	// Both ports poll their links at once: one frame at a time on the bus.
	var wg sync.WaitGroup
	for _, p := range []*fec.Port{p1, p2} {
		wg.Add(1)
		go func(p *fec.Port) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if l := p.UpdateLink(); !l.Up {
					t.Errorf("%s: link down during concurrent polls", p.Info().Name)
					return
				}
			}
		}(p)
	}
	wg.Wait()

	// ENET2 closes: ENET1 loses its PHY, and says why.
	if err := p2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p1.MDIORead(2, 1); !errors.Is(err, driver.ErrClosed) || !strings.Contains(err.Error(), "20b4000") {
		t.Fatalf("ENET1's PHY read after ENET2 closed: %v", err)
	}
	if l := p1.UpdateLink(); l.Up {
		t.Fatalf("ENET1's link %v with its MDIO bus gone", l)
	}
}

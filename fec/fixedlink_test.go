package fec_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/internal/devtree"
)

// newFixed builds and starts an i.MX6UL port (RMII by default, as on the
// EVK) on a model whose link partner runs at speed, with device-tree node
// ofNode and spec options opts.
func newFixed(t *testing.T, speed int, ofNode, opts string) (*fec.Port, *model.Device, error) {
	t.Helper()
	m, err := model.New(model.Config{Name: "fixed", SoC: "imx6ul", LinkSpeed: speed})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := driver.ParseSpec("platform:20b4000.ethernet" + opts)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver.Device{Spec: spec, Backend: "sim", Bus: "platform", Compatible: []string{"fsl,imx6ul-fec", "fsl,imx6q-fec"},
		Regions: []driver.Regs{m}, Mapper: m.IOMMU(), NonCoherent: true, Node: devtree.At(ofNode)}
	p, err := fec.New(d, driver.Config{RxRingSize: 16, TxRingSize: 16, PoolSize: 64})
	if err != nil {
		return nil, m, err
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := p.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	return p, m, nil
}

// fixedDT is fakeDT's ENET2 node with extra and without its phy-handle:
// a node that describes a fixed link.
func fixedDT(t *testing.T, extra map[string][]byte) string {
	t.Helper()
	_, enet2 := fakeDT(t, extra)
	if err := os.Remove(filepath.Join(enet2, "phy-handle")); err != nil {
		t.Fatal(err)
	}
	return enet2
}

// TestFixedLinkSpeed: a port without a PHY runs at the device tree's
// fixed-link speed and duplex (subnode or the older five-cell property,
// ethernet-controller.yaml), or at option fixed-link=, else at the top
// speed of its MAC-PHY interface, never faster: on the i.MX6UL's RMII a
// fixed link is 100 Mb/s without ECR.SPEED, and frames pass the model; a
// speed the interface cannot carry is refused, naming what to give.
func TestFixedLinkSpeed(t *testing.T) {
	t.Parallel()
	cell := func(v ...uint32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.BigEndian.AppendUint32(b, x)
		}
		return b
	}
	const node = "soc/bus@2000000/ethernet@20b4000/"
	sub := func(speed uint32, full bool) map[string][]byte {
		m := map[string][]byte{node + "fixed-link/speed": cell(speed)}
		if full {
			m[node+"fixed-link/full-duplex"] = []byte{}
		}
		return m
	}
	for _, c := range []struct {
		name  string
		dt    map[string][]byte // nil: no device tree
		opts  string
		speed int
		full  bool
		from  string
	}{
		{"phy=none, RMII", nil, "?phy=none", 100, true, "phy-mode rmii"},
		{"fixed-link node 10 full", sub(10, true), "", 10, true, "device tree"},
		{"fixed-link node 100 half", sub(100, false), "", 100, false, "device tree"},
		{"fixed-link node with phy=none", sub(10, true), "?phy=none", 10, true, "device tree"},
		{"fixed-link property", map[string][]byte{node + "fixed-link": cell(0, 1, 100, 0, 0)}, "", 100, true, "device tree"},
		{"option over the tree", sub(100, true), "?fixed-link=10,half", 10, false, "option"},
		{"option, RGMII", nil, "?fixed-link=1000&phy-mode=rgmii", 1000, true, "option"},
		{"phy=none, RGMII", nil, "?phy=none&phy-mode=rgmii", 1000, true, "phy-mode rgmii"},
	} {
		of := ""
		if c.dt != nil {
			of = fixedDT(t, c.dt)
		}
		p, m, err := newFixed(t, c.speed, of, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.PHYAddr() != -1 {
			t.Fatalf("%s: PHY %d, want a fixed link", c.name, p.PHYAddr())
		}
		l, from, ok := p.FixedLink()
		if want := (driver.Link{Up: true, SpeedMbps: c.speed, FullDuplex: c.full}); !ok || l != want || p.Link() != want {
			t.Fatalf("%s: fixed link %v (Link %v), want %v", c.name, l, p.Link(), want)
		}
		if !strings.Contains(from, c.from) {
			t.Fatalf("%s: fixed link set by %q, want %q", c.name, from, c.from)
		}
		checkSpeedBits(t, p, m, c.speed, c.name)
		if tcr := regValue(t, p, "TCR"); (tcr&(1<<2) != 0) != c.full {
			t.Fatalf("%s: TCR %#x: FDEN is %v for full duplex %v", c.name, tcr, tcr&(1<<2) != 0, c.full)
		}
	}

	// A scan that finds no PHY (ENET1's own MDIO pins reach none: its PHY
	// is on ENET2's bus) runs the fixed link at RMII's 100 Mb/s.
	m2, err := model.New(model.Config{Name: "enet2", SoC: "imx6ul", PHYAddr: 1, LinkSpeed: 100})
	if err != nil {
		t.Fatal(err)
	}
	m1, err := model.New(model.Config{Name: "enet1", SoC: "imx6ul", PHYAddr: 2, PHYBus: m2, LinkSpeed: 100})
	if err != nil {
		t.Fatal(err)
	}
	p1, err := newENET(t, "2188000.ethernet", m1, "", "?phy=scan&link-poll=0")
	if err != nil {
		t.Fatal(err)
	}
	defer p1.Close()
	if err := p1.Start(); err != nil {
		t.Fatal(err)
	}
	if l, from, ok := p1.FixedLink(); !ok || l.SpeedMbps != 100 || !strings.Contains(from, "rmii") {
		t.Fatalf("scan found no PHY: fixed link %v from %q (ok %v), want 100 Mb/s from phy-mode rmii", l, from, ok)
	}
	checkSpeedBits(t, p1, m1, 100, "scan found no PHY")

	// Refused: faster than RMII carries, from the tree or the option.
	of := fixedDT(t, sub(1000, true))
	_, _, err = newFixed(t, 1000, of, "")
	if err == nil || !strings.Contains(err.Error(), "1000 Mb/s") || !strings.Contains(err.Error(), "rmii") || !strings.Contains(err.Error(), "fixed-link=100") {
		t.Fatalf("fixed-link 1000 over RMII: %v", err)
	}
	_, _, err = newFixed(t, 1000, "", "?fixed-link=1000")
	if err == nil || !strings.Contains(err.Error(), "option fixed-link=") || !strings.Contains(err.Error(), "rmii") {
		t.Fatalf("fixed-link=1000 over RMII: %v", err)
	}
	of = fixedDT(t, sub(2500, true))
	if _, _, err = newFixed(t, 100, of, ""); err == nil || !strings.Contains(err.Error(), "2500") {
		t.Fatalf("fixed-link 2500: %v", err)
	}
	var oe *driver.OptionError
	for _, bad := range []string{"?fixed-link=fast", "?fixed-link=100,quarter", "?fixed-link=2500", "?fixed-link=100&phy=3"} {
		if _, _, err = newFixed(t, 100, "", bad); !errors.As(err, &oe) || oe.Option != "fixed-link" {
			t.Fatalf("%s: %v, want an error naming option fixed-link", bad, err)
		}
	}
}

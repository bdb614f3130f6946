package fec_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/internal/devtree"
)

// fakeDT writes an i.MX6UL-EVK-like device tree: two ENETs, both PHYs on
// ENET2's MDIO bus (ENET1's PHY at address 2, ENET2's at 1), and returns
// the two ENET nodes. extra adds properties (path relative to the base:
// contents).
func fakeDT(t *testing.T, extra map[string][]byte) (enet1, enet2 string) {
	t.Helper()
	base := filepath.Join(t.TempDir(), "sys/firmware/devicetree/base")
	cell := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	files := map[string][]byte{
		"soc/bus@2000000/ethernet@2188000/compatible":                     []byte("fsl,imx6ul-fec\x00fsl,imx6q-fec\x00"),
		"soc/bus@2000000/ethernet@2188000/phy-handle":                     cell(0x10),
		"soc/bus@2000000/ethernet@20b4000/compatible":                     []byte("fsl,imx6ul-fec\x00fsl,imx6q-fec\x00"),
		"soc/bus@2000000/ethernet@20b4000/phy-handle":                     cell(0x11),
		"soc/bus@2000000/ethernet@20b4000/mdio/ethernet-phy@2/reg":        cell(2),
		"soc/bus@2000000/ethernet@20b4000/mdio/ethernet-phy@2/phandle":    cell(0x10),
		"soc/bus@2000000/ethernet@20b4000/mdio/ethernet-phy@1/reg":        cell(1),
		"soc/bus@2000000/ethernet@20b4000/mdio/ethernet-phy@1/phandle":    cell(0x11),
		"soc/bus@2000000/ethernet@20b4000/mdio/ethernet-phy@1/compatible": []byte("ethernet-phy-ieee802.3-c22\x00"),
		"soc/bus@2000000/ethernet@20b4000/mdio/ethernet-phy@2/compatible": []byte("ethernet-phy-ieee802.3-c22\x00"),
		"soc/bus@2000000/ethernet@20b4000/phy-mode":                       []byte("rmii\x00"),
		"soc/bus@2000000/ethernet@2188000/phy-mode":                       []byte("rmii\x00"),
	}
	for k, v := range extra {
		files[k] = v
	}
	for p, b := range files {
		f := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if b == nil {
			if err := os.MkdirAll(f, 0o755); err != nil { // a subnode
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(base, "soc/bus@2000000/ethernet@2188000"), filepath.Join(base, "soc/bus@2000000/ethernet@20b4000")
}

// newOnBus builds a port on a model whose MDIO bus has the port's PHY at
// phyAddr and further PHYs at shared, with the device-tree node ofNode and
// spec options opts.
func newOnBus(t *testing.T, phyAddr int, shared []int, ofNode, opts string) (*fec.Port, error) {
	t.Helper()
	m, err := model.New(model.Config{Name: "bus", SoC: "imx6ul", PHYAddr: phyAddr, SharedPHYs: shared, LinkSpeed: 100})
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
	if err == nil {
		t.Cleanup(func() {
			if err := p.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
	return p, err
}

// TestPHYFromDeviceTree: on a shared MDIO bus (two PHYs answer) the port
// takes the PHY its node's phy-handle names, not the lowest address that
// answers; without a phy-handle or phy= it refuses to guess and names
// phy=; a phy-handle to a PHY on another MAC's bus is refused with the
// two ways out.
func TestPHYFromDeviceTree(t *testing.T) {
	t.Parallel()
	_, enet2 := fakeDT(t, nil)

	// ENET2's own PHY is at 1; ENET1's at 2 answers on the same bus. A
	// scan would take 1 for either port: the device tree decides.
	p, err := newOnBus(t, 1, []int{2}, enet2, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.PHYAddr() != 1 {
		t.Fatalf("PHY %d, want 1 from phy-handle", p.PHYAddr())
	}
	if l := p.UpdateLink(); !l.Up || l.SpeedMbps != 100 {
		t.Fatalf("link %v through the device tree's PHY", l)
	}

	// phy= wins over a lower address that answers.
	p, err = newOnBus(t, 3, []int{0}, "", "?phy=3")
	if err != nil || p.PHYAddr() != 3 {
		t.Fatalf("phy=3 on a bus with a PHY at 0: PHY %v, %v", p, err)
	}

	// No device tree, two PHYs answer: refused, naming phy= and both.
	_, err = newOnBus(t, 1, []int{2}, "", "")
	if err == nil || !strings.Contains(err.Error(), "phy=N") || !strings.Contains(err.Error(), "[1 2]") {
		t.Fatalf("ambiguous bus without phy-handle: %v", err)
	}
	// A node with neither phy-handle nor fixed-link is no help either.
	bare, _ := fakeDT(t, map[string][]byte{})
	os.Remove(filepath.Join(bare, "phy-handle"))
	_, err = newOnBus(t, 1, []int{2}, bare, "")
	if err == nil || !strings.Contains(err.Error(), "phy=N") {
		t.Fatalf("ambiguous bus, node without phy-handle: %v", err)
	}

	// ENET1's phy-handle points into ENET2's mdio node: its own MDIO
	// registers do not reach that PHY, and neither a port of this process
	// nor a kernel interface drives ENET2 (a fresh tree: the ENET2 port
	// above is on the other one).
	enet1, _ := fakeDT(t, nil)
	_, err = newOnBus(t, 1, []int{2}, enet1, "")
	if err == nil || !strings.Contains(err.Error(), "ethernet@20b4000") || !strings.Contains(err.Error(), "phy=none") || !strings.Contains(err.Error(), "phy=scan") {
		t.Fatalf("phy-handle on another MAC's bus: %v", err)
	}

	// phy=scan: the port's own bus, the device tree ignored (QEMU 7.2
	// gives ENET1 a PHY of its own although the board's tree puts it on
	// ENET2's bus).
	p, err = newOnBus(t, 0, nil, enet1, "?phy=scan")
	if err != nil || p.PHYAddr() != 0 {
		t.Fatalf("phy=scan: %v, %v", p, err)
	}
	if _, err = newOnBus(t, 0, []int{2}, enet1, "?phy=scan"); err == nil || !strings.Contains(err.Error(), "[0 2]") {
		t.Fatalf("phy=scan on a bus with two PHYs: %v", err)
	}

	// phy=none: a fixed link, no MDIO scan.
	p, err = newOnBus(t, 1, []int{2}, enet1, "?phy=none")
	if err != nil || p.PHYAddr() != -1 {
		t.Fatalf("phy=none: %v, %v", p, err)
	}
	if l := p.UpdateLink(); !l.Up || l.SpeedMbps != 100 {
		t.Fatalf("fixed link %v, want up at RMII's top speed, 100 Mb/s", l)
	}

	// A fixed-link subnode: no PHY either.
	_, fixed := fakeDT(t, map[string][]byte{"soc/bus@2000000/ethernet@20b4000/fixed-link/speed": {0, 0, 0, 100}})
	p, err = newOnBus(t, 1, []int{2}, fixed, "")
	if err != nil || p.PHYAddr() != -1 {
		t.Fatalf("fixed-link node: %v, %v", p, err)
	}

	// A phy-handle that names no node is an error naming the property.
	_, dangling := fakeDT(t, map[string][]byte{"soc/bus@2000000/ethernet@20b4000/phy-handle": {0, 0, 0, 0x99}})
	_, err = newOnBus(t, 1, nil, dangling, "")
	if err == nil || !strings.Contains(err.Error(), "phy-handle") || !strings.Contains(err.Error(), "0x99") {
		t.Fatalf("dangling phy-handle: %v", err)
	}

	// One PHY, no device tree: the scan takes it, as before.
	p, err = newOnBus(t, 5, nil, "", "")
	if err != nil || p.PHYAddr() != 5 {
		t.Fatalf("single PHY at 5: %v, %v", p, err)
	}
}

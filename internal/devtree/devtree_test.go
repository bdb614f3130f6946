package devtree

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTree(t *testing.T, files map[string][]byte) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "sys/firmware/devicetree/base")
	for p, b := range files {
		f := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

func cell(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// ReadPHY follows phy-handle to the PHY node and says whose bus it is on:
// a MAC's mdio subnode names that MAC; a central MDIO controller (the
// LS1028A's 1957:ee01 function) names none, and CentralMDIO says so.
func TestReadPHY(t *testing.T) {
	base := writeTree(t, map[string][]byte{
		"pcie/ethernet@0,0/phy-handle":                  cell(7),
		"pcie/ethernet@0,0/mdio/ethernet-phy@4/reg":     cell(4),
		"pcie/ethernet@0,0/mdio/ethernet-phy@4/phandle": cell(7),
		"pcie/ethernet@0,1/phy-handle":                  cell(8),
		"pcie/mdio@0,3/compatible":                      []byte("pci1957,ee01\x00fsl,enetc-mdio\x00"),
		"pcie/mdio@0,3/ethernet-phy@2/reg":              cell(2),
		"pcie/mdio@0,3/ethernet-phy@2/phandle":          cell(8),
		"pcie/ethernet@0,2/fixed-link/speed":            cell(2500),
	})
	own, err := At(filepath.Join(base, "pcie/ethernet@0,0")).ReadPHY()
	if err != nil || !own.Found || own.Addr != 4 || own.Bus != At(filepath.Join(base, "pcie/ethernet@0,0")) || own.Prop != "phy-handle" {
		t.Errorf("own mdio: %+v, %v", own, err)
	}
	c, err := At(filepath.Join(base, "pcie/ethernet@0,1")).ReadPHY()
	if err != nil || !c.Found || c.Addr != 2 || c.Bus.Exists() || !c.Parent.CentralMDIO() {
		t.Errorf("central MDIO: %+v, %v", c, err)
	}
	f, err := At(filepath.Join(base, "pcie/ethernet@0,2")).ReadPHY()
	if err != nil || !f.Found || !f.Fixed || f.Link.Speed != 2500 {
		t.Errorf("fixed-link: %+v, %v", f, err)
	}
	if _, err := At(filepath.Join(t.TempDir(), "ethernet")).ReadPHY(); err != nil {
		t.Errorf("a node with nothing: %v", err)
	}
}

// TestNode: the reader's answers a driver acts on. The zero Node has no
// property; a fixed link is read from a subnode or from the older
// five-cell property, a malformed one is an error naming the layout; reg
// is decoded with the parent's cell counts; of_node links resolve to the
// node; a phandle reference finds its referrers.
func TestNode(t *testing.T) {
	var zero Node
	if zero.Exists() || zero.Has("fixed-link") || zero.Strings("compatible") != nil {
		t.Error("the zero Node has properties")
	}
	if _, err := zero.U32("reg"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("zero Node U32: %v, want fs.ErrNotExist", err)
	}
	if p, err := zero.ReadPHY(); err != nil || p.Found {
		t.Errorf("zero Node ReadPHY: %+v, %v", p, err)
	}

	base := writeTree(t, map[string][]byte{
		"#address-cells":                      cell(2),
		"#size-cells":                         cell(2),
		"soc/#address-cells":                  cell(1),
		"soc/#size-cells":                     cell(1),
		"soc/eth@1/reg":                       append(cell(0x2188000), cell(0x4000)...),
		"soc/eth@1/fixed-link/speed":          cell(100),
		"soc/eth@1/fixed-link/pause":          nil,
		"soc/eth@1/phandle":                   cell(5),
		"soc/eth@1/status":                    []byte("okay\x00"),
		"soc/eth@2/fixed-link":                append(append(cell(0), cell(1)...), append(cell(1000), append(cell(0), cell(1)...)...)...),
		"soc/eth@3/fixed-link":                append(cell(0), cell(1)...),
		"soc/switch/ports/port@4/ethernet":    cell(5),
		"soc/switch/ports/port@4/status":      []byte("disabled\x00"),
		"soc/switch/ports/port@5/ethernet":    cell(6),
		"memory@80000000/device_type":         []byte("memory\x00"),
		"memory@80000000/reg":                 append(cell(0), append(cell(0x80000000), append(cell(0), cell(0x40000000)...)...)...),
		"reserved-memory/dma@f0000000/no-map": nil,
	})
	at := func(p string) Node { return At(filepath.Join(base, p)) }

	l, ok, err := at("soc/eth@1").FixedLink()
	if err != nil || !ok || l != (FixedLink{Speed: 100, Pause: true}) {
		t.Errorf("fixed-link subnode: %+v %v %v", l, ok, err)
	}
	l, ok, err = at("soc/eth@2").FixedLink()
	if err != nil || !ok || l != (FixedLink{Speed: 1000, Full: true, AsymPause: true}) {
		t.Errorf("five-cell fixed-link: %+v %v %v", l, ok, err)
	}
	if _, _, err := at("soc/eth@3").FixedLink(); err == nil || !strings.Contains(err.Error(), "five cells") {
		t.Errorf("a two-cell fixed-link: %v, want an error naming the five cells", err)
	}
	if p, err := at("soc/eth@2").ReadPHY(); err != nil || !p.Fixed || p.Link.Speed != 1000 {
		t.Errorf("ReadPHY of a fixed link: %+v %v", p, err)
	}

	if r, err := at("soc/eth@1").Reg(); err != nil || len(r) != 1 || r[0] != (Range{0x2188000, 0x4000}) {
		t.Errorf("reg with one address and one size cell: %v %v", r, err)
	}
	if r, err := at("memory@80000000").Reg(); err != nil || len(r) != 1 || r[0] != (Range{0x80000000, 0x40000000}) {
		t.Errorf("reg with two address and two size cells: %v %v", r, err)
	}
	var names []string
	for _, c := range At(base).Children() {
		names = append(names, c.Name())
	}
	if strings.Join(names, ",") != "memory@80000000,reserved-memory,soc" {
		t.Errorf("children of the root: %v", names)
	}

	refs, err := at("soc/eth@1").Referrers("ethernet")
	if err != nil || len(refs) != 1 || !refs[0].Same(at("soc/switch/ports/port@4")) || refs[0].Enabled() || !at("soc/eth@1").Enabled() {
		t.Errorf("referrers of eth@1: %v %v", refs, err)
	}
	if got := at("soc/eth@1").Rel(); got != "/soc/eth@1" {
		t.Errorf("Rel %q", got)
	}

	dev := filepath.Join(t.TempDir(), "2188000.ethernet")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	if n, err := OfNode(dev); err != nil || n.Exists() {
		t.Errorf("a device without of_node: %v %v", n, err)
	}
	if err := os.Symlink(filepath.Join(base, "soc/eth@1"), filepath.Join(dev, "of_node")); err != nil {
		t.Fatal(err)
	}
	n, err := OfNode(dev)
	if err != nil || n.Rel() != "/soc/eth@1" {
		t.Errorf("of_node: %v %v", n, err)
	}
	if v, err := n.U32("phandle"); err != nil || v != 5 {
		t.Errorf("a property through the resolved node: %d %v", v, err)
	}
}

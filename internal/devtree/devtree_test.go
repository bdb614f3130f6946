package devtree

import (
	"encoding/binary"
	"os"
	"path/filepath"
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
	own, err := ReadPHY(filepath.Join(base, "pcie/ethernet@0,0"))
	if err != nil || !own.Found || own.Addr != 4 || own.Bus != filepath.Join(base, "pcie/ethernet@0,0") || own.Prop != "phy-handle" {
		t.Errorf("own mdio: %+v, %v", own, err)
	}
	c, err := ReadPHY(filepath.Join(base, "pcie/ethernet@0,1"))
	if err != nil || !c.Found || c.Addr != 2 || c.Bus != "" || !CentralMDIO(c.Parent) {
		t.Errorf("central MDIO: %+v, %v", c, err)
	}
	f, err := ReadPHY(filepath.Join(base, "pcie/ethernet@0,2"))
	if err != nil || !f.Found || !f.Fixed {
		t.Errorf("fixed-link: %+v, %v", f, err)
	}
	if _, err := ReadPHY(filepath.Join(t.TempDir(), "ethernet")); err != nil {
		t.Errorf("a node with nothing: %v", err)
	}
}

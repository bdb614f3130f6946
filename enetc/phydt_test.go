package enetc_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/sim"
)

// ls1028aDT writes an LS1028A-like device tree: PF0 (ethernet@0,0,
// SGMII with in-band AN) whose phy-handle names phandle 0x20, and the
// central MDIO function (mdio@0,3). onCentral puts the PHY node (reg addr,
// phandle 0x20) on the central MDIO, as mainline's RDB tree does since
// 2021; else in the port's own mdio subnode, as older trees did. It
// returns PF0's node.
func ls1028aDT(t *testing.T, addr uint32, onCentral bool) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "sys/firmware/devicetree/base")
	cell := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	pcie := "soc/pcie@1f0000000"
	phy := pcie + "/ethernet@0,0/mdio/ethernet-phy@" + fmt.Sprint(addr)
	if onCentral {
		phy = pcie + "/mdio@0,3/ethernet-phy@" + fmt.Sprint(addr)
	}
	files := map[string][]byte{
		pcie + "/ethernet@0,0/phy-handle":          cell(0x20),
		pcie + "/ethernet@0,0/phy-connection-type": []byte("sgmii\x00"),
		pcie + "/ethernet@0,0/managed":             []byte("in-band-status\x00"),
		pcie + "/mdio@0,3/compatible":              []byte("pci1957,ee01\x00fsl,enetc-mdio\x00"),
		phy + "/reg":                               cell(addr),
		phy + "/phandle":                           cell(0x20),
	}
	for p, b := range files {
		f := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(base, pcie, "ethernet@0,0")
}

// TestPHYFromDeviceTree: the PHY is the one the device tree's phy-handle
// names, not the first that answers (the model's PHY answers at
// sim.ENETCPHYAddr; the tree names another address); a phy-handle into the
// central MDIO function, which gopmd does not drive, is refused with what
// to do, and phy=none then takes the link from the PCS; PHYChoice says why.
func TestPHYFromDeviceTree(t *testing.T) {
	other := uint32(sim.ENETCPHYAddr + 3)
	s := openSim(t, "wiring=sgmii&of-node="+ls1028aDT(t, other, false), driver.Config{})
	if a := s.port.PHYAddr(); a != int(other) {
		t.Errorf("PHY at %d, want %d from the device tree's phy-handle", a, other)
	}
	if why := s.port.PHYChoice(); !strings.Contains(why, "phy-handle") || !strings.Contains(why, "own MDIO") {
		t.Errorf("PHYChoice %q: want it to name the phy-handle on the port's own MDIO", why)
	}
	s.close(false)

	central := ls1028aDT(t, uint32(sim.ENETCPHYAddr), true)
	_, err := driver.OpenConfig(fmt.Sprintf("sim:enetc%d?wiring=sgmii&link-poll=0&chip=%s&of-node=%s", 400+irqSeq.Add(1), testChip(t), central), driver.Config{})
	if err == nil || !strings.Contains(err.Error(), "central MDIO") || !strings.Contains(err.Error(), "phy=none") || !strings.Contains(err.Error(), "mdio@0,3") {
		t.Fatalf("phy-handle on the central MDIO: %v, want a refusal naming the central MDIO node and phy=none", err)
	}

	s = openSim(t, "wiring=sgmii&phy=none&of-node="+central, driver.Config{})
	if a := s.port.PHYAddr(); a != -1 {
		t.Errorf("phy=none: PHY at %d", a)
	}
	if l := s.port.UpdateLink(); !l.Up || l.SpeedMbps != 1000 {
		t.Errorf("phy=none on SGMII with in-band AN: link %+v, want up at 1000 from the PCS", l)
	}
	if why := s.port.PHYChoice(); !strings.Contains(why, "phy=none") {
		t.Errorf("PHYChoice %q: want it to name phy=none", why)
	}
	s.close(false)
	var _ interface{ PHYChoice() string } = (*enetc.Port)(nil)
}

package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInfoGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"sim-enetc0", []string{"info", "sim:enetc0"}},
		{"sim-enetc1-vf", []string{"info", "sim:enetc1?vf=1"}},
		{"sim-fec0-imx6ul", []string{"info", "sim:fec0?soc=imx6ul"}},
		{"ls1028a-pf", []string{"--root", "testdata/ls1028a", "info", "0000:00:00.0"}},
		{"imx8mp-enet", []string{"--root", "testdata/imx8mp", "info", "platform:30be0000.ethernet"}},
		{"imx8mp-uio0", []string{"--root", "testdata/imx8mp", "info", "uio:/dev/uio0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			golden(t, "info-"+c.name+".txt", mustRun(t, c.args...))
			golden(t, "info-"+c.name+".json", mustRun(t, append(c.args, "--json")...))
		})
	}
}

func infoJSON(t *testing.T, args ...string) infoResult {
	t.Helper()
	var r infoResult
	out := mustRun(t, append([]string{"info", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

func TestInfo(t *testing.T) {
	r := infoJSON(t, "sim:enetc0")
	if r.Driver != "enetc" || r.MAC != "02:00:00:e1:00:00" || r.Link == nil || !r.Link.Up || len(r.Regions) != 1 || r.Regions[0].Size != 256<<10 {
		t.Errorf("sim:enetc0 %+v", r)
	}
	if r.PHY == nil || *r.PHY < 0 || !strings.Contains(strings.Join(r.Caps, ","), "mdio") {
		t.Errorf("a PF has its PHY on MDIO: phy %v caps %v", r.PHY, r.Caps)
	}
	r = infoJSON(t, "sim:enetc1?vf=1")
	if r.ID != "1957:ef00" || r.PHY == nil || *r.PHY != -1 || r.Regions[0].Size != 64<<10 {
		t.Errorf("VF: %+v", r)
	}
	r = infoJSON(t, "sim:fec0?soc=imx6ul&link=down")
	if r.Link == nil || r.Link.Up || r.DMACoherent == nil || *r.DMACoherent || r.Compatible[0] != "fsl,imx6ul-fec" {
		t.Errorf("imx6ul, link down: %+v", r)
	}
	r = infoJSON(t, "--root", "testdata/ls1028a", "0000:00:00.0")
	if r.KernelDriver != "vfio-pci" || r.IOMMUGroup != "5" || len(r.Regions) != 2 || r.Regions[0].Size != 256<<10 || r.Regions[0].Addr != 0x1f8000000 || r.NotOpened == "" {
		t.Errorf("ls1028a 00:00.0: %+v", r)
	}
	if len(r.PCICaps) != 4 || r.PCICaps[2].Name != "Enhanced Allocation" || r.PCICaps[2].Offset != 0x9c || !r.PCICaps[3].Extended {
		t.Errorf("PCI capabilities from the tree's config space: %+v", r.PCICaps)
	}
	if h := r.Hugepages; h == nil || h.Total != 64 || h.Free != 60 || h.SizeKB != 2048 {
		t.Errorf("hugepages from the tree's /proc/meminfo: %+v", h)
	}
	// The FEC takes no huge pages: on the i.MX tree info checks its
	// carve-out instead (dmacheck_test.go) and says nothing of huge pages.
	if out := mustRun(t, "--root", "testdata/imx8mp", "info", "platform:30be0000.ethernet"); strings.Contains(out, "hugepages") || !strings.Contains(out, "carve-out:     missing") {
		t.Errorf("i.MX tree: huge pages named, or no carve-out check:\n%s", out)
	}
	r = infoJSON(t, "--root", "testdata/imx8mp", "platform:30be0000.ethernet")
	if len(r.Regions) != 2 || r.Regions[0].Addr != 0x30be0000 || r.Regions[1].Name != "/dev/uio0 map0" || r.DMACoherent == nil || *r.DMACoherent {
		t.Errorf("imx8mp ENET: %+v", r)
	}
}

func TestInfoErrors(t *testing.T) {
	wantError(t, exitUsage, []string{"info"}, "missing arguments")
	wantError(t, exitUsage, []string{"info", "sim:enetc0", "sim:enetc1"}, `unexpected argument "sim:enetc1"`)
	wantError(t, exitUsage, []string{"info", "sim:fec0?soc=imx1"}, "imx1", "imx8mp")
	wantError(t, exitFailed, []string{"--root", "testdata/ls1028a", "info", "0000:00:1f.0"}, "0000:00:1f.0", "no such device")
	wantError(t, exitFailed, []string{"--root", "testdata/imx8mp", "info", "uio:/dev/uio9"}, "/dev/uio9", "ls /sys/class/uio")
}

// TestInfoFEC: on an i.MX, info names the MDIO path, a fixed link's speed
// and where it came from, and each RX ring's interrupt line with whether
// the backend delivers it (the i.MX8MP tree lists int1 first, so with only
// the first interrupt delivered, as under UIO, rings 0 and 2 cannot sleep).
func TestInfoFEC(t *testing.T) {
	r := infoJSON(t, "sim:fec0?soc=imx8mp&queues=3&irq-lines=1")
	if r.MDIO == nil || r.MDIO.Path != "own" {
		t.Errorf("mdio %+v", r.MDIO)
	}
	want := []struct {
		line      string
		interrupt int
		delivered bool
	}{{"int0", 2, false}, {"int1", 0, true}, {"int2", 1, false}}
	if len(r.IRQLines) != 3 {
		t.Fatalf("irq lines %+v", r.IRQLines)
	}
	for q, w := range want {
		l := r.IRQLines[q]
		if l.Ring != q || l.Line != w.line || l.Interrupt != w.interrupt || l.Delivered != w.delivered || (!w.delivered && !strings.Contains(l.Problem, "no RX interrupt")) {
			t.Errorf("rx%d: %+v, want %+v", q, l, w)
		}
	}
	out := mustRun(t, "info", "sim:fec0?soc=imx8mp&queues=3&irq-lines=1")
	if !strings.Contains(out, "irq rx0:       int0 = interrupt 2 of the node: NOT delivered by the sim backend") || !strings.Contains(out, "vfio-platform") {
		t.Errorf("text:\n%s", out)
	}
	// Not opened (an offline tree): the lines from the tree and what the
	// binding delivers; uio_pdrv_genirq gives the first interrupt only.
	r = infoJSON(t, "--root", "testdata/imx8mp", "platform:30be0000.ethernet")
	if r.NotOpened == "" || len(r.IRQLines) != 3 || r.IRQLines[0].Delivered || !strings.Contains(r.IRQLines[0].Problem, "uio_pdrv_genirq") ||
		!r.IRQLines[1].Delivered || r.IRQLines[1].Interrupt != 0 || r.IRQLines[2].Delivered {
		t.Errorf("imx8mp tree under UIO: %+v", r.IRQLines)
	}
	r = infoJSON(t, "sim:fec0?soc=imx6ul&phy=none")
	if r.PHY == nil || *r.PHY != -1 || !strings.Contains(r.FixedLink, "100 Mb/s") || !strings.Contains(r.FixedLink, "phy-mode rmii") {
		t.Errorf("imx6ul phy=none: phy %v fixed link %q", r.PHY, r.FixedLink)
	}
}

// writeDT writes device-tree files (path under base: contents) and returns
// base, a sysfs-like devicetree/base directory.
func writeDT(t *testing.T, files map[string][]byte) string {
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

// On an LS1028A-like tree, info names the PHY the driver takes and why,
// the MSI-X vectors it will ask for, and PF2's link to the Felix switch:
// PF2 is refused with the switch port named, and --force opens it.
func TestInfoLS1028ABoard(t *testing.T) {
	cell := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	base := writeDT(t, map[string][]byte{
		"pcie/ethernet@0,0/phy-handle":                   cell(0x20),
		"pcie/ethernet@0,0/phy-connection-type":          []byte("sgmii\x00"),
		"pcie/ethernet@0,0/mdio/ethernet-phy@2/reg":      cell(2),
		"pcie/ethernet@0,0/mdio/ethernet-phy@2/phandle":  cell(0x20),
		"pcie/ethernet@0,2/phandle":                      cell(0x30),
		"pcie/ethernet@0,2/phy-mode":                     []byte("internal\x00"),
		"pcie/ethernet-switch@0,5/ports/port@4/ethernet": cell(0x30),
	})
	r := infoJSON(t, "sim:enetc60?wiring=sgmii&rxq=4&of-node="+filepath.Join(base, "pcie/ethernet@0,0"))
	if r.PHY == nil || *r.PHY != 2 || !strings.Contains(r.PHYChoice, "phy-handle") || r.MSIXVectors != 5 || r.SwitchLink != "" {
		t.Errorf("PF0: phy %v (%q), %d MSI-X vectors, switch %q; want address 2 from phy-handle, 5 vectors, no switch", r.PHY, r.PHYChoice, r.MSIXVectors, r.SwitchLink)
	}
	pf2 := "sim:enetc61?wiring=internal&of-node=" + filepath.Join(base, "pcie/ethernet@0,2")
	code, _, errOut := nicctl(t, "info", pf2)
	if code == 0 || !strings.Contains(errOut, "port@4") || !strings.Contains(errOut, "--force") {
		t.Errorf("info PF2: exit %d, stderr %q; want a refusal naming the switch port and --force", code, errOut)
	}
	r = infoJSON(t, "--force", pf2)
	if !strings.Contains(r.SwitchLink, "port@4") || !strings.Contains(r.PHYChoice, "internal") {
		t.Errorf("info --force PF2: switch %q, phy %q", r.SwitchLink, r.PHYChoice)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestListGolden(t *testing.T) {
	t.Parallel() // a tree of its own or read-only, no sim device (see main_test.go)
	for _, tree := range []string{"ls1028a", "imx8mp", "imx6ul"} {
		t.Run(tree, func(t *testing.T) {
			t.Parallel()
			root := "testdata/" + tree
			golden(t, "list-"+tree+".txt", mustRun(t, "--root", root, "list"))
			golden(t, "list-"+tree+".json", mustRun(t, "list", "--root", root, "--json"))
		})
	}
}

// listJSON runs list --json and indexes the entries by spec.
func listJSON(t *testing.T, args ...string) map[string]listEntry {
	t.Helper()
	var l []listEntry
	out := mustRun(t, append([]string{"list", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	m := map[string]listEntry{}
	for _, e := range l {
		m[e.Spec] = e
	}
	return m
}

func TestListLS1028A(t *testing.T) {
	t.Parallel() // a tree of its own or read-only, no sim device (see main_test.go)
	m := listJSON(t, "--root", "testdata/ls1028a")
	check := func(spec string, usable bool, why ...string) {
		t.Helper()
		e, ok := m[spec]
		if !ok {
			t.Errorf("%s not listed", spec)
			return
		}
		if e.Usable != usable {
			t.Errorf("%s usable=%v, want %v (%s)", spec, e.Usable, usable, e.Why)
		}
		for _, w := range why {
			if !strings.Contains(e.Why, w) {
				t.Errorf("%s: why %q does not mention %q", spec, e.Why, w)
			}
		}
	}
	check("0000:00:00.0", true)
	check("0000:00:00.1", false, "fsl_enetc", "nicctl bind 0000:00:00.1 vfio-pci")
	check("0000:00:00.2", true, "unsafe-noiommu")
	check("0000:00:00.3", false, "not an Ethernet port")
	check("0000:00:00.6", false, "0000:00:00.5", "mscc_felix")
	check("0000:00:01.0", false, "no driver bound", "no IOMMU group", "uio_pci_generic")
	check("sim:enetc0", true)
	check("sim:fec0", true, "imx8mp")
	if e := m["0000:00:00.0"]; e.IOMMUGroup != "5" || e.GroupViable == nil || !*e.GroupViable || e.Kind != "ENETC PF" || e.Driver != "vfio-pci" {
		t.Errorf("00:00.0: %+v", e)
	}
	if e := m["0000:00:00.0"]; e.Vendor != "Freescale Semiconductor Inc" || e.Product != "ENETC Ethernet Function" {
		t.Errorf("00:00.0 names from the tree's pci.ids: %q %q", e.Vendor, e.Product)
	}
	if e := m["0000:00:00.6"]; e.GroupViable == nil || *e.GroupViable {
		t.Errorf("00:00.6 shares group 10 with the switch on mscc_felix: %+v", e)
	}
	if e := m["0000:00:00.2"]; len(e.UIO) != 1 || e.UIO[0] != "/dev/uio0" {
		t.Errorf("00:00.2 uio %v", e.UIO)
	}
	if _, ok := m["0001:01:00.0"]; ok {
		t.Error("an e1000e function is listed without --all")
	}
	if e, ok := listJSON(t, "--root", "testdata/ls1028a", "--all")["0001:01:00.0"]; !ok || e.Usable || !strings.Contains(e.Why, "no gopmd driver") {
		t.Errorf("--all: %+v", e)
	}
}

func TestListIMX(t *testing.T) {
	t.Parallel() // a tree of its own or read-only, no sim device (see main_test.go)
	m := listJSON(t, "--root", "testdata/imx8mp")
	e := m["platform:30be0000.ethernet"]
	if !e.Usable || e.Driver != "uio_pdrv_genirq" || len(e.UIO) != 1 || e.DMACoherent == nil || *e.DMACoherent || !strings.Contains(e.Why, "unsafe-noiommu") {
		t.Errorf("i.MX8MP ENET: %+v", e)
	}
	if _, ok := m["platform:30bf0000.ethernet"]; ok {
		t.Error("the EQOS (not an FEC) is listed")
	}
	if _, ok := m["uio:/dev/uio0"]; ok {
		t.Error("uio0 is listed twice: under its platform device and on its own")
	}
	m = listJSON(t, "--root", "testdata/imx6ul")
	if e := m["platform:2188000.ethernet"]; e.Usable || !strings.Contains(e.Why, "fec has no sysfs unbind") {
		t.Errorf("ENET1 on fec: %+v", e)
	}
	if e := m["platform:20b4000.ethernet"]; e.Usable || !strings.Contains(e.Why, "fsl,<soc>-fec") {
		t.Errorf("ENET2 generic-uio only: %+v", e)
	}
	if e, ok := m["uio:/dev/uio0"]; !ok || e.Usable || !strings.Contains(e.Why, "900000.sram") || !strings.Contains(e.Why, "mmio-sram") {
		t.Errorf("a UIO device of on-chip RAM: %+v (listed %v)", e, ok)
	}
}

// TestListInUse: a port the host uses gets no bind suggestion, but the
// reason nicctl bind would refuse it.
func TestListInUse(t *testing.T) {
	t.Parallel() // a tree of its own or read-only, no sim device (see main_test.go)
	root := copyTree(t, "testdata/ls1028a")
	put(t, root, eno1Flags, "0x1003\n")
	e := listJSON(t, "--root", root)["0000:00:00.1"]
	if e.Usable || strings.Contains(e.Why, "nicctl bind") || !strings.Contains(e.Why, "interface eno1 is up") {
		t.Fatalf("list of a port the host uses: %+v", e)
	}
}

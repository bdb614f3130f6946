package pci

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// A slice of the pci.ids format as distributions ship it: comments, a
// vendor with devices and a subsystem line, a vendor without devices, a
// damaged line, and the class section with subclasses.
const pciIDsSample = `# List of PCI ID's
#	Version: test
1957  Freescale Semiconductor Inc
	e100  ENETC Ethernet Controller
		1957 e100  LS1028A ENETC port
	ee01  ENETC MDIO
1af4  Red Hat, Inc.
zzzz  not a vendor
	1234  orphan device of a damaged vendor line
8086  Intel Corporation
	10d3  82574L Gigabit Network Connection
C 02  Network controller
	00  Ethernet controller
		01  not a device
C ff  Unassigned class
`

func TestPCIIDsNames(t *testing.T) {
	n := parsePCIIDs(bytes.NewReader([]byte(pciIDsSample)))
	enetc := &Device{VendorID: 0x1957, DeviceID: 0xe100, Class: 0x020001}
	n.name(enetc)
	if enetc.VendorName != "Freescale Semiconductor Inc" || enetc.ProductName != "ENETC Ethernet Controller" || enetc.ClassName != "Network controller" {
		t.Errorf("ENETC PF named %q / %q / %q", enetc.VendorName, enetc.ProductName, enetc.ClassName)
	}
	// The subsystem line (two tabs) names no device 1957:1957.
	if name := n.devices[0x19571957]; name != "" {
		t.Errorf("subsystem line taken as device 1957:1957 %q", name)
	}
	// A device under a line that did not parse belongs to no vendor: not
	// to the vendor before it.
	if name := n.devices[0x1af41234]; name != "" {
		t.Errorf("device under a damaged vendor line given to 1af4: %q", name)
	}
	// Known vendor, unknown device; the class section's subclass lines name
	// no device of the last vendor.
	other := &Device{VendorID: 0x8086, DeviceID: 0x0001, Class: 0xff0000}
	n.name(other)
	if other.VendorName != "Intel Corporation" || other.ProductName != "" || other.ClassName != "Unassigned class" {
		t.Errorf("8086:0001 named %q / %q / %q", other.VendorName, other.ProductName, other.ClassName)
	}
	if len(n.devices) != 3 {
		t.Errorf("%d devices, want 3 (e100, ee01, 10d3): %v", len(n.devices), n.devices)
	}
}

// A gzipped database is read when no plain one is installed; a plain one
// comes first.
func TestPCIIDsGzipAndOrder(t *testing.T) {
	tr := pciTree(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("1234  Gzipped Vendor\n\t11e8  Gzipped device\n"))
	zw.Close()
	tr.file("/usr/share/misc/pci.ids.gz", gz.String())
	inv, err := tr.sys().Inventory()
	if err != nil {
		t.Fatal(err)
	}
	if inv[0].VendorName != "Gzipped Vendor" || inv[0].ProductName != "Gzipped device" {
		t.Errorf("names from pci.ids.gz: %q %q", inv[0].VendorName, inv[0].ProductName)
	}
	tr.file("/usr/share/misc/pci.ids", "1234  Plain Vendor\n")
	inv, _ = tr.sys().Inventory()
	if inv[0].VendorName != "Plain Vendor" || inv[0].ProductName != "" {
		t.Errorf("plain pci.ids not preferred: %q %q", inv[0].VendorName, inv[0].ProductName)
	}
}

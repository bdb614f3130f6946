package pci

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"strconv"
	"strings"
)

// pciIDsPaths are where distributions install the PCI ID database (pciutils
// and hwdata), plain or gzipped, searched in this order under the root.
var pciIDsPaths = []string{
	"/usr/share/hwdata/pci.ids",
	"/usr/share/misc/pci.ids",
	"/usr/share/pci.ids",
	"/usr/share/hwdata/pci.ids.gz",
	"/usr/share/misc/pci.ids.gz",
	"/usr/share/pci.ids.gz",
}

// pciNames holds the names of the pci.ids database that an inventory needs:
// vendors, devices (by vendor and device ID) and base classes.
type pciNames struct {
	vendors map[uint16]string
	devices map[uint32]string // vendor<<16 | device
	classes map[uint8]string
}

// name fills d's vendor, product and class names from the database ("" for
// IDs it does not know).
func (n *pciNames) name(d *Device) {
	d.VendorName = n.vendors[d.VendorID]
	d.ProductName = n.devices[uint32(d.VendorID)<<16|uint32(d.DeviceID)]
	d.ClassName = n.classes[uint8(d.Class>>16)]
}

// hostPCINames loads the first pci.ids found under the root, or returns an
// empty database: names are a nicety, a missing or unreadable file is not an
// error, and nothing is ever fetched from the network.
func (s Sys) hostPCINames() *pciNames {
	for _, p := range pciIDsPaths {
		f, err := os.Open(s.Path(p))
		if err != nil {
			continue
		}
		var r io.Reader = f
		if strings.HasSuffix(p, ".gz") {
			zr, err := gzip.NewReader(f)
			if err != nil {
				f.Close()
				continue
			}
			r = zr
		}
		n := parsePCIIDs(r)
		f.Close()
		return n
	}
	return parsePCIIDs(strings.NewReader(""))
}

// parsePCIIDs reads the pci.ids format: a vendor line is "vvvv  name", its
// devices follow as "\tdddd  name" (subsystems, two tabs deep, are not
// kept); a class line is "C cc  name" and its subclasses and programming
// interfaces follow indented. '#' starts a comment. Lines that do not parse
// are skipped, so a damaged file costs names, never the inventory.
func parsePCIIDs(r io.Reader) *pciNames {
	n := &pciNames{vendors: map[uint16]string{}, devices: map[uint32]string{}, classes: map[uint8]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	vendor, inVendor := uint16(0), false
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		switch {
		case strings.HasPrefix(line, "C "):
			inVendor = false
			if id, name, ok := idAndName(line[2:], 8); ok {
				n.classes[uint8(id)] = name
			}
		case line[0] != '\t':
			inVendor = false
			if id, name, ok := idAndName(line, 16); ok {
				vendor, inVendor = uint16(id), true
				n.vendors[vendor] = name
			}
		case inVendor && !strings.HasPrefix(line, "\t\t"):
			if id, name, ok := idAndName(line[1:], 16); ok {
				n.devices[uint32(vendor)<<16|uint32(id)] = name
			}
		}
	}
	return n
}

// idAndName splits "hhhh  name" into the hexadecimal ID (of at most bits
// bits) and the name.
func idAndName(s string, bits int) (uint64, string, bool) {
	i := strings.IndexByte(s, ' ')
	if i <= 0 {
		return 0, "", false
	}
	id, err := strconv.ParseUint(s[:i], 16, bits)
	if err != nil {
		return 0, "", false
	}
	name := strings.TrimSpace(s[i:])
	return id, name, name != ""
}

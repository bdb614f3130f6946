package main

import (
	"encoding/binary"
	"fmt"
	"os"
)

// pciCap is one capability in a function's configuration space.
type pciCap struct {
	Offset   int    `json:"offset"`
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Extended bool   `json:"extended,omitempty"` // PCIe extended capability (offset ≥ 0x100)
}

func (c pciCap) String() string { return fmt.Sprintf("%s @%#x", c.Name, c.Offset) }

// Capability IDs from the PCI and PCI Express specifications.
var capNames = map[int]string{
	0x01: "Power Management", 0x05: "MSI", 0x09: "Vendor Specific", 0x10: "PCI Express",
	0x11: "MSI-X", 0x12: "SATA", 0x13: "Advanced Features", 0x14: "Enhanced Allocation",
}

var extCapNames = map[int]string{
	0x0001: "AER", 0x0002: "VC", 0x0003: "Device Serial Number", 0x000b: "Vendor Specific",
	0x000d: "ACS", 0x000e: "ARI", 0x000f: "ATS", 0x0010: "SR-IOV", 0x0013: "PRI",
	0x0015: "Resizable BAR", 0x0017: "TPH", 0x0018: "LTR", 0x0019: "Secondary PCIe",
	0x001b: "PASID", 0x001e: "L1 PM Substates", 0x0024: "VF Resizable BAR",
}

// Configuration space layout (PCI Local Bus 3.0 §6.1, §6.7; PCIe §7.9;
// Linux include/uapi/linux/pci_regs.h names in brackets).
const (
	cfgStatus        = 0x06   // status register [PCI_STATUS]
	cfgStatusCapList = 0x10   // status: a capability list exists [PCI_STATUS_CAP_LIST]
	cfgCapPtr        = 0x34   // first capability's offset [PCI_CAPABILITY_LIST]
	cfgHeaderSize    = 0x40   // the standard header; capabilities follow [PCI_STD_HEADER_SIZEOF]
	cfgExtCapStart   = 0x100  // first PCIe extended capability [PCI_CFG_SPACE_SIZE]
	capPtrAlign      = 3      // low bits of a capability pointer, reserved
	capNextOff       = 1      // a capability's next pointer, after its ID byte
	extCapIDMask     = 0xffff // extended header: capability ID [PCI_EXT_CAP_ID]
	extCapNextShift  = 20     // extended header: next offset [PCI_EXT_CAP_NEXT]
	extCapAbsent     = 0xffffffff
	// The walks stop after as many entries as fit, so a looping list ends.
	maxCaps    = 48 // (256 - 64) / 4: no more dword-aligned capabilities fit
	maxExtCaps = 96 // far more than any function has
)

// pciCaps walks the capability lists of a configuration space image (the
// sysfs config file: 64 bytes to 4 KiB, as much as the reader may see).
// A malformed list ends the walk; loops are cut by a step bound.
func pciCaps(cfg []byte) []pciCap {
	var out []pciCap
	if len(cfg) < cfgHeaderSize || binary.LittleEndian.Uint16(cfg[cfgStatus:])&cfgStatusCapList == 0 {
		return out
	}
	ptr := int(cfg[cfgCapPtr]) &^ capPtrAlign
	for steps := 0; ptr >= cfgHeaderSize && ptr+2 <= len(cfg) && steps < maxCaps; steps++ {
		id := int(cfg[ptr])
		name := capNames[id]
		if name == "" {
			name = fmt.Sprintf("capability %#x", id)
		}
		out = append(out, pciCap{Offset: ptr, ID: id, Name: name})
		ptr = int(cfg[ptr+capNextOff]) &^ capPtrAlign
	}
	ptr = cfgExtCapStart
	for steps := 0; ptr >= cfgExtCapStart && ptr+4 <= len(cfg) && steps < maxExtCaps; steps++ {
		h := binary.LittleEndian.Uint32(cfg[ptr:])
		if h == 0 || h == extCapAbsent {
			break
		}
		id := int(h & extCapIDMask)
		name := extCapNames[id]
		if name == "" {
			name = fmt.Sprintf("extended capability %#x", id)
		}
		out = append(out, pciCap{Offset: ptr, ID: id, Name: name, Extended: true})
		ptr = int(h>>extCapNextShift) &^ capPtrAlign
	}
	return out
}

// readCaps reads the function's capabilities from sysfs under the root.
func readCaps(e *env, addr string) []pciCap {
	b, err := os.ReadFile(e.sys.Path("/sys/bus/pci/devices/" + addr + "/config"))
	if err != nil {
		return nil
	}
	return pciCaps(b)
}

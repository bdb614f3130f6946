package pci

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
)

// PlatformDevice is what sysfs and the device tree say about a platform
// device (a SoC block such as an i.MX ENET), named by its node name
// ("2188000.ethernet").
type PlatformDevice struct {
	Name       string
	Compatible []string // from of_node/compatible
	Driver     string   // bound driver, "" if none
	Override   string   // driver_override, "" if unset
	IOMMUGroup string   // "" without an IOMMU
	UIO        []string // UIO devices bound to it ("uio0")
	// Reg is the node's reg ranges translated to CPU physical addresses
	// through the parents' ranges properties.
	Reg []PhysRange
	// NoUnbind is true when the driver sets suppress_bind_attrs (fec
	// does): sysfs has no unbind file and the device can only be freed by
	// driver_override before the driver probes or by unloading it.
	NoUnbind bool
	// DMACoherent is true when the node has the dma-coherent property;
	// otherwise the device's DMA does not snoop CPU caches.
	DMACoherent bool
	// Node is the device-tree node (of_node resolved), the zero Node for
	// a device not from the device tree.
	Node devtree.Node
}

// Platform reads a platform device's sysfs entry and device-tree node.
func (s Sys) Platform(name string) (*PlatformDevice, error) {
	if err := driver.CheckDeviceName(name); err != nil {
		return nil, &DeviceError{Device: fmt.Sprintf("%q", name), Op: "platform device", Err: err,
			Fix: "give the node name as /sys/bus/platform/devices lists it, e.g. 2188000.ethernet"}
	}
	dir := s.Path("/sys/bus/platform/devices/" + name)
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &DeviceError{Device: name, Op: "platform device", Err: ErrNoDevice,
				Fix: "no " + dir + ": names are the device-tree unit address and node name, e.g. 2188000.ethernet; list them with ls /sys/bus/platform/devices"}
		}
		return nil, &DeviceError{Device: name, Op: "platform device", Err: err, Fix: fixOpen(err)}
	}
	d := &PlatformDevice{Name: name}
	d.Driver = linkBase(dir + "/driver")
	if v, err := readString(dir + "/driver_override"); err == nil && v != "(null)" {
		d.Override = v
	}
	d.IOMMUGroup = linkBase(dir + "/iommu_group")
	if ents, err := os.ReadDir(dir + "/uio"); err == nil {
		for _, e := range ents {
			d.UIO = append(d.UIO, e.Name())
		}
	}
	if d.Driver != "" {
		if _, err := os.Stat(dir + "/driver/unbind"); errors.Is(err, fs.ErrNotExist) {
			d.NoUnbind = true
		}
	}
	node, err := devtree.OfNode(dir)
	if err != nil || !node.Exists() {
		return d, nil // not from the device tree (ACPI, board code)
	}
	d.Node = node
	d.Compatible = node.Strings("compatible")
	d.DMACoherent = node.Has("dma-coherent")
	if d.Reg, err = s.nodeReg(node); err != nil {
		return nil, &DeviceError{Device: name, Op: "device-tree reg", Err: err, Fix: "give the window explicitly with ?reg=ADDR+SIZE"}
	}
	return d, nil
}

// readCells reads an n-cell big-endian number off the front of b.
func readCells(b []byte, n int) (uint64, []byte) {
	var v uint64
	for i := 0; i < n; i++ {
		v = v<<32 | uint64(binary.BigEndian.Uint32(b))
		b = b[4:]
	}
	return v, b
}

// nodeReg decodes node's reg with its parent's #address-cells/#size-cells
// (2 and 1 when absent, as the devicetree specification says) and
// translates each range through the ranges of every ancestor bus.
func (s Sys) nodeReg(node devtree.Node) ([]PhysRange, error) {
	regs, err := node.Reg()
	if err != nil {
		return nil, err
	}
	root := devtree.At(s.Path("/sys/firmware/devicetree/base"))
	var out []PhysRange
	for _, r := range regs {
		addr, err := translate(root, node.Parent(), r.Addr)
		if err != nil {
			return nil, err
		}
		out = append(out, PhysRange{Addr: addr, Size: r.Size})
	}
	return out, nil
}

// translate maps a child-bus address of bus through the ranges of bus and
// its ancestors up to root.
func translate(root, bus devtree.Node, addr uint64) (uint64, error) {
	for !bus.Same(root) && strings.HasPrefix(bus.Path(), root.Path()) {
		rb, err := bus.Bytes("ranges")
		if err != nil {
			return 0, fmt.Errorf("bus %s has no ranges property: its children are not memory-mapped", bus)
		}
		up := bus.Parent()
		cac, csc := bus.Cells("#address-cells", 2), bus.Cells("#size-cells", 1)
		pac := up.Cells("#address-cells", 2)
		stride := 4 * (cac + pac + csc)
		if len(rb) > 0 {
			if len(rb)%stride != 0 {
				return 0, fmt.Errorf("%s/ranges: %d bytes do not divide into %d-byte entries", bus, len(rb), stride)
			}
			found := false
			for len(rb) > 0 {
				var c, p, n uint64
				c, rb = readCells(rb, cac)
				p, rb = readCells(rb, pac)
				n, rb = readCells(rb, csc)
				if addr >= c && addr-c < n {
					addr, found = addr-c+p, true
					break
				}
			}
			if !found {
				return 0, fmt.Errorf("address %#x is outside every range of bus %s", addr, bus)
			}
		}
		bus = up
	}
	return addr, nil
}

// PlatformDevices lists every platform device sysfs shows, sorted by
// name, each read as Platform reads it. A node whose reg cannot be
// translated is listed without Reg rather than failing the list.
func (s Sys) PlatformDevices() ([]*PlatformDevice, error) {
	dir := s.Path("/sys/bus/platform/devices")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("platform devices: %w (is sysfs mounted on /sys?)", err)
	}
	var out []*PlatformDevice
	for _, e := range ents {
		pd, err := s.Platform(e.Name())
		if err != nil {
			var de *DeviceError
			if !errors.As(err, &de) || errors.Is(err, ErrNoDevice) {
				continue
			}
			pd = &PlatformDevice{Name: e.Name()}
			pd.Driver = linkBase(filepath.Join(dir, e.Name(), "driver"))
		}
		out = append(out, pd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

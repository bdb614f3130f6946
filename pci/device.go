package pci

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// Device is one PCI function as sysfs shows it.
type Device struct {
	Address            Address
	VendorID, DeviceID uint16
	SubVendorID        uint16
	SubDeviceID        uint16
	Class              uint32 // base class, subclass, programming interface
	Revision           uint8
	// Names from the pci.ids database when the host has one ("" otherwise;
	// it is never fetched from the network).
	VendorName, ProductName, ClassName string
	Driver                             string // bound driver, "" if none
	Override                           string // driver_override, "" if unset
	IOMMUGroup                         string // "" without an IOMMU
	NUMANode                           int    // -1 when unknown
	BARs                               []BAR
}

// ID is "vvvv:dddd".
func (d *Device) ID() string { return fmt.Sprintf("%04x:%04x", d.VendorID, d.DeviceID) }

// Device reads one PCI function from sysfs.
func (s Sys) Device(a Address) (*Device, error) {
	dir := s.pciDev(a)
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &DeviceError{Device: a.String(), Op: "pci device", Err: ErrNoDevice, Fix: "sysfs has no such function; list PCI functions with lspci -D or nicctl list"}
		}
		return nil, &DeviceError{Device: a.String(), Op: "pci device", Err: err, Fix: fixOpen(err)}
	}
	d := &Device{Address: a, NUMANode: -1}
	rd := func(name string, bits int) uint64 {
		v, _ := readHex(dir + "/" + name)
		return v & (1<<bits - 1)
	}
	d.VendorID = uint16(rd("vendor", 16))
	d.DeviceID = uint16(rd("device", 16))
	d.SubVendorID = uint16(rd("subsystem_vendor", 16))
	d.SubDeviceID = uint16(rd("subsystem_device", 16))
	d.Class = uint32(rd("class", 24))
	d.Revision = uint8(rd("revision", 8))
	d.Driver = linkBase(dir + "/driver")
	if v, err := readString(dir + "/driver_override"); err == nil && v != "(null)" {
		d.Override = v
	}
	d.IOMMUGroup = linkBase(dir + "/iommu_group")
	if v, err := readString(dir + "/numa_node"); err == nil {
		if n, err := strconv.Atoi(v); err == nil {
			d.NUMANode = n
		}
	}
	if b, err := os.ReadFile(dir + "/resource"); err == nil {
		bars, err := parseResource(string(b))
		if err != nil {
			return nil, &DeviceError{Device: a.String(), Op: "parse " + dir + "/resource", Err: err}
		}
		d.BARs = bars
	}
	return d, nil
}

// Inventory lists every PCI function as Device reads it from sysfs, with
// the vendor, product and class names of the pci.ids found under the root
// (none without one: the database is never fetched).
func (s Sys) Inventory() ([]*Device, error) {
	ents, err := os.ReadDir(s.Path("/sys/bus/pci/devices"))
	if err != nil {
		return nil, fmt.Errorf("pci inventory: %w (is sysfs mounted on /sys?)", err)
	}
	names := s.hostPCINames()
	var out []*Device
	for _, e := range ents {
		a, err := ParseAddress(e.Name())
		if err != nil {
			continue
		}
		d, err := s.Device(a)
		if err != nil {
			return nil, err
		}
		names.name(d)
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address.String() < out[j].Address.String() })
	return out, nil
}

// GroupMembers lists the PCI functions in IOMMU group g.
func (s Sys) GroupMembers(g string) ([]Address, error) {
	ents, err := os.ReadDir(s.Path(filepath.Join("/sys/kernel/iommu_groups", g, "devices")))
	if err != nil {
		return nil, err
	}
	var out []Address
	for _, e := range ents {
		if a, err := ParseAddress(e.Name()); err == nil {
			out = append(out, a)
		}
	}
	return out, nil
}

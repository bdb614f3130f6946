package fec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gopmd/gopmd/internal/mii"
)

// PHY selection (docs/hardware-fec.md §5.5): phy= first, then the device
// tree's phy-handle, then a scan of the port's own MDIO bus that must find
// exactly one PHY. A shared bus (i.MX6UL/7D boards: one ENET's MDIO
// carries both ENETs' PHYs) answers at two addresses, and the lowest one
// may belong to the other MAC: the scan refuses to guess.

// phyFixed is phyAddr for phy=none and for a fixed-link node: no PHY, the
// link is taken as up at the part's top speed.
const phyFixed = -1

// dtPHY is what a port's device-tree node says about its PHY.
type dtPHY struct {
	found bool   // the node names a PHY (phy-handle) or a fixed link
	fixed bool   // fixed-link: no PHY to read
	addr  int    // the PHY node's reg
	node  string // the PHY node's directory
	bus   string // the node of the MAC whose MDIO bus holds the PHY
}

// dtRoot is the device-tree root of node: the nearest ancestor called
// devicetree/base (sysfs spells it /sys/firmware/devicetree/base).
func dtRoot(node string) (string, bool) {
	for d := filepath.Clean(node); d != "/" && d != "."; d = filepath.Dir(d) {
		if filepath.Base(d) == "base" && filepath.Base(filepath.Dir(d)) == "devicetree" {
			return d, true
		}
	}
	return "", false
}

// u32Prop reads a one-cell big-endian property.
func u32Prop(path string) (uint32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	if len(b) != 4 {
		return 0, fmt.Errorf("%s: %d bytes, want one 4-byte cell", path, len(b))
	}
	return binary.BigEndian.Uint32(b), nil
}

// findPhandle walks the tree under root for the node whose phandle (or
// the older linux,phandle) is ph. Symlinks are not followed: sysfs
// device-tree nodes are plain directories.
func findPhandle(root string, ph uint32) (string, error) {
	var found string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return filepath.SkipDir
		}
		if d.IsDir() || (d.Name() != "phandle" && d.Name() != "linux,phandle") {
			return nil
		}
		if v, err := u32Prop(path); err == nil && v == ph {
			found = filepath.Dir(path)
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		if err == nil {
			err = fmt.Errorf("no node under %s has phandle %#x", root, ph)
		}
		return "", err
	}
	return found, nil
}

// readDTPHY reads node's phy-handle (or phy, or phy-device, the older
// names the Ethernet binding keeps) and the PHY node it points to, or
// its fixed-link subnode. found is false when the node says nothing.
func readDTPHY(node string) (dtPHY, error) {
	var r dtPHY
	if node == "" {
		return r, nil
	}
	if _, err := os.Stat(filepath.Join(node, "fixed-link")); err == nil {
		r.found, r.fixed = true, true
		return r, nil
	}
	var ph uint32
	var prop string
	for _, name := range []string{"phy-handle", "phy", "phy-device"} {
		v, err := u32Prop(filepath.Join(node, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return r, fmt.Errorf("device-tree %s: %w", name, err)
		}
		ph, prop = v, name
		break
	}
	if prop == "" {
		return r, nil
	}
	root, ok := dtRoot(node)
	if !ok {
		return r, fmt.Errorf("device-tree node %s is not under a devicetree/base directory: cannot resolve its %s", node, prop)
	}
	phyNode, err := findPhandle(root, ph)
	if err != nil {
		return r, fmt.Errorf("device-tree %s/%s = %#x: %w", node, prop, ph, err)
	}
	reg, err := u32Prop(filepath.Join(phyNode, "reg"))
	if err != nil {
		return r, fmt.Errorf("device-tree PHY node %s (the port's %s): reg: %w", phyNode, prop, err)
	}
	if reg > 31 {
		return r, fmt.Errorf("device-tree PHY node %s: reg %d is not an MDIO address (0..31)", phyNode, reg)
	}
	r.found, r.addr, r.node = true, int(reg), phyNode
	// The PHY sits in an mdio subnode of the MAC that drives its bus.
	if parent := filepath.Dir(phyNode); strings.HasPrefix(filepath.Base(parent), "mdio") {
		r.bus = filepath.Dir(parent)
	}
	return r, nil
}

// selectPHY sets phyAddr: phy=N or none (already parsed), else the device
// tree (not with phy=scan), else the one PHY that answers on the port's
// MDIO bus. It refuses a
// phy-handle on another MAC's bus and a bus where several PHYs answer.
func (p *Port) selectPHY() error {
	if p.phySet {
		return nil // phy=N or phy=none
	}
	node := p.dev.OFNode
	if p.phyScan {
		node = "" // phy=scan
	}
	dt, err := readDTPHY(node)
	if err != nil {
		return fmt.Errorf("fec %s: %w; give phy=N (the PHY's MDIO address) or phy=none (fixed link) to choose by hand", p.name, err)
	}
	if dt.found {
		if dt.fixed {
			p.phyAddr = phyFixed
			return nil
		}
		own := filepath.Clean(p.dev.OFNode)
		if dt.bus != "" && filepath.Clean(dt.bus) != own {
			return fmt.Errorf("fec %s: the device tree's phy-handle points to %s (address %d) on the MDIO bus of %s, which this port's MDIO registers do not drive (a shared MDIO bus, as on i.MX6UL/7D boards): give phy=none to run it as a fixed link, or phy=scan (or phy=N) if this port's own MDIO pins reach a PHY of its own (QEMU 7.2 gives each ENET one)",
				p.name, dt.node, dt.addr, dt.bus)
		}
		p.phyAddr = dt.addr
		return nil
	}
	var answered []int
	for a := 0; a < 32; a++ {
		id1, err := p.MDIORead(a, mii.PHYID1)
		if err != nil {
			return nil // no MDIO at all: link is assumed up
		}
		if id1 != 0xFFFF && id1 != 0 {
			answered = append(answered, a)
		}
	}
	switch len(answered) {
	case 0:
		p.phyAddr = phyFixed
	case 1:
		p.phyAddr = answered[0]
	default:
		sort.Ints(answered)
		return fmt.Errorf("fec %s: PHYs answer at MDIO addresses %v and the device tree names none (no phy-handle): on a shared MDIO bus one of them belongs to another MAC; give phy=N with this port's PHY address",
			p.name, answered)
	}
	return nil
}

// Package devtree reads what gopmd's drivers need from a device's
// device-tree node as sysfs presents it (/sys/firmware/devicetree/base,
// reached through a device's of_node link): one-cell properties, phandle
// references, the PHY a MAC's phy-handle names, compatible strings. Every
// driver reads the board's wiring through it, so a node is read one way.
package devtree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Root is the device-tree root of node: the nearest ancestor called
// devicetree/base (sysfs spells it /sys/firmware/devicetree/base).
func Root(node string) (string, bool) {
	for d := filepath.Clean(node); d != "/" && d != "."; d = filepath.Dir(d) {
		if filepath.Base(d) == "base" && filepath.Base(filepath.Dir(d)) == "devicetree" {
			return d, true
		}
	}
	return "", false
}

// U32 reads a one-cell big-endian property.
func U32(path string) (uint32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	if len(b) != 4 {
		return 0, fmt.Errorf("%s: %d bytes, want one 4-byte cell", path, len(b))
	}
	return binary.BigEndian.Uint32(b), nil
}

// Strings reads a string-list property (NUL-separated), nil when absent.
func Strings(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range strings.Split(string(b), "\x00") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Compatible reports whether node's compatible list holds one of names.
func Compatible(node string, names ...string) bool {
	for _, c := range Strings(filepath.Join(node, "compatible")) {
		for _, n := range names {
			if c == n {
				return true
			}
		}
	}
	return false
}

// FindPhandle walks the tree under root for the node whose phandle (or
// the older linux,phandle) is ph. Symlinks are not followed: sysfs
// device-tree nodes are plain directories.
func FindPhandle(root string, ph uint32) (string, error) {
	var found string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return filepath.SkipDir
		}
		if d.IsDir() || (d.Name() != "phandle" && d.Name() != "linux,phandle") {
			return nil
		}
		if v, err := U32(path); err == nil && v == ph {
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

// PHY is what a MAC's device-tree node says about its PHY.
type PHY struct {
	Found bool   // the node names a PHY (phy-handle) or a fixed link
	Fixed bool   // fixed-link: no PHY to read
	Prop  string // the property that named the PHY: phy-handle, phy or phy-device
	Addr  int    // the PHY node's reg: its MDIO address
	Node  string // the PHY node's directory
	// Parent is the node the PHY node sits in: an MDIO bus, either an
	// mdio subnode of a MAC or an MDIO controller of its own.
	Parent string
	// Bus is the node of the MAC whose mdio subnode holds the PHY, empty
	// when the PHY sits elsewhere (an MDIO controller of its own).
	Bus string
}

// ReadPHY reads node's phy-handle (or phy, or phy-device, the older names
// the Ethernet binding keeps) and the PHY node it points to, or its
// fixed-link subnode. Found is false when the node says nothing.
func ReadPHY(node string) (PHY, error) {
	var r PHY
	if node == "" {
		return r, nil
	}
	if _, err := os.Stat(filepath.Join(node, "fixed-link")); err == nil {
		r.Found, r.Fixed = true, true
		return r, nil
	}
	var ph uint32
	for _, name := range []string{"phy-handle", "phy", "phy-device"} {
		v, err := U32(filepath.Join(node, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return r, fmt.Errorf("device-tree %s: %w", name, err)
		}
		ph, r.Prop = v, name
		break
	}
	if r.Prop == "" {
		return r, nil
	}
	root, ok := Root(node)
	if !ok {
		return r, fmt.Errorf("device-tree node %s is not under a devicetree/base directory: cannot resolve its %s", node, r.Prop)
	}
	phyNode, err := FindPhandle(root, ph)
	if err != nil {
		return r, fmt.Errorf("device-tree %s/%s = %#x: %w", node, r.Prop, ph, err)
	}
	reg, err := U32(filepath.Join(phyNode, "reg"))
	if err != nil {
		return r, fmt.Errorf("device-tree PHY node %s (the port's %s): reg: %w", phyNode, r.Prop, err)
	}
	if reg > 31 {
		return r, fmt.Errorf("device-tree PHY node %s: reg %d is not an MDIO address (0..31)", phyNode, reg)
	}
	r.Found, r.Addr, r.Node = true, int(reg), phyNode
	r.Parent = filepath.Dir(phyNode)
	// The PHY sits in an mdio subnode of the MAC that drives its bus, or
	// in an MDIO controller of its own (CentralMDIO), which is no MAC's.
	if strings.HasPrefix(filepath.Base(r.Parent), "mdio") && !CentralMDIO(r.Parent) {
		r.Bus = filepath.Dir(r.Parent)
	}
	return r, nil
}

// centralMDIO are the compatible strings of an MDIO controller that is a
// device of its own (the LS1028A's ENETC central MDIO, PCI 1957:ee01).
var centralMDIO = []string{"pci1957,ee01", "fsl,enetc-mdio"}

// CentralMDIO reports whether node is an MDIO controller of its own (the
// LS1028A's central MDIO function, 00:00.3), not a MAC's mdio subnode.
func CentralMDIO(node string) bool { return Compatible(node, centralMDIO...) }

// Phandle reads node's phandle (or the older linux,phandle); ok is false
// when nothing refers to the node (it has none).
func Phandle(node string) (uint32, bool) {
	for _, name := range []string{"phandle", "linux,phandle"} {
		if v, err := U32(filepath.Join(node, name)); err == nil {
			return v, true
		}
	}
	return 0, false
}

// Referrers are the nodes whose one-cell property prop refers to node by
// its phandle (a switch port's ethernet = <&node>, for one), in walk
// order; none when node has no phandle.
func Referrers(node, prop string) ([]string, error) {
	ph, ok := Phandle(node)
	if !ok {
		return nil, nil
	}
	root, ok := Root(node)
	if !ok {
		return nil, fmt.Errorf("device-tree node %s is not under a devicetree/base directory", node)
	}
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable corner of the tree says nothing
		}
		if d.IsDir() || d.Name() != prop {
			return nil
		}
		if v, err := U32(path); err == nil && v == ph {
			out = append(out, filepath.Dir(path))
		}
		return nil
	})
	return out, err
}

// Enabled reports whether node's status is absent, "okay" or "ok" (the
// device-tree specification's enabled values).
func Enabled(node string) bool {
	s := Strings(filepath.Join(node, "status"))
	return len(s) == 0 || s[0] == "okay" || s[0] == "ok"
}

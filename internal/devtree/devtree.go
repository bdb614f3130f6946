// Package devtree reads what gopmd's drivers need from a device's
// device-tree node as sysfs presents it (/sys/firmware/devicetree/base,
// reached through a device's of_node link): one-cell properties, string
// lists, phandle references, the PHY a MAC's phy-handle names, its fixed
// link, compatible strings. A backend finds a device's Node (OfNode) and
// hands it to the driver in driver.Device; every driver and tool reads the
// board's wiring through Node's methods, so a node is read one way.
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

// Node is one device-tree node: a directory of sysfs's device tree, read
// only. The zero Node is no node (a device the system describes another
// way): every property of it is absent.
type Node struct {
	dir string
}

// At is the node whose directory is dir ("" gives the zero Node).
func At(dir string) Node {
	if dir == "" {
		return Node{}
	}
	return Node{dir: filepath.Clean(dir)}
}

// OfNode is the node a sysfs device directory's of_node link names,
// resolved; the zero Node and no error when the device has none.
func OfNode(devDir string) (Node, error) {
	n, err := filepath.EvalSymlinks(filepath.Join(devDir, "of_node"))
	if errors.Is(err, fs.ErrNotExist) {
		return Node{}, nil
	}
	if err != nil {
		return Node{}, err
	}
	return At(n), nil
}

// Exists reports whether n is a node, not the zero Node.
func (n Node) Exists() bool { return n.dir != "" }

// Path is the node's directory, "" for the zero Node.
func (n Node) Path() string { return n.dir }

// String is the node's directory, for messages.
func (n Node) String() string { return n.dir }

// Name is the node's name (its directory's last element: ethernet@0,0).
func (n Node) Name() string {
	if n.dir == "" {
		return ""
	}
	return filepath.Base(n.dir)
}

// Parent is the node n sits in.
func (n Node) Parent() Node {
	if n.dir == "" {
		return Node{}
	}
	return Node{dir: filepath.Dir(n.dir)}
}

// Child is n's subnode name, whether or not it exists (Has says).
func (n Node) Child(name string) Node {
	if n.dir == "" {
		return Node{}
	}
	return Node{dir: filepath.Join(n.dir, name)}
}

// Prop is the path of n's property (or subnode) name, for messages.
func (n Node) Prop(name string) string { return filepath.Join(n.dir, name) }

// Has reports whether n has a property or subnode called name.
func (n Node) Has(name string) bool {
	if n.dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(n.dir, name))
	return err == nil
}

// IsNode reports whether n exists as a directory (a subnode, not a
// property of the same name).
func (n Node) IsNode() bool {
	if n.dir == "" {
		return false
	}
	st, err := os.Stat(n.dir)
	return err == nil && st.IsDir()
}

// Bytes reads property name's raw value; the error wraps fs.ErrNotExist
// when n has no such property.
func (n Node) Bytes(name string) ([]byte, error) {
	if n.dir == "" {
		return nil, fmt.Errorf("no device-tree node: %s: %w", name, fs.ErrNotExist)
	}
	return os.ReadFile(filepath.Join(n.dir, name))
}

// U32 reads a one-cell big-endian property; the error wraps
// fs.ErrNotExist when n has no such property.
func (n Node) U32(name string) (uint32, error) {
	b, err := n.Bytes(name)
	if err != nil {
		return 0, err
	}
	if len(b) != 4 {
		return 0, fmt.Errorf("%s: %d bytes, want one 4-byte cell", n.Prop(name), len(b))
	}
	return binary.BigEndian.Uint32(b), nil
}

// Strings reads a string-list property (NUL-separated), nil when absent.
func (n Node) Strings(name string) []string {
	b, err := n.Bytes(name)
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

// String1 reads a one-string property; ok is false when absent. The error
// is one reading a property that is there.
func (n Node) String1(name string) (s string, ok bool, err error) {
	b, err := n.Bytes(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("device tree %s: %w", n.Prop(name), err)
	}
	return strings.TrimRight(string(b), "\x00"), true, nil
}

// Children lists n's subnodes in name order.
func (n Node) Children() []Node {
	if n.dir == "" {
		return nil
	}
	ents, err := os.ReadDir(n.dir)
	if err != nil {
		return nil
	}
	var out []Node
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, Node{dir: filepath.Join(n.dir, e.Name())})
		}
	}
	return out
}

// Cells reads a cell-count property (#address-cells, #size-cells), def
// when absent or not one cell.
func (n Node) Cells(name string, def int) int {
	v, err := n.U32(name)
	if err != nil {
		return def
	}
	return int(v)
}

// Range is one entry of a reg property: an address and a size in the
// parent bus's address space.
type Range struct {
	Addr, Size uint64
}

// Reg decodes n's reg with its parent's #address-cells and #size-cells
// (2 and 1 when absent, as the devicetree specification says); nil and
// no error when n has no reg. Addresses are the parent bus's: a node under
// a bus with ranges needs them translated.
func (n Node) Reg() ([]Range, error) {
	b, err := n.Bytes("reg")
	if err != nil {
		return nil, nil
	}
	parent := n.Parent()
	ac, sc := parent.Cells("#address-cells", 2), parent.Cells("#size-cells", 1)
	stride := 4 * (ac + sc)
	if ac < 1 || ac > 2 || sc > 2 || len(b)%stride != 0 {
		return nil, fmt.Errorf("%s: %d bytes do not divide into (%d address + %d size) cells", n.Prop("reg"), len(b), ac, sc)
	}
	var out []Range
	for ; len(b) > 0; b = b[stride:] {
		out = append(out, Range{Addr: cellsAt(b, 0, ac), Size: cellsAt(b, ac, sc)})
	}
	return out, nil
}

// cellsAt is the big-endian number of n cells from cell i of b.
func cellsAt(b []byte, i, n int) uint64 {
	var v uint64
	for k := i; k < i+n; k++ {
		v = v<<32 | uint64(binary.BigEndian.Uint32(b[4*k:]))
	}
	return v
}

// Same reports whether n and m are the same node.
func (n Node) Same(m Node) bool { return n.dir != "" && n.dir == m.dir }

// Compatible reports whether n's compatible list holds one of names.
func (n Node) Compatible(names ...string) bool {
	for _, c := range n.Strings("compatible") {
		for _, want := range names {
			if c == want {
				return true
			}
		}
	}
	return false
}

// Enabled reports whether n's status is absent, "okay" or "ok" (the
// device-tree specification's enabled values).
func (n Node) Enabled() bool {
	s := n.Strings("status")
	return len(s) == 0 || s[0] == "okay" || s[0] == "ok"
}

// root is the device-tree root of n: the nearest ancestor called
// devicetree/base (sysfs spells it /sys/firmware/devicetree/base).
func (n Node) root() (string, bool) {
	for d := n.dir; d != "/" && d != "." && d != ""; d = filepath.Dir(d) {
		if filepath.Base(d) == "base" && filepath.Base(filepath.Dir(d)) == "devicetree" {
			return d, true
		}
	}
	return "", false
}

// Sysfs is the sysfs directory n's tree belongs to (.../sys for
// .../sys/firmware/devicetree/base/...), so a tree under a test directory
// finds the devices beside it; ok is false when n is not under a
// devicetree/base directory.
func (n Node) Sysfs() (string, bool) {
	r, ok := n.root()
	if !ok {
		return "", false
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(r))), true
}

// Rel is n's path below the tree's root ("/soc/ethernet@2188000"), or its
// whole path when it is not under a devicetree/base directory: two trees'
// nodes compare by it.
func (n Node) Rel() string {
	if r, ok := n.root(); ok {
		return "/" + strings.TrimPrefix(strings.TrimPrefix(filepath.ToSlash(n.dir), filepath.ToSlash(r)), "/")
	}
	return filepath.ToSlash(n.dir)
}

// Phandle reads n's phandle (or the older linux,phandle); ok is false
// when nothing refers to the node (it has none).
func (n Node) Phandle() (uint32, bool) {
	for _, name := range []string{"phandle", "linux,phandle"} {
		if v, err := n.U32(name); err == nil {
			return v, true
		}
	}
	return 0, false
}

// ByPhandle finds the node of n's tree whose phandle (or the older
// linux,phandle) is ph. Symlinks are not followed: sysfs device-tree nodes
// are plain directories. prop names the property that held ph, for the
// error.
func (n Node) ByPhandle(prop string, ph uint32) (Node, error) {
	root, ok := n.root()
	if !ok {
		return Node{}, fmt.Errorf("device-tree node %s is not under a devicetree/base directory: cannot resolve its %s", n.dir, prop)
	}
	var found string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return filepath.SkipDir
		}
		if d.IsDir() || (d.Name() != "phandle" && d.Name() != "linux,phandle") {
			return nil
		}
		if v, err := At(filepath.Dir(path)).U32(d.Name()); err == nil && v == ph {
			found = filepath.Dir(path)
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		if err == nil {
			err = fmt.Errorf("no node under %s has phandle %#x", root, ph)
		}
		return Node{}, err
	}
	return At(found), nil
}

// Referrers are the nodes whose one-cell property prop refers to n by its
// phandle (a switch port's ethernet = <&node>, for one), in walk order;
// none when n has no phandle.
func (n Node) Referrers(prop string) ([]Node, error) {
	ph, ok := n.Phandle()
	if !ok {
		return nil, nil
	}
	root, ok := n.root()
	if !ok {
		return nil, fmt.Errorf("device-tree node %s is not under a devicetree/base directory", n.dir)
	}
	var out []Node
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable corner of the tree says nothing
		}
		if d.IsDir() || d.Name() != prop {
			return nil
		}
		if v, err := At(filepath.Dir(path)).U32(prop); err == nil && v == ph {
			out = append(out, At(filepath.Dir(path)))
		}
		return nil
	})
	return out, err
}

// FixedLink is a MAC's fixed link (ethernet-controller.yaml): no PHY, a
// speed and duplex the board wires.
type FixedLink struct {
	Speed int // Mb/s
	Full  bool
	// Pause and AsymPause are the link partner's flow-control
	// abilities the binding lets the tree give.
	Pause, AsymPause bool
}

// FixedLink reads n's fixed link: a fixed-link subnode with speed (Mb/s)
// and the full-duplex, pause and asym-pause flags, or the older five-cell
// fixed-link property <phy-id full-duplex speed pause asym-pause>. ok is
// false when n has neither.
func (n Node) FixedLink() (l FixedLink, ok bool, err error) {
	if n.dir == "" {
		return l, false, nil
	}
	fl := n.Child("fixed-link")
	fi, err := os.Stat(fl.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return l, false, nil
	}
	if err != nil {
		return l, false, fmt.Errorf("device-tree %s: %w", fl, err)
	}
	if fi.IsDir() {
		v, err := fl.U32("speed")
		if err != nil {
			return l, false, fmt.Errorf("device-tree fixed-link node %s: speed: %w", fl, err)
		}
		return FixedLink{Speed: int(v), Full: fl.Has("full-duplex"), Pause: fl.Has("pause"), AsymPause: fl.Has("asym-pause")}, true, nil
	}
	b, err := n.Bytes("fixed-link")
	if err != nil {
		return l, false, fmt.Errorf("device-tree %s: %w", fl, err)
	}
	if len(b) != 20 {
		return l, false, fmt.Errorf("device-tree %s: %d bytes; the fixed-link property has five cells <phy-id full-duplex speed pause asym-pause> (or use a fixed-link subnode)", fl, len(b))
	}
	c := func(i int) uint32 { return binary.BigEndian.Uint32(b[4*i:]) }
	return FixedLink{Speed: int(c(2)), Full: c(1) != 0, Pause: c(3) != 0, AsymPause: c(4) != 0}, true, nil
}

// PHY is what a MAC's device-tree node says about its PHY.
type PHY struct {
	Found bool // the node names a PHY (phy-handle) or a fixed link
	Fixed bool // fixed-link: no PHY to read
	// Link is the fixed link (Fixed).
	Link FixedLink
	Prop string // the property that named the PHY: phy-handle, phy or phy-device
	Addr int    // the PHY node's reg: its MDIO address
	Node Node   // the PHY node
	// Parent is the node the PHY node sits in: an MDIO bus, either an
	// mdio subnode of a MAC or an MDIO controller of its own.
	Parent Node
	// Bus is the node of the MAC whose mdio subnode holds the PHY, the
	// zero Node when the PHY sits elsewhere (an MDIO controller of its
	// own).
	Bus Node
}

// ReadPHY reads n's fixed link (FixedLink), else its phy-handle (or phy,
// or phy-device, the older names the Ethernet binding keeps) and the PHY
// node it points to. Found is false when the node says nothing.
func (n Node) ReadPHY() (PHY, error) {
	var r PHY
	if n.dir == "" {
		return r, nil
	}
	if l, ok, err := n.FixedLink(); err != nil {
		return r, err
	} else if ok {
		r.Found, r.Fixed, r.Link = true, true, l
		return r, nil
	}
	var ph uint32
	for _, name := range []string{"phy-handle", "phy", "phy-device"} {
		v, err := n.U32(name)
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
	phyNode, err := n.ByPhandle(r.Prop, ph)
	if err != nil {
		return r, fmt.Errorf("device-tree %s = %#x: %w", n.Prop(r.Prop), ph, err)
	}
	reg, err := phyNode.U32("reg")
	if err != nil {
		return r, fmt.Errorf("device-tree PHY node %s (the port's %s): reg: %w", phyNode, r.Prop, err)
	}
	if reg > 31 {
		return r, fmt.Errorf("device-tree PHY node %s: reg %d is not an MDIO address (0..31)", phyNode, reg)
	}
	r.Found, r.Addr, r.Node = true, int(reg), phyNode
	r.Parent = phyNode.Parent()
	// The PHY sits in an mdio subnode of the MAC that drives its bus, or
	// in an MDIO controller of its own (CentralMDIO), which is no MAC's.
	if strings.HasPrefix(r.Parent.Name(), "mdio") && !r.Parent.CentralMDIO() {
		r.Bus = r.Parent.Parent()
	}
	return r, nil
}

// centralMDIO are the compatible strings of an MDIO controller that is a
// device of its own (the LS1028A's ENETC central MDIO, PCI 1957:ee01).
var centralMDIO = []string{"pci1957,ee01", "fsl,enetc-mdio"}

// CentralMDIO reports whether n is an MDIO controller of its own (the
// LS1028A's central MDIO function, 00:00.3), not a MAC's mdio subnode.
func (n Node) CentralMDIO() bool { return n.Compatible(centralMDIO...) }

package fec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/gopmd/gopmd/internal/devtree"
)

// The MDIO bus a port's PHY sits on (docs/hardware-fec.md §5.5).
//
// Each MAC drives one MDIO bus with its MMFR/MSCR (its mdioBus). On the
// i.MX6UL-EVK and the i.MX7D boards ENET1's PHY hangs off ENET2's bus, and
// ENET1's own MDIO pins reach nothing. A port whose device tree puts its
// PHY under another MAC's mdio node reaches it one of two ways:
//
//   - shared in process: that MAC is a port of this process; its mdioBus
//     serves both ports, one frame at a time under the bus's lock;
//   - kernel ioctl: the kernel's fec driver owns that MAC as a network
//     interface; the port asks it with the MII ioctls (SIOCGMIIREG,
//     SIOCSMIIREG: kernelmii.go) and never touches that MAC's registers.
//
// Anything else (the other MAC bound to UIO or vfio-platform but not
// open in this process, or bound to no driver) is refused with what to do.

// mdioBus is one MAC's MDIO master, serialised by mu. owner is nil once
// the port that drives it closed.
type mdioBus struct {
	mu    sync.Mutex
	owner *Port
	node  string // the owner's device-tree node ("" without one)
	name  string // the owner's name, for errors
}

// busRegistry maps device-tree nodes to the MDIO buses of the open ports
// of this process, for ports whose PHY sits on another MAC's bus.
var busRegistry = struct {
	sync.Mutex
	m map[string]*mdioBus
}{m: map[string]*mdioBus{}}

// registerBus makes p's bus reachable by ports whose PHY sits on it.
func (p *Port) registerBus() {
	if !p.dev.Node.Exists() {
		return
	}
	node := p.dev.Node.Path()
	p.own.node = node
	busRegistry.Lock()
	if b, ok := busRegistry.m[node]; !ok || b.closed() {
		busRegistry.m[node] = p.own
	}
	busRegistry.Unlock()
}

// detachBus takes p's bus out of service before its registers go away:
// a port sharing it gets an error naming the closed owner from now on.
func (p *Port) detachBus() {
	b := p.own
	b.mu.Lock()
	b.owner = nil
	b.mu.Unlock()
	busRegistry.Lock()
	if busRegistry.m[b.node] == b {
		delete(busRegistry.m, b.node)
	}
	busRegistry.Unlock()
}

func (b *mdioBus) closed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.owner == nil
}

// busOf is the open bus of the MAC at node, nil when no port of this
// process drives it.
func busOf(node devtree.Node) *mdioBus {
	busRegistry.Lock()
	defer busRegistry.Unlock()
	b := busRegistry.m[node.Path()]
	if b == nil || b.closed() {
		return nil
	}
	return b
}

// phyBus is how a port reaches its PHY's MDIO bus: its own MAC's, another
// port's (shared), or the kernel's MII ioctls on the interface that owns
// the bus's MAC.
type phyBus interface {
	read(phy, reg int) (uint16, error)
	write(phy, reg int, v uint16) error
	// path says which it is, for nicctl info and errors.
	path() MDIOPath
}

// MDIOPath says how a port reaches the MDIO bus its PHY sits on.
type MDIOPath struct {
	// Kind is "own" (the port's MMFR), "shared" (another port of this
	// process drives the bus) or "kernel" (the kernel's MII ioctls on the
	// network interface that owns the bus's MAC).
	Kind string
	// Node is the device-tree node of the MAC whose bus it is.
	Node string
	// Port names the port that drives a shared bus; Interface the
	// kernel's network interface for "kernel".
	Port, Interface string
}

func (m MDIOPath) String() string {
	switch m.Kind {
	case "shared":
		return fmt.Sprintf("shared in process: the MDIO bus of %s, driven by port %s", m.Node, m.Port)
	case "kernel":
		return fmt.Sprintf("kernel MII ioctls (SIOCGMIIREG/SIOCSMIIREG) on %s, which owns the MDIO bus of %s", m.Interface, m.Node)
	}
	if m.Node != "" {
		return "own (this port's MMFR, the MDIO bus of " + m.Node + ")"
	}
	return "own (this port's MMFR)"
}

// sharedBus is a port's view of another port's bus.
type sharedBus struct{ b *mdioBus }

func (s sharedBus) read(phy, reg int) (uint16, error) {
	v, err := s.b.frame(mdioRead(phy, reg))
	return uint16(v), err
}

func (s sharedBus) write(phy, reg int, v uint16) error {
	_, err := s.b.frame(mdioWrite(phy, reg, v))
	return err
}

func (s sharedBus) path() MDIOPath {
	return MDIOPath{Kind: "shared", Node: s.b.node, Port: s.b.name}
}

// ownBus is a port's own bus as its phyBus.
type ownBus struct{ b *mdioBus }

func (o ownBus) read(phy, reg int) (uint16, error) {
	v, err := o.b.frame(mdioRead(phy, reg))
	return uint16(v), err
}

func (o ownBus) write(phy, reg int, v uint16) error {
	_, err := o.b.frame(mdioWrite(phy, reg, v))
	return err
}

func (o ownBus) path() MDIOPath { return MDIOPath{Kind: "own", Node: o.b.node} }

// kernelBus reaches a bus through the kernel's MII ioctls on ifname.
type kernelBus struct {
	mii    KernelMII
	ifname string
	node   string
}

func (k kernelBus) read(phy, reg int) (uint16, error) {
	v, err := k.mii.MIIRead(k.ifname, phy, reg)
	if err != nil {
		return 0, fmt.Errorf("MDIO read phy %d reg %d through %s (kernel MII ioctl): %w", phy, reg, k.ifname, err)
	}
	return v, nil
}

func (k kernelBus) write(phy, reg int, v uint16) error {
	if err := k.mii.MIIWrite(k.ifname, phy, reg, v); err != nil {
		return fmt.Errorf("MDIO write phy %d reg %d through %s (kernel MII ioctl): %w", phy, reg, k.ifname, err)
	}
	return nil
}

func (k kernelBus) path() MDIOPath {
	return MDIOPath{Kind: "kernel", Node: k.node, Interface: k.ifname}
}

// kernelMII is what the kernel path uses; tests replace it.
var kernelMII KernelMII = sockMII{}

// MDIOPath says how the port reaches the MDIO bus of its PHY (own, shared
// in process, kernel ioctl). MDIORead and MDIOWrite go the same way.
func (p *Port) MDIOPath() MDIOPath { return p.bus.path() }

// attachPHYBus sets the port's bus for a PHY under the mdio node of the
// MAC at busNode: that MAC's port in this process, else the kernel's
// network interface for it, else an error saying what to do.
func (p *Port) attachPHYBus(busNode, phyNode devtree.Node, addr int) error {
	if b := busOf(busNode); b != nil {
		p.bus = sharedBus{b}
		return nil
	}
	ifname, drv, err := netdevOfNode(busNode)
	if err != nil || ifname == "" {
		held := "no driver holds it"
		switch {
		case err != nil:
			held = "its kernel interface cannot be looked up: " + err.Error()
		case drv != "":
			held = "its driver is " + drv + " and it has no network interface"
		}
		return fmt.Errorf("the device tree's phy-handle puts this port's PHY (%s, address %d) on the MDIO bus of %s, and no port of this process drives that MAC (%s): open that MAC's port first in this process (it then serves this port's PHY too), leave that MAC to the kernel's fec driver with its interface up (the PHY is then reached through the kernel's MII ioctls), give phy=none to run this port as a fixed link (fixed-link=SPEED), or phy=scan (or phy=N) if this port's own MDIO pins reach a PHY of its own (QEMU 7.2 gives each ENET one)",
			phyNode, addr, busNode, held)
	}
	k := kernelBus{mii: kernelMII, ifname: ifname, node: busNode.Path()}
	if _, err := k.mii.MIIPHY(ifname); err != nil {
		return fmt.Errorf("the device tree's phy-handle puts this port's PHY (%s, address %d) on the MDIO bus of %s, which the kernel owns as %s, and its MII ioctls answer no (%v): the kernel's fec answers them only while the interface is up (ip link set %s up), or give phy=none (a fixed link)",
			phyNode, addr, busNode, ifname, err, ifname)
	}
	p.bus = k
	return nil
}

// netdevOfNode finds the platform device whose of_node is node (under the
// sysfs the node's devicetree directory belongs to) and returns its
// network interface and driver; ifname is "" when it has none.
func netdevOfNode(node devtree.Node) (ifname, drv string, err error) {
	sys, ok := node.Sysfs()
	if !ok {
		return "", "", fmt.Errorf("%s is not under a devicetree/base directory: cannot find its platform device", node)
	}
	devs := filepath.Join(sys, "bus/platform/devices")
	want, err := filepath.EvalSymlinks(node.Path())
	if err != nil {
		return "", "", err
	}
	ents, err := os.ReadDir(devs)
	if err != nil {
		return "", "", fmt.Errorf("list platform devices: %w", err)
	}
	for _, e := range ents {
		dir := filepath.Join(devs, e.Name())
		of, err := devtree.OfNode(dir)
		if err != nil || of.Path() != want {
			continue
		}
		if l, err := os.Readlink(filepath.Join(dir, "driver")); err == nil {
			drv = filepath.Base(l)
		}
		nets, err := os.ReadDir(filepath.Join(dir, "net"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return "", drv, nil
			}
			return "", drv, err
		}
		var names []string
		for _, n := range nets {
			names = append(names, n.Name())
		}
		sort.Strings(names)
		if len(names) > 0 {
			return names[0], drv, nil
		}
		return "", drv, nil
	}
	return "", "", fmt.Errorf("no platform device under %s has it as of_node", devs)
}

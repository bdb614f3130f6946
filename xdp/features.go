package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Features are a kernel driver's XDP features, as the netdev generic
// netlink family reports them (NETDEV_A_DEV_XDP_FEATURES, Linux 6.3 on;
// the bits of the kernel's netdev_xdp_act).
type Features uint64

const (
	FeatureBasic       Features = 1 << iota // XDP_PASS, DROP, TX, ABORTED in the driver
	FeatureRedirect                         // XDP_REDIRECT in the driver (native AF_XDP needs it)
	FeatureNdoXmit                          // takes frames redirected to it
	FeatureXSKZeroCopy                      // AF_XDP zero-copy
	FeatureHWOffload                        // runs programs in the NIC
	FeatureRxSG                             // multi-buffer frames on RX
	FeatureNdoXmitSG                        // multi-buffer frames redirected to it
)

// featureNames are the names the netdev family's specification gives the
// bits (Documentation/netlink/specs/netdev.yaml, "xdp-act").
var featureNames = []string{"basic", "redirect", "ndo-xmit", "xsk-zerocopy", "hw-offload", "rx-sg", "ndo-xmit-sg"}

// Names lists the features set, in bit order; unknown bits as bitN.
func (f Features) Names() []string {
	out := []string{}
	for i := 0; i < 64; i++ {
		if f&(1<<i) == 0 {
			continue
		}
		if i < len(featureNames) {
			out = append(out, featureNames[i])
		} else {
			out = append(out, fmt.Sprintf("bit%d", i))
		}
	}
	return out
}

// The netdev generic netlink family (include/uapi/linux/netdev.h).
const (
	netdevCmdDevGet        = 1
	netdevADevIfindex      = 1
	netdevADevXDPFeatures  = 3
	netdevADevXDPZCMaxSegs = 4
)

// genlFamily resolves a generic netlink family's id by name.
func genlFamily(name string) (uint16, error) {
	body := genlHeader(unix.CTRL_CMD_GETFAMILY)
	body = putAttr(body, unix.CTRL_ATTR_FAMILY_NAME, append([]byte(name), 0))
	replies, err := nlRequestProto(unix.NETLINK_GENERIC, unix.GENL_ID_CTRL, 0, body)
	if err != nil {
		return 0, err
	}
	var id uint16
	for _, r := range replies {
		if len(r) < unix.GENL_HDRLEN {
			continue
		}
		attrs(r[unix.GENL_HDRLEN:], func(typ uint16, v []byte) {
			if typ == unix.CTRL_ATTR_FAMILY_ID && len(v) >= 2 {
				id = binary.NativeEndian.Uint16(v)
			}
		})
	}
	if id == 0 {
		return 0, fmt.Errorf("generic netlink family %q: no id in the reply", name)
	}
	return id, nil
}

func genlHeader(cmd uint8) []byte {
	return []byte{cmd, 1, 0, 0} // genlmsghdr: cmd, version, reserved
}

// queryFeatures reads an interface's XDP features and its AF_XDP
// zero-copy segment limit over the netdev family.
func queryFeatures(ifindex int) (Features, uint32, error) {
	fam, err := genlFamily("netdev")
	if err != nil {
		return 0, 0, fmt.Errorf("the kernel has no netdev netlink family (Linux 6.3 on reports XDP features): %w", err)
	}
	body := genlHeader(netdevCmdDevGet)
	v := make([]byte, 4)
	binary.NativeEndian.PutUint32(v, uint32(ifindex))
	body = putAttr(body, netdevADevIfindex, v)
	replies, err := nlRequestProto(unix.NETLINK_GENERIC, fam, 0, body)
	if err != nil {
		return 0, 0, fmt.Errorf("netdev dev-get: %w", err)
	}
	var f Features
	var segs uint32
	found := false
	for _, r := range replies {
		if len(r) < unix.GENL_HDRLEN {
			continue
		}
		attrs(r[unix.GENL_HDRLEN:], func(typ uint16, v []byte) {
			switch {
			case typ == netdevADevXDPFeatures && len(v) >= 8:
				f, found = Features(binary.NativeEndian.Uint64(v)), true
			case typ == netdevADevXDPZCMaxSegs && len(v) >= 4:
				segs = binary.NativeEndian.Uint32(v)
			}
		})
	}
	if !found {
		return 0, 0, errors.New("netdev dev-get: the reply carries no xdp-features")
	}
	return f, segs, nil
}

// Netdev is a kernel network interface as the xdp port kind sees it.
type Netdev struct {
	Name     string
	Index    int
	MAC      net.HardwareAddr
	MTU      int
	Up       bool // administratively up (IFF_UP)
	Running  bool // up with a carrier (IFF_RUNNING)
	Driver   string
	RxQueues int
	// Features are the driver's XDP features when FeaturesErr is empty;
	// FeaturesErr says why they are unknown (a kernel before 6.3).
	Features    Features
	FeaturesErr string
	ZCMaxSegs   uint32
	// ProgID is the XDP program attached now (0: none), ProgName its
	// name, ProgMode how it runs.
	ProgID   uint32
	ProgName string
	ProgMode string
	// ProgHolders are the processes that hold the program (a running
	// port's), when it is gopmd's; none, it was left by a run that ended
	// without detaching it.
	ProgHolders []Holder
}

// Netdevs lists the interfaces of this network namespace an xdp: port
// can open: every Ethernet interface but loopback, up or down.
func Netdevs() ([]Netdev, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []Netdev
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagLoopback != 0 || len(ifc.HardwareAddr) != 6 {
			continue
		}
		out = append(out, describe(ifc))
	}
	return out, nil
}

// LookupNetdev describes the interface named name, as Netdevs does.
func LookupNetdev(name string) (Netdev, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return Netdev{}, fmt.Errorf("no network interface %s in this network namespace (ip link shows the ones there are): %w", name, err)
	}
	if ifc.Flags&net.FlagLoopback != 0 || len(ifc.HardwareAddr) != 6 {
		return Netdev{}, fmt.Errorf("interface %s is not an Ethernet interface (hardware address %q): AF_XDP ports take Ethernet interfaces", name, ifc.HardwareAddr)
	}
	return describe(*ifc), nil
}

func describe(ifc net.Interface) Netdev {
	n := Netdev{Name: ifc.Name, Index: ifc.Index, MAC: ifc.HardwareAddr, MTU: ifc.MTU,
		Up: ifc.Flags&net.FlagUp != 0, Running: ifc.Flags&net.FlagRunning != 0}
	if ents, err := os.ReadDir("/sys/class/net/" + ifc.Name + "/queues"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "rx-") {
				n.RxQueues++
			}
		}
	}
	if l, err := os.Readlink("/sys/class/net/" + ifc.Name + "/device/driver"); err == nil {
		n.Driver = filepath.Base(l)
	}
	kind, att, err := linkKind(ifc.Index)
	if err == nil {
		if n.Driver == "" {
			n.Driver = kind
		}
		n.ProgID, n.ProgMode = att.ProgID, attachedModeName(att.Mode)
		if att.ProgID != 0 {
			n.ProgName = "?"
			if pr, err := ebpf.NewProgramFromID(ebpf.ProgramID(att.ProgID)); err == nil {
				if info, err := pr.Info(); err == nil {
					n.ProgName = info.Name
				}
				pr.Close()
			}
			if n.ProgName == progName {
				n.ProgHolders, _ = progHolders(att.ProgID)
			}
		}
	}
	if f, segs, err := queryFeatures(ifc.Index); err != nil {
		n.FeaturesErr = err.Error()
	} else {
		n.Features, n.ZCMaxSegs = f, segs
	}
	return n
}

// linkKind reads the interface's link kind (IFLA_INFO_KIND: "veth",
// "bridge"; empty for a plain device) and XDP attachment.
func linkKind(ifindex int) (string, xdpAttached, error) {
	var kind string
	var a xdpAttached
	replies, err := nlRequest(unix.RTM_GETLINK, 0, ifinfomsg(ifindex))
	if err != nil {
		return "", a, err
	}
	for _, r := range replies {
		if len(r) < unix.SizeofIfInfomsg {
			continue
		}
		attrs(r[unix.SizeofIfInfomsg:], func(typ uint16, val []byte) {
			switch typ {
			case unix.IFLA_LINKINFO:
				attrs(val, func(typ uint16, v []byte) {
					if typ == unix.IFLA_INFO_KIND {
						kind = strings.TrimRight(string(v), "\x00")
					}
				})
			case unix.IFLA_XDP:
				attrs(val, func(typ uint16, v []byte) {
					switch {
					case typ == unix.IFLA_XDP_ATTACHED && len(v) >= 1:
						a.Mode = v[0]
					case typ == unix.IFLA_XDP_PROG_ID && len(v) >= 4:
						a.ProgID = binary.NativeEndian.Uint32(v)
					}
				})
			}
		})
	}
	return kind, a, nil
}

// Plan is what an xdp: port with mode=auto and zero-copy=auto would get
// on an interface, and why, from the driver's XDP features.
type Plan struct {
	Mode        string // "native", "generic", or "native or generic" when the features are unknown
	ModeWhy     string
	ZeroCopy    string // "yes", "no", or "unknown"
	ZeroCopyWhy string
	// Program is what the attach would meet: empty for none, else the
	// program there and whether force=1 is needed.
	Program string
	// OpenRefused: an open without force=1 is refused (another program,
	// or gopmd's in use by a running port).
	OpenRefused bool
}

// Plan reads the features and says what the driver will give.
func (n Netdev) Plan() Plan {
	var p Plan
	switch {
	case n.FeaturesErr != "":
		p.Mode = "native or generic"
		p.ModeWhy = "the XDP features are unknown (" + n.FeaturesErr + "): the port tries native mode and falls back to generic"
		p.ZeroCopy = "unknown"
		p.ZeroCopyWhy = "the XDP features are unknown: the port tries zero-copy in native mode and falls back to copy"
	case n.Features&(FeatureBasic|FeatureRedirect) == FeatureBasic|FeatureRedirect:
		p.Mode = "native"
		p.ModeWhy = "driver " + n.driverName() + " runs XDP itself with XDP_REDIRECT (features: " + strings.Join(n.Features.Names(), ", ") + ")"
		if n.Features&FeatureXSKZeroCopy != 0 {
			p.ZeroCopy, p.ZeroCopyWhy = "yes", "driver "+n.driverName()+" offers AF_XDP zero-copy (xsk-zerocopy)"
		} else {
			p.ZeroCopy, p.ZeroCopyWhy = "no", "driver "+n.driverName()+" does not offer AF_XDP zero-copy (no xsk-zerocopy in its features): frames are copied into the UMEM"
		}
	default:
		p.Mode = "generic"
		what := "no native XDP (features: none)"
		if n.Features != 0 {
			what = "no native XDP_REDIRECT (features: " + strings.Join(n.Features.Names(), ", ") + ")"
		}
		p.ModeWhy = "driver " + n.driverName() + " has " + what + ": the program runs in the kernel's generic path, after the socket buffer is built"
		p.ZeroCopy, p.ZeroCopyWhy = "no", "generic mode copies every frame into the UMEM"
	}
	switch {
	case n.ProgID == 0:
	case n.ProgName == progName && len(n.ProgHolders) > 0:
		p.Program = fmt.Sprintf("program %q (id %d, %s mode) is gopmd's, in use by process %s: a port runs on the interface, and an open is refused without force=1 while it does", n.ProgName, n.ProgID, n.ProgMode, holderList(n.ProgHolders))
		p.OpenRefused = true
	case n.ProgName == progName:
		p.Program = fmt.Sprintf("program %q (id %d, %s mode) is gopmd's, held by no process: a run that ended without detaching it (killed or crashed) left it, and the next open replaces it without force=1", n.ProgName, n.ProgID, n.ProgMode)
	default:
		p.Program = fmt.Sprintf("interface runs XDP program %q (id %d, %s mode): an open is refused without force=1", n.ProgName, n.ProgID, n.ProgMode)
		p.OpenRefused = true
	}
	return p
}

func (n Netdev) driverName() string {
	if n.Driver == "" {
		return "of " + n.Name
	}
	return n.Driver
}

package pci

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Use is one way the host depends on a device: a network interface that is
// up, has addresses or carries routes, or a block device that is mounted or
// used as swap. Detaching the device would cut that off.
type Use struct {
	// Kind is "interface", "address", "route", "mount" or "swap".
	Kind string `json:"kind"`
	// What says it in words ("interface eth0 is up", "/dev/vda1 is
	// mounted on /").
	What string `json:"what"`
}

// String is What.
func (u Use) String() string { return u.What }

// InUse lists what the host uses a device for: bus is "pci" or
// "platform", name the device's entry in /sys/bus/<bus>/devices. It looks
// at every network interface and block device that sysfs places below the
// device (so a bridge's children count too) and reads, under s's root:
// /sys/class/net/<if>/{flags,operstate}, /proc/net/if_inet6,
// /proc/net/route, /proc/net/ipv6_route, /proc/self/mountinfo,
// /proc/swaps and /sys/dev/block. On the running system (no root) IPv4
// addresses are also asked of the kernel (netlink). A file that cannot be
// read is an error: a check that could not be made is not a pass.
func (s Sys) InUse(bus, name string) ([]Use, error) {
	devDir, err := filepath.EvalSymlinks(s.Path("/sys/bus/" + bus + "/devices/" + name))
	if err != nil {
		return nil, &DeviceError{Device: name, Op: "in-use check", Err: err, Fix: "is the device name right? ls /sys/bus/" + bus + "/devices"}
	}
	var uses []Use
	ifs, err := s.interfacesBelow(devDir)
	if err != nil {
		return nil, err
	}
	for _, ifn := range ifs {
		u, err := s.interfaceUses(ifn)
		if err != nil {
			return nil, &DeviceError{Device: name, Op: "in-use check of interface " + ifn, Err: err, Fix: "cannot tell whether the host uses it; check by hand (ip addr, ip route) and use --force"}
		}
		uses = append(uses, u...)
	}
	u, err := s.blockUses(devDir)
	if err != nil {
		return nil, &DeviceError{Device: name, Op: "in-use check of block devices", Err: err, Fix: "cannot tell whether a filesystem on it is mounted; check by hand (findmnt, swapon) and use --force"}
	}
	return append(uses, u...), nil
}

// below reports whether sysfs path p lies in (or is) directory dir.
func below(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// interfacesBelow lists the network interfaces whose device is devDir or
// a device under it.
func (s Sys) interfacesBelow(devDir string) ([]string, error) {
	ents, err := os.ReadDir(s.Path("/sys/class/net"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		real, err := filepath.EvalSymlinks(s.Path("/sys/class/net/" + e.Name()))
		if err != nil {
			continue // an interface that went away meanwhile
		}
		if below(real, devDir) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// iffUp is IFF_UP in /sys/class/net/<if>/flags (include/uapi/linux/if.h).
const iffUp = 0x1

func (s Sys) interfaceUses(ifn string) ([]Use, error) {
	var uses []Use
	dir := s.Path("/sys/class/net/" + ifn)
	flags, err := readHex(dir + "/flags")
	if err != nil {
		return nil, err
	}
	oper, _ := readString(dir + "/operstate")
	if flags&iffUp != 0 || oper == "up" {
		uses = append(uses, Use{"interface", fmt.Sprintf("interface %s is up (operstate %s)", ifn, oper)})
	}
	addrs, err := s.addresses(ifn)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		uses = append(uses, Use{"address", fmt.Sprintf("interface %s has address %s", ifn, a)})
	}
	routes, err := s.routes(ifn)
	if err != nil {
		return nil, err
	}
	for _, r := range routes {
		uses = append(uses, Use{"route", fmt.Sprintf("route %s goes out of interface %s", r, ifn)})
	}
	return uses, nil
}

// addresses lists ifn's IPv6 addresses from /proc/net/if_inet6 and, on
// the running system, every address netlink reports.
func (s Sys) addresses(ifn string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	lines, err := readLines(s.Path("/proc/net/if_inet6"))
	if err != nil && !os.IsNotExist(err) { // no IPv6 in this kernel: nothing to read
		return nil, err
	}
	for _, l := range lines {
		// address ifindex prefixlen scope flags name
		f := strings.Fields(l)
		if len(f) != 6 || f[5] != ifn || len(f[0]) != 32 {
			continue
		}
		ip := make(net.IP, 16)
		for i := 0; i < 16; i++ {
			b, _ := strconv.ParseUint(f[0][2*i:2*i+2], 16, 8)
			ip[i] = byte(b)
		}
		plen, _ := strconv.ParseUint(f[2], 16, 8)
		add(fmt.Sprintf("%s/%d", ip, plen))
	}
	if s.Root == "" || s.Root == "/" {
		if i, err := net.InterfaceByName(ifn); err == nil {
			as, err := i.Addrs()
			if err != nil {
				return nil, err
			}
			for _, a := range as {
				add(a.String())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// routes lists the IPv4 and IPv6 routes out of ifn.
func (s Sys) routes(ifn string) ([]string, error) {
	var out []string
	lines, err := readLines(s.Path("/proc/net/route"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for i, l := range lines {
		// Iface Destination Gateway Flags RefCnt Use Metric Mask ...
		f := strings.Fields(l)
		if i == 0 || len(f) < 8 || f[0] != ifn {
			continue
		}
		dst, mask := hexIPv4(f[1]), hexIPv4(f[7])
		ones, _ := net.IPMask(mask.To4()).Size()
		out = append(out, fmt.Sprintf("%s/%d", dst, ones))
	}
	lines, err = readLines(s.Path("/proc/net/ipv6_route"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, l := range lines {
		// dst dstlen src srclen nexthop metric refcnt use flags name
		f := strings.Fields(l)
		if len(f) != 10 || f[9] != ifn || len(f[0]) != 32 {
			continue
		}
		ip := make(net.IP, 16)
		for i := 0; i < 16; i++ {
			b, _ := strconv.ParseUint(f[0][2*i:2*i+2], 16, 8)
			ip[i] = byte(b)
		}
		plen, _ := strconv.ParseUint(f[1], 16, 8)
		out = append(out, fmt.Sprintf("%s/%d", ip, plen))
	}
	return out, nil
}

// hexIPv4 decodes /proc/net/route's little-endian hex IPv4 address.
func hexIPv4(h string) net.IP {
	v, _ := strconv.ParseUint(h, 16, 32)
	return net.IPv4(byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

// blockUses lists the mounts and swap areas on block devices under devDir,
// through device-mapper and md stacks (a block device's slaves).
func (s Sys) blockUses(devDir string) ([]Use, error) {
	var uses []Use
	lines, err := readLines(s.Path("/proc/self/mountinfo"))
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		// id parent major:minor root mountpoint options ... - fstype source superopts
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		src := ""
		for i, x := range f {
			if x == "-" && i+2 < len(f) {
				src = f[i+2]
			}
		}
		if s.blockBelow(s.Path("/sys/dev/block/"+f[2]), devDir, 0) || s.devNodeBelow(src, devDir) {
			uses = append(uses, Use{"mount", fmt.Sprintf("%s (%s) is mounted on %s", src, f[2], unescapeMount(f[4]))})
		}
	}
	lines, err = readLines(s.Path("/proc/swaps"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for i, l := range lines {
		f := strings.Fields(l)
		if i == 0 || len(f) == 0 {
			continue
		}
		// A swap file lives on a mounted filesystem, found above.
		if s.devNodeBelow(unescapeMount(f[0]), devDir) {
			uses = append(uses, Use{"swap", unescapeMount(f[0]) + " is in use as swap"})
		}
	}
	return uses, nil
}

// devNodeBelow reports whether /dev/X (or a link to it, such as
// /dev/mapper/root) is a block device under devDir.
func (s Sys) devNodeBelow(node, devDir string) bool {
	if !strings.HasPrefix(node, "/dev/") {
		return false
	}
	name := filepath.Base(node)
	if real, err := filepath.EvalSymlinks(s.Path(node)); err == nil {
		name = filepath.Base(real)
	}
	return s.blockBelow(s.Path("/sys/class/block/"+name), devDir, 0)
}

// blockBelow reports whether the block device at sysfs path p, or one it
// is stacked on (slaves), lies under devDir.
func (s Sys) blockBelow(p, devDir string, depth int) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil || depth > 8 {
		return false
	}
	if below(real, devDir) {
		return true
	}
	// A partition's slaves are its disk's; a dm or md device lists the
	// devices it is built on.
	for _, dir := range []string{real + "/slaves", filepath.Dir(real) + "/slaves"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if s.blockBelow(filepath.Join(dir, e.Name()), devDir, depth+1) {
				return true
			}
		}
	}
	return false
}

// unescapeMount undoes the octal escapes of mountinfo and /proc/swaps
// ("\040" for a space).
func unescapeMount(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+3 < len(v) {
			if n, err := strconv.ParseUint(v[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func readLines(p string) ([]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}

package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
	"github.com/gopmd/gopmd/pci"
)

// The FEC's DMA memory check (docs/hardware.md "DMA memory: a carve-out",
// docs/hardware-fec.md §4.7): a
// non-coherent FEC needs its descriptor rings (and on 32-bit ARM its
// buffers) in uncached memory, which user space gets only from a physical
// carve-out, RAM the kernel does not manage, named with
// ?dma-carveout=ADDR+SIZE. Huge pages do not help: the driver allocates
// 4 KiB pages and pagemap memory is cached. The check looks for such RAM
// below 4 GiB (the FEC's buffer addresses are 32 bits) in the two places
// a board gets it: a reserved-memory node with no-map, and RAM the device
// tree's memory nodes describe but /proc/iomem does not list as System RAM
// (mem= on the kernel command line).

// carveoutSize is the carve-out the check proposes when there is none:
// the rig's 64 MiB, ample for a port's rings and pools.
const carveoutSize = 64 << 20

// dmaCarveout is one stretch of RAM the kernel does not manage.
type dmaCarveout struct {
	Source string `json:"source"` // "reserved-memory/NODE" or "mem="
	Addr   uint64 `json:"addr"`
	Size   uint64 `json:"size"`
	// Option is the spec option that names it; "" when it is unusable.
	Option string `json:"option,omitempty"`
	// Unusable says why it cannot serve (mapped by the kernel, above 4 GiB).
	Unusable string `json:"unusable,omitempty"`
}

// dmaCheck is what a non-coherent FEC needs and what the board has.
type dmaCheck struct {
	Need      string        `json:"need"`
	Carveouts []dmaCarveout `json:"carveouts,omitempty"`
	// Missing says exactly what to add when no carve-out is usable.
	Missing string `json:"missing,omitempty"`
}

func (c *dmaCheck) text(p func(k, f string, a ...any)) {
	p("dma memory", "%s", c.Need)
	for _, co := range c.Carveouts {
		if co.Unusable != "" {
			p("carve-out", "%s %#x+%s: not usable: %s", co.Source, co.Addr, sizeString(co.Size), co.Unusable)
		} else {
			p("carve-out", "%s %#x+%s: open with ?%s", co.Source, co.Addr, sizeString(co.Size), co.Option)
		}
	}
	if c.Missing != "" {
		p("carve-out", "missing: %s", c.Missing)
	}
}

// carveoutOption spells a range the way dma-carveout= takes it.
func carveoutOption(addr, size uint64) string {
	s := strconv.FormatUint(size, 10)
	if size%(1<<20) == 0 {
		s = strconv.FormatUint(size>>20, 10) + "M"
	}
	return fmt.Sprintf("dma-carveout=%#x+%s", addr, s)
}

// checkDMAMemory is the check for platform device pd, nil when it is not a
// non-coherent device the fec driver claims.
func checkDMAMemory(e *env, pd *pci.PlatformDevice) *dmaCheck {
	if name, ok := driver.Claims(&driver.Device{Bus: "platform", Compatible: pd.Compatible}); !ok || name != "fec" || pd.DMACoherent {
		return nil
	}
	c := &dmaCheck{Need: "carve-out: the FEC's DMA is not coherent, so its descriptor rings (and on 32-bit ARM its packet buffers) need uncached memory, which only a physical carve-out below 4 GiB gives; huge pages do not help"}
	dt := devtree.At(e.sys.Path("/sys/firmware/devicetree/base"))
	ram := systemRAM(e)
	for _, co := range reservedNoMap(dt) {
		c.Carveouts = append(c.Carveouts, judge(co, ram))
	}
	if mem := memParam(e); mem != "" {
		for _, co := range unmanagedRAM(dt, ram) {
			co.Source = "RAM past mem=" + mem
			c.Carveouts = append(c.Carveouts, judge(co, ram))
		}
	}
	for _, co := range c.Carveouts {
		if co.Unusable == "" {
			return c
		}
	}
	c.Missing = missingCarveout(dt, ram)
	return c
}

// judge fills in whether a candidate can serve the FEC.
func judge(co dmaCarveout, ram []pci.PhysRange) dmaCarveout {
	switch {
	case co.Unusable != "":
	case co.Addr+co.Size > 1<<32:
		co.Unusable = "it reaches past 4 GiB and the FEC addresses only 32 bits"
	case overlaps(co, ram):
		co.Unusable = "the kernel manages it (System RAM in /proc/iomem), so /dev/mem refuses it"
	default:
		co.Option = carveoutOption(co.Addr, co.Size)
	}
	return co
}

func overlaps(co dmaCarveout, ram []pci.PhysRange) bool {
	for _, r := range ram {
		if co.Addr < r.Addr+r.Size && r.Addr < co.Addr+co.Size {
			return true
		}
	}
	return false
}

// regOf is a node's reg (no bus translation: memory and reserved-memory
// sit at the root, where addresses are physical), nil when it has none or
// it cannot be decoded.
func regOf(node devtree.Node) []pci.PhysRange {
	regs, err := node.Reg()
	if err != nil {
		return nil
	}
	var out []pci.PhysRange
	for _, r := range regs {
		out = append(out, pci.PhysRange{Addr: r.Addr, Size: r.Size})
	}
	return out
}

// reservedNoMap lists the reserved-memory nodes with a reg; one without
// no-map is listed as unusable (the kernel maps it, and may use it).
func reservedNoMap(dt devtree.Node) []dmaCarveout {
	var out []dmaCarveout
	for _, node := range dt.Child("reserved-memory").Children() {
		noMap := node.Has("no-map")
		for _, r := range regOf(node) {
			co := dmaCarveout{Source: "reserved-memory/" + node.Name(), Addr: r.Addr, Size: r.Size}
			if !noMap {
				co.Unusable = "the node has no no-map property: the kernel maps it and may hand it out (CMA, a driver)"
			}
			out = append(out, co)
		}
	}
	return out
}

// memoryNodes lists the RAM the device tree's memory nodes describe.
func memoryNodes(dt devtree.Node) []pci.PhysRange {
	var out []pci.PhysRange
	for _, n := range dt.Children() {
		if n.Name() == "memory" || strings.HasPrefix(n.Name(), "memory@") {
			out = append(out, regOf(n)...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}

// unmanagedRAM is the RAM of the memory nodes that /proc/iomem does not
// list as System RAM: what mem= left out.
func unmanagedRAM(dt devtree.Node, ram []pci.PhysRange) []dmaCarveout {
	if len(ram) == 0 {
		return nil
	}
	var out []dmaCarveout
	for _, m := range memoryNodes(dt) {
		start, end := m.Addr, m.Addr+m.Size
		for _, r := range ram { // System RAM is sorted: cut each managed piece out
			if r.Addr+r.Size <= start || r.Addr >= end {
				continue
			}
			if r.Addr > start {
				out = append(out, dmaCarveout{Addr: start, Size: r.Addr - start})
			}
			start = max(start, r.Addr+r.Size)
		}
		if start < end {
			out = append(out, dmaCarveout{Addr: start, Size: end - start})
		}
	}
	return out
}

// systemRAM reads the top-level System RAM ranges of /proc/iomem, sorted;
// nil when it cannot be read or shows no addresses (it does so only to
// root).
func systemRAM(e *env) []pci.PhysRange {
	b, err := os.ReadFile(e.sys.Path("/proc/iomem"))
	if err != nil {
		return nil
	}
	var out []pci.PhysRange
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == ' ' || !strings.HasSuffix(line, " : System RAM") {
			continue
		}
		span := strings.TrimSuffix(line, " : System RAM")
		lo, hi, ok := strings.Cut(span, "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		z, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || z < a {
			continue
		}
		if a == 0 && z == 0 {
			return nil // addresses hidden from non-root readers
		}
		out = append(out, pci.PhysRange{Addr: a, Size: z - a + 1})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}

// memParam is the value of mem= on the kernel command line, "" if none.
func memParam(e *env) string {
	b, err := os.ReadFile(e.sys.Path("/proc/cmdline"))
	if err != nil {
		return ""
	}
	for _, f := range strings.Fields(string(b)) {
		if v, ok := strings.CutPrefix(f, "mem="); ok {
			return v
		}
	}
	return ""
}

// missingCarveout says what to add: a reserved-memory node for the top
// 64 MiB of RAM below 4 GiB, and, where RAM is one bank ending at or
// below 4 GiB, the equivalent mem=.
func missingCarveout(dt devtree.Node, ram []pci.PhysRange) string {
	banks := ram
	if len(banks) == 0 {
		banks = memoryNodes(dt)
	}
	var top uint64 // end of the highest RAM below 4 GiB
	for _, r := range banks {
		if r.Addr < 1<<32 {
			top = max(top, min(r.Addr+r.Size, 1<<32))
		}
	}
	if top < carveoutSize || len(banks) == 0 {
		return "no RAM below 4 GiB found (read /proc/iomem as root): reserve 64 MiB of RAM below 4 GiB with a reserved-memory node with no-map, then open with ?dma-carveout=ADDR+64M"
	}
	a := top - carveoutSize
	s := fmt.Sprintf("add a reserved-memory node with no-map to the device tree, e.g. gopmd_dma: gopmd-dma@%x { reg = <0x0 %#x 0x0 %#x>; no-map; };", a, a, carveoutSize)
	if len(banks) == 1 && banks[0].Addr+banks[0].Size <= 1<<32 {
		s += fmt.Sprintf(" (or boot with mem=%dM, which leaves the top 64 MiB to the carve-out)", (banks[0].Size-carveoutSize)>>20)
	}
	return s + ", then open with ?" + carveoutOption(a, carveoutSize)
}

package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci"
)

func init() {
	register(&command{
		name: "info", args: "DEV", min: 1, max: 1,
		summary:   "driver, BARs/regions and sizes, capabilities, MAC, link, PHY and why, switch link, MSI-X vectors",
		forceHelp: "open an ENETC function the device tree makes a switch's CPU port (the LS1028A-RDB's PF2) anyway (switch-cpu-port=take)",
		run:       func(e *env, a []string) (any, error) { return infoCmd(e, a[0]) },
	})
}

// region is a register window: a PCI BAR, a platform reg range, a UIO map.
type region struct {
	Name string `json:"name"`
	Addr uint64 `json:"addr,omitempty"` // physical address where known
	Size uint64 `json:"size"`
	Kind string `json:"kind,omitempty"` // "mem", "mem64 prefetchable", ...
}

// linkInfo is a port's link.
type linkInfo struct {
	Up         bool `json:"up"`
	SpeedMbps  int  `json:"speed_mbps"`
	FullDuplex bool `json:"full_duplex"`
}

func linkOf(l driver.Link) *linkInfo {
	return &linkInfo{Up: l.Up, SpeedMbps: l.SpeedMbps, FullDuplex: l.FullDuplex}
}

// infoResult describes a device.
type infoResult struct {
	Spec         string   `json:"spec"`
	Bus          string   `json:"bus"`
	ID           string   `json:"id,omitempty"`
	Revision     *uint8   `json:"revision,omitempty"`
	Compatible   []string `json:"compatible,omitempty"`
	KernelDriver string   `json:"kernel_driver,omitempty"`
	IOMMUGroup   string   `json:"iommu_group,omitempty"`
	DMACoherent  *bool    `json:"dma_coherent,omitempty"`
	Regions      []region `json:"regions"`
	// PCICaps are the function's PCI capabilities from its config space.
	PCICaps []pciCap `json:"pci_capabilities,omitempty"`

	// What the gopmd driver says once the port is open.
	Driver  string    `json:"driver,omitempty"`
	Backend string    `json:"backend,omitempty"`
	Device  string    `json:"device,omitempty"`
	MAC     string    `json:"mac,omitempty"`
	Link    *linkInfo `json:"link,omitempty"`
	PHY     *int      `json:"phy,omitempty"` // MDIO address; -1: fixed link
	// PHYChoice says which PHY the driver uses and why (ENETC PF).
	PHYChoice string `json:"phy_choice,omitempty"`
	// SwitchLink names the switch port whose CPU port the function is
	// (ENETC: the LS1028A-RDB's PF2).
	SwitchLink string `json:"switch_link,omitempty"`
	// MSIXVectors is how many MSI-X entries the port opens at its first
	// RX interrupt arm (ENETC: entry 0 and one per RX queue).
	MSIXVectors int      `json:"msix_vectors,omitempty"`
	Caps        []string `json:"caps,omitempty"`
	RxQueues    int      `json:"rx_queues,omitempty"`
	TxQueues    int      `json:"tx_queues,omitempty"`
	MaxRxQueues int      `json:"max_rx_queues,omitempty"`
	MaxTxQueues int      `json:"max_tx_queues,omitempty"`
	RxRingSize  int      `json:"rx_ring_size,omitempty"`
	TxRingSize  int      `json:"tx_ring_size,omitempty"`
	MTU         int      `json:"mtu,omitempty"`
	MaxMTU      int      `json:"max_mtu,omitempty"`
	// Hugepages is the host's 2 MiB page pool (hardware devices only; not
	// for a non-coherent FEC, whose driver takes no huge pages).
	Hugepages *hugepageInfo `json:"hugepages,omitempty"`
	// DMAMemory is what a non-coherent FEC needs for its DMA memory and
	// what carve-outs the board has (dmacheck.go).
	DMAMemory *dmaCheck `json:"dma_memory,omitempty"`
	// NotOpened says why the port was not opened (sysfs facts only).
	NotOpened string `json:"not_opened,omitempty"`

	// FEC: how the port reaches its PHY's MDIO bus, the fixed link it runs
	// without a PHY, and each RX ring's interrupt line (fecinfo.go).
	MDIO      *mdioInfo `json:"mdio,omitempty"`
	FixedLink string    `json:"fixed_link,omitempty"`
	IRQLines  []irqInfo `json:"irq_lines,omitempty"`

	// XDP: an xdp: device's interface, XDP features and what a port
	// will get (xdpinfo.go).
	XDP *xdpInfo `json:"xdp,omitempty"`
}

func (r *infoResult) text(w io.Writer) {
	p := func(k, f string, a ...any) { fmt.Fprintf(w, "%-14s "+f+"\n", append([]any{k + ":"}, a...)...) }
	p("device", "%s", r.Spec)
	p("bus", "%s", r.Bus)
	if r.ID != "" {
		id := r.ID
		if r.Revision != nil {
			id += fmt.Sprintf(" rev %d", *r.Revision)
		}
		p("id", "%s", id)
	}
	if len(r.Compatible) > 0 {
		p("compatible", "%s", strings.Join(r.Compatible, ", "))
	}
	if r.KernelDriver != "" {
		p("kernel driver", "%s", r.KernelDriver)
	}
	if r.IOMMUGroup != "" {
		p("iommu group", "%s", r.IOMMUGroup)
	}
	if r.DMACoherent != nil {
		if *r.DMACoherent {
			p("dma", "coherent")
		} else {
			p("dma", "not coherent (buffers need cache maintenance or uncached memory)")
		}
	}
	for _, g := range r.Regions {
		at := ""
		if g.Addr != 0 {
			at = fmt.Sprintf(" at %#x", g.Addr)
		}
		kind := ""
		if g.Kind != "" {
			kind = " (" + g.Kind + ")"
		}
		p("region", "%s: %s%s%s", g.Name, sizeString(g.Size), at, kind)
	}
	if len(r.PCICaps) > 0 {
		var cs []string
		for _, c := range r.PCICaps {
			cs = append(cs, c.String())
		}
		p("pci caps", "%s", strings.Join(cs, ", "))
	}
	if h := r.Hugepages; h != nil {
		if h.Total == 0 {
			p("hugepages", "none reserved: DMA memory falls back to 4 KiB pages (echo 64 > /proc/sys/vm/nr_hugepages)")
		} else {
			p("hugepages", "%d free of %d (%d kB each)", h.Free, h.Total, h.SizeKB)
		}
	}
	if r.DMAMemory != nil {
		r.DMAMemory.text(p)
	}
	if r.XDP != nil {
		r.XDP.text(p)
	}
	if r.NotOpened != "" {
		r.fecText(p) // the interrupt lines the tree and the binding give
		p("port", "not opened: %s", r.NotOpened)
		return
	}
	p("driver", "%s (%s backend)", r.Driver, r.Backend)
	p("found", "%s", r.Device)
	p("mac", "%s", r.MAC)
	if r.Link != nil {
		p("link", "%s", driver.Link{Up: r.Link.Up, SpeedMbps: r.Link.SpeedMbps, FullDuplex: r.Link.FullDuplex})
	}
	switch {
	case r.PHYChoice != "":
		p("phy", "%s", r.PHYChoice)
	case r.PHY != nil && *r.PHY >= 0:
		p("phy", "MDIO address %d", *r.PHY)
	case r.PHY != nil && r.FixedLink != "":
		p("phy", "none (fixed link: %s)", r.FixedLink)
	case r.PHY != nil:
		p("phy", "none (fixed link)")
	}
	if r.SwitchLink != "" {
		p("switch", "%s", r.SwitchLink)
	}
	if r.MSIXVectors > 0 {
		p("msi-x", "%d vectors at the first RX interrupt arm (entry 0 and one per RX queue, opened at once)", r.MSIXVectors)
	}
	r.fecText(p)
	p("caps", "%s", strings.Join(r.Caps, ", "))
	p("queues", "rx %d of %d, tx %d of %d", r.RxQueues, r.MaxRxQueues, r.TxQueues, r.MaxTxQueues)
	p("rings", "rx %d, tx %d descriptors", r.RxRingSize, r.TxRingSize)
	p("mtu", "%d (max %d)", r.MTU, r.MaxMTU)
}

// sizeString prints a size the way a datasheet does: 256 KiB, 4 MiB.
func sizeString(n uint64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func barKind(b pci.BAR) string {
	k := "mem"
	if b.IsIO() {
		k = "io"
	}
	if b.Is64() {
		k += "64"
	}
	if b.Prefetchable() {
		k += " prefetchable"
	}
	return k
}

func infoCmd(e *env, dev string) (any, error) {
	sp, err := parseDev(dev)
	if err != nil {
		return nil, err
	}
	r := &infoResult{Spec: dev, Regions: []region{}}
	switch sp.Scheme {
	case "pci":
		a, err := pci.ParseAddress(sp.Name)
		if err != nil {
			return nil, &usageError{err.Error()}
		}
		d, err := e.sys.Device(a)
		if err != nil {
			return nil, err
		}
		r.Bus, r.ID, r.KernelDriver, r.IOMMUGroup = "pci", d.ID(), d.Driver, d.IOMMUGroup
		r.Revision = &d.Revision
		r.PCICaps = readCaps(e, a.String())
		for _, b := range d.BARs {
			if b.Size > 0 {
				r.Regions = append(r.Regions, region{Name: fmt.Sprintf("BAR%d", b.Index), Addr: b.Start, Size: b.Size, Kind: barKind(b)})
			}
		}
	case "platform":
		pd, err := e.sys.Platform(sp.Name)
		if err != nil {
			return nil, err
		}
		r.Bus, r.Compatible, r.KernelDriver, r.IOMMUGroup = "platform", pd.Compatible, pd.Driver, pd.IOMMUGroup
		r.DMACoherent = boolp(pd.DMACoherent)
		r.DMAMemory = checkDMAMemory(e, pd)
		for i, g := range pd.Reg {
			r.Regions = append(r.Regions, region{Name: fmt.Sprintf("reg%d", i), Addr: g.Addr, Size: g.Size, Kind: "mem"})
		}
		fecNodeLines(r, pd)
		for _, u := range pd.UIO {
			if info, err := e.sys.UIO(u); err == nil {
				for _, m := range info.Maps {
					r.Regions = append(r.Regions, region{Name: fmt.Sprintf("%s map%d", info.Dev, m.Index), Addr: m.Addr + m.Offset, Size: m.Size, Kind: "uio"})
				}
			}
		}
	case "uio":
		info, err := e.sys.UIO(sp.Name)
		if err != nil {
			return nil, err
		}
		r.Bus, r.KernelDriver = "uio", "UIO device named "+info.Name
		for _, m := range info.Maps {
			r.Regions = append(r.Regions, region{Name: fmt.Sprintf("map%d %s", m.Index, m.Name), Addr: m.Addr + m.Offset, Size: m.Size, Kind: "uio"})
		}
	case "sim":
		r.Bus = "sim"
	case "xdp":
		if e.sys.Root != "" && e.sys.Root != "/" {
			return nil, &usageError{dev + ": --root names an offline tree, and an xdp: device is a kernel interface of this host (drop --root)"}
		}
		if err := xdpDevice(r, sp.Name); err != nil {
			return nil, err
		}
		return r, nil
	}
	if sp.Scheme != "sim" && r.DMAMemory == nil {
		r.Hugepages = readHugepages(e)
	}
	if sp.Scheme != "sim" && e.sys.Root != "" && e.sys.Root != "/" {
		r.NotOpened = "--root names an offline tree"
		return r, nil
	}
	p, _, err := openPort(e, dev, driver.Config{})
	if err != nil {
		if sp.Scheme == "sim" {
			return nil, err
		}
		r.NotOpened = oneLine(err.Error())
		return r, nil
	}
	defer p.Close()
	in := p.Info()
	r.Driver, r.Backend, r.Device, r.MAC = in.Driver, in.Backend, in.Device, in.MAC.String()
	r.RxQueues, r.TxQueues, r.MaxRxQueues, r.MaxTxQueues = in.RxQueues, in.TxQueues, in.MaxRxQueues, in.MaxTxQueues
	r.RxRingSize, r.TxRingSize, r.MTU, r.MaxMTU = in.RxRingSize, in.TxRingSize, in.MTU, in.MaxMTU
	r.Caps = strings.Split(in.Caps.String(), ",")
	r.Link = linkOf(currentLink(p))
	if a, ok := phyAddress(p); ok {
		r.PHY = &a
	}
	fecInfo(r, p)
	if q, ok := p.(interface{ PHYChoice() string }); ok {
		r.PHYChoice = q.PHYChoice()
	}
	if q, ok := p.(interface{ SwitchCPUPortLink() string }); ok {
		r.SwitchLink = q.SwitchCPUPortLink()
	}
	if q, ok := p.(interface{ MSIXVectors() int }); ok {
		r.MSIXVectors = q.MSIXVectors()
	}
	if sp.Scheme == "sim" {
		simRegions(r, sp)
	}
	return r, nil
}

// simRegions fills in a model's register window and identity.
func simRegions(r *infoResult, sp driver.Spec) {
	m, err := simModelOf(sp)
	if err != nil {
		return
	}
	r.ID, r.Compatible, r.DMACoherent = m.id(), m.dev.Compatible, m.coherent
	r.Regions = append(r.Regions, region{Name: m.region, Size: uint64(m.size), Kind: "model"})
}

// currentLink reads the link now where the driver can (FEC reads its PHY
// only when asked).
func currentLink(p driver.Port) driver.Link {
	if u, ok := p.(linkUpdater); ok {
		return u.UpdateLink()
	}
	return p.Link()
}

// hugepageInfo is the default huge page pool from /proc/meminfo.
type hugepageInfo struct {
	Total  int `json:"total"`
	Free   int `json:"free"`
	SizeKB int `json:"size_kb"`
}

// readHugepages reads /proc/meminfo under the root; nil when absent.
func readHugepages(e *env) *hugepageInfo {
	b, err := os.ReadFile(e.sys.Path("/proc/meminfo"))
	if err != nil {
		return nil
	}
	h := &hugepageInfo{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "HugePages_Total:":
			h.Total = n
		case "HugePages_Free:":
			h.Free = n
		case "Hugepagesize:":
			h.SizeKB = n
		}
	}
	return h
}

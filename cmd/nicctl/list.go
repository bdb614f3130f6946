package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/pci"
)

func init() {
	var all bool
	register(&command{
		name: "list", args: "", summary: "what gopmd can drive here, and whether it is usable now",
		min: 0, max: 0,
		flags: func(fs *flag.FlagSet) func() error {
			fs.BoolVar(&all, "all", false, "also list PCI network functions no gopmd driver takes")
			return nil
		},
		run: func(e *env, _ []string) (any, error) { return listDevices(e, all) },
	})
}

// The PCI class code is base class, subclass and programming interface,
// one byte each (pci.Device.Class); base class 0x02 is a network controller
// (Linux include/linux/pci_ids.h PCI_BASE_CLASS_NETWORK).
const (
	pciClassBaseShift = 16
	pciClassNetwork   = 0x02
)

// pciKind names the PCI functions of the LS1028A integrated endpoint
// (docs/hardware-enetc.md §1.1, §12); port is true for the ones gopmd
// drives (the timer as a clock).
var pciKinds = map[string]struct {
	kind string
	port bool
}{
	"1957:e100": {"ENETC PF", true},
	"1957:ef00": {"ENETC VF", true},
	"1957:ee01": {"ENETC central MDIO", false},
	"1957:ee02": {"ENETC PTP timer", true}, // a clock: nicctl clock, driver.OpenClock
}

// listEntry is one device in the list.
type listEntry struct {
	// Spec is what to give nicctl and the library as DEV.
	Spec string `json:"spec"`
	// Bus is "pci", "platform", "uio" or "sim".
	Bus        string   `json:"bus"`
	Kind       string   `json:"kind"`
	ID         string   `json:"id,omitempty"` // PCI vendor:device
	Vendor     string   `json:"vendor,omitempty"`
	Product    string   `json:"product,omitempty"`
	Compatible []string `json:"compatible,omitempty"`
	// Driver is the kernel driver bound now ("" when none).
	Driver     string `json:"driver"`
	IOMMUGroup string `json:"iommu_group,omitempty"`
	// GroupViable says whether VFIO can take the IOMMU group now (every
	// other member on vfio-pci or driverless); absent without a group.
	GroupViable *bool    `json:"group_viable,omitempty"`
	UIO         []string `json:"uio,omitempty"`
	// DMACoherent is false for platform devices whose DMA does not snoop
	// the CPU caches.
	DMACoherent *bool `json:"dma_coherent,omitempty"`
	// Usable says whether gopmd can open the device now; Why says why
	// not, or what opening it needs.
	Usable bool   `json:"usable"`
	Why    string `json:"why,omitempty"`
	// XDPFeatures are an xdp: device's driver's XDP features ("unknown"
	// where the kernel does not report them, before Linux 6.3).
	XDPFeatures []string `json:"xdp_features,omitempty"`
}

type listResult []listEntry

func (l listResult) text(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEV\tKIND\tID/COMPATIBLE\tDRIVER\tIOMMU\tUSABLE")
	for _, d := range l {
		id := d.ID
		for _, c := range d.Compatible {
			if id == "" || (strings.HasPrefix(c, "fsl,") && strings.HasSuffix(c, "-fec") && !strings.HasPrefix(id, "fsl,")) {
				id = c
			}
		}
		if id == "" {
			id = "-"
		}
		drv := d.Driver
		if drv == "" {
			drv = "-"
		}
		grp := "-"
		if d.IOMMUGroup != "" {
			grp = d.IOMMUGroup
			if d.GroupViable != nil && !*d.GroupViable {
				grp += " (not viable)"
			}
		}
		use := "no"
		if d.Usable {
			use = "yes"
		}
		if d.Why != "" {
			use += ": " + d.Why
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Spec, d.Kind, id, drv, grp, use)
	}
	tw.Flush()
}

func boolp(b bool) *bool { return &b }

// listDevices gathers PCI functions, platform FEC nodes, UIO devices,
// the kernel interfaces xdp: ports can serve, and the simulated devices.
func listDevices(e *env, all bool) (listResult, error) {
	var out listResult
	pcis, err := listPCI(e, all)
	if err != nil {
		return nil, err
	}
	out = append(out, pcis...)
	plats, claimed := listPlatform(e)
	out = append(out, plats...)
	out = append(out, listUIO(e, claimed)...)
	if e.sys.Root == "" || e.sys.Root == "/" {
		out = append(out, listNetdevs()...) // kernel interfaces of this host, not of an offline tree
	}
	out = append(out, listSim()...)
	return out, nil
}

func listPCI(e *env, all bool) ([]listEntry, error) {
	if _, err := os.Stat(e.sys.Path("/sys/bus/pci/devices")); err != nil {
		return nil, nil // no PCI bus (most i.MX parts)
	}
	devs, err := e.sys.Inventory()
	if err != nil {
		return nil, err
	}
	var out []listEntry
	for _, d := range devs {
		k, known := pciKinds[d.ID()]
		if !known {
			if !all || d.Class>>pciClassBaseShift != pciClassNetwork {
				continue
			}
			k.kind = "network (no gopmd driver)"
		}
		le := listEntry{Spec: d.Address.String(), Bus: "pci", Kind: k.kind, ID: d.ID(),
			Vendor: d.VendorName, Product: d.ProductName, Driver: d.Driver, IOMMUGroup: d.IOMMUGroup}
		if d.IOMMUGroup != "" {
			le.GroupViable = boolp(e.sys.CheckGroup(d.Address) == nil)
		}
		if d.Driver == pci.DriverUIO {
			le.UIO = uioOf(e, "/sys/bus/pci/devices/"+d.Address.String())
		}
		le.Usable, le.Why = pciUsable(e, d, k.port, known)
		out = append(out, le)
	}
	return out, nil
}

// pciUsable says whether a PCI function can be opened now, and why not.
func pciUsable(e *env, d *pci.Device, port, known bool) (bool, string) {
	addr := d.Address.String()
	switch {
	case !known:
		return false, "no gopmd driver for " + d.ID()
	case !port:
		return false, "not an Ethernet port; leave it to the kernel"
	}
	switch d.Driver {
	case pci.DriverVFIO:
		if d.IOMMUGroup == "" {
			return true, "VFIO no-IOMMU: needs ?unsafe-noiommu=1"
		}
		if err := e.sys.CheckGroup(d.Address); err != nil {
			return false, err.Error()
		}
		return true, ""
	case pci.DriverUIO:
		return true, "uio_pci_generic gives no DMA isolation: needs ?unsafe-noiommu=1"
	}
	how := "nicctl bind " + addr + " vfio-pci"
	if d.IOMMUGroup == "" {
		how = "it has no IOMMU group, so enable the IOMMU first (or, with no DMA isolation, nicctl bind " + addr + " uio_pci_generic and ?unsafe-noiommu=1)"
	}
	if d.Driver == "" {
		return false, "no driver bound: " + how
	}
	if uses, err := e.sys.InUse("pci", addr); err == nil && len(uses) > 0 {
		// nicctl bind would refuse it: say why instead of suggesting it.
		return false, "held by kernel driver " + d.Driver + ", and the host uses it (" + uses[0].What + "): leave it, or take it down first"
	}
	if users := clockUsers(e, d); len(users) > 0 {
		// nicctl bind would refuse it: the kernel's ports use the clock.
		return false, "held by kernel driver " + d.Driver + ", and " + users[0]
	}
	return false, "held by kernel driver " + d.Driver + ": " + how
}

// fecCompatible reports whether a compatible list names an FEC/ENET
// ("fsl,<soc>-fec") or was given generic-uio for gopmd.
func fecCompatible(c []string) (fec, genericUIO bool) {
	for _, s := range c {
		if strings.HasPrefix(s, "fsl,") && strings.HasSuffix(s, "-fec") {
			fec = true
		}
		if s == "generic-uio" {
			genericUIO = true
		}
	}
	return
}

// listPlatform lists platform devices whose device-tree node is an
// FEC/ENET, or a generic-uio node. It returns the UIO devices they hold.
func listPlatform(e *env) ([]listEntry, map[string]bool) {
	claimed := map[string]bool{}
	ents, err := os.ReadDir(e.sys.Path("/sys/bus/platform/devices"))
	if err != nil {
		return nil, claimed
	}
	var out []listEntry
	for _, ent := range ents {
		pd, err := e.sys.Platform(ent.Name())
		if err != nil {
			continue
		}
		fec, guio := fecCompatible(pd.Compatible)
		if !fec && !guio {
			continue
		}
		le := listEntry{Spec: "platform:" + pd.Name, Bus: "platform", Kind: "FEC/ENET", Compatible: pd.Compatible,
			Driver: pd.Driver, IOMMUGroup: pd.IOMMUGroup, DMACoherent: boolp(pd.DMACoherent)}
		if !fec {
			le.Kind = "generic-uio node"
		}
		for _, u := range pd.UIO {
			le.UIO = append(le.UIO, "/dev/"+u)
			claimed[u] = true
		}
		le.Usable, le.Why = platformUsable(pd, fec)
		out = append(out, le)
	}
	return out, claimed
}

func platformUsable(pd *pci.PlatformDevice, fec bool) (bool, string) {
	if !fec {
		return false, "compatible has no fsl,<soc>-fec entry, so gopmd cannot pick the quirk profile: list the SoC's compatible after generic-uio in the overlay"
	}
	switch {
	case len(pd.UIO) > 0:
		return true, "through /dev/" + pd.UIO[0] + " (no IOMMU): needs ?unsafe-noiommu=1"
	case pd.Driver == pci.DriverVFIOPlatform:
		return true, ""
	case pd.Driver != "":
		how := "give the node a generic-uio compatible (docs/hardware.md) or nicctl bind platform:" + pd.Name + " uio_pdrv_genirq"
		if pd.NoUnbind {
			how += "; " + pd.Driver + " has no sysfs unbind, so it must be unloaded or kept off by the device tree"
		}
		return false, "held by kernel driver " + pd.Driver + ": " + how
	default:
		return true, "no driver holds it: /dev/mem windows, needs ?unsafe-noiommu=1"
	}
}

// uioOf lists the /dev/uioN of a device directory.
func uioOf(e *env, dir string) []string {
	ents, err := os.ReadDir(e.sys.Path(dir + "/uio"))
	if err != nil {
		return nil
	}
	var out []string
	for _, u := range ents {
		out = append(out, "/dev/"+u.Name())
	}
	return out
}

// listUIO lists UIO devices whose parent is neither a PCI function (listed
// under its address) nor a node listPlatform showed: gopmd drives none of
// them, and the list says what they belong to.
func listUIO(e *env, claimed map[string]bool) []listEntry {
	ents, err := os.ReadDir(e.sys.Path("/sys/class/uio"))
	if err != nil {
		return nil
	}
	var out []listEntry
	for _, ent := range ents {
		if claimed[ent.Name()] {
			continue
		}
		info, err := e.sys.UIO(ent.Name())
		if err != nil || info.ParentBus == "pci" {
			continue
		}
		le := listEntry{Spec: "uio:" + info.Dev, Bus: "uio", Kind: "UIO " + info.Name, UIO: []string{info.Dev}}
		le.Why = "belongs to " + info.Parent + ", not an FEC/ENET node"
		if pd, err := e.sys.Platform(info.Parent); err == nil && len(pd.Compatible) > 0 {
			le.Compatible = pd.Compatible
			le.Why += " (compatible " + strings.Join(pd.Compatible, ", ") + ")"
		}
		out = append(out, le)
	}
	return out
}

// listSim lists the device models: any number N works, so one of each
// kind stands for all.
func listSim() []listEntry {
	socs := model.Profiles()
	sort.Strings(socs)
	enetc, _ := simIdentity("enetc", nil)
	fec, _ := simIdentity("fec", nil)
	return []listEntry{
		{Spec: "sim:enetc0", Bus: "sim", Kind: "ENETC PF (model)", ID: enetc.id(), Usable: true,
			Why: "any sim:enetcN; ?vf=1 for a VF, ?peer=sim:enetcM for a cable"},
		{Spec: "sim:fec0", Bus: "sim", Kind: "FEC/ENET (model)", Compatible: fec.dev.Compatible, Usable: true,
			Why: "any sim:fecN; ?soc= one of " + strings.Join(socs, ", ")},
	}
}

package main

import (
	"fmt"
	"strings"

	"github.com/gopmd/gopmd/xdp"
)

// xdpInfo is what nicctl info says of an xdp: device: the interface as
// the kernel keeps it, its driver's XDP features, and the attach mode and
// zero-copy a port (mode=auto, zero-copy=auto) will get, and why.
type xdpInfo struct {
	Interface string `json:"interface"`
	MAC       string `json:"mac"`
	MTU       int    `json:"mtu"`
	Up        bool   `json:"up"`
	Carrier   bool   `json:"carrier"`
	RxQueues  int    `json:"rx_queues"`
	// Features are the driver's XDP features ("unknown" before Linux 6.3).
	Features    []string `json:"xdp_features"`
	Mode        string   `json:"mode"`
	ModeWhy     string   `json:"mode_why"`
	ZeroCopy    string   `json:"zero_copy"`
	ZeroCopyWhy string   `json:"zero_copy_why"`
	Program     string   `json:"program,omitempty"`
}

func featureList(n xdp.Netdev) []string {
	switch {
	case n.FeaturesErr != "":
		return []string{"unknown"}
	case n.Features == 0:
		return []string{"none"}
	}
	return n.Features.Names()
}

// xdpDevice fills in an xdp: device from the kernel. The port is not
// opened: that attaches the steering program, which on many drivers
// resets the interface's rings, and nicctl info changes nothing.
func xdpDevice(r *infoResult, name string) error {
	n, err := xdp.LookupNetdev(name)
	if err != nil {
		return err
	}
	pl := n.Plan()
	r.Bus, r.KernelDriver = "netdev", n.Driver
	r.XDP = &xdpInfo{Interface: n.Name, MAC: n.MAC.String(), MTU: n.MTU, Up: n.Up, Carrier: n.Running, RxQueues: n.RxQueues,
		Features: featureList(n), Mode: pl.Mode, ModeWhy: pl.ModeWhy, ZeroCopy: pl.ZeroCopy, ZeroCopyWhy: pl.ZeroCopyWhy, Program: pl.Program}
	r.NotOpened = "info attaches no program to a kernel interface (an xdp: port's open does; on many drivers that resets the rings); the mode and zero-copy above are what a port will get"
	return nil
}

func (x *xdpInfo) text(p func(k, f string, a ...any)) {
	state := "down"
	switch {
	case x.Up && x.Carrier:
		state = "up"
	case x.Up:
		state = "up, no carrier"
	}
	p("interface", "%s (%s), mac %s, mtu %d, %d RX queues", x.Interface, state, x.MAC, x.MTU, x.RxQueues)
	p("xdp features", "%s", strings.Join(x.Features, ", "))
	p("xdp mode", "%s: %s", x.Mode, x.ModeWhy)
	p("zero-copy", "%s: %s", x.ZeroCopy, x.ZeroCopyWhy)
	if x.Program != "" {
		p("xdp program", "%s", x.Program)
	}
}

// listNetdevs lists the interfaces xdp: ports can serve, with their XDP
// features.
func listNetdevs() []listEntry {
	ns, err := xdp.Netdevs()
	if err != nil {
		return nil
	}
	var out []listEntry
	for _, n := range ns {
		pl := n.Plan()
		state := "down"
		if n.Up {
			state = "up"
		}
		le := listEntry{Spec: "xdp:" + n.Name, Bus: "netdev", Kind: "netdev (AF_XDP)", Driver: n.Driver,
			XDPFeatures: featureList(n), Usable: true}
		zc := "copy"
		switch pl.ZeroCopy {
		case "yes":
			zc = "zero-copy"
		case "unknown":
			zc = "zero-copy unknown"
		}
		le.Why = fmt.Sprintf("%s; xdp features %s; %s mode, %s", state, strings.Join(le.XDPFeatures, ","), pl.Mode, zc)
		if n.ProgID != 0 {
			le.Why += fmt.Sprintf("; runs XDP program %q (id %d)", n.ProgName, n.ProgID)
			switch {
			case pl.OpenRefused && len(n.ProgHolders) > 0:
				le.Usable = false
				le.Why += fmt.Sprintf(", in use by process %d (%s): force=1 takes the interface from it", n.ProgHolders[0].PID, n.ProgHolders[0].Comm)
			case pl.OpenRefused:
				le.Usable = false
				le.Why += ": force=1 replaces it"
			case n.ProgName != "":
				le.Why += ", left by a run that ended without detaching it: the next open replaces it"
			}
		}
		out = append(out, le)
	}
	return out
}

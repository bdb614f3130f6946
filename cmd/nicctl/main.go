// Command nicctl is gopmd's bring-up tool for board engineers: it lists what
// gopmd can drive on this machine, hands PCI functions to vfio-pci or
// uio_pci_generic and back, and looks into one port: registers with decoded
// fields, MDIO and the PHY, link, counters, descriptor rings, a loopback
// self-test and a packet generator and benchmark; and reads, sets and
// adjusts a 1588 hardware clock as linuxptp's phc_ctl does.
//
//	nicctl [--root DIR] COMMAND [flags] [ARGS]
//	nicctl --version
//
// DEV is a device spec: 0000:00:00.0 or pci:0000:00:00.0 (VFIO),
// uio:/dev/uio0, platform:30be0000.ethernet, sim:enetc0, sim:fec0?soc=imx8mp.
// Every command takes --json. Nothing is rebound unless bind or unbind is
// asked, and no register (MAC or PHY) is written without --force.
//
// bind and unbind refuse, and write nothing, when no gopmd driver claims
// the device (by PCI ID or compatible string) or when the host uses it: a
// network interface below it is up, has addresses or carries routes, or a
// filesystem or swap area on a disk below it is in use. --force overrides
// that and says what it overrode; --dry-run prints the sysfs writes
// without making them. Every sysfs write is checked to stay under /sys
// and never follows a link in place of the attribute.
//
// Exit status: 0 on success, 1 when the command ran and failed or refused
// (a device error, a bind that could cut the host off, a self-test step
// that did not pass), 2 for bad input (unknown command or flag, a
// malformed spec, PHY address or register).
package main

import (
	"os"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc" // the ENETC driver
	_ "github.com/gopmd/gopmd/fec"   // the FEC/ENET driver
	_ "github.com/gopmd/gopmd/pci"   // the pci, uio and platform schemes
	_ "github.com/gopmd/gopmd/sim"   // the sim scheme and its device models
	_ "github.com/gopmd/gopmd/xdp"   // the xdp scheme: AF_XDP on a kernel interface
)

func main() {
	if simOnly(os.Args[1:]) {
		// Simulated devices do no real DMA: the DMA layer's warning about
		// missing huge pages means nothing to them.
		dma.Warn = func(string) {}
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// simOnly reports whether the command line names devices and every one is
// simulated (sim:...).
func simOnly(args []string) bool {
	n := 0
	for _, a := range args {
		sp, err := driver.ParseSpec(a)
		if err != nil {
			continue // a command, flag or value
		}
		if sp.Scheme != "sim" {
			return false
		}
		n++
	}
	return n > 0
}

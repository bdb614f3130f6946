// Command nicctl is gopmd's bring-up tool for board engineers: it lists what
// gopmd can drive on this machine, hands PCI functions to vfio-pci or
// uio_pci_generic and back, and looks into one port: registers with decoded
// fields, MDIO and the PHY, link, counters, descriptor rings, a loopback
// self-test and a packet generator and benchmark.
//
//	nicctl [--root DIR] COMMAND [flags] [ARGS]
//	nicctl --version
//
// DEV is a device spec: 0000:00:00.0 or pci:0000:00:00.0 (VFIO),
// uio:/dev/uio0, platform:30be0000.ethernet, sim:enetc0, sim:fec0?soc=imx8mp.
// Every command takes --json. Nothing is rebound unless bind or unbind is
// asked, and no register (MAC or PHY) is written without --force.
//
// Exit status: 0 on success, 1 when the command ran and failed (a device
// error, a self-test step that did not pass), 2 for bad input (unknown
// command or flag, a malformed spec, PHY address or register).
package main

import (
	"os"

	_ "github.com/gopmd/gopmd/fec" // the FEC/ENET driver
	_ "github.com/gopmd/gopmd/pci" // the pci, uio and platform schemes
	_ "github.com/gopmd/gopmd/sim" // the sim scheme and its device models
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

package enetc_test

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc" // registers the ENETC driver
	"github.com/gopmd/gopmd/pool"
	_ "github.com/gopmd/gopmd/sim" // the sim: scheme (use pci for hardware)
)

// A forwarding loop between two ports: receive a burst on one, send it on
// the other with one doorbell, free what did not fit. On hardware the specs
// are PCI addresses ("pci:0000:00:00.0").
func Example() {
	in, err := driver.Open("sim:enetc40")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	out, err := driver.Open("sim:enetc41")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer out.Close()
	for _, p := range []driver.Port{in, out} {
		if err := p.Start(); err != nil {
			fmt.Println(err)
			return
		}
	}
	rx, tx := in.RxQueue(0), out.TxQueue(0)
	burst := make([]*pool.Packet, 32)
	for i := 0; i < 1000; i++ {
		n := rx.RxBurst(burst)
		sent := tx.TxBurst(burst[:n])
		pool.FreeBulk(burst[sent:n])
	}
	// Stop both ports before closing either: a buffer of one port's pool
	// may still sit in the other's TX ring.
	out.Stop()
	in.Stop()
	fmt.Println(in.Info().Driver, in.Link())
	// Output: enetc up 1000 Mb/s full duplex
}

package enetc_test

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc" // the ENETC driver
	"github.com/gopmd/gopmd/pool"
	_ "github.com/gopmd/gopmd/sim" // the sim: scheme (use pci for hardware)
)

// A forwarding loop between two ports: receive a burst on one, send it on
// the other with one doorbell, free what did not fit. On hardware the specs
// are PCI addresses ("pci:0000:00:00.0"); here the first simulated port's
// built-in generator (gen=1) sends it 1000 frames, which a plain
// RxBurst/TxBurst loop receives with no simulator-specific call.
func Example() {
	in, err := driver.Open("sim:enetc40?gen=1&gen-count=1000")
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
	for i := 0; i < 10000 && out.Stats().Tx.Packets < 1000; i++ {
		n := rx.RxBurst(burst)
		sent := tx.TxBurst(burst[:n])
		pool.FreeBulk(burst[sent:n])
	}
	// Stop both ports before closing either: a buffer of one port's pool
	// may still sit in the other's TX ring.
	out.Stop()
	in.Stop()
	fmt.Println(in.Info().Driver, in.Link())
	fmt.Println("received", in.Stats().Rx.Packets, "sent", out.Stats().Tx.Packets)
	// Output:
	// enetc up 1000 Mb/s full duplex
	// received 1000 sent 1000
}

// Reading a port's counters: frames and bytes per direction, drops by
// cause (every frame lost is counted under one), and the device's own
// counters by their reference-manual names.
func ExamplePort_Stats() {
	p, err := driver.Open("sim:enetc42?gen=1&gen-count=100&gen-size=64")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	if err := p.Start(); err != nil {
		fmt.Println(err)
		return
	}
	burst := make([]*pool.Packet, 32)
	for i := 0; i < 1000 && p.Stats().Rx.Packets < 100; i++ {
		n := p.RxQueue(0).RxBurst(burst)
		pool.FreeBulk(burst[:n]) // an application that drops frames frees them
	}
	p.Stop()
	st := p.Stats()
	fmt.Println("rx packets:", st.Rx.Packets)
	fmt.Println("rx bytes:", st.Rx.Bytes)
	for c := driver.Cause(0); c < driver.NumCauses; c++ {
		if st.Rx.Drops[c] != 0 {
			fmt.Println("rx dropped for", c, st.Rx.Drops[c])
		}
	}
	fmt.Println("per queue:", len(st.RxQueues), "rx,", len(st.TxQueues), "tx")
	// Output:
	// rx packets: 100
	// rx bytes: 6000
	// per queue: 1 rx, 1 tx
}

package enetc_test

import (
	"fmt"
	"time"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc" // the ENETC driver and its timer
	"github.com/gopmd/gopmd/sim"
)

// A gate control list as tc taprio gives it: priority 1 in traffic class 1
// on TX queue 1, class 0 sending in the first 300 us of each millisecond
// and class 1 in the other 700 us. Base times are the chip timer's, so it
// is opened first. On hardware the specs are "pci:0000:00:00.4" and
// "pci:0000:00:00.0?queues=2"; here a simulated timer on a manual timeline
// (model time stands still), whose model says when each frame left.
func ExamplePort_SetGateList() {
	clk, err := driver.OpenClock("sim:enetc-timer31?timeline=manual&chip=tsnexample")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer clk.Close()
	port, err := driver.Open("sim:enetc31?queues=2&chip=tsnexample")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer port.Close()
	if err := port.Start(); err != nil {
		fmt.Println(err)
		return
	}
	ts, err := driver.TSNOf(port)
	if err != nil {
		fmt.Println(err)
		return
	}
	base := driver.Time(1_000_000_000_000)
	clk.Set(base)
	m := driver.TCMap{NumTC: 2, Queues: []driver.QueueRange{{Count: 1, Offset: 0}, {Count: 1, Offset: 1}}}
	m.PrioTC[1] = 1
	if err := ts.SetTCMap(m); err != nil {
		fmt.Println(err)
		return
	}
	err = ts.SetGateList(driver.GateList{BaseTime: base, CycleTime: time.Millisecond, Entries: []driver.GateEntry{
		{Gates: 0x01, Interval: 300 * time.Microsecond},
		{Gates: 0x02, Interval: 700 * time.Microsecond},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Two 1000-byte frames of priority 1, then two of priority 0.
	for _, prio := range []int{1, 1, 0, 0} {
		q := port.TxQueue(m.Queue(prio))
		pk := port.RxQueue(0).Pool().Alloc()
		f := pk.Append(1000)
		clear(f)
		copy(f, []byte{0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x88, 0xb5})
		if q.TxBurst([]*driver.Packet{pk}) != 1 {
			pk.Free()
		}
	}
	for _, d := range sim.ENETCModel("sim:enetc31").Departures() {
		fmt.Printf("class %d: %6d ns to %6d ns into the cycle\n", d.TC, d.Start-int64(base), d.End-int64(base))
	}
	// Output:
	// class 1: 300000 ns to 308096 ns into the cycle
	// class 1: 308192 ns to 316288 ns into the cycle
	// class 0:      0 ns to   8096 ns into the cycle
	// class 0:   8192 ns to  16288 ns into the cycle
}

package enetc_test

import (
	"fmt"
	"time"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc" // the ENETC driver and its timer
	"github.com/gopmd/gopmd/sim"
)

// The LS1028A's 1588 timer is a PCI function of its own: open it, and it
// is the clock of every ENETC port on its chip. On hardware the spec is
// "pci:0000:00:00.4"; here a simulated timer on a manual timeline (model
// time moves only when the model is advanced) with an oscillator 20 ppm
// fast, which AdjFreq cancels.
func ExampleTimer() {
	clk, err := driver.OpenClock("sim:enetc-timer30?timeline=manual&freq-error=20000&chip=example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer clk.Close()
	port, err := driver.Open("sim:enetc30?chip=example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer port.Close()
	pc, err := driver.ClockOf(port) // the same clock, lent to the port
	if err != nil {
		fmt.Println(err)
		return
	}

	pc.Set(driver.Time(1_000_000_000_000_000_000))
	sim.ENETCTimerModel("sim:enetc-timer30").Advance(time.Second)
	t, _ := pc.Now()
	fmt.Println("after one second:", t)

	pc.AdjFreq(-20000)
	start, _ := pc.Now()
	sim.ENETCTimerModel("sim:enetc-timer30").Advance(time.Second)
	end, _ := pc.Now()
	fmt.Println("corrected second:", end.Sub(start).Round(10*time.Nanosecond))
	// Output:
	// after one second: 1000000001.000020000
	// corrected second: 1s
}

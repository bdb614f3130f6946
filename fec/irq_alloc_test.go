package fec_test

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// An adaptive sleep (arm, wait, disarm) allocates nothing: a worker may
// take it thousands of times a second.
func TestAdaptiveSleepAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts are not asserted under the race detector, whose runtime allocates for itself; go test without -race runs this")
	}
	p, _ := openSim(t, "soc=imx8mp&link-poll=0")
	w, err := driver.NewRxWaiter(p.RxQueue(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Arm(); err != nil { // opens the handle once
		t.Fatal(err)
	}
	w.Disarm()
	allocs := testing.AllocsPerRun(20, func() {
		if err := w.Arm(); err != nil {
			t.Fatal(err)
		}
		w.Wait(time.Millisecond)
		w.Disarm()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per arm, wait and disarm; want 0", allocs)
	}
}

package fec_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/fec" // the FEC driver
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim" // the sim: scheme (use uio: or platform: for hardware)
)

// Interrupt mode: a worker polls while frames come and, after 64 empty
// polls, arms the RX interrupt, polls once more and sleeps until a frame
// fires it, as the kernel's NAPI does. Here the first port is a simulated
// i.MX8MP in engine mode (it receives on its own, as from a wire) and this
// function plays the wire: three bursts of frames, each after the worker
// fell asleep. On a board the spec is "platform:30be0000.ethernet" with
// the node bound to uio_pdrv_genirq, whose interrupt wakes the worker the
// same way.
func Example_interruptMode() {
	in, err := driver.Open("sim:fec44?mode=engine&link-poll=0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	out, err := driver.Open("sim:fec45?link-poll=0")
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
	waiter, err := driver.NewRxWaiter(rx)
	if err != nil {
		fmt.Println(err) // a queue without an RX interrupt: poll it instead
		return
	}
	var stop atomic.Bool
	var sleeps, forwarded atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the worker
		defer wg.Done()
		burst := make([]*pool.Packet, 32)
		forward := func(n int) {
			sent := tx.TxBurst(burst[:n])
			forwarded.Add(int64(sent))
			pool.FreeBulk(burst[sent:n])
		}
		for empty := 0; !stop.Load(); {
			if n := rx.RxBurst(burst); n > 0 {
				empty = 0
				forward(n)
				continue
			}
			if empty++; empty < 64 {
				continue
			}
			empty = 0
			if waiter.Arm() != nil {
				continue // the port is stopping
			}
			if n := rx.RxBurst(burst); n > 0 { // a frame from before the arm
				waiter.Disarm()
				forward(n)
				continue
			}
			sleeps.Add(1)
			waiter.Wait(0) // until an interrupt, or in's Stop
			waiter.Disarm()
		}
	}()

	wireSide := sim.FECModel("fec44").Port()
	frame := make([]byte, 60)
	copy(frame, []byte{0x02, 0, 0, 0xFE, 0, 44, 0x02, 0, 0, 0, 0, 1, 0x88, 0xB5})
	var slept int64 // the worker's sleeps before the last burst
	for b := 1; b <= 3; b++ {
		for sleeps.Load() == slept {
			time.Sleep(time.Millisecond) // until the worker sleeps again
		}
		slept = sleeps.Load()
		before := forwarded.Load()
		for i := 0; i < 10; i++ {
			wireSide.Receive(frame)
		}
		for forwarded.Load() < before+10 {
			time.Sleep(time.Millisecond)
		}
		fmt.Printf("burst %d: the sleeping worker woke and forwarded %d frames\n", b, forwarded.Load()-before)
	}
	stop.Store(true)
	in.Stop() // wakes the worker
	wg.Wait()
	out.Stop()
	fmt.Println("received", in.Stats().Rx.Packets, "sent", out.Stats().Tx.Packets, "dropped", in.Stats().Rx.TotalDrops()+out.Stats().Tx.TotalDrops())
	// Output:
	// burst 1: the sleeping worker woke and forwarded 10 frames
	// burst 2: the sleeping worker woke and forwarded 10 frames
	// burst 3: the sleeping worker woke and forwarded 10 frames
	// received 30 sent 30 dropped 0
}

package fec_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/drvtest"
)

// ringPCP is a VLAN priority the model steers to each ring (-1: untagged,
// ring 0), as TestMultiQueue uses them.
var ringPCP = [3]int{-1, 2, 6}

// TestRingInterruptLines: on parts whose rings 1 and 2 raise their own
// MAC lines (int1, int2), each ring sleeps on its own line, which is the
// device interrupt the SoC's device tree lists it as (the i.MX8M trees
// list int1, int2, int0: ring 0's line is interrupt 2); a frame on one
// ring wakes that ring's waiter and no other. With only the device's
// first interrupt delivered (irq-lines=1, as uio_pdrv_genirq), a ring
// whose line is another one is refused at arm, naming the ring, the line
// and vfio-platform; the ring whose line is interrupt 0 still sleeps and
// wakes.
func TestRingInterruptLines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		soc   string
		index [3]int // device interrupt of rings 0, 1, 2
	}{{"imx8mp", [3]int{2, 0, 1}}, {"imx93", [3]int{2, 0, 1}}, {"imx7d", [3]int{0, 1, 2}}} {
		p, m := openSim(t, "soc="+c.soc+"&queues=3&link-poll=0")
		lines := p.IRQLines()
		for q, l := range lines {
			if l.Ring != q || l.Line != fmt.Sprintf("int%d", q) || l.Index != c.index[q] {
				t.Fatalf("%s: ring %d: line %+v, want int%d at interrupt %d", c.soc, q, l, q, c.index[q])
			}
		}
		var qs [3]driver.RxInterrupter
		for q := range qs {
			qs[q] = p.RxQueue(q).(driver.RxInterrupter)
			if err := qs[q].ArmInterrupt(); err != nil {
				t.Fatalf("%s: arm rx%d: %v", c.soc, q, err)
			}
		}
		for q := range qs {
			m.Port().Receive(udpFrame(t, 100, ringPCP[q], q))
			for o := range qs {
				fd, _, ok := qs[o].InterruptFDs()
				if !ok {
					t.Fatalf("%s: rx%d has no descriptor", c.soc, o)
				}
				fired := drvtest.Readable(t, fd)
				qs[o].ReleaseInterruptFDs()
				if fired != (o == q) {
					t.Fatalf("%s: a frame on ring %d: rx%d's interrupt readable %v", c.soc, q, o, fired)
				}
			}
			qs[q].DisarmInterrupt()
			pkts := make([]*driver.Packet, 2)
			if n := p.RxQueue(q).RxBurst(pkts); n != 1 {
				t.Fatalf("%s: ring %d holds %d frames, want 1", c.soc, q, n)
			}
			pkts[0].Free()
			if err := qs[q].ArmInterrupt(); err != nil {
				t.Fatal(err)
			}
		}
		for q := range qs {
			qs[q].DisarmInterrupt()
		}
	}

	// Only interrupt 0 delivered (uio_pdrv_genirq).
	for _, c := range []struct {
		soc     string
		refused []int // rings whose line is not interrupt 0
		works   int   // the ring whose line is
	}{{"imx8mp", []int{0, 2}, 1}, {"imx7d", []int{1, 2}, 0}} {
		p, m := openSim(t, "soc="+c.soc+"&queues=3&link-poll=0&irq-lines=1")
		for _, q := range c.refused {
			err := p.RxQueue(q).(driver.RxInterrupter).ArmInterrupt()
			l := p.IRQLines()[q]
			if !errors.Is(err, driver.ErrNoInterrupt) || !strings.Contains(err.Error(), fmt.Sprintf("rx%d", q)) ||
				!strings.Contains(err.Error(), l.Line) || !strings.Contains(err.Error(), fmt.Sprintf("interrupt %d", l.Index)) ||
				!strings.Contains(err.Error(), "vfio-platform") {
				t.Fatalf("%s, interrupt 0 only: arm rx%d: %v; want ErrNoInterrupt naming rx%d, %s, interrupt %d and vfio-platform", c.soc, q, err, q, l.Line, l.Index)
			}
		}
		for q := 0; q < 3; q++ {
			err := p.ProbeIRQ(q)
			if (err == nil) != (q == c.works) || err != nil && !errors.Is(err, driver.ErrNoInterrupt) {
				t.Fatalf("%s, interrupt 0 only: ProbeIRQ(%d) = %v", c.soc, q, err)
			}
		}
		qi := p.RxQueue(c.works).(driver.RxInterrupter)
		if err := qi.ArmInterrupt(); err != nil {
			t.Fatalf("%s, interrupt 0 only: arm rx%d, whose line it is: %v", c.soc, c.works, err)
		}
		m.Port().Receive(udpFrame(t, 100, ringPCP[c.works], 9))
		fd, _, ok := qi.InterruptFDs()
		if !ok || !drvtest.Readable(t, fd) {
			t.Fatalf("%s, interrupt 0 only: a frame on ring %d did not fire its line", c.soc, c.works)
		}
		qi.ReleaseInterruptFDs()
		qi.DisarmInterrupt()
	}

	// One line for every ring: every ring arms on interrupt 0.
	p, _ := openSim(t, "soc=imx6sx&queues=3&link-poll=0&irq-lines=1")
	for q, l := range p.IRQLines() {
		if l.Index != 0 || l.Line != "int0" {
			t.Fatalf("imx6sx ring %d: %+v, want int0 at interrupt 0", q, l)
		}
		if err := p.RxQueue(q).(driver.RxInterrupter).ArmInterrupt(); err != nil {
			t.Fatalf("imx6sx: arm rx%d: %v", q, err)
		}
		p.RxQueue(q).(driver.RxInterrupter).DisarmInterrupt()
	}
}

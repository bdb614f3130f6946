package fec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/drvtest"
)

// An adaptive worker sleeps on the FEC's RX interrupt at zero traffic and
// forwards every frame when traffic resumes (engine-mode models, frames
// from another goroutine, as from a wire).
func TestAdaptiveForward(t *testing.T) {
	for _, bd := range []string{"enhanced", "legacy"} {
		t.Run(bd, func(t *testing.T) {
			in, im := openSim(t, "soc=imx8mp&mode=engine&link-poll=0&bd="+bd)
			out, om := openSim(t, "soc=imx8mp&mode=engine&link-poll=0")
			w := &capture{}
			om.SetWire(w)
			var sent [][]byte
			drvtest.AdaptiveForward(t, drvtest.AdaptiveRig{
				In: in, Out: out,
				Inject: im.Port().Receive,
				Sent: func() [][]byte {
					sent = append(sent, w.take()...)
					return sent
				},
				Frame: func(i int) []byte { return udpFrame(t, 64+i%200, -1, i%250) },
			})
		})
	}
}

// With coalescing programmed, one interrupt covers several frames.
func TestCoalescingBundlesFrames(t *testing.T) {
	p, m := openSim(t, "soc=imx8mp&mode=engine&link-poll=0&rx-coalesce-frames=8")
	q := p.RxQueue(0)
	w, err := driver.NewRxWaiter(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Arm(); err != nil {
		t.Fatal(err)
	}
	fd, _, ok := q.(driver.RxInterrupter).InterruptFDs()
	if !ok {
		t.Fatal("armed queue has no descriptor")
	}
	q.(driver.RxInterrupter).ReleaseInterruptFDs()
	readable := func() bool { return drvtest.Readable(t, fd) }
	for i := 0; i < 7; i++ {
		m.Port().Receive(udpFrame(t, 64, -1, i))
	}
	if readable() {
		t.Fatal("interrupt fired after 7 frames with rx-coalesce-frames=8")
	}
	m.Port().Receive(udpFrame(t, 64, -1, 7))
	if fired, err := w.Wait(0); !fired || err != nil {
		t.Fatalf("8th frame: Wait = %v, %v", fired, err)
	}
	w.Disarm()
}

func TestCoalescingOptions(t *testing.T) {
	for _, c := range []struct{ opts, option, want string }{
		{"rx-coalesce-frames=0", "rx-coalesce-frames", ""},
		{"rx-coalesce-frames=256", "rx-coalesce-frames", ""},
		{"rx-coalesce-frames=x", "rx-coalesce-frames", ""},
		{"rx-coalesce-ticks=10", "rx-coalesce-ticks", ""},
		{"rx-coalesce-frames=4&rx-coalesce-ticks=65536", "rx-coalesce-ticks", ""},
		{"soc=imx6q&rx-coalesce-frames=4", "rx-coalesce-frames", ""},
		// A threshold the ring cannot hold with room to spare: the ring
		// would fill before the interrupt fires.
		{"rx-ring=64&rx-coalesce-frames=64", "rx-coalesce-frames", "more than half the 64-slot RX ring"},
		{"rx-ring=64&rx-coalesce-frames=33", "rx-coalesce-frames", "(accepted: 1 to 32 with rx-ring=64"},
		{"rx-ring=32&rx-coalesce-frames=200", "rx-coalesce-frames", "1 to 16 with rx-ring=32"},
	} {
		_, err := driver.Open("sim:fec98?" + c.opts)
		var oe *driver.OptionError
		if !errors.As(err, &oe) || oe.Option != c.option || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an OptionError naming %s that says %q", c.opts, err, c.option, c.want)
		}
	}
	// Half the ring is accepted.
	p, err := driver.Open("sim:fec98?rx-ring=64&rx-coalesce-frames=32&link-poll=0")
	if err != nil {
		t.Fatalf("rx-coalesce-frames=32 with rx-ring=64: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// Arming needs a started port and a backend with an interrupt.
func TestArmStoppedPort(t *testing.T) {
	p, _ := openSim(t, "soc=imx8mp&link-poll=0")
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	err := p.RxQueue(0).(driver.RxInterrupter).ArmInterrupt()
	if !errors.Is(err, driver.ErrStopped) {
		t.Fatalf("arm on a stopped port: %v, want ErrStopped", err)
	}
}

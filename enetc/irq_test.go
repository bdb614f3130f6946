package enetc_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/drvtest"
	"github.com/gopmd/gopmd/sim"
)

var irqSeq atomic.Int32

// frameSink keeps copies of what a simulated port transmits.
type frameSink struct {
	mu     sync.Mutex
	frames [][]byte
}

func (s *frameSink) Transmit(f []byte) {
	s.mu.Lock()
	s.frames = append(s.frames, append([]byte(nil), f...))
	s.mu.Unlock()
}

func (s *frameSink) all() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.frames...)
}

func openIRQPort(t *testing.T, opts string) (driver.Port, string) {
	t.Helper()
	name := fmt.Sprintf("enetc%d", 300+irqSeq.Add(1))
	p, err := driver.Open("sim:" + name + "?" + opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close %s: %v", name, err) // the model's errors too (ERR050089 breaches)
		}
	})
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	return p, name
}

// An adaptive worker sleeps on the ENETC's RX interrupt (an MSI-X
// message through the backend's descriptor) at zero traffic and forwards
// every frame when traffic resumes.
func TestAdaptiveForward(t *testing.T) {
	for _, poll := range []string{"0", "10ms"} {
		t.Run("link-poll="+poll, func(t *testing.T) { adaptiveForward(t, "link-poll="+poll) })
	}
}

// adaptiveForward runs drvtest.AdaptiveForward; with a link poll, the
// worker's arms and disarms meet MDIO transactions (ERR050089: the model
// records a register access during one as an error, which Close returns).
func adaptiveForward(t *testing.T, linkPoll string) {
	in, inName := openIRQPort(t, "mode=engine&"+linkPoll)
	out, outName := openIRQPort(t, "link-poll=0")
	w := &frameSink{}
	sim.ENETCModel(outName).SetWire(w)
	wireSide := sim.ENETCModel(inName).Port()
	msi0 := sim.ENETCModel(inName).Stats().MSIs
	drvtest.AdaptiveForward(t, drvtest.AdaptiveRig{
		In: in, Out: out,
		Inject: wireSide.Receive,
		Sent:   w.all,
		Frame: func(i int) []byte {
			f := make([]byte, 60+i%200)
			copy(f, []byte{0x02, 0, 0, 0xe1, 1, 0x2d, 0x02, 0, 0, 0, 0, byte(i), 0x88, 0xB5, byte(i >> 8), byte(i)})
			return f
		},
	})
	if n := sim.ENETCModel(inName).Stats().MSIs - msi0; n == 0 {
		t.Fatal("the worker woke without an MSI-X message from the model")
	}
}

func TestArmStoppedPort(t *testing.T) {
	p, _ := openIRQPort(t, "link-poll=0")
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.RxQueue(0).(driver.RxInterrupter).ArmInterrupt(); !errors.Is(err, driver.ErrStopped) {
		t.Fatalf("arm on a stopped port: %v, want ErrStopped", err)
	}
}

// With rx-coalesce-frames=8 one MSI-X message covers eight frames.
func TestCoalescingBundlesFrames(t *testing.T) {
	p, name := openIRQPort(t, "mode=engine&link-poll=0&rx-coalesce-frames=8")
	m := sim.ENETCModel(name)
	w, err := driver.NewRxWaiter(p.RxQueue(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Arm(); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 60)
	copy(frame, []byte{0x02, 0, 0, 0xe1, 1, 0x2d, 0x02, 0, 0, 0, 0, 1, 0x88, 0xB5})
	msi0 := m.Stats().MSIs
	for i := 0; i < 7; i++ {
		m.Port().Receive(frame)
	}
	if n := m.Stats().MSIs - msi0; n != 0 {
		t.Fatalf("%d messages after 7 frames with rx-coalesce-frames=8", n)
	}
	m.Port().Receive(frame)
	if fired, err := w.Wait(0); !fired || err != nil || m.Stats().MSIs-msi0 != 1 {
		t.Fatalf("8th frame: Wait %v, %v; %d messages; want one", fired, err, m.Stats().MSIs-msi0)
	}
	w.Disarm()
}

// TestArmOpensEveryVectorAtOnce: on the LS1028A VFIO cannot add an MSI-X
// entry once MSI-X is enabled (no dynamic MSI-X on its GICv3 ITS), and the
// simulated function refuses one the same way. The first arm of RX queue 0
// must therefore open the entries of every RX queue in one enable, so that
// queues 1 and 2 can arm after it.
func TestArmOpensEveryVectorAtOnce(t *testing.T) {
	const queues = 3
	name := fmt.Sprintf("enetc%d", 300+irqSeq.Add(1))
	p, err := driver.OpenConfig("sim:"+name+"?link-poll=0", driver.Config{RxQueues: queues, TxQueues: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close %s: %v", name, err)
		}
	})
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if v := p.(interface{ MSIXVectors() int }).MSIXVectors(); v != queues+1 {
		t.Errorf("MSIXVectors %d, want %d (entry 0 and one per RX queue)", v, queues+1)
	}
	for i := 0; i < queues; i++ {
		if err := p.RxQueue(i).(driver.RxInterrupter).ArmInterrupt(); err != nil {
			t.Fatalf("arm rx%d after rx0..rx%d: %v", i, i-1, err)
		}
	}
	if v, n := sim.ENETCMSIX(name); v != queues+1 || n != 1 {
		t.Fatalf("MSI-X enabled %d times with %d entries, want once with %d", n, v, queues+1)
	}
	for i := 0; i < queues; i++ {
		p.RxQueue(i).(driver.RxInterrupter).DisarmInterrupt()
	}
}

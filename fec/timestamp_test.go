package fec_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/sim"
)

// stampPair opens two synchronous ports on a cable with timestamps on and
// manual model time, their clocks set 100 s and 200 s.
func stampPair(t *testing.T) (a, b driver.Port, ca, cb driver.Clock, ma, mb *model.Device) {
	t.Helper()
	na, nb := fmt.Sprintf("fec%d", 200+simSeq.Add(1)), fmt.Sprintf("fec%d", 200+simSeq.Add(1))
	open := func(spec string) driver.Port {
		p, err := driver.Open(spec)
		if err != nil {
			t.Fatalf("open %s: %v", spec, err)
		}
		t.Cleanup(func() { p.Close() })
		if err := p.Start(); err != nil {
			t.Fatalf("start %s: %v", spec, err)
		}
		return p
	}
	a = open("sim:" + na + "?peer=sim:" + nb + "&timeline=manual&timestamps=rx,tx&link-poll=0")
	b = open("sim:" + nb + "?timeline=manual&timestamps=rx,tx&link-poll=0&freq-error=50000")
	ma, mb = sim.FECModel(na), sim.FECModel(nb)
	var err error
	if ca, err = driver.ClockOf(a); err != nil {
		t.Fatal(err)
	}
	if cb, err = driver.ClockOf(b); err != nil {
		t.Fatal(err)
	}
	if err := ca.Set(100 * sec); err != nil {
		t.Fatal(err)
	}
	if err := cb.Set(200 * sec); err != nil {
		t.Fatal(err)
	}
	return a, b, ca, cb, ma, mb
}

func stampFrame(t *testing.T, p driver.Port, tag byte) *driver.Packet {
	t.Helper()
	pk := p.RxQueue(0).Pool().Alloc()
	if pk == nil || !pk.SetLen(60) {
		t.Fatal("no buffer to send from")
	}
	b := pk.Data()
	clear(b)
	copy(b, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x0a, 0x88, 0xf7, tag})
	return pk
}

// TestTimestampsAtTheWireEdge sends stamped frames across a cable and
// checks both stamps against the two models' clocks: the TX stamp is the
// sender's clock when the frame left, the RX stamp the receiver's when it
// arrived, however long after that the driver looks at them.
func TestTimestampsAtTheWireEdge(t *testing.T) {
	a, b, ca, cb, ma, mb := stampPair(t)
	both := func(d time.Duration) { ma.AdvanceTime(d); mb.AdvanceTime(d) }
	tx := a.TxQueue(0).(driver.TxTimestamper)
	rx := b.RxQueue(0).(driver.RxTimestamper)
	for i := range 3 {
		both(3*time.Millisecond + time.Duration(i)*time.Microsecond)
		sentA, sentB := clockNow(t, ca), clockNow(t, cb)
		id := uint64(40 + i)
		if !tx.TxStamped(stampFrame(t, a, byte(i)), id) {
			t.Fatal("TxStamped took nothing")
		}
		// The driver looks only later: the stamps must not move with it.
		both(700 * time.Microsecond)
		var st [4]driver.TxStamp
		if n := tx.TxTimestamps(st[:]); n != 1 || st[0].ID != id || st[0].Lost || st[0].Time != sentA {
			t.Fatalf("frame %d: TxTimestamps = %d %+v, want one {ID %d Time %v}", i, n, st[:n], id, sentA)
		}
		pkts := make([]*driver.Packet, 4)
		var stamps [4]driver.Time
		n := rx.RxBurstStamped(pkts, stamps[:])
		if n != 1 || pkts[0].Data()[14] != byte(i) {
			t.Fatalf("frame %d: RxBurstStamped took %d frames", i, n)
		}
		pkts[0].Free()
		if stamps[0] != sentB {
			t.Fatalf("frame %d: RX stamp %v, want the receiver's clock at arrival %v (now %v)", i, stamps[0], sentB, clockNow(t, cb))
		}
	}
	// A plain TxBurst is not stamped: no stamp appears.
	if a.TxQueue(0).TxBurst([]*driver.Packet{stampFrame(t, a, 9)}) != 1 {
		t.Fatal("TxBurst took nothing")
	}
	var st [4]driver.TxStamp
	if n := tx.TxTimestamps(st[:]); n != 0 {
		t.Fatalf("a frame sent by TxBurst produced stamps %+v", st[:n])
	}
}

// TestTimestampsLostWhenLinkDown: a requested frame the port drops is
// reported Lost, not forgotten.
func TestTimestampsLostWhenLinkDown(t *testing.T) {
	a, _, _, _, ma, _ := stampPair(t)
	ma.SetLink(false)
	a.(interface{ UpdateLink() driver.Link }).UpdateLink()
	tx := a.TxQueue(0).(driver.TxTimestamper)
	if !tx.TxStamped(stampFrame(t, a, 1), 5) {
		t.Fatal("TxStamped refused with the link down")
	}
	var st [2]driver.TxStamp
	if n := tx.TxTimestamps(st[:]); n != 1 || st[0].ID != 5 || !st[0].Lost {
		t.Fatalf("TxTimestamps = %+v, want {ID 5 Lost}", st[:n])
	}
}

func TestTimestampsOption(t *testing.T) {
	for _, c := range []struct{ opts, want string }{
		{"timestamps=rx&bd=legacy", "bd=legacy descriptors hold no timestamp"},
		{"timestamps=rx,rx2", "rx, tx, rx,tx or off"},
	} {
		_, err := driver.Open(fmt.Sprintf("sim:fec%d?%s", 200+simSeq.Add(1), c.opts))
		var oe *driver.OptionError
		if err == nil || !errors.As(err, &oe) || oe.Option != "timestamps" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want an option error on timestamps saying %q", c.opts, err, c.want)
		}
	}
	// A part whose timer clock rate is not known cannot start its timer:
	// Start says what to give.
	p6, err := driver.Open(fmt.Sprintf("sim:fec%d?soc=imx6q&timestamps=rx&link-poll=0", 200+simSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer p6.Close()
	if err := p6.Start(); err == nil || !strings.Contains(err.Error(), "timestamps=rx needs the 1588 timer") || !strings.Contains(err.Error(), "ptp-clock=HZ") {
		t.Errorf("Start of an i.MX6Q port with timestamps=rx: %v, want an error asking for ptp-clock=HZ", err)
	}
	// Without the option the stamped calls are a program error.
	p, _ := openSim(t, "")
	for name, call := range map[string]func(){
		"RxBurstStamped": func() { p.RxQueue(0).(driver.RxTimestamper).RxBurstStamped(nil, nil) },
		"TxStamped":      func() { p.TxQueue(0).(driver.TxTimestamper).TxStamped(nil, 0) },
	} {
		func() {
			defer func() {
				var off *driver.TimestampsOff
				if e, ok := recover().(error); !ok || !errors.As(e, &off) || off.Call != name {
					t.Errorf("%s without timestamps=: recovered %v, want *driver.TimestampsOff", name, e)
				}
			}()
			call()
		}()
	}
}

// Package drvtest holds checks every driver's tests run the same way.
package drvtest

import (
	"bytes"
	"errors"
	"net"
	"reflect"
	"sort"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// Closed is a port that was started, received Frame on RX queue 0 into Held
// (kept by the test), sent one frame on TX queue 0, and was then closed.
type Closed struct {
	Port  driver.Port
	Rx    driver.RxQueue // RxQueue(0), taken before Close
	Tx    driver.TxQueue // TxQueue(0), taken before Close
	Held  *pool.Packet   // received before Close and never freed
	Frame []byte         // Held's bytes
	// Touches counts the device's register accesses so far (the model's
	// counters): no call on a closed port may change it.
	Touches func() uint64
	// Extra are the cases for the driver's own exported methods, keyed
	// "Port.Name", "RxQueue.Name" or "TxQueue.Name"; each returns what is
	// wrong with the result, or nil.
	Extra map[string]func() error
}

// IsClosed reports what is wrong with err, which must wrap driver.ErrClosed.
func IsClosed(err error) error {
	if !errors.Is(err, driver.ErrClosed) {
		return errors.New("got " + errString(err) + ", want an error wrapping driver.ErrClosed")
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func want(ok bool, what string) error {
	if ok {
		return nil
	}
	return errors.New(what)
}

// AfterClose calls every exported method of the port and of its queues
// (found by reflection, so a method added later without a case here or in
// c.Extra fails the test) and checks each fails closed without touching the
// device, then that the packet kept past Close is still readable and can
// be freed.
func AfterClose(t *testing.T, c Closed) {
	t.Helper()
	p, rxq, txq := c.Port, c.Rx, c.Tx
	rxBuf := make([]*pool.Packet, 4)
	cases := map[string]func() error{
		"Port.Info": func() error {
			return want(reflect.DeepEqual(p.Info(), driver.PortInfo{}), "Info is not the zero PortInfo")
		},
		"Port.Start": func() error { return IsClosed(p.Start()) },
		"Port.Stop":  func() error { return IsClosed(p.Stop()) },
		"Port.Close": func() error {
			return want(p.Close() == nil, "a second Close returned an error")
		},
		"Port.Link": func() error { return want(p.Link() == driver.Link{}, "Link is not the zero Link") },
		"Port.OnLinkChange": func() error {
			called := false
			cancel := p.OnLinkChange(func(driver.LinkEvent) { called = true })
			if cancel == nil {
				return errors.New("OnLinkChange returned a nil cancel")
			}
			cancel()
			return want(!called, "OnLinkChange called its function on a closed port")
		},
		"Port.Stats": func() error {
			s := p.Stats()
			return want(s.Rx.Packets == 1 && s.Tx.Packets == 1 && len(s.RxQueues) > 0 && len(s.TxQueues) > 0,
				"Stats lost the counters read at Close (want 1 frame each way)")
		},
		"Port.SetPromiscuous": func() error { return IsClosed(p.SetPromiscuous(true)) },
		"Port.AddMulticast": func() error {
			return IsClosed(p.(driver.MulticastFilter).AddMulticast(net.HardwareAddr{0x33, 0x33, 0, 0, 0, 1}))
		},
		"Port.RemoveMulticast": func() error {
			return IsClosed(p.(driver.MulticastFilter).RemoveMulticast(net.HardwareAddr{0x33, 0x33, 0, 0, 0, 1}))
		},
		"Port.SetAllMulticast": func() error { return IsClosed(p.(driver.MulticastFilter).SetAllMulticast(true)) },
		"Port.SetMTU":          func() error { return IsClosed(p.SetMTU(1500)) },
		"Port.MAC":             func() error { return want(p.MAC() == nil, "MAC is not nil") },
		"Port.SetMAC":          func() error { return IsClosed(p.SetMAC(net.HardwareAddr{2, 0, 0, 0, 0, 9})) },
		"Port.RxQueue":         func() error { return want(p.RxQueue(0) == nil, "RxQueue(0) is not nil") },
		"Port.TxQueue":         func() error { return want(p.TxQueue(0) == nil, "TxQueue(0) is not nil") },

		"RxQueue.RxBurst": func() error {
			return want(rxq.RxBurst(rxBuf) == 0 && rxBuf[0] == nil, "RxBurst returned or wrote a packet")
		},
		"RxQueue.Pool": func() error {
			pl := rxq.Pool()
			return want(pl != nil && pl.InFlight() == 1, "Pool is gone or does not count the held buffer")
		},
		"RxQueue.Stats": func() error { return want(rxq.Stats().Packets == 1, "RX queue Stats lost its count") },

		"TxQueue.TxBurst": func() error {
			return want(txq.TxBurst([]*pool.Packet{c.Held}) == 0, "TxBurst took a packet")
		},
		"TxQueue.Reclaim": func() error { return want(txq.Reclaim() == 0, "Reclaim freed frames") },
		"TxQueue.Pending": func() error { return want(txq.Pending() == 0, "Pending is not 0") },
		"TxQueue.Stats":   func() error { return want(txq.Stats().Packets == 1, "TX queue Stats lost its count") },
	}
	if ri, ok := rxq.(driver.RxInterrupter); ok {
		cases["RxQueue.ArmInterrupt"] = func() error { return IsClosed(ri.ArmInterrupt()) }
		cases["RxQueue.DisarmInterrupt"] = func() error { ri.DisarmInterrupt(); return nil }
		cases["RxQueue.InterruptFDs"] = func() error {
			_, _, ok := ri.InterruptFDs()
			return want(!ok, "InterruptFDs pinned the descriptors of a closed port")
		}
		cases["RxQueue.ReleaseInterruptFDs"] = func() error { ri.ReleaseInterruptFDs(); return nil }
	}
	for k, f := range c.Extra {
		cases[k] = f
	}
	var missing []string
	for _, o := range []struct {
		kind string
		v    any
	}{{"Port", p}, {"RxQueue", rxq}, {"TxQueue", txq}} {
		typ := reflect.TypeOf(o.v)
		for i := 0; i < typ.NumMethod(); i++ {
			if k := o.kind + "." + typ.Method(i).Name; cases[k] == nil {
				missing = append(missing, k)
			}
		}
	}
	sort.Strings(missing)
	for _, k := range missing {
		t.Errorf("%s (%T) has no after-Close case: add one to say what it returns on a closed port", k, p)
	}
	names := make([]string, 0, len(cases))
	for k := range cases {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		before := c.Touches()
		if err := cases[k](); err != nil {
			t.Errorf("%s after Close: %v", k, err)
		}
		if n := c.Touches() - before; n != 0 {
			t.Errorf("%s after Close made %d register accesses; the window is gone on hardware", k, n)
		}
	}
	// The packet kept past Close: its memory is still mapped, so its bytes
	// are still there, and Free takes it back.
	if !bytes.Equal(c.Held.Data(), c.Frame) {
		t.Errorf("the packet kept past Close reads %x, want %x", c.Held.Data(), c.Frame)
	}
	pl := rxq.Pool()
	c.Held.Free()
	if n := pl.InFlight(); n != 0 {
		t.Errorf("%d buffers out after the held packet was freed, want 0", n)
	}
}

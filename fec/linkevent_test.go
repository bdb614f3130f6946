package fec_test

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// TestLinkChangeEvents pulls the model's cable, puts it back and makes the
// PHY renegotiate to 100 Mb/s: the link watcher (link-poll=) reports each
// change to OnLinkChange, in order, with no call from the application.
func TestLinkChangeEvents(t *testing.T) {
	const every = 20 * time.Millisecond
	p, m := openSim(t, "soc=imx8mp&link-poll=20ms")
	ch := make(chan driver.LinkEvent, 16)
	cancel := p.OnLinkChange(func(e driver.LinkEvent) { ch <- e })
	prev := p.Link()
	if !prev.Up || prev.SpeedMbps != 1000 {
		t.Fatalf("link at start %v, want up at 1000 Mb/s", prev)
	}
	// next waits for an event and checks it continues from the last one.
	next := func(what string) driver.LinkEvent {
		t.Helper()
		from := time.Now()
		select {
		case e := <-ch:
			if e.Old != prev || e.New == e.Old {
				t.Fatalf("%s: event %+v does not follow %v", what, e, prev)
			}
			t.Logf("%s: %v seen after %v (poll interval %v)", what, e.New, e.Time.Sub(from), every)
			prev = e.New
			return e
		case <-time.After(100 * every):
			t.Fatalf("%s: no link event within %v", what, 100*every)
		}
		return driver.LinkEvent{}
	}
	m.SetLink(false)
	if e := next("cable pulled"); e.New.Up {
		t.Fatalf("pulled cable reported as %v", e.New)
	}
	m.SetLink(true)
	if e := next("cable back"); !e.New.Up || e.New.SpeedMbps != 1000 {
		t.Fatalf("cable back reported as %v", e.New)
	}
	if err := m.SetLinkSpeed(100); err != nil {
		t.Fatal(err)
	}
	// The renegotiation may be seen as down then up, or straight as up at
	// the new speed, depending on where the poll falls.
	for e := next("renegotiated"); !(e.New.Up && e.New.SpeedMbps == 100); e = next("renegotiated") {
		if e.New.Up {
			t.Fatalf("renegotiation reported as %v, want 100 Mb/s", e.New)
		}
	}
	cancel()
	m.SetLink(false)
	p.UpdateLink()
	select {
	case e := <-ch:
		t.Errorf("event after cancel: %+v", e)
	default:
	}
}

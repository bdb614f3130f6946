package xdp

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// Setting the veth peer down takes the carrier from the port's
// interface: subscribers hear of the link going down, and of it coming
// back when the peer is set up again; Link agrees.
func TestLinkEvents(t *testing.T) {
	v := newPair(t, false)
	p := openPort(t, "xdp:"+v.host+"?mode=generic")
	if !p.Link().Up {
		t.Fatalf("link of %s down at the start", v.host)
	}
	evs := make(chan driver.LinkEvent, 16)
	cancel := p.OnLinkChange(func(e driver.LinkEvent) { evs <- e })
	defer cancel()
	next := func(what string) driver.LinkEvent {
		t.Helper()
		select {
		case e := <-evs:
			return e
		case <-time.After(20 * time.Second): // a bound on a broken watch, not a timing claim
			t.Fatalf("no link event after %s", what)
		}
		return driver.LinkEvent{}
	}
	ipCmd(t, "-n", v.ns, "link", "set", v.peer, "down")
	e := next("setting the peer down")
	if e.Port != "xdp:"+v.host+"?mode=generic" || !e.Old.Up || e.New.Up {
		t.Fatalf("event %+v, want the port's link going down", e)
	}
	if p.Link().Up {
		t.Errorf("Link reports up after the carrier went")
	}
	ipCmd(t, "-n", v.ns, "link", "set", v.peer, "up")
	e = next("setting the peer up")
	if e.Old.Up || !e.New.Up {
		t.Fatalf("event %+v, want the port's link coming up", e)
	}
	select {
	case e := <-evs:
		t.Errorf("an event with no change: %+v", e)
	default:
	}
}

// A subscriber may close the port from its callback.
func TestLinkEventCloses(t *testing.T) {
	v := newPair(t, false)
	p := openPort(t, "xdp:"+v.host+"?mode=generic")
	closed := make(chan error, 1)
	p.OnLinkChange(func(e driver.LinkEvent) {
		select {
		case closed <- p.Close():
		default:
		}
	})
	ipCmd(t, "-n", v.ns, "link", "set", v.peer, "down")
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close from the link callback: %v", err)
		}
	case <-time.After(20 * time.Second): // a bound on a hang, not a timing claim
		t.Fatal("Close from the link callback did not return")
	}
	if a, _ := queryXDP(p.(*port).nd.index); a.ProgID != 0 {
		t.Errorf("program %d left after Close", a.ProgID)
	}
}

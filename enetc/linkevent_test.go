package enetc_test

import (
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// TestLinkChangeEvents pulls the model's cable and puts it back: the link
// watcher (link-poll=) reports both changes to OnLinkChange, in order,
// without the application calling Link or UpdateLink.
func TestLinkChangeEvents(t *testing.T) {
	t.Parallel()
	const every = 20 * time.Millisecond
	s := openSim(t, "link-poll=20ms", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	ch := make(chan driver.LinkEvent, 16)
	cancel := s.port.OnLinkChange(func(e driver.LinkEvent) { ch <- e })
	wait := func(what string, up bool) driver.LinkEvent {
		t.Helper()
		pulled := time.Now()
		select {
		case e := <-ch:
			if e.New.Up != up || e.Old.Up == up || e.Port != s.spec {
				t.Fatalf("%s: event %+v", what, e)
			}
			t.Logf("%s: seen after %v (poll interval %v)", what, e.Time.Sub(pulled), every)
			return e
		case <-time.After(100 * every):
			t.Fatalf("%s: no link event within %v", what, 100*every)
		}
		return driver.LinkEvent{}
	}
	s.model.SetLink(false)
	wait("cable pulled", false)
	if s.port.Link().Up {
		t.Error("Link() still up after the down event")
	}
	s.model.SetLink(true)
	e := wait("cable back", true)
	if e.New != (driver.Link{Up: true, SpeedMbps: 1000, FullDuplex: true}) {
		t.Errorf("up event %+v, want 1000 Mb/s full duplex", e.New)
	}
	cancel()
	s.model.SetLink(false)
	s.port.UpdateLink()
	select {
	case e := <-ch:
		t.Errorf("event after cancel: %+v", e)
	default:
	}
	s.close(false)
	if s.port.OnLinkChange(func(driver.LinkEvent) { t.Error("called on a closed port") }); s.port.Link().Up {
		t.Error("closed port reports its link up")
	}
}

package driver

import (
	"sync"
	"testing"
)

func TestLinkEventsOrderCancelAndReentry(t *testing.T) {
	var e LinkEvents
	up := Link{Up: true, SpeedMbps: 1000, FullDuplex: true}
	e.Note("p", Link{}, up) // no subscriber yet: nothing queued
	e.Flush()
	var mu sync.Mutex
	var got []LinkEvent
	var again func()
	cancel := e.Subscribe(func(ev LinkEvent) {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		if again != nil { // a subscriber that causes a change (UpdateLink)
			f := again
			again = nil
			f()
		}
	})
	e.Note("p", up, up) // no change: no event
	e.Note("p", up, Link{})
	again = func() {
		e.Note("p", Link{}, Link{Up: true, SpeedMbps: 100})
		e.Flush() // returns at once: the outer Flush delivers it next
	}
	e.Flush()
	if len(got) != 2 || got[0].New.Up || got[0].Old != up || got[1].New.SpeedMbps != 100 || got[1].Old.Up {
		t.Fatalf("events %+v: want down (was up) then up 100", got)
	}
	if s := got[0].String(); s != "p: link down (was up 1000 Mb/s full duplex)" {
		t.Errorf("String() = %q", s)
	}
	cancel()
	cancel()
	e.Note("p", Link{Up: true, SpeedMbps: 100}, Link{})
	e.Flush()
	if len(got) != 2 {
		t.Fatalf("%d events after cancel, want none", len(got)-2)
	}
}

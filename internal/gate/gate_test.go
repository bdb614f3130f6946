package gate

import (
	"testing"
	"time"
)

// TestHandshake: a burst that entered before the gate closed is waited
// for; one that enters after sees the gate closed.
func TestHandshake(t *testing.T) {
	var g Gate
	g.Init()
	var f Flag
	if w, _ := f.Enter(&g); w&Closed == 0 {
		t.Fatal("a new gate is open")
	}
	f.Leave()
	g.Open(Stopped)
	if w, shared := f.Enter(&g); w != 0 || shared {
		t.Fatalf("open gate reads %#x (shared %v)", w, shared)
	}
	g.Close(Stopped)
	done := make(chan bool)
	go func() { done <- WaitIdle([]*Flag{&f}, time.Time{}) }()
	select {
	case <-done:
		t.Fatal("WaitIdle returned while a burst was inside")
	case <-time.After(20 * time.Millisecond):
	}
	f.Leave()
	if !<-done {
		t.Fatal("WaitIdle without a deadline reported a timeout")
	}
	if w, _ := f.Enter(&g); w&Closed == 0 {
		t.Fatal("a burst entered a closed gate")
	}
	if WaitIdle([]*Flag{&f}, time.Now().Add(time.Millisecond)) {
		t.Fatal("WaitIdle reported idle past its deadline with a burst inside")
	}
	f.Leave()
	g.Open(Stopped)
	g.Close(LinkDown)
	if w, _ := f.Enter(&g); w&Closed != 0 || w&LinkDown == 0 {
		t.Fatalf("link down reads %#x: bursts must run, TX must see LinkDown", w)
	}
	if _, shared := f.Enter(&g); !shared {
		t.Error("a second Enter without Leave is not reported as shared")
	}
	f.Leave()
}

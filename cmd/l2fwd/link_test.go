package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopmd/gopmd/sim"
)

// syncBuffer is a bytes.Buffer safe to read while l2fwd writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLinkChangesLogged pulls port 1's cable while l2fwd runs and puts it
// back: l2fwd logs both changes, naming the port, as its link watcher sees
// them.
func TestLinkChangesLogged(t *testing.T) {
	specs := []string{"sim:fec61?link-poll=20ms", "sim:fec62?link-poll=20ms"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	res := make(chan int, 1)
	go func() {
		res <- run(ctx, append([]string{"--json", "--stats-interval", "0"}, specs...), &stdout, &stderr)
	}()
	// The deadline only keeps a broken build from hanging.
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				cancel()
				<-res
				t.Fatalf("%s never happened; stderr:\n%s", what, stderr.String())
			}
		}
	}
	// Port 1 has started once its model has receive buffers posted (the
	// last port l2fwd starts).
	waitFor("port 1 started", func() bool { m := sim.FECModel("fec62"); return m != nil && m.RxRoom() > 0 })
	m := sim.FECModel("fec62")
	// l2fwd listens right after every port has started; a cable pulled
	// before that is not logged, so pull it until the line shows (ten link
	// polls to show it, two with the cable back before the next pull).
	down := "l2fwd: port 1 (" + specs[1] + "): link down (was up 1000 Mb/s full duplex)"
	waitFor("the down line", func() bool {
		m.SetLink(false)
		for i := 0; i < 40; i++ {
			if strings.Contains(stderr.String(), down) {
				return true
			}
			time.Sleep(5 * time.Millisecond)
		}
		m.SetLink(true)
		time.Sleep(40 * time.Millisecond)
		return false
	})
	m.SetLink(true)
	up := "l2fwd: port 1 (" + specs[1] + "): link up 1000 Mb/s full duplex (was down)"
	waitFor("the up line", func() bool { return strings.Contains(stderr.String(), up) })
	cancel()
	if code := <-res; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "port 0 (") {
		t.Errorf("port 0's link never changed but was logged:\n%s", stderr.String())
	}
}

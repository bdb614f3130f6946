package main

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gopmd/gopmd/sim"
)

// sleptAfter stops a run once the sink of port sink has n frames and the
// workers have slept on the RX interrupts since then (each sleep lasts
// at most maxSleep, so a quiet worker sleeps again and again): no
// assertion depends on how fast the machine runs.
func sleptAfter(t *testing.T, sink string, n uint64) func() bool {
	var cur atomic.Pointer[app]
	old := running
	running = func(a *app) { cur.Store(a) }
	t.Cleanup(func() { running = old })
	sleeps := func() (s uint64) {
		if a := cur.Load(); a != nil {
			for _, w := range a.ws {
				s += w.sleeps.Load()
			}
		}
		return s
	}
	base := uint64(0)
	full := false
	return func() bool {
		if !full {
			k := sim.SinkOf(sink)
			if k == nil || k.Stats().Frames < n {
				return false
			}
			full, base = true, sleeps()
		}
		return sleeps() > base
	}
}

// An adaptive forwarder forwards every frame of a generator, in order,
// with the accounting balanced, and sleeps once the frames stop.
func TestAdaptiveForwardsEveryFrame(t *testing.T) {
	const n = 300
	code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "--rx-mode", "adaptive", "--rx-idle", "16",
		"sim:fec60?mode=engine&gen=1&gen-count=300&" + simOpts, "sim:fec61?mode=engine&sink=1&" + simOpts},
		sleptAfter(t, "fec61", n))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := parseSummary(t, out)
	p0, p1 := s.Ports[0], s.Ports[1]
	if k := p1.Sink; k == nil || k.Frames != n || k.Lost != 0 || k.Duplicates != 0 || k.Reordered != 0 {
		t.Fatalf("sink saw %+v, want %d frames in order, none lost", k, n)
	}
	if p0.Rx.Packets != n || p0.Handled != n || p1.Tx.Packets != n || s.Dropped != 0 || !s.Accounting.OK || !s.LeakCheck.OK {
		t.Fatalf("port 0 rx %d handled %d, port 1 tx %d, dropped %d, accounting %+v, leaks %+v", p0.Rx.Packets, p0.Handled, p1.Tx.Packets, s.Dropped, s.Accounting, s.LeakCheck)
	}
	if s.RxMode != "adaptive" || s.Sleeps == 0 {
		t.Fatalf("rx_mode %q with %d sleeps: the worker never slept in the quiet after the frames", s.RxMode, s.Sleeps)
	}
	t.Logf("%d frames, %d sleeps, worker CPU %.3f s of %.3f s", n, s.Sleeps, s.WorkerCPU, s.Seconds)
}

// The plain summary says how an adaptive run slept; a polling run says
// nothing about it.
func TestAdaptiveSummaryLine(t *testing.T) {
	never := func() bool { return false } // --duration ends the runs
	code, out, errOut := runUntil(t, []string{"--stats-interval", "0", "--duration", "200ms", "--rx-mode", "adaptive",
		"sim:fec62?mode=engine&" + simOpts, "sim:fec63?mode=engine&" + simOpts}, never)
	if code != 0 || !strings.Contains(out, "rx-mode adaptive: ") || !strings.Contains(out, "sleeps on RX interrupts") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr: %s", code, out, errOut)
	}
	code, out, _ = runUntil(t, []string{"--stats-interval", "0", "--duration", "50ms", "sim:fec62?mode=engine&" + simOpts, "sim:fec63?mode=engine&" + simOpts}, never)
	if code != 0 || strings.Contains(out, "rx-mode adaptive") {
		t.Fatalf("poll mode: exit %d, stdout:\n%s", code, out)
	}
}

// l2fwd -h documents both flags.
func TestHelpDocumentsRxMode(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("-h: exit %d: %s", code, stderr.String())
	}
	for _, w := range []string{"-rx-mode", "poll", "adaptive", "-rx-idle", "empty"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("-h does not say %q", w)
		}
	}
}

// A port whose RX queues have no interrupt is refused in adaptive mode,
// naming the port and queue, before any worker runs.
func TestAdaptiveRefusesQueueWithoutInterrupt(t *testing.T) {
	twoFakes(t, 1)
	code, out, errOut := runUntil(t, []string{"--rx-mode", "adaptive", "--stats-interval", "0", "sim:fake0", "sim:fake1"}, nil)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != 2 || out != "" || len(lines) != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, out, errOut)
	}
	for _, w := range []string{"port 0 (sim:fake0)", "RX queue 0", "no RX interrupt", "--rx-mode poll"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr %q does not say %q", errOut, w)
		}
	}
}

// ENETC ports take adaptive mode too (MSI-X through the simulated
// function), and forward every frame.
func TestAdaptiveENETC(t *testing.T) {
	const n = 300
	code, out, errOut := runUntil(t, []string{"--json", "--stats-interval", "0", "--rx-mode", "adaptive",
		"sim:enetc60?mode=engine&gen=1&gen-count=300&" + simOpts, "sim:enetc61?mode=engine&sink=1&" + simOpts},
		sleptAfter(t, "enetc61", n))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := parseSummary(t, out)
	if k := s.Ports[1].Sink; k == nil || k.Frames != n || k.Lost != 0 || !s.Accounting.OK || s.Sleeps == 0 {
		t.Fatalf("sink %+v, accounting %+v, sleeps %d", k, s.Accounting, s.Sleeps)
	}
}

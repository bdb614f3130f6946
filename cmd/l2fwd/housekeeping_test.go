package main

import (
	"os"
	"testing"

	"github.com/gopmd/gopmd/internal/testnote"
)

// TestDefaultRunNoDrops: housekeeping costs no frame. The README's main
// job (two simulated ENETC ports fed by the generator, the ENETC link
// watcher on) ends with zero drops of every cause, no TX refusal and no
// frame lost at the sinks. Plain go test runs 500 ms with the watcher at
// the shortest period the driver takes (10 ms: some 50 link polls, each an
// MDIO transaction that holds the data path off, while both workers
// forward at full rate); GOPMD_SOAK=1 runs the default job itself, 10 s at
// the default period.
func TestDefaultRunNoDrops(t *testing.T) {
	args := []string{"--json", "--stats-interval", "0", "--duration", "500ms",
		"sim:enetc0?gen=1&sink=1&link-poll=10ms", "sim:enetc1?gen=1&sink=1&link-poll=10ms"}
	if os.Getenv("GOPMD_SOAK") == "1" {
		args = []string{"--json", "--stats-interval", "0", "--duration", "10s"}
	} else {
		testnote.Note(t, "ran l2fwd's default job for 500 ms at link-poll=10ms (some 50 link polls); the 10 s default run: GOPMD_SOAK=1 go test ./cmd/l2fwd -run TestDefaultRunNoDrops")
	}
	// --duration ends the run; runUntil only stops it if it hangs.
	code, out, errOut := runUntil(t, args, func() bool { return false })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := parseSummary(t, out)
	if s.Packets == 0 {
		t.Fatal("nothing was forwarded")
	}
	if s.Dropped != 0 || !s.LeakCheck.OK || len(s.Errors) != 0 || !s.Accounting.OK {
		t.Errorf("dropped %d, leak check %+v, errors %v, accounting %+v", s.Dropped, s.LeakCheck, s.Errors, s.Accounting)
	}
	for _, p := range s.Ports {
		// The driver waits out the link poll's MDIO register accesses
		// itself: its TX refuses nothing for them.
		if len(p.Rx.Drops) != 0 || len(p.Tx.Drops) != 0 || p.TxRefused != 0 {
			t.Errorf("port %d: rx drops %v, tx drops %v, TX refused %d", p.Port, p.Rx.Drops, p.Tx.Drops, p.TxRefused)
		}
		if p.Sink == nil || p.Sink.Frames == 0 || p.Sink.Lost != 0 {
			t.Errorf("port %d: sink %+v, want frames and none lost", p.Port, p.Sink)
		}
	}
	t.Logf("%d frames in %.1f s (%.2f Mpps)", s.Packets, s.Seconds, s.Mpps)
}

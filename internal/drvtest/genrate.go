package drvtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// GenView is what GeneratorAccounting reads of a simulated port's sources
// (a *sim.PortView has it; drvtest does not import sim, which imports the
// device models).
type GenView interface {
	// Done reports whether every source with an end has ended.
	Done() (done, waiting bool)
	// Produced is the number of frames the sources handed to the port.
	Produced() uint64
}

// GeneratorAccounting opens spec, an engine-mode simulated port fed by a
// rate-limited generator of count frames (gen-rate=3000: a wire that runs
// on regardless), leaves it unstarted for a while as an application sets
// up, then starts and polls it. Every generated frame must be received or
// counted by cause, exactly; and as count is fewer than the port's RX
// buffers, none may be dropped at all (no mac_discard for frames that came
// before the port was started). view (sim.ViewOf) returns the port's view
// once it is open, or its zero value (nil) for none; discard names the
// device counter behind mac_discard ("RDRP"), for the failure message. Run
// with -race.
func GeneratorAccounting[V interface {
	comparable
	GenView
}](t *testing.T, spec string, count uint64, view func(spec string) V, discard string) {
	t.Helper()
	p, err := driver.Open(spec)
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close %s: %v", spec, err)
		}
	})
	v := view(spec)
	var none V
	if v == none {
		t.Fatalf("%s: no sim view", spec)
	}
	time.Sleep(20 * time.Millisecond) // an application setting up: 60 frames' time at 3 kpps
	if err := p.Start(); err != nil {
		t.Fatalf("start %s: %v", spec, err)
	}
	q := p.RxQueue(0)
	pkts := make([]*driver.Packet, 32)
	// Poll until the generator is done and every frame it produced is
	// seen; a port that never balances gives up once nothing has moved
	// for a second.
	var st driver.PortStats
	last, lastMove := uint64(0), time.Now()
	for deadline := time.Now().Add(20 * time.Second); ; {
		n := q.RxBurst(pkts)
		for _, pk := range pkts[:n] {
			pk.Free()
		}
		st = p.Stats()
		seen := st.Rx.Packets + st.Rx.TotalDrops()
		done, _ := v.Done()
		if done && seen >= v.Produced() {
			break
		}
		if seen != last {
			last, lastMove = seen, time.Now()
		}
		if done && time.Since(lastMove) > time.Second || time.Now().After(deadline) {
			break
		}
		if n == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	produced := v.Produced()
	if done, _ := v.Done(); !done || produced != count || st.Rx.Packets+st.Rx.TotalDrops() != produced {
		t.Fatalf("generator produced %d frames (want %d); the port received %d and counted %d dropped by cause (%v): %d unaccounted for",
			produced, count, st.Rx.Packets, st.Rx.TotalDrops(), dropsByCause(st.Rx), int64(produced)-int64(st.Rx.Packets+st.Rx.TotalDrops()))
	}
	if st.Rx.Packets != count {
		t.Fatalf("received %d of %d frames, dropped %v (mac_discard is %s): an idle port with a buffer for every frame must receive them all", st.Rx.Packets, count, dropsByCause(st.Rx), discard)
	}
}

// dropsByCause names the non-zero drop counters ("mac_discard=11").
func dropsByCause(s driver.QueueStats) string {
	out := ""
	for c, n := range s.Drops {
		if n != 0 {
			out += fmt.Sprintf(" %s=%d", driver.Cause(c), n)
		}
	}
	if out == "" {
		return "none"
	}
	return out[1:]
}

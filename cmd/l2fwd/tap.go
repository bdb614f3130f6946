package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/tap"
)

// tapOptions are the --tap flags: each port gets a TAP twin, the exception
// path to the kernel (package tap).
type tapOptions struct {
	tap      bool
	tapName  string // template: %d is the port index
	tapRules string
}

// openTap opens a port's TAP twin; tests replace it.
var openTap = tap.OpenPort

// tapLog takes the twins' log lines: warnings only, since the summary
// reports their counters.
var tapLog = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// tapDownEvery is how many polls of a lane pass between two reads of the
// kernel's frames: each read is a system call even when nothing waits, and
// kernel traffic (ARP, SSH, routing hellos) tolerates the few microseconds.
const tapDownEvery = 16

func addTapFlags(fs *flag.FlagSet, o *options) {
	fs.BoolVar(&o.tap, "tap", false, "give each port a TAP twin, the exception path to the kernel: frames for the port's own MAC (and the --tap-rules) go up to the TAP instead of being forwarded, broadcasts and IPv6 neighbour discovery to group addresses are copied up, and what the kernel sends out of the TAP goes out of the port (needs CAP_NET_ADMIN)")
	fs.StringVar(&o.tapName, "tap-name", "gopmd%d", "--tap: interface names; %d is the port index (a name without %d is for a single port)")
	fs.StringVar(&o.tapRules, "tap-rules", "", "--tap: more frames to send up: "+tap.RulesSyntax)
}

// checkTapOptions checks the --tap flags against the ports.
func checkTapOptions(o *options) error {
	if !o.tap {
		for _, f := range []struct{ name, val, def string }{{"--tap-name", o.tapName, "gopmd%d"}, {"--tap-rules", o.tapRules, ""}} {
			if f.val != f.def {
				return &usageError{f.name + " is given without --tap: add --tap, or drop " + f.name}
			}
		}
		return nil
	}
	if _, err := tap.ParseRules(tap.Rules{}, o.tapRules); err != nil {
		return &usageError{"--tap-rules: " + err.Error()}
	}
	if c := strings.Count(o.tapName, "%"); c > 1 || (c == 1 && !strings.Contains(o.tapName, "%d")) {
		return &usageError{fmt.Sprintf("--tap-name %q: use at most one %%d (the port index) and no other %%", o.tapName)}
	}
	if !strings.Contains(o.tapName, "%d") && len(o.specs) > 1 {
		return &usageError{fmt.Sprintf("--tap-name %q has no %%d, but there are %d ports: their TAP names would clash; add %%d", o.tapName, len(o.specs))}
	}
	for i := range o.specs {
		if err := tap.CheckName(o.tapNameOf(i)); err != nil {
			return &usageError{"--tap-name: " + err.Error()}
		}
	}
	return nil
}

// tapNameOf is port i's TAP name.
func (o *options) tapNameOf(i int) string {
	if strings.Contains(o.tapName, "%d") {
		return fmt.Sprintf(o.tapName, i)
	}
	return o.tapName
}

// setupTaps opens a twin per port and tells the lanes: every RX lane of a
// port sends its port's frames up (Up may run on several goroutines), and
// the one lane that owns the port's TX queue 0 brings the kernel's frames
// down (Down needs the TX queue's owner). In drop and pass modes no lane
// sends on a port, so the port's queue-0 lane takes its TX queue 0 for
// them.
func (a *app) setupTaps() error {
	if !a.o.tap {
		return nil
	}
	for i, p := range a.ports {
		name := a.o.tapNameOf(i)
		rules, err := tap.ParseRules(tap.DefaultRules(p.MAC()), a.o.tapRules)
		if err != nil {
			return fmt.Errorf("--tap-rules: %w", err)
		}
		if p.Info().TxQueues == 0 {
			return fmt.Errorf("--tap: port %d (%s) has no TX queue for the kernel's frames", i, a.specs[i])
		}
		// Down reads up to tap.DefaultBurst frames per call whatever
		// --burst says: it runs once every tapDownEvery polls, and the
		// kernel sends in bursts (a TCP window).
		tw, err := openTap(p, tap.Config{Name: name, Rules: &rules, Logger: tapLog})
		if err != nil {
			return fmt.Errorf("--tap: port %d (%s): %w", i, a.specs[i], err)
		}
		a.twins = append(a.twins, tw)
		a.tapNames = append(a.tapNames, tw.Name())
	}
	for _, l := range a.lanes {
		l.up = a.twins[l.rxPort]
	}
	for i := range a.ports {
		var down *lane
		for _, l := range a.lanes {
			if l.txPort == i && l.rxQueue == 0 {
				down = l
				break
			}
		}
		if down == nil {
			for _, l := range a.lanes {
				if l.rxPort == i && l.rxQueue == 0 && l.tx == nil {
					down = l
					l.downTx = a.ports[i].TxQueue(0)
					break
				}
			}
		} else {
			down.downTx = down.tx
		}
		if down == nil {
			return fmt.Errorf("--tap: no lane can send port %d's kernel frames (its TX queue 0 is used by no lane and it has no RX queue 0)", i)
		}
		down.down = a.twins[i]
	}
	return nil
}

// tapPoll is a lane's exception-path work for one poll: every
// tapDownEvery polls, the kernel's frames go down.
func (l *lane) tapPoll() {
	l.tapTick++
	if l.tapTick%tapDownEvery == 0 {
		l.down.Down(l.downTx)
		l.owed = true // downTx may be l.tx: the next empty poll reclaims
	}
}

// closeTwins closes the twins once the ports have stopped (their TX rings
// gave the twins' buffers back); leaks are reported as pools report them.
func (a *app) closeTwins() (leaks []string, errs []error) {
	for i, tw := range a.twins {
		err := tw.Close(a.closeTimeout())
		var le *pool.LeakError
		switch {
		case errors.As(err, &le):
			leaks = append(leaks, fmt.Sprintf("port %d TAP %s: %s", i, tw.Name(), err))
		case err != nil:
			errs = append(errs, fmt.Errorf("port %d TAP %s: %w", i, tw.Name(), err))
		}
	}
	a.twins = nil
	return leaks, errs
}

// printTapRow follows port i's row of the stats table with its twin's
// rates over the interval (nothing without --tap).
func (a *app) printTapRow(i int, prev, cur portSnap, dt time.Duration) {
	if i >= len(a.tapNames) {
		return
	}
	p, c := prev.tap, cur.tap
	fmt.Fprintf(a.table, "     tap %s: up %.0f/s (%.0f/s taken from forwarding, %.0f/s copies), down %.0f/s\n", a.tapNames[i],
		rate(c.UpFrames-p.UpFrames, dt), rate(c.Taken-p.Taken, dt), rate(c.UpCopies-p.UpCopies, dt), rate(c.DownFrames-p.DownFrames, dt))
}

// tapJSON is a port's TAP twin in the summary.
type tapJSON struct {
	Name string `json:"name"`
	// Up: frames written to the TAP; UpCopies of them were broadcasts
	// also forwarded. Taken: frames removed from forwarding (written up or
	// dropped on the way).
	Up       uint64 `json:"up"`
	UpBytes  uint64 `json:"up_bytes"`
	UpCopies uint64 `json:"up_copies"`
	Taken    uint64 `json:"taken"`
	// Down: the kernel's frames the port's TX queue took.
	Down      uint64 `json:"down"`
	DownBytes uint64 `json:"down_bytes"`
	// DownNoBuffer: reads put off because every TAP buffer was on the TX
	// ring (the frames waited in the kernel).
	DownNoBuffer uint64            `json:"down_no_buffer"`
	Drops        map[string]uint64 `json:"drops"`
	// Gone: the TAP interface went away while l2fwd ran (deleted); frames
	// for the host were dropped from then on, as drops up_gone.
	Gone bool `json:"gone,omitempty"`
}

func tapOut(name string, s tap.Stats) *tapJSON {
	j := &tapJSON{Name: name, Up: s.UpFrames, UpBytes: s.UpBytes, UpCopies: s.UpCopies, Taken: s.Taken,
		Down: s.DownFrames, DownBytes: s.DownBytes, DownNoBuffer: s.DownNoBuffer, Drops: map[string]uint64{}, Gone: s.Gone}
	for c := tap.Cause(0); c < tap.NumCauses; c++ {
		if s.Drops[c] != 0 {
			j.Drops[c.String()] = s.Drops[c]
		}
	}
	return j
}

// tapDrops are a twin's drops for the stats table, by cause.
func tapDrops(s tap.Stats) []loss {
	var d []loss
	for c := tap.Cause(0); c < tap.NumCauses; c++ {
		d = append(d, loss{"tap:" + c.String(), s.Drops[c]})
	}
	return d
}

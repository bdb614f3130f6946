package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gopmd/gopmd/telemetry"
)

// telemetryAuto and telemetryOff are the --telemetry values that are not
// a path.
const (
	telemetryAuto = "auto"
	telemetryOff  = "off"
)

func addTelemetryFlag(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.telemetry, "telemetry", telemetryAuto, "serve the ports' counters and rings on this unix socket for nicctl stats/rings --telemetry (auto: /run/gopmd/l2fwd.PID.sock, or under $XDG_RUNTIME_DIR/gopmd when not root; off: none)")
}

// serveTelemetry starts the --telemetry socket and returns the function
// that removes it. With auto, a socket that cannot be made is a warning
// (the run goes on without it); with a path it is an error, and ok is
// false.
func serveTelemetry(o *options, a *app, stderr io.Writer) (stop func(), ok bool) {
	switch o.telemetry {
	case telemetryOff, "":
		return func() {}, true
	case telemetryAuto:
		// Several runs in one process (tests) take .PID-2.sock and on.
		base := strings.TrimSuffix(telemetry.DefaultPath("l2fwd"), ".sock")
		for i := 1; i <= 100; i++ {
			path := base + ".sock"
			if i > 1 {
				path = fmt.Sprintf("%s-%d.sock", base, i)
			}
			srv, err := telemetry.Listen(path, a.livePorts)
			if errors.Is(err, telemetry.ErrInUse) {
				continue
			}
			if err != nil {
				fmt.Fprintf(stderr, "l2fwd: warning: no telemetry socket, nicctl stats cannot read this run: %s (--telemetry PATH picks another place, --telemetry off silences this)\n", oneLine(err.Error()))
				return func() {}, true
			}
			return announce(srv, stderr), true
		}
		fmt.Fprintf(stderr, "l2fwd: warning: no telemetry socket: %s.sock and 99 others are in use\n", base)
		return func() {}, true
	}
	srv, err := telemetry.Listen(o.telemetry, a.livePorts)
	if err != nil {
		fmt.Fprintf(stderr, "l2fwd: --telemetry %s: %s\n", o.telemetry, oneLine(err.Error()))
		return nil, false
	}
	return announce(srv, stderr), true
}

func announce(srv *telemetry.Server, stderr io.Writer) func() {
	fmt.Fprintf(stderr, "l2fwd: telemetry on %s (nicctl stats --telemetry %s PORT)\n", srv.Path(), srv.Path())
	return func() { _ = srv.Close() }
}

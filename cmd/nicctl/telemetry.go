package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/gopmd/gopmd/telemetry"
)

// telemetryFlag adds --telemetry to stats and rings: read the port from
// the process that runs it instead of opening it.
func telemetryFlag(fs *flag.FlagSet, v *string) {
	fs.StringVar(v, "telemetry", "", "read DEV from the gopmd process that runs it, through its telemetry `SOCKET` (l2fwd names it at start; auto: find that process's socket in /run/gopmd, or $XDG_RUNTIME_DIR/gopmd when not root)")
}

// dialTelemetry connects to the socket --telemetry names, or with auto to
// the one process in telemetry.DefaultDir that has dev.
func dialTelemetry(where, dev string) (*telemetry.Client, error) {
	path := where
	if where == "auto" {
		p, err := telemetry.Find("", dev)
		if err != nil {
			return nil, fmt.Errorf("--telemetry auto: %w", err)
		}
		path = p
	}
	c, err := telemetry.Dial(path)
	if err != nil {
		return nil, fmt.Errorf("--telemetry: %w", err)
	}
	return c, nil
}

// source is how a result names where it was read.
func source(c *telemetry.Client) string {
	return fmt.Sprintf("%s pid %d, %s", c.Info.App, c.Info.PID, c.Path())
}

// statsTelemetry is stats read through a telemetry socket.
func statsTelemetry(e *env, dev, where string, watch bool, interval time.Duration, count int) (any, error) {
	c, err := dialTelemetry(where, dev)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	read := func() (*statsResult, error) {
		st, err := c.Stats(dev)
		if err != nil {
			return nil, err
		}
		r := sampleOf(dev, st.PortStats(), e.now())
		r.Source = source(c)
		return r, nil
	}
	return watchStats(e, watch, interval, count, read)
}

// ringsTelemetry is rings read through a telemetry socket: the device's
// view of each ring (the serving process owns the driver's indices and
// the BD memory).
func ringsTelemetry(dev, where string) (any, error) {
	c, err := dialTelemetry(where, dev)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rs, err := c.Rings(dev)
	if err != nil {
		return nil, err
	}
	r := &ringsResult{Dev: dev, Source: source(c)}
	for _, t := range rs {
		g := ringInfoOf(t.RingState())
		g.NoBDs = "in the serving process's memory (stop it and run nicctl rings DEV to decode BDs)"
		r.Rings = append(r.Rings, g)
	}
	return r, nil
}

package sim

import (
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim/wire"
)

// Endpoint is what a simulated device port exposes to wiring: its receive
// side, and hooks to set its transmit wire and add receive sources. Model
// openers (enetc.go, fec.go) fill one in and call attach.
type Endpoint struct {
	// Name is the device name without scheme ("enetc0").
	Name string
	// Port is the model port's receive side.
	Port wire.Port
	// SetWire replaces the wire the port transmits into.
	SetWire func(wire.Wire)
	// AddSource adds a frame source the model pulls from (engine mode) or
	// Pump pulls from (synchronous mode).
	AddSource func(wire.Source)
	// Engine reports whether the model runs its own DMA-engine goroutine.
	Engine bool
}

// attachOptions are the spec options attach understands.
var attachOptions = []string{"peer", "pcap-in", "pcap-out", "pcap-speed", "afpacket", "gen", "gen-size", "gen-flows", "gen-rate", "gen-count", "sink"}

// attach wires an endpoint as its spec's options say (peer=, pcap-in=,
// pcap-out=, afpacket=, gen=, sink=). It returns a cleanup to run when the
// device is released. With no wiring option the port's wire stays the
// model's default (a counting discard).
var attach = func(ep *Endpoint, spec driver.Spec) (func() error, error) {
	return func() error { return nil }, nil
}

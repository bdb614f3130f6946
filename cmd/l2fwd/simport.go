package main

// This file is l2fwd's one seam to the simulator: everything else sees a
// port's surroundings only through the surround interface. A real device
// has none that l2fwd can see.

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim" // also makes the sim: scheme openable
)

// surround is what lies around a port besides its driver: the frames fed
// into it and the wires it transmits into.
type surround interface {
	// pump pulls the port's inputs into its RX ring before each poll when
	// nothing else does (a synchronous device model), or is nil.
	pump() func() int
	// engine reports a device-engine goroutine that needs a CPU.
	engine() bool
	// driveWith names the port that must be polled by the same worker as
	// this one ("" for none).
	driveWith() string
	// produced is the number of frames handed to the port's receive side;
	// known is false where nobody can tell (a real wire).
	produced() (n uint64, known bool)
	// carried grows while frames leave the port on its wires.
	carried() uint64
	// done reports whether every input that ends has ended; waiting
	// whether one waits for the port's receive buffers to go on.
	done() (done, waiting bool)
	// hold stops the inputs (at set-up, so no frame reaches a port
	// before it has started; at the end, so what is in flight can drain);
	// release lets them go on.
	hold()
	release()
	// losses are frames lost around the port, by cause.
	losses() []loss
	// err is what stopped an input early.
	err() error
	// report fills the port's wiring sections of the summary.
	report(pj *portJSON)
}

// loss is one count of frames lost, by cause.
type loss struct {
	name string
	n    uint64
}

// surroundingsOf returns the surroundings of each open port, by its spec
// (a variable so tests can stand in surroundings of their own).
var surroundingsOf = simSurroundings

// simSurroundings is surroundingsOf: the simulator's view of each sim:
// port, nothing for any other.
func simSurroundings(specs []string) []surround {
	s := make([]surround, len(specs))
	for i, spec := range specs {
		if v := sim.ViewOf(spec); v != nil {
			s[i] = simSurround{v}
		} else {
			s[i] = bare{}
		}
	}
	return s
}

// outputClash refuses an output file a simulated port's pcap-in replays
// or pcap-out writes (--capture, even with --force).
func outputClash(path string) error { return sim.OutputClash(path) }

// inputEnds tells --until-done whether a port's input ends by itself.
func inputEnds(spec driver.Spec) (finite bool, endless string) { return sim.InputEnds(spec) }

// deviceName is a spec's device name, as driveWith names ports.
func deviceName(spec string) string {
	s, err := driver.ParseSpec(spec)
	if err != nil {
		return ""
	}
	return s.Name
}

// bare is the surroundings of a real device: nothing l2fwd can see.
type bare struct{}

func (bare) pump() func() int         { return nil }
func (bare) engine() bool             { return false }
func (bare) driveWith() string        { return "" }
func (bare) produced() (uint64, bool) { return 0, false }
func (bare) carried() uint64          { return 0 }
func (bare) done() (bool, bool)       { return true, false }
func (bare) hold()                    {}
func (bare) release()                 {}
func (bare) losses() []loss           { return nil }
func (bare) err() error               { return nil }
func (bare) report(*portJSON)         {}

// simSurround is a simulated port's wiring.
type simSurround struct{ v *sim.PortView }

func (s simSurround) pump() func() int         { return s.v.Pump() }
func (s simSurround) engine() bool             { return s.v.Engine() }
func (s simSurround) driveWith() string        { return s.v.DriveWith() }
func (s simSurround) produced() (uint64, bool) { return s.v.Produced(), true }
func (s simSurround) carried() uint64          { return s.v.Carried() }
func (s simSurround) done() (bool, bool)       { return s.v.Done() }
func (s simSurround) hold()                    { s.v.Hold() }
func (s simSurround) release()                 { s.v.Release() }
func (s simSurround) err() error               { return s.v.Err() }

func (s simSurround) losses() []loss {
	var l []loss
	for _, x := range s.v.Losses() {
		l = append(l, loss{x.Cause, x.N})
	}
	return l
}

// wiringJSON are a port's simulated wires in the summary (all omitted for
// a real device).
type wiringJSON struct {
	Generator *sim.GeneratorStats `json:"generator,omitempty"`
	Sink      *sim.SinkStats      `json:"sink,omitempty"`
	AFPacket  *sim.AFPacketStats  `json:"afpacket,omitempty"`
	PcapIn    *pcapInJSON         `json:"pcap_in,omitempty"`
	// Cable: the direction this port transmits into.
	Cable *sim.CableStats `json:"cable,omitempty"`
}

// pcapInJSON is a port's pcap-in replay in the summary.
type pcapInJSON struct {
	// Frames were replayed into the port; Padded of them were shorter
	// than the Ethernet minimum in the file and padded to 60 bytes (as the
	// sending MAC did); TooBig were longer than the port's receive buffers
	// and kept out.
	Frames uint64 `json:"frames"`
	Padded uint64 `json:"padded"`
	TooBig uint64 `json:"too_big"`
	// Done: the replay is over. Error: the damaged record that ended it.
	Done  bool   `json:"done"`
	Error string `json:"error,omitempty"`
}

func (s simSurround) report(pj *portJSON) {
	w := &pj.wiringJSON
	if g := s.v.Generator(); g != nil {
		st := g.Stats()
		w.Generator = &st
	}
	if a := s.v.AFPacket(); a != nil {
		st := a.Stats()
		w.AFPacket = &st
	}
	if src := s.v.PcapIn(); src != nil {
		w.PcapIn = &pcapInJSON{Frames: src.Frames(), Padded: src.Padded(), TooBig: src.TooBig(), Done: src.Done()}
		if err := src.Err(); err != nil {
			w.PcapIn.Error = err.Error()
		}
	}
	w.Cable = s.v.CableOut()
	if k := s.v.Sink(); k != nil {
		st := k.Stats()
		w.Sink = &st
	}
}

// wiringLines are the summary lines of a port's simulated wires.
func wiringLines(p portJSON) []string {
	var l []string
	if p.Generator != nil {
		l = append(l, fmt.Sprintf("generator sent %d frames (%d too big for the port's buffers, kept out)", p.Generator.Frames, p.Generator.TooBig))
	}
	if p.Sink != nil {
		l = append(l, fmt.Sprintf("sink got %d frames: lost %d, duplicated %d, reordered %d, unstamped %d", p.Sink.Frames, p.Sink.Lost, p.Sink.Duplicates, p.Sink.Reordered, p.Sink.Other))
	}
	if x := p.AFPacket; x != nil {
		l = append(l, fmt.Sprintf("afpacket: %d frames in (%d handed to the port), %d out; lost: %d in the kernel (socket buffer full), %d on the interface (kernel backlog), %d queue full, %d too big, %d queued at stop, %d send errors, %d sent with no carrier; carrier changed %d times",
			x.RxFrames, x.Delivered, x.TxFrames, x.KernelDrops, x.IfDropped, x.RxDropped, x.RxTooBig, x.Held, x.TxErrors, x.TxLinkDown, x.LinkChanges))
	}
	if x := p.PcapIn; x != nil {
		state := "replayed in full"
		if !x.Done {
			state = "not finished"
		}
		if x.Error != "" {
			state = "stopped early: " + x.Error
		}
		l = append(l, fmt.Sprintf("pcap-in: %d frames, %s; %d padded to the 60-byte minimum, %d too big for the receive buffers (kept out)", x.Frames, state, x.Padded, x.TooBig))
	}
	if c := p.Cable; c != nil {
		l = append(l, fmt.Sprintf("cable out: %d frames carried (%d padded); lost: %d ring full, %d too big, %d peer not open, %d peer's link down", c.Frames, c.Padded, c.Full, c.TooBig, c.Unplugged, c.LinkDown))
	}
	return l
}

// realNetwork says why a port's wire is a real network ("" for a
// simulated one): a device that is not simulated, or a sim port reaching
// a Linux interface (a veth, a TAP, a NIC) through afpacket=.
func realNetwork(spec string) string {
	s, err := driver.ParseSpec(spec)
	switch {
	case err != nil:
		return ""
	case s.Scheme != "sim":
		return "it is a real device"
	case s.Options.Has("afpacket"):
		return fmt.Sprintf("afpacket=%s reaches a real Linux interface", s.Options.Get("afpacket"))
	}
	return ""
}

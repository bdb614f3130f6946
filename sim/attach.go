package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/safefile"
	"github.com/gopmd/gopmd/wire"
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
	// Pump pulls the sources into the receive ring of a synchronous model.
	Pump func() int
	// SetLink sets the link of the port's PHY (a wire that knows its
	// carrier, AF_PACKET, drives it); nil when the port has none.
	SetLink func(up bool)
	// LinkUp reports the link of the port's PHY (a cable carries nothing
	// to a port without one); nil: always up.
	LinkUp func() bool
	// LinkDownDrops counts the frames the port's MAC sent while its PHY
	// had no link, lost there; nil when the model loses none that way.
	LinkDownDrops func() uint64
}

// attachOptions are the spec options attach understands (Options).
var attachOptions = WiringOptions()

// attach wires an endpoint as its spec's options say (peer=, pcap-in=,
// pcap-out=, afpacket=, gen=, sink=). It returns a cleanup to run when the
// device is released. With no wiring option the port's wire stays the
// model's default (a counting discard).
var attach = attachEndpoint

// teeWire hands every frame to several wires in turn.
type teeWire []wire.Wire

func (t teeWire) Transmit(frame []byte) {
	for _, w := range t {
		w.Transmit(frame)
	}
}

// trimScheme turns "sim:enetc0?x=y" or "enetc0" into "enetc0".
func trimScheme(s string) string {
	s, _, _ = strings.Cut(s, "?")
	return strings.TrimPrefix(s, "sim:")
}

// boolOption reads an on/off option; present and empty means on.
func boolOption(spec driver.Spec, key string) (bool, error) {
	if !spec.Options.Has(key) {
		return false, nil
	}
	v := spec.Options.Get(key)
	if v == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, driver.OptionInSpec(spec.Raw, driver.BadOption(key, v, "not a truth value", "1 or 0"))
	}
	return b, nil
}

// genConfig reads the gen-* options. on is false when no generator is asked for.
func genConfig(spec driver.Spec) (cfg GenConfig, on bool, err error) {
	on, err = boolOption(spec, "gen")
	if err != nil {
		return cfg, false, err
	}
	bad := func(key, problem, accepted string) error {
		return driver.OptionInSpec(spec.Raw, driver.BadOption(key, spec.Options.Get(key), problem, accepted))
	}
	for _, k := range []string{"gen-size", "gen-flows", "gen-rate", "gen-count"} {
		if spec.Options.Has(k) {
			if spec.Options.Has("gen") && !on {
				return cfg, false, bad(k, "the generator is off (gen=0)", "remove one of them")
			}
			on = true
		}
	}
	if !on {
		return cfg, false, nil
	}
	if v := spec.Options.Get("gen-size"); v != "" {
		if cfg.Size, err = strconv.Atoi(v); err != nil || cfg.Size < GenMinSize || cfg.Size > GenMaxSize {
			return cfg, false, bad("gen-size", "out of range", fmt.Sprintf("a frame size in bytes from %d to %d (FCS included)", GenMinSize, GenMaxSize))
		}
	}
	if v := spec.Options.Get("gen-flows"); v != "" {
		if cfg.Flows, err = strconv.Atoi(v); err != nil || cfg.Flows < 1 || cfg.Flows > GenMaxFlows {
			return cfg, false, bad("gen-flows", "out of range", fmt.Sprintf("a flow count from 1 to %d", GenMaxFlows))
		}
	}
	if v := spec.Options.Get("gen-rate"); v != "" {
		if cfg.Rate, err = ParseRate(v); err != nil {
			return cfg, false, bad("gen-rate", "not a frame rate in range", "max or a frame rate from 1 to 1G such as 1M, 250k or 1500")
		}
	}
	if v := spec.Options.Get("gen-count"); v != "" {
		if cfg.Count, err = strconv.ParseUint(v, 10, 64); err != nil {
			return cfg, false, bad("gen-count", "not a frame count", "a number of frames (0: no limit)")
		}
	}
	return cfg, true, nil
}

// endpointOptions are attach's options, parsed and checked before anything
// is opened.
type endpointOptions struct {
	gen       GenConfig // the generator's, when genOn
	genOn     bool
	pcapIn    string
	fileSpeed bool // pcap-speed=file: replay at the capture's own timing
	afpacket  string
	pcapOut   string
	outFormat wire.PcapFormat
	overwrite bool // pcap-overwrite
	sink      bool
	peer      string // the cabled port's name
}

// parseEndpointOptions parses and checks spec's attach options.
func parseEndpointOptions(spec driver.Spec) (endpointOptions, error) {
	o := spec.Options
	var a endpointOptions
	for _, k := range []string{"peer", "pcap-in", "pcap-out", "afpacket"} {
		if o.Has(k) && o.Get(k) == "" {
			return a, &driver.SpecError{Spec: spec.Raw, Reason: fmt.Sprintf("option %s needs a value (e.g. %s)", k, map[string]string{
				"peer": "peer=sim:enetc1", "pcap-in": "pcap-in=in.pcap", "pcap-out": "pcap-out=out.pcap", "afpacket": "afpacket=veth0"}[k])}
		}
	}
	switch v := o.Get("pcap-speed"); v {
	case "", "max":
	case "file":
		a.fileSpeed = true
	default:
		return a, driver.OptionInSpec(spec.Raw, driver.BadOption("pcap-speed", v, "unknown replay speed", "max (as fast as the port takes frames, lossless) or file (the capture's own timing)"))
	}
	for _, k := range []string{"pcap-overwrite", "pcap-format"} {
		if o.Has(k) && !o.Has("pcap-out") {
			return a, &driver.SpecError{Spec: spec.Raw, Reason: fmt.Sprintf("option %s applies to pcap-out=FILE; add pcap-out or drop %s", k, k)}
		}
	}
	a.outFormat = wire.FormatFor(o.Get("pcap-out"))
	if v := o.Get("pcap-format"); v != "" {
		f, err := wire.ParsePcapFormat(v)
		if err != nil {
			return a, driver.OptionInSpec(spec.Raw, driver.BadOption("pcap-format", v, "unknown capture format", "pcap or pcapng (default: pcapng for a .pcapng file name, pcap otherwise)"))
		}
		a.outFormat = f
	}
	if o.Has("pcap-speed") && !o.Has("pcap-in") {
		return a, &driver.SpecError{Spec: spec.Raw, Reason: "option pcap-speed applies to pcap-in=FILE; add pcap-in or drop pcap-speed"}
	}
	var err error
	if a.gen, a.genOn, err = genConfig(spec); err != nil {
		return a, err
	}
	if a.sink, err = boolOption(spec, "sink"); err != nil {
		return a, err
	}
	a.pcapIn, a.afpacket, a.pcapOut = o.Get("pcap-in"), o.Get("afpacket"), o.Get("pcap-out")
	if a.pcapOut != "" {
		if a.overwrite, err = boolOption(spec, "pcap-overwrite"); err != nil {
			return a, err
		}
	}
	if v := o.Get("peer"); v != "" {
		ps, err := driver.ParseSpec(v)
		if err != nil || ps.Scheme != "sim" || len(ps.Options) != 0 {
			return a, &driver.SpecError{Spec: spec.Raw, Reason: fmt.Sprintf("option peer=%q must name another simulated port, e.g. peer=sim:enetc1 (its own options go in its own spec)", v)}
		}
		if a.afpacket != "" || a.pcapOut != "" || a.sink {
			return a, &driver.SpecError{Spec: spec.Raw, Reason: "peer= cannot be combined with sink, afpacket or pcap-out: a cabled port transmits into its peer"}
		}
		a.peer = ps.Name
	}
	return a, nil
}

// attachEndpoint is attach.
func attachEndpoint(ep *Endpoint, spec driver.Spec) (cleanup func() error, err error) {
	var (
		closers []func() error
		txWires []wire.Wire
		e       = &regEntry{ep: ep}
	)
	undo := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	fail := func(err error) (func() error, error) {
		ep.SetWire(&wire.Discard{})
		_ = undo()
		return nil, err
	}
	opt, err := parseEndpointOptions(spec)
	if err != nil {
		return fail(err)
	}

	// Receive sides.
	if opt.genOn {
		g, err := NewGenerator(opt.gen)
		if err != nil {
			return fail(&driver.SpecError{Spec: spec.Raw, Reason: err.Error()})
		}
		e.gen = g
		ep.AddSource(g)
	}
	if path := opt.pcapIn; path != "" {
		if err := pcapClash(path, false); err != nil {
			return fail(fmt.Errorf("pcap-in: %w", err))
		}
		s, err := OpenPcapSource(path, opt.fileSpeed)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, s.Close)
		release, err := claimPcapFile(s.r, path, "pcap-in of sim:"+ep.Name, false)
		if err != nil {
			return fail(fmt.Errorf("pcap-in: %w", err))
		}
		closers = append(closers, release)
		e.pcap = s
		ep.AddSource(s)
	}
	if ifname := opt.afpacket; ifname != "" {
		a, err := OpenAFPacket(ifname)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, a.Close)
		e.afp = a
		if ep.SetLink != nil {
			// The interface's carrier is the port's link from now on; one
			// down at open takes it down (link=down keeps it down until
			// the carrier changes).
			if !a.LinkUp() {
				ep.SetLink(false)
			}
			a.OnLink(ep.SetLink)
		}
		ep.AddSource(a)
		txWires = append(txWires, a)
	}
	// Transmit sides.
	if path := opt.pcapOut; path != "" {
		// Before the file is created or truncated: never the file a
		// pcap-in replays (or another pcap-out writes), whatever the flags.
		if err := pcapClash(path, true); err != nil {
			return fail(fmt.Errorf("pcap-out: %w", err))
		}
		f, err := safefile.Create(path, safefile.Options{Overwrite: opt.overwrite, OverwriteHint: "pcap-overwrite=1"})
		if err != nil {
			return fail(fmt.Errorf("pcap-out: %w", err))
		}
		w, err := wire.NewPcapWriterFormat(f, opt.outFormat)
		if err != nil {
			return fail(fmt.Errorf("pcap-out: %w", err))
		}
		closers = append(closers, w.Close)
		release, err := claimPcapFile(w, path, "pcap-out of sim:"+ep.Name, true)
		if err != nil {
			return fail(fmt.Errorf("pcap-out: %w", err))
		}
		closers = append(closers, release)
		txWires = append(txWires, w)
	}
	if opt.sink {
		e.sink = NewSink()
		txWires = append(txWires, e.sink)
	}
	e.txClaimed = len(txWires) > 0
	switch len(txWires) {
	case 0:
	case 1:
		ep.SetWire(txWires[0])
	default:
		ep.SetWire(teeWire(txWires))
	}

	regMu.Lock()
	if _, dup := reg[ep.Name]; dup {
		regMu.Unlock()
		return fail(fmt.Errorf("sim:%s is already open; close it before opening it again", ep.Name))
	}
	switch {
	case opt.peer != "":
		err = cableTo(e, opt.peer)
	default:
		if far, ok := waitingFor(ep.Name); ok {
			if e.txClaimed {
				err = fmt.Errorf("sim:%s is the peer of %s (peer=sim:%s in its spec) and cannot also use sink, afpacket or pcap-out", ep.Name, far, ep.Name)
			} else {
				connect(reg[far], e)
				delete(pending, ep.Name)
			}
		}
	}
	if err != nil {
		regMu.Unlock()
		return fail(&driver.SpecError{Spec: spec.Raw, Reason: err.Error()})
	}
	reg[ep.Name] = e
	regMu.Unlock()

	// Releasing twice would close the wires twice: a second close(2) of
	// a descriptor number could close a socket or file that took it since.
	var (
		once sync.Once
		cerr error
	)
	return func() error {
		once.Do(func() {
			// Stop feeding the closing wires before they close.
			ep.SetWire(&wire.Discard{})
			regMu.Lock()
			unplug(e)
			delete(reg, ep.Name)
			regMu.Unlock()
			cerr = undo()
		})
		return cerr
	}, nil
}

// waitingFor reports which open port waits to be cabled to name. regMu held.
func waitingFor(name string) (string, bool) {
	far, ok := pending[name]
	if !ok {
		return "", false
	}
	if _, open := reg[far]; !open {
		delete(pending, name)
		return "", false
	}
	return far, true
}

// SinkOf returns the sink of an open simulated port ("enetc0" or
// "sim:enetc0"), or nil when its spec has no sink=1.
func SinkOf(name string) *Sink {
	regMu.Lock()
	defer regMu.Unlock()
	if e, ok := reg[trimScheme(name)]; ok {
		return e.sink
	}
	return nil
}

// GeneratorOf returns the generator of an open simulated port, or nil when
// its spec has no gen option.
func GeneratorOf(name string) *Generator {
	regMu.Lock()
	defer regMu.Unlock()
	if e, ok := reg[trimScheme(name)]; ok {
		return e.gen
	}
	return nil
}

// AFPacketOf returns the AF_PACKET wire of an open simulated port, or nil
// when its spec has no afpacket option.
func AFPacketOf(name string) *AFPacket {
	regMu.Lock()
	defer regMu.Unlock()
	if e, ok := reg[trimScheme(name)]; ok {
		return e.afp
	}
	return nil
}

// PcapSourceOf returns the pcap-in replay of an open simulated port, or nil
// when its spec has no pcap-in option.
func PcapSourceOf(name string) *PcapSource {
	regMu.Lock()
	defer regMu.Unlock()
	if e, ok := reg[trimScheme(name)]; ok {
		return e.pcap
	}
	return nil
}

// Package sim connects simulated NICs (the device models of enetc/model and
// fec/model) to the world and to the driver registry: importing it makes the
// "sim:" spec scheme openable (sim:enetc0, sim:fec1?soc=imx8mp, ...). It also
// holds the things a model port is wired to: cables between two model ports,
// a traffic generator and sink, pcap files and AF_PACKET sockets.
package sim

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// modelOpener builds a simulated device for sim:<kind><N>.
type modelOpener struct {
	options []string
	open    func(name string, spec driver.Spec, cfg driver.Config) (*driver.Device, error)
}

var (
	modelsMu sync.Mutex
	models   = map[string]modelOpener{}
)

// registerModel adds a device kind ("enetc", "fec") to the sim scheme.
func registerModel(kind string, options []string, open func(name string, spec driver.Spec, cfg driver.Config) (*driver.Device, error)) {
	modelsMu.Lock()
	defer modelsMu.Unlock()
	models[kind] = modelOpener{options: options, open: open}
}

// simNameRE splits a sim name into kind and number: "enetc0", "enetc-timer0".
var simNameRE = regexp.MustCompile(`^([a-z]+(?:-[a-z]+)*)([0-9]+)$`)

func openSim(spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	m := simNameRE.FindStringSubmatch(spec.Name)
	modelsMu.Lock()
	var kinds []string
	for k := range models {
		kinds = append(kinds, k)
	}
	var (
		mo modelOpener
		ok bool
	)
	if m != nil {
		mo, ok = models[m[1]]
	}
	modelsMu.Unlock()
	sort.Strings(kinds)
	if !ok {
		return nil, &driver.SpecError{Spec: spec.Raw, Reason: fmt.Sprintf("no simulated device %q: use sim:<kind><N> with kind one of %s", spec.Name, strings.Join(kinds, ", "))}
	}
	return mo.open(spec.Name, spec, cfg)
}

func simOptions() []string {
	modelsMu.Lock()
	defer modelsMu.Unlock()
	var o []string
	for _, m := range models {
		o = append(o, m.options...)
	}
	return o
}

// optionsOf is the options of the model a spec names: sim:fec0 takes soc=,
// sim:enetc0 takes vf=, and neither takes the other's.
func optionsOf(spec driver.Spec) []string {
	m := simNameRE.FindStringSubmatch(spec.Name)
	if m == nil {
		return simOptions()
	}
	modelsMu.Lock()
	defer modelsMu.Unlock()
	return models[m[1]].options
}

func init() {
	driver.RegisterBackend(driver.Backend{Scheme: "sim", Open: openSim, OptionsOf: optionsOf})
}

// refreshBackend re-registers the backend with every model's options; model
// files call it from their init after registerModel.
func refreshBackend() {
	driver.RegisterBackend(driver.Backend{Scheme: "sim", Open: openSim, Options: simOptions(), OptionsOf: optionsOf})
}

// modelOptions are the spec options every simulated device takes.
type modelOptions struct {
	engine   bool          // mode=engine: a DMA-engine goroutine; mode=sync (default): doorbells process the rings
	mmioCost time.Duration // mmio-cost=DURATION per register access
	linkDown bool          // link=down: the device starts with its link down
}

// parseModelOptions reads mode=, mmio-cost= and link= from a sim spec.
func parseModelOptions(spec driver.Spec) (modelOptions, error) {
	o := spec.Options
	bad := func(key, problem, accepted string) error {
		return driver.OptionInSpec(spec.Raw, driver.BadOption(key, o.Get(key), problem, accepted))
	}
	var m modelOptions
	switch o.Get("mode") {
	case "", "sync":
	case "engine":
		m.engine = true
	default:
		return m, bad("mode", "unknown mode", "sync (doorbell writes process the rings: deterministic) or engine (a DMA-engine goroutine)")
	}
	if v := o.Get("mmio-cost"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Millisecond {
			return m, bad("mmio-cost", "out of range", "a duration per register access from 0 to 1ms, such as 100ns")
		}
		m.mmioCost = d
	}
	switch o.Get("link") {
	case "", "up":
	case "down":
		m.linkDown = true
	default:
		return m, bad("link", "unknown link state", "up or down (the link state the device starts with)")
	}
	return m, nil
}

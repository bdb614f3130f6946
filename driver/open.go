package driver

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gopmd/gopmd/dma"
)

// Spec is a parsed device spec string: "scheme:name?key=value&...".
type Spec struct {
	Raw     string
	Scheme  string // "pci", "uio", "platform", "sim", "xdp"
	Name    string // "0000:01:00.0", "/dev/uio0", "2188000.ethernet", "enetc0", "eth0"
	Options url.Values
}

// String is the spec as it was given.
func (s Spec) String() string { return s.Raw }

// Option returns the value of option key and whether the spec gives it
// ("" and true for "?key" without "=").
func (s Spec) Option(key string) (string, bool) {
	v, ok := s.Options[key]
	if !ok || len(v) == 0 {
		return "", ok
	}
	return v[0], true
}

// SpecError is a spec that cannot be used; its message names the spec and
// lists the accepted forms (or, for a bad option, the option's).
type SpecError struct {
	Spec   string
	Reason string
	// Err is the cause when there is a typed one (an *OptionError).
	Err error
}

// Unwrap returns the cause, for errors.As(err, **OptionError).
func (e *SpecError) Unwrap() error { return e.Err }

// OptionError is a spec option that cannot be used: one the chosen backend
// and driver do not take, one given twice, or a value out of range. It
// names the option and the accepted forms; the layer that knows the spec
// (ParseSpec, OpenConfig) adds it once.
type OptionError struct {
	Option string
	Value  string // as given ("" with NoValue for "?sink")
	// Problem says what is wrong ("unknown option for the fec driver",
	// "given twice", "out of range").
	Problem string
	// Accepted lists what would work: a range, the values, or the options
	// the device takes.
	Accepted string
	// NoValue: the option was given without "=" or its value does not
	// matter to the problem (an unknown or repeated option).
	NoValue bool
}

// Error names the option, what is wrong with it and what to give instead.
func (e *OptionError) Error() string {
	s := "option " + e.Option
	if !e.NoValue {
		s += fmt.Sprintf("=%q", e.Value)
	}
	s += ": " + e.Problem
	if e.Accepted != "" {
		s += " (accepted: " + e.Accepted + ")"
	}
	return s
}

// BadOption returns an *OptionError for key=value; backends and drivers
// use it for values they cannot take.
func BadOption(key, value, problem, accepted string) *OptionError {
	return &OptionError{Option: key, Value: value, Problem: problem, Accepted: accepted}
}

// SpecForms lists the accepted spec forms, for error messages and help.
const SpecForms = "0000:01:00.0 or pci:0000:01:00.0 (VFIO), uio:/dev/uio0, platform:NODE (e.g. platform:2188000.ethernet), sim:enetcN, sim:fecN, xdp:IFNAME (AF_XDP on a kernel interface); options follow '?' as key=value joined by '&' (e.g. sim:enetc0?peer=sim:enetc1)"

// Error names the spec, what is wrong with it and the forms it may take.
func (e *SpecError) Error() string {
	var oe *OptionError
	if errors.As(e.Err, &oe) {
		return fmt.Sprintf("device spec %q: %v", e.Spec, e.Err)
	}
	return fmt.Sprintf("device spec %q: %s (accepted forms: %s)", e.Spec, e.Reason, SpecForms)
}

// OptionInSpec puts an *OptionError in the context of its spec: a
// *SpecError that names the spec and unwraps to the option error. Backends
// that know the spec use it.
func OptionInSpec(spec string, oe *OptionError) error {
	return &SpecError{Spec: spec, Reason: oe.Error(), Err: oe}
}

func optionError(spec string, oe *OptionError) error { return OptionInSpec(spec, oe) }

// CheckDeviceName refuses a device name that cannot be one entry of a
// sysfs or /dev directory: empty, ".", "..", or holding '/', a control
// character or a space. Platform node names ("2188000.ethernet") and
// sim names pass; "../../tmp/x" does not.
func CheckDeviceName(name string) error {
	switch {
	case name == "":
		return errors.New("empty device name")
	case name == "." || name == "..":
		return fmt.Errorf("device name %q is a directory reference, not a device", name)
	case len(name) > 255:
		return fmt.Errorf("device name of %d bytes is longer than a sysfs name can be (255)", len(name))
	}
	for _, r := range name {
		switch {
		case r == '/':
			return fmt.Errorf("device name %q holds '/': give the node name only (e.g. 2188000.ethernet)", name)
		case r < 0x20 || r == 0x7f || r == ' ':
			return fmt.Errorf("device name %q holds a control character or space", name)
		}
	}
	return nil
}

var uioRE = regexp.MustCompile(`^(/dev/)?uio[0-9]{1,4}$`)

var bdfRE = regexp.MustCompile(`^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$`)

// ParseSpec parses a spec string.
func ParseSpec(raw string) (Spec, error) {
	s := Spec{Raw: raw}
	body, query, hasQuery := strings.Cut(raw, "?")
	if body == "" {
		return s, &SpecError{Spec: raw, Reason: "empty device name"}
	}
	if bdfRE.MatchString(body) {
		s.Scheme, s.Name = "pci", strings.ToLower(body)
	} else {
		scheme, name, ok := strings.Cut(body, ":")
		if !ok {
			return s, &SpecError{Spec: raw, Reason: "no scheme"}
		}
		s.Scheme, s.Name = scheme, name
		switch scheme {
		case "pci":
			if !bdfRE.MatchString(name) {
				return s, &SpecError{Spec: raw, Reason: fmt.Sprintf("PCI address %q is not domain:bus:device.function (e.g. 0000:00:00.0)", name)}
			}
			s.Name = strings.ToLower(name)
		case "uio", "platform", "sim", "xdp":
			if name == "" {
				return s, &SpecError{Spec: raw, Reason: "empty device name after " + scheme + ":"}
			}
			if scheme == "uio" && !uioRE.MatchString(name) {
				return s, &SpecError{Spec: raw, Reason: fmt.Sprintf("UIO device %q is not /dev/uioN", name)}
			}
			if scheme != "uio" {
				if err := CheckDeviceName(name); err != nil {
					return s, &SpecError{Spec: raw, Reason: err.Error()}
				}
			}
		default:
			return s, &SpecError{Spec: raw, Reason: fmt.Sprintf("unknown scheme %q", scheme)}
		}
	}
	s.Options = url.Values{}
	if hasQuery {
		v, err := url.ParseQuery(query)
		if err != nil {
			return s, &SpecError{Spec: raw, Reason: "options: " + err.Error()}
		}
		for _, k := range sortedKeys(v) {
			if k == "" {
				return s, &SpecError{Spec: raw, Reason: "an option with no name (write key=value pairs joined by '&')"}
			}
			if len(v[k]) > 1 {
				return s, optionError(raw, &OptionError{Option: k, NoValue: true,
					Problem: fmt.Sprintf("given %d times (%s)", len(v[k]), strings.Join(v[k], ", ")), Accepted: "give each option once"})
			}
		}
		s.Options = v
	}
	return s, nil
}

// Device is what a backend found: a way to reach one NIC.
type Device struct {
	Spec Spec
	// Backend says how the device is reached: "vfio", "uio", "devmem", "sim".
	Backend string
	// Bus is "pci" or "platform".
	Bus string
	// PCI identity (Bus "pci").
	VendorID, DeviceID uint16
	Revision           uint8
	// Compatible holds device-tree compatible strings (Bus "platform").
	Compatible []string
	// Node is the device's device-tree node (the device's of_node
	// resolved, such as /sys/firmware/devicetree/base/soc/pcie@1f0000000/
	// ethernet@0,0), the zero Node where the system describes the device
	// otherwise. Drivers read board wiring from it (phy-handle, phy-mode,
	// fixed-link) through its methods, never by path.
	Node DTNode
	// Regions are the register windows: BARs by number for PCI (nil where
	// absent), reg ranges in order for platform devices.
	Regions []Regs
	// Mapper maps DMA memory for this device.
	Mapper dma.Mapper
	// NonCoherent says the device's DMA does not snoop CPU caches.
	NonCoherent bool
	// Chip names the chip the device is a function of, for errata whose
	// rule spans every function of one chip (ENETC ERR050089): devices
	// with the same Chip share it. Backends that reach silicon leave it
	// empty, so every real device of the process is on one chip (the host
	// has one SoC); the sim backend names each simulated chip (chip=).
	Chip string
	// Reset performs a function-level reset, or is nil where there is none.
	Reset func() error
	// Release gives the device back (unmaps windows, closes fds). Called
	// by the driver's Close after its DMA memory is unmapped.
	Release func() error
	// OpenIRQ opens interrupt i of the device for one waiter (UIO: the
	// device's one line, i = 0, a platform node's first interrupt; vfio-pci:
	// MSI-X vector i; vfio-platform: the node's interrupt i in device-tree
	// order; sim: the model's line i), or is nil where the backend
	// delivers none. Each call returns its own handle; the driver closes it.
	OpenIRQ func(i int) (IRQ, error)
	// Extra carries backend-specific handles a driver may need (such as a
	// simulated device's knobs); drivers must work when it is nil.
	Extra any
}

// Backend reaches devices of one spec scheme.
type Backend struct {
	Scheme string
	// Options are the spec options this backend understands.
	Options []string
	// OptionsOf, when set, gives the options one spec's device takes
	// (a simulated ENETC takes vf=, a simulated FEC soc=); Options is then
	// the union, for help texts.
	OptionsOf func(spec Spec) []string
	Open      func(spec Spec, cfg Config) (*Device, error)
}

// Driver claims devices and builds ports on them.
type Driver struct {
	Name string
	// Options are the spec options this driver understands.
	Options []string
	// Match reports whether the driver can drive the device.
	Match func(d *Device) bool
	// New brings the port up (not started). On error it must leave the
	// device as it found it; Open then releases the device.
	New func(d *Device, cfg Config) (Port, error)
	// RegisterMap, when set, lists the registers of window 0 a tool may
	// read on a device the driver claims, without a port: no writes, no
	// register whose read starts an action (MDIO data), nothing past the
	// window. It may read identification registers to size the map.
	RegisterMap func(d *Device) []RegDesc
}

// RegDesc describes one register of a device: the reference manual's
// name, the byte offset in window 0, the block of the register map it lies
// in and its named fields. It is the one description every driver's
// register map is written in (Driver.RegisterMap, RegisterDumper) and that
// tools print; the device models keep their own transcriptions, so a test
// can hold one against the other.
type RegDesc struct {
	Name   string
	Offset uint32
	// Block groups the map as the driver's reference lays it out (ENETC:
	// "si", "port", "mac", ...; FEC: "mac", "mib", "gasket", "ptp").
	Block  string
	Fields []RegField
}

// RegField is a named field of a register: bits Lo..Hi inclusive.
type RegField struct {
	Name   string
	Lo, Hi uint
}

// Of is the field's value in register value v, shifted down to bit 0.
func (f RegField) Of(v uint32) uint32 {
	return v >> f.Lo & uint32(uint64(1)<<(f.Hi-f.Lo+1)-1)
}

// ErrNoRegisterMap is wrapped when the driver that claims a device offers
// no register map.
var ErrNoRegisterMap = errors.New("the driver offers no register map")

// RegisterMapOf returns the register map the driver claiming d offers, and
// that driver's name. The error wraps ErrNoDriver when no registered driver
// claims d, ErrNoRegisterMap when the claiming driver has no map.
func RegisterMapOf(d *Device) (string, []RegDesc, error) {
	regMu.Lock()
	drvs := append([]Driver(nil), drivers...)
	regMu.Unlock()
	for _, dr := range drvs {
		if !dr.Match(d) {
			continue
		}
		if dr.RegisterMap == nil {
			return dr.Name, nil, fmt.Errorf("%s: %w", dr.Name, ErrNoRegisterMap)
		}
		return dr.Name, dr.RegisterMap(d), nil
	}
	return "", nil, fmt.Errorf("%w (drivers: %s)", ErrNoDriver, strings.Join(DriverNames(), ", "))
}

var (
	regMu    sync.Mutex
	backends = map[string]Backend{}
	drivers  []Driver
)

// RegisterBackend makes a spec scheme openable. Backends register in init.
func RegisterBackend(b Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	backends[b.Scheme] = b
}

// RegisterDriver makes a driver available to Open. Drivers register in init.
func RegisterDriver(d Driver) {
	regMu.Lock()
	defer regMu.Unlock()
	drivers = append(drivers, d)
}

// genericOptions are spec options Open itself applies to Config.
var genericOptions = []string{"queues", "rxq", "txq", "rx-ring", "tx-ring", "pool-size", "buf-size", "mtu", "promisc", "unsafe-noiommu", "port-id"}

// ErrNoDriver is wrapped when no registered driver claims a device.
var ErrNoDriver = errors.New("no driver for this device")

// Claims returns the name of the registered driver (of a port, or of a
// clock: ClaimsClock) that claims a device by its identity (Bus with
// VendorID/DeviceID, or Compatible), and whether one does. Tools use it to
// refuse to rebind what no driver here can drive.
func Claims(d *Device) (string, bool) {
	regMu.Lock()
	drvs := append([]Driver(nil), drivers...)
	regMu.Unlock()
	for _, dr := range drvs {
		if dr.Match(d) {
			return dr.Name, true
		}
	}
	return ClaimsClock(d)
}

// DriverNames lists the registered drivers, for messages.
func DriverNames() []string {
	regMu.Lock()
	defer regMu.Unlock()
	var n []string
	for _, d := range drivers {
		n = append(n, d.Name)
	}
	sort.Strings(n)
	return n
}

// Open opens the device a spec names with default settings. See OpenConfig.
func Open(spec string) (Port, error) { return OpenConfig(spec, Config{}) }

// OpenConfig parses spec, reaches the device through the backend of its
// scheme, picks the driver by PCI ID or compatible string and brings the
// port up (not started). Spec options override cfg. An option neither the
// backend (for this device) nor the driver that claims it takes is an
// error listing the ones they do; so is an option given twice.
//
// Errors name the spec once: the backend's and driver's errors say what
// went wrong and never name the spec, and OpenConfig prefixes it unless
// the error is a *SpecError (which names it).
func OpenConfig(spec string, cfg Config) (Port, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	regMu.Lock()
	b, ok := backends[s.Scheme]
	drvs := append([]Driver(nil), drivers...)
	regMu.Unlock()
	if !ok {
		return nil, &SpecError{Spec: spec, Reason: fmt.Sprintf("scheme %q is not linked into this program (import its backend package: pci for pci/uio/platform, sim for sim, xdp for xdp)", s.Scheme)}
	}
	backendOpts := b.Options
	if b.OptionsOf != nil {
		backendOpts = b.OptionsOf(s)
	}
	// Before the device is touched: options no driver could take.
	var anyDriver []string
	var byDriver []string
	for _, d := range drvs {
		anyDriver = append(anyDriver, d.Options...)
		o := append([]string(nil), d.Options...)
		sort.Strings(o)
		byDriver = append(byDriver, d.Name+": "+strings.Join(o, ", "))
	}
	if err := checkKnown(s, "", backendOpts, anyDriver); err != nil {
		// Say which options are whose: the device's driver is not known
		// until the device is open.
		var oe *OptionError
		if errors.As(err, &oe) {
			sort.Strings(byDriver)
			oe.Accepted = strings.Join(sortedUnique(genericOptions, backendOpts), ", ") + "; and the driver's own, " + strings.Join(byDriver, "; ")
			return nil, optionError(s.Raw, oe)
		}
		return nil, err
	}
	if cfg, err = applyOptions(s, cfg); err != nil {
		return nil, err
	}
	cfg = cfg.Defaults()
	dev, err := b.Open(s, cfg)
	if err != nil {
		return nil, inSpec(spec, "", err)
	}
	dev.Spec = s
	release := func() {
		if dev.Release != nil {
			_ = dev.Release()
		}
	}
	for _, d := range drvs {
		if !d.Match(dev) {
			continue
		}
		if err := checkKnown(s, d.Name, backendOpts, d.Options); err != nil {
			release()
			return nil, err
		}
		p, err := d.New(dev, cfg)
		if err != nil {
			release()
			return nil, inSpec(spec, d.Name, err)
		}
		return p, nil
	}
	release()
	id := fmt.Sprintf("PCI ID %04x:%04x", dev.VendorID, dev.DeviceID)
	if dev.Bus == "platform" {
		id = "compatible " + strings.Join(dev.Compatible, ", ")
	}
	return nil, fmt.Errorf("%s: %w (%s); link a driver package (enetc, fec) into the program", spec, ErrNoDriver, id)
}

// inSpec puts a backend's or driver's error in the context of the spec,
// and of the driver drv ("" for a backend's). Only this layer names the
// spec: drivers name the operation and the thing (register, ring,
// option), and a backend that refuses the spec itself returns a
// *SpecError, which names it and is returned as is; an *OptionError
// becomes one.
func inSpec(spec, drv string, err error) error {
	var se *SpecError
	if errors.As(err, &se) {
		return err
	}
	var oe *OptionError
	if errors.As(err, &oe) && oe == err {
		return optionError(spec, oe)
	}
	if drv != "" {
		return fmt.Errorf("%s: %s: %w", spec, drv, err)
	}
	return fmt.Errorf("%s: %w", spec, err)
}

// checkKnown refuses options that neither Open, the backend nor the
// driver (drv, or any driver when drv is "") takes.
func checkKnown(s Spec, drv string, backendOpts, driverOpts []string) error {
	who := "taken neither by the " + s.Scheme + ": backend nor by any driver in this program"
	if drv != "" {
		who = "not taken by the " + s.Scheme + ": backend or the " + drv + " driver that claims this device"
	}
	return refuseUnknown(s, "unknown option, "+who, genericOptions, backendOpts, driverOpts)
}

// refuseUnknown returns an OptionError for the first option of s (in
// sorted order) that none of the lists names, with problem as its reason
// and every name the lists hold as what is accepted; nil when each is
// known.
func refuseUnknown(s Spec, problem string, lists ...[]string) error {
	accepted := sortedUnique(lists...)
	for _, k := range sortedKeys(s.Options) {
		if !slices.Contains(accepted, k) {
			return optionError(s.Raw, &OptionError{Option: k, NoValue: true,
				Problem: problem, Accepted: strings.Join(accepted, ", ")})
		}
	}
	return nil
}

// sortedUnique merges string lists into one sorted list without repeats.
func sortedUnique(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, x := range l {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys(v map[string][]string) []string {
	k := make([]string, 0, len(v))
	for n := range v {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

func applyOptions(s Spec, cfg Config) (Config, error) {
	num := func(key string, dst *int, min, max int) error {
		v := s.Options.Get(key)
		if v == "" && !s.Options.Has(key) {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < min || n > max {
			return optionError(s.Raw, BadOption(key, v, "out of range", fmt.Sprintf("a number in [%d, %d]", min, max)))
		}
		*dst = n
		return nil
	}
	var q int
	if err := num("queues", &q, 1, 64); err != nil {
		return cfg, err
	}
	if q > 0 {
		cfg.RxQueues, cfg.TxQueues = q, q
	}
	for _, o := range []struct {
		key      string
		dst      *int
		min, max int
	}{
		{"rxq", &cfg.RxQueues, 1, 64}, {"txq", &cfg.TxQueues, 1, 64},
		{"rx-ring", &cfg.RxRingSize, 8, 65536}, {"tx-ring", &cfg.TxRingSize, 8, 65536},
		{"pool-size", &cfg.PoolSize, 16, 1 << 22}, {"buf-size", &cfg.BufSize, 256, 65536},
		{"mtu", &cfg.MTU, 68, 65535},
	} {
		if err := num(o.key, o.dst, o.min, o.max); err != nil {
			return cfg, err
		}
	}
	var pid int
	if err := num("port-id", &pid, 0, 65535); err != nil {
		return cfg, err
	}
	if s.Options.Has("port-id") {
		cfg.PortID = uint16(pid)
	}
	boolOpt := func(key string) (bool, bool, error) {
		if !s.Options.Has(key) {
			return false, false, nil
		}
		v := s.Options.Get(key)
		if v == "" {
			return true, true, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, false, optionError(s.Raw, BadOption(key, v, "not a truth value", "1 or 0 (true or false)"))
		}
		return b, true, nil
	}
	if b, ok, err := boolOpt("promisc"); err != nil {
		return cfg, err
	} else if ok {
		cfg.Promiscuous = &b
	}
	if b, ok, err := boolOpt("unsafe-noiommu"); err != nil {
		return cfg, err
	} else if ok {
		cfg.UnsafeNoIOMMU = cfg.UnsafeNoIOMMU || b
	}
	return cfg, nil
}

package driver

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gopmd/gopmd/dma"
)

// Spec is a parsed device spec string: "scheme:name?key=value&...".
type Spec struct {
	Raw     string
	Scheme  string // "pci", "uio", "platform", "sim"
	Name    string // "0000:01:00.0", "/dev/uio0", "2188000.ethernet", "enetc0"
	Options url.Values
}

func (s Spec) String() string { return s.Raw }

// SpecError is a spec that cannot be used; its message lists the accepted forms.
type SpecError struct {
	Spec   string
	Reason string
}

// SpecForms lists the accepted spec forms, for error messages and help.
const SpecForms = "0000:01:00.0 or pci:0000:01:00.0 (VFIO), uio:/dev/uio0, platform:NODE (e.g. platform:2188000.ethernet), sim:enetcN, sim:fecN; options follow '?' as key=value joined by '&' (e.g. sim:enetc0?peer=sim:enetc1)"

func (e *SpecError) Error() string {
	return fmt.Sprintf("device spec %q: %s (accepted forms: %s)", e.Spec, e.Reason, SpecForms)
}

var bdfRE = regexp.MustCompile(`^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$`)

// ParseSpec parses a spec string.
func ParseSpec(raw string) (Spec, error) {
	s := Spec{Raw: raw}
	body, query, hasQuery := strings.Cut(raw, "?")
	if body == "" {
		return s, &SpecError{raw, "empty device name"}
	}
	if bdfRE.MatchString(body) {
		s.Scheme, s.Name = "pci", strings.ToLower(body)
	} else {
		scheme, name, ok := strings.Cut(body, ":")
		if !ok {
			return s, &SpecError{raw, "no scheme"}
		}
		s.Scheme, s.Name = scheme, name
		switch scheme {
		case "pci":
			if !bdfRE.MatchString(name) {
				return s, &SpecError{raw, fmt.Sprintf("PCI address %q is not domain:bus:device.function (e.g. 0000:00:00.0)", name)}
			}
			s.Name = strings.ToLower(name)
		case "uio", "platform", "sim":
			if name == "" {
				return s, &SpecError{raw, "empty device name after " + scheme + ":"}
			}
		default:
			return s, &SpecError{raw, fmt.Sprintf("unknown scheme %q", scheme)}
		}
	}
	s.Options = url.Values{}
	if hasQuery {
		v, err := url.ParseQuery(query)
		if err != nil {
			return s, &SpecError{raw, "options: " + err.Error()}
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
	// Regions are the register windows: BARs by number for PCI (nil where
	// absent), reg ranges in order for platform devices.
	Regions []Regs
	// Mapper maps DMA memory for this device.
	Mapper dma.Mapper
	// NonCoherent says the device's DMA does not snoop CPU caches.
	NonCoherent bool
	// Reset performs a function-level reset, or is nil where there is none.
	Reset func() error
	// Release gives the device back (unmaps windows, closes fds). Called
	// by the driver's Close after its DMA memory is unmapped.
	Release func() error
	// Extra carries backend-specific handles a driver may need (such as a
	// simulated device's knobs); drivers must work when it is nil.
	Extra any
}

// Backend reaches devices of one spec scheme.
type Backend struct {
	Scheme string
	// Options are the spec options this backend understands.
	Options []string
	Open    func(spec Spec, cfg Config) (*Device, error)
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

// Open opens the device a spec names with default settings. See OpenConfig.
func Open(spec string) (Port, error) { return OpenConfig(spec, Config{}) }

// OpenConfig parses spec, reaches the device through the backend of its
// scheme, picks the driver by PCI ID or compatible string and brings the
// port up (not started). Spec options override cfg.
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
		return nil, &SpecError{spec, fmt.Sprintf("scheme %q is not linked into this program (import its backend package: pci for pci/uio/platform, sim for sim)", s.Scheme)}
	}
	known := map[string]bool{}
	for _, k := range genericOptions {
		known[k] = true
	}
	for _, k := range b.Options {
		known[k] = true
	}
	for _, d := range drvs {
		for _, k := range d.Options {
			known[k] = true
		}
	}
	for k := range s.Options {
		if !known[k] {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, &SpecError{spec, fmt.Sprintf("unknown option %q (known: %s)", k, strings.Join(names, ", "))}
		}
	}
	if cfg, err = applyOptions(s, cfg); err != nil {
		return nil, err
	}
	cfg = cfg.Defaults()
	dev, err := b.Open(s, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", spec, err)
	}
	dev.Spec = s
	for _, d := range drvs {
		if d.Match(dev) {
			p, err := d.New(dev, cfg)
			if err != nil {
				if dev.Release != nil {
					_ = dev.Release()
				}
				return nil, fmt.Errorf("%s %s: %w", d.Name, spec, err)
			}
			return p, nil
		}
	}
	if dev.Release != nil {
		_ = dev.Release()
	}
	id := fmt.Sprintf("PCI ID %04x:%04x", dev.VendorID, dev.DeviceID)
	if dev.Bus == "platform" {
		id = "compatible " + strings.Join(dev.Compatible, ", ")
	}
	return nil, fmt.Errorf("open %s: %w (%s); link a driver package (enetc, fec) into the program", spec, ErrNoDriver, id)
}

func applyOptions(s Spec, cfg Config) (Config, error) {
	num := func(key string, dst *int, min, max int) error {
		v := s.Options.Get(key)
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < min || n > max {
			return &SpecError{s.Raw, fmt.Sprintf("option %s=%q must be a number in [%d, %d]", key, v, min, max)}
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
			return false, false, &SpecError{s.Raw, fmt.Sprintf("option %s=%q must be true or false (1 or 0)", key, v)}
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

package sim

import (
	"errors"
	"regexp"
	"strconv"
	"sync"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/internal/devtree"
)

// PCI identity of the simulated ENETC functions (docs/hardware-enetc.md §1.1).
const (
	ENETCVendorID   = 0x1957
	ENETCPFDeviceID = 0xe100
	ENETCVFDeviceID = 0xef00
	ENETCRevision   = 1
)

// ENETCPHYAddr is the address of the simulated PHY on a sim:enetcN port's
// external MDIO bus: 2, as on the LS1028A-RDB's PF0 (docs/hardware-enetc.md §6).
const ENETCPHYAddr = 2

// enetcOptions are the spec options of sim:enetcN (Options).
var enetcOptions = optionNames("model", "enetc")

var enetcModels = newRegistry[model.Device]("enetc")

func init() {
	registerModel("enetc", append(append([]string(nil), enetcOptions...), attachOptions...), openENETC)
	refreshBackend()
}

// ENETCModel returns the model behind an open sim:<name> ENETC device, or
// nil if none is open under that name: tests reach it to inject frames and
// faults.
func ENETCModel(name string) *model.Device {
	return enetcModels.get(trimScheme(name))
}

// enetcMSI is the MSI-X side of each open sim:enetcN, by name (ENETCMSIX).
var enetcMSI sync.Map

// ENETCMSIX reports how many entries MSI-X of the open simulated ENETC
// function name was enabled with (0: not yet) and how many times it was
// enabled; as VFIO without dynamic MSI-X, the first routed entry sizes the
// block and no entry can be added past it.
func ENETCMSIX(name string) (vectors, enables int) {
	v, ok := enetcMSI.Load(trimScheme(name))
	if !ok {
		return 0, 0
	}
	m := v.(*msiIRQ)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.vectors, m.enables
}

// enetcMAC is the MAC a simulated ENETC starts with: locally administered,
// 02:00:00:e1:HH:LL with the device number.
func enetcMAC(name string) [6]byte {
	n, _ := strconv.Atoi(name[len("enetc"):])
	return [6]byte{0x02, 0x00, 0x00, 0xe1, byte(n >> 8), byte(n)}
}

// openENETC builds sim:enetcN: a coherent simulated IOMMU, the model (PF
// unless vf=1; mode=sync|engine; mmio-cost=DURATION; link=up|down;
// wiring=sgmii|2500base-x|rgmii|internal, the board interface the model's
// MAC and PCS must be programmed for; speed=10|100|1000, what the PHY
// resolves; chip=NAME) and its wiring. of-node=DIR presents DIR as the function's
// device-tree node, for the driver's phy-mode lookup. pf=NAME (with vf=1)
// makes the VF one of open sim:NAME's two VFs: its VSI-to-PSI messages go
// to that PF and the PF's PSIPMAR0/1(n) is its MAC.
func openENETC(name string, spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	opt, err := parseENETCSettings(spec)
	if err != nil {
		return nil, err
	}
	vf, chipName, wiring, speed := opt.vf, opt.chip, opt.wiring, opt.speed
	engine, cost, linkDown := opt.model.engine, opt.model.mmioCost, opt.model.linkDown
	var parent *model.Device
	if v := opt.pf; v != "" {
		parent = enetcModels.get(trimScheme(v))
		if !vf || parent == nil || !parent.PF() {
			return nil, driver.OptionInSpec(spec.Raw, driver.BadOption("pf", v, "not an open simulated ENETC PF this VF can belong to", "the name of an open sim:enetcN PF, on a spec with vf=1"))
		}
	}
	if err := enetcModels.reserve(name); err != nil {
		return nil, err
	}
	chip := enetcChips.get(chipName)
	if parent != nil && parent.Chip() != chip {
		enetcModels.forget(name)
		enetcChips.put(chipName)
		return nil, driver.OptionInSpec(spec.Raw, driver.BadOption("pf", opt.pf, "a PF on another chip", "a VF is a function of its PF's chip: give the PF's chip= (or none on both)"))
	}
	forget := func() {
		enetcModels.forget(name)
		enetcMSI.Delete(name)
		enetcChips.put(chipName)
	}
	iommu := sharedIOMMU(false)
	dev := model.New(model.Config{
		Name:      name,
		PF:        !vf,
		MAC:       enetcMAC(name),
		IOMMU:     iommu,
		Engine:    engine,
		MMIOCost:  cost,
		LinkDown:  linkDown,
		PHYAddr:   ENETCPHYAddr,
		Chip:      chip,
		PHYMode:   wiring,
		SpeedMbps: speed,
	})
	if parent != nil {
		n := 0
		err := parent.AttachVF(dev, n)
		if err != nil {
			n = 1
			err = parent.AttachVF(dev, n)
		}
		if err != nil {
			forget()
			return nil, driver.OptionInSpec(spec.Raw, driver.BadOption("pf", opt.pf, "that PF has its two VFs already", "another PF, or close one of its VFs"))
		}
		// The PF's PSIPMAR0/1(n+1) holds the VF's MAC from now on, as the
		// IERB loads it at FLR.
		off := uint32(0x10100 + (n+1)*model.PSIPMARStride)
		parent.Write32(off, dev.Read32(0x80))
		parent.Write32(off+4, dev.Read32(0x84))
	}
	msi := newMSIIRQ(name)
	dev.SetMSI(msi.send)
	enetcMSI.Store(name, msi)
	enetcModels.set(name, dev)
	cleanup, err := attach(&Endpoint{Name: name, Port: dev.Port(), SetWire: dev.SetWire, AddSource: dev.AddSource, Engine: engine, Pump: dev.Pump,
		SetLink: dev.SetLink, LinkUp: dev.LinkUp}, spec)
	if err != nil {
		forget()
		return nil, err
	}
	if engine {
		// Every engine-mode ENETC model of the process runs on one shared
		// DMA-engine goroutine: the simulated NICs take one core together.
		if err := dev.StartOn(enetcEngine); err != nil {
			_ = cleanup()
			forget()
			return nil, err
		}
	}
	devID := uint16(ENETCPFDeviceID)
	if vf {
		devID = ENETCVFDeviceID
	}
	var once sync.Once
	release := func() error {
		var err error
		once.Do(func() {
			if parent != nil {
				parent.DetachVF(dev)
			}
			dev.Stop()
			dev.SetMSI(nil)
			err = cleanup()
			forget()
			if e := dev.Err(); e != nil {
				err = errors.Join(err, e)
			}
		})
		return err
	}
	return &driver.Device{
		Backend:  "sim",
		Bus:      "pci",
		VendorID: ENETCVendorID,
		DeviceID: devID,
		Revision: ENETCRevision,
		Regions:  []driver.Regs{dev},
		Mapper:   iommu,
		Chip:     "sim/chip=" + chipName,
		Reset:    dev.Reset,
		OpenIRQ:  msi.open,
		Release:  release,
		Node:     devtree.At(spec.Options.Get("of-node")),
		Extra:    dev,
	}, nil
}

// enetcSettings are openENETC's options, parsed and checked before anything
// is built.
type enetcSettings struct {
	vf     bool
	chip   string // chip=: the simulated LS1028A's name
	model  modelOptions
	wiring string // the model's PHY mode
	speed  int    // what the model's PHY resolves, in Mb/s
	pf     string // pf=: the PF this VF belongs to, as given
}

// parseENETCSettings parses and checks openENETC's options.
func parseENETCSettings(spec driver.Spec) (enetcSettings, error) {
	var o enetcSettings
	var err error
	if o.vf, err = boolOption(spec, "vf"); err != nil {
		return o, err
	}
	o.chip = spec.Options.Get("chip")
	if !chipNameRE.MatchString(o.chip) {
		return o, driver.OptionInSpec(spec.Raw, driver.BadOption("chip", o.chip, "not a chip name",
			"up to 32 letters, digits, '-' or '_' naming the simulated LS1028A the function belongs to (functions of one chip share ERR050089); without chip= every sim:enetcN is on one chip"))
	}
	if o.model, err = parseModelOptions(spec); err != nil {
		return o, err
	}
	o.wiring = spec.Options.Get("wiring")
	if !model.ValidPHYMode(o.wiring) || (o.wiring != "" && o.vf) {
		return o, driver.OptionInSpec(spec.Raw, driver.BadOption("wiring", o.wiring, "not a port interface the model has", "sgmii, 2500base-x, rgmii or internal, on a PF"))
	}
	o.speed = 1000
	if v := spec.Options.Get("speed"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || (n != 10 && n != 100 && n != 1000) {
			return o, driver.OptionInSpec(spec.Raw, driver.BadOption("speed", v, "not a speed the model's PHY resolves", "10, 100 or 1000"))
		}
		o.speed = n
	}
	o.pf = spec.Options.Get("pf")
	return o, nil
}

// enetcEngine runs the DMA engines of all engine-mode ENETC models.
var enetcEngine = model.NewEngine()

// chipNameRE is what chip= takes; empty is the default chip.
var chipNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{0,32}$`)

// enetcChips are the simulated LS1028As of the open sim:enetcN functions,
// by chip= name: the ERR050089 rule spans every function of one of them, as
// on silicon, and the driver keeps it per chip too (driver.Device.Chip).
// Without chip= every function is on the one chip named "".
var enetcChips = chipSet{m: map[string]*chipRef{}}

type chipRef struct {
	chip *model.Chip
	refs int
}

// chipSet counts the open functions of each chip, so a chip no function
// uses any more is forgotten.
type chipSet struct {
	mu sync.Mutex
	m  map[string]*chipRef
}

// get returns the chip named name, counting one more function on it.
func (s *chipSet) get(name string) *model.Chip {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m[name]
	if r == nil {
		r = &chipRef{chip: model.NewChip()}
		s.m[name] = r
	}
	r.refs++
	return r.chip
}

// put gives back one function's hold on the chip named name.
func (s *chipSet) put(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.m[name]; r != nil {
		if r.refs--; r.refs == 0 {
			delete(s.m, name)
		}
	}
}

package sim

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec/model"
)

// fecOptions are the spec options of sim:fecN (Options). The descriptor
// format is not an option: the driver selects it with ECR.EN1588, as on
// silicon.
var fecOptions = optionNames("model", "fec")

var fecModels = newRegistry[model.Device]("fec")

func init() {
	registerModel("fec", append(append([]string(nil), fecOptions...), attachOptions...), openFEC)
	refreshBackend()
}

// FECModel returns the model of an open sim:fecN device (name "fec0"), or
// nil when none is open under that name: tests opened through
// driver.Open("sim:fec0") reach the model's knobs with it.
func FECModel(name string) *model.Device {
	return fecModels.get(name)
}

// fecMAC is the address the simulated boot loader leaves in PALR/PAUR: a
// locally administered address derived from the device number.
func fecMAC(name string) [6]byte {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "fec"))
	return [6]byte{0x02, 0x00, 0x00, 0xFE, byte(n >> 8), byte(n)}
}

func openFEC(name string, spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	o := spec.Options
	bad := func(key, problem, accepted string) error {
		return driver.OptionInSpec(spec.Raw, driver.BadOption(key, o.Get(key), problem, accepted))
	}
	soc := o.Get("soc")
	prof, ok := model.LookupProfile(soc)
	if !ok {
		return nil, bad("soc", "unknown SoC", "one of "+strings.Join(model.Profiles(), ", "))
	}
	mo, err := parseModelOptions(spec)
	if err != nil {
		return nil, err
	}
	engine, cost, linkDown := mo.engine, mo.mmioCost, mo.linkDown
	speed := 0
	if v := o.Get("speed"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n != 10 && n != 100 && n != 1000 {
			return nil, bad("speed", "not a link speed", "10, 100 or 1000 (Mb/s)")
		}
		speed = n
	}

	phyAddr := 0
	if v := o.Get("phy-addr"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 31 {
			return nil, bad("phy-addr", "not an MDIO address", "0 to 31")
		}
		phyAddr = n
	}
	var shared []int
	if v := o.Get("shared-phy"); v != "" {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 0 || n > 31 || n == phyAddr {
				return nil, bad("shared-phy", "not an MDIO address other than the port's PHY's", "addresses 0 to 31 separated by commas")
			}
			shared = append(shared, n)
		}
	}
	irqLines := prof.IRQLines
	if irqLines == 0 {
		irqLines = 1
	}
	if v := o.Get("irq-lines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > irqLines {
			return nil, bad("irq-lines", "not a number of the device's interrupts", "1 (only the first, as uio_pdrv_genirq) to "+strconv.Itoa(irqLines))
		}
		irqLines = n
	}

	osc, tl, err := clockOptions(spec, "ptp-clock", model.DefaultPTPClockHz, 8_000_000, 1_000_000_000)
	if err != nil {
		return nil, err
	}

	if err := fecModels.reserve(name); err != nil {
		return nil, err
	}
	unreserve := func() { fecModels.forget(name) }

	iommu := sharedIOMMU(prof.NonCoherent)
	dev, err := model.New(model.Config{Name: name, SoC: prof.Name, MAC: fecMAC(name), IOMMU: iommu,
		Engine: engine, MMIOCost: cost, LinkDown: linkDown, LinkSpeed: speed,
		PHYAddr: phyAddr, SharedPHYs: shared, PTPClock: osc, Timeline: tl})
	if err != nil {
		unreserve()
		return nil, err
	}
	ep := &Endpoint{Name: name, Port: dev.Port(), SetWire: dev.SetWire, AddSource: dev.AddSource, Engine: engine, Pump: dev.Pump,
		SetLink: dev.SetLink, LinkUp: dev.LinkUp, LinkDownDrops: func() uint64 { return dev.Stats().TxLinkDown }}
	cleanup, err := attach(ep, spec)
	if err != nil {
		unreserve()
		return nil, err
	}
	if engine {
		if err := dev.Start(); err != nil {
			_ = cleanup()
			unreserve()
			return nil, err
		}
	}
	lines := make([]*levelIRQ, dev.IRQLines())
	for n := range lines {
		lines[n] = newLevelIRQ(name)
		dev.SetIRQLine(n, lines[n].set)
	}
	// Interrupt i of the device is the MAC line the device tree lists
	// i-th; only the first irqLines reach user space.
	openIRQ := func(i int) (driver.IRQ, error) {
		if i < 0 || i >= irqLines {
			return nil, fmt.Errorf("sim %s: no interrupt %d: the backend delivers the device's first %d (irq-lines=%d)", name, i, irqLines, irqLines)
		}
		return lines[prof.DTIRQLine(i)].open(0)
	}
	fecModels.set(name, dev)
	var once sync.Once
	release := func() error {
		var err error
		once.Do(func() {
			dev.Stop()
			for n := range lines {
				dev.SetIRQLine(n, nil)
			}
			err = cleanup()
			unreserve()
		})
		return err
	}
	return &driver.Device{
		Backend:     "sim",
		Bus:         "platform",
		Compatible:  prof.Compatible,
		Regions:     []driver.Regs{dev},
		Mapper:      iommu,
		NonCoherent: prof.NonCoherent,
		Reset:       dev.Reset,
		OpenIRQ:     openIRQ,
		Release:     release,
		Extra:       dev,
	}, nil
}

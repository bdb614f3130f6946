package sim

import (
	"errors"
	"strconv"
	"sync"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
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

// enetcOptions are the spec options of sim:enetcN.
var enetcOptions = []string{"vf", "mode", "mmio-cost", "link"}

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

// enetcMAC is the MAC a simulated ENETC starts with: locally administered,
// 02:00:00:e1:HH:LL with the device number.
func enetcMAC(name string) [6]byte {
	n, _ := strconv.Atoi(name[len("enetc"):])
	return [6]byte{0x02, 0x00, 0x00, 0xe1, byte(n >> 8), byte(n)}
}

// openENETC builds sim:enetcN: a coherent simulated IOMMU, the model (PF
// unless vf=1; mode=sync|engine; mmio-cost=DURATION; link=up|down) and its
// wiring.
func openENETC(name string, spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	vf, err := boolOption(spec, "vf")
	if err != nil {
		return nil, err
	}
	mo, err := parseModelOptions(spec)
	if err != nil {
		return nil, err
	}
	engine, cost, linkDown := mo.engine, mo.mmioCost, mo.linkDown
	if err := enetcModels.reserve(name); err != nil {
		return nil, err
	}
	forget := func() { enetcModels.forget(name) }
	iommu := sharedIOMMU(false)
	dev := model.New(model.Config{
		Name:     name,
		PF:       !vf,
		MAC:      enetcMAC(name),
		IOMMU:    iommu,
		Engine:   engine,
		MMIOCost: cost,
		LinkDown: linkDown,
		PHYAddr:  ENETCPHYAddr,
		Chip:     enetcChip,
	})
	msi := newMSIIRQ(name)
	dev.SetMSI(msi.send)
	enetcModels.set(name, dev)
	cleanup, err := attach(&Endpoint{Name: name, Port: dev.Port(), SetWire: dev.SetWire, AddSource: dev.AddSource, Engine: engine, Pump: dev.Pump}, spec)
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
		Reset:    dev.Reset,
		OpenIRQ:  msi.open,
		Release:  release,
		Extra:    dev,
	}, nil
}

// enetcEngine runs the DMA engines of all engine-mode ENETC models.
var enetcEngine = model.NewEngine()

// enetcChip is the one LS1028A every sim:enetcN function belongs to: the
// ERR050089 rule spans all of them, as on silicon.
var enetcChip = model.NewChip()

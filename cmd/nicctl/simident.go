package main

import (
	"fmt"
	"net/url"

	"github.com/gopmd/gopmd/driver"
	fecmodel "github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/sim"
	"github.com/gopmd/gopmd/sim/simdma"
)

// simModel is an open device model as nicctl sees it: the identity a
// backend would report for the silicon it stands for, and the model's
// own handles. It is the one place nicctl tells the model kinds apart.
type simModel struct {
	// dev is the model described as a backend describes hardware: Bus,
	// the PCI IDs or the compatible string, and the register window.
	dev driver.Device
	// coherent is a platform model's DMA coherence (nil on PCI).
	coherent *bool
	// region names the register window: BAR0 or reg0.
	region string
	// size is the register window's size in bytes.
	size int
	// iommu holds the memory the model reaches by DMA.
	iommu *simdma.IOMMU
	// looper loops frames at the MAC; nil for a function without a MAC
	// (an ENETC VF).
	looper macLooper
}

// id is the PCI vendor:device of a PCI model, "" otherwise.
func (m simModel) id() string {
	if m.dev.Bus != "pci" {
		return ""
	}
	return fmt.Sprintf("%04x:%04x", m.dev.VendorID, m.dev.DeviceID)
}

// simIdentity is the identity of a model kind ("enetc", "fec") under the
// options of a spec: what the silicon it stands for reports. The handles
// (register window size, IOMMU, MAC loopback) are left empty.
func simIdentity(kind string, opts url.Values) (simModel, bool) {
	switch kind {
	case "enetc":
		s := simModel{dev: driver.Device{Bus: "pci", VendorID: sim.ENETCVendorID, DeviceID: sim.ENETCPFDeviceID}, region: "BAR0"}
		if v := opts.Get("vf"); v == "1" || v == "true" {
			s.dev.DeviceID = sim.ENETCVFDeviceID
		}
		return s, true
	case "fec":
		soc := opts.Get("soc")
		if soc == "" {
			soc = fecmodel.DefaultSoC
		}
		s := simModel{dev: driver.Device{Bus: "platform"}, region: "reg0"}
		if prof, ok := fecmodel.LookupProfile(soc); ok {
			s.dev.Compatible = prof.Compatible
			s.coherent = boolp(!prof.NonCoherent)
		}
		return s, true
	}
	return simModel{}, false
}

// simModelOf looks up the model open under sp's name.
func simModelOf(sp driver.Spec) (simModel, error) {
	if m := sim.ENETCModel(sp.Name); m != nil {
		s, _ := simIdentity("enetc", sp.Options)
		s.dev.Regions, s.size, s.iommu = []driver.Regs{m}, m.Size(), m.IOMMU()
		if m.PF() {
			s.looper = m
		}
		return s, nil
	}
	if m := sim.FECModel(sp.Name); m != nil {
		s, _ := simIdentity("fec", sp.Options)
		s.dev.Regions, s.size, s.iommu, s.looper = []driver.Regs{m}, m.Size(), m.IOMMU(), m
		return s, nil
	}
	return simModel{}, fmt.Errorf("%s: no model open under that name", sp.Raw)
}

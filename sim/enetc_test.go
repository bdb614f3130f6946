package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
)

func openSpec(t *testing.T, raw string) (*driver.Device, error) {
	t.Helper()
	s, err := driver.ParseSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	return openSim(s, driver.Config{})
}

func TestOpenENETC(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec   string
		devID  uint16
		size   int
		engine bool
		link   bool
	}{
		{"sim:enetc40", ENETCPFDeviceID, model.PFBAR0Size, false, true},
		{"sim:enetc41?vf=1", ENETCVFDeviceID, model.VFBAR0Size, false, true},
		{"sim:enetc42?mode=engine", ENETCPFDeviceID, model.PFBAR0Size, true, true},
		{"sim:enetc43?mode=sync&link=down&mmio-cost=10ns", ENETCPFDeviceID, model.PFBAR0Size, false, false},
	} {
		t.Run(c.spec, func(t *testing.T) {
			dev, err := openSpec(t, c.spec)
			if err != nil {
				t.Fatal(err)
			}
			name := trimScheme(c.spec)
			if dev.VendorID != ENETCVendorID || dev.DeviceID != c.devID || dev.Revision != 1 || dev.Bus != "pci" || dev.Backend != "sim" {
				t.Errorf("identity %04x:%04x rev %d bus %s backend %s", dev.VendorID, dev.DeviceID, dev.Revision, dev.Bus, dev.Backend)
			}
			if len(dev.Regions) != 1 || dev.Regions[0].Size() != c.size {
				t.Fatalf("BAR0 %v", dev.Regions)
			}
			m := ENETCModel(name)
			if m == nil || dev.Extra != m || dev.Regions[0] != driver.Regs(m) {
				t.Fatal("ENETCModel does not return the device's model")
			}
			if m.LinkUp() != c.link {
				t.Errorf("link %v, want %v", m.LinkUp(), c.link)
			}
			if dev.Mapper == nil || dev.Reset == nil {
				t.Fatal("no mapper or reset")
			}
			if err := m.Start(); c.engine && err == nil {
				t.Error("engine not running after open (Start succeeded again)")
			} else if !c.engine && err == nil {
				t.Error("Start succeeded on a synchronous model")
			}
			if _, err := openSpec(t, c.spec); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("second open: %v (want an error naming %s)", err, name)
			}
			if err := dev.Release(); err != nil {
				t.Fatal(err)
			}
			if ENETCModel(name) != nil {
				t.Fatal("model still registered after Release")
			}
			if c.engine {
				if err := m.Start(); err != nil {
					t.Errorf("engine still running after Release: %v", err)
				}
				m.Stop()
			}
			// The name is free again.
			dev2, err := openSpec(t, c.spec)
			if err != nil {
				t.Fatal(err)
			}
			_ = dev2.Release()
		})
	}
}

func TestOpenENETCBadOptions(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{
		"sim:enetc50?mode=fast",
		"sim:enetc51?mmio-cost=soon",
		"sim:enetc52?link=sideways",
		"sim:enetc53?vf=maybe",
	} {
		_, err := openSpec(t, spec)
		var se *driver.SpecError
		if !errors.As(err, &se) {
			t.Errorf("%s: %v, want a spec error", spec, err)
		}
		if ENETCModel(trimScheme(spec)) != nil {
			t.Errorf("%s: model registered after a failed open", spec)
		}
	}
}

func TestENETCOpenWithPeer(t *testing.T) {
	t.Parallel()
	a, err := openSpec(t, "sim:enetc60?peer=sim:enetc61")
	if err != nil {
		t.Fatal(err)
	}
	b, err := openSpec(t, "sim:enetc61?peer=sim:enetc60&mode=engine")
	if err != nil {
		t.Fatal(err)
	}
	if ENETCModel("enetc60") == nil || ENETCModel("sim:enetc61") == nil {
		t.Fatal("models not registered")
	}
	if err := errors.Join(b.Release(), a.Release()); err != nil {
		t.Fatal(err)
	}
	if ENETCModel("enetc60") != nil || ENETCModel("enetc61") != nil {
		t.Fatal("models registered after Release")
	}
}

// TestENETCChips: functions opened with the same chip= are one simulated
// LS1028A (the same driver.Device.Chip, and the model's ERR050089 rule spans
// them: an access to one while another runs an MDIO transaction is
// recorded); a function on another chip is not held to it.
// TestENETCVFOnItsPFsChip: pf= attaches a VF to an open PF of the same
// chip only; a VF named onto another chip's PF is refused and leaves
// nothing registered.
func TestENETCVFOnItsPFsChip(t *testing.T) {
	t.Parallel()
	pf, err := openSpec(t, "sim:enetc80?chip=vfpf")
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Release()
	_, err = openSpec(t, "sim:enetc81?vf=1&pf=enetc80&chip=other")
	if err == nil || !strings.Contains(err.Error(), "another chip") || !strings.Contains(err.Error(), "chip=") {
		t.Fatalf("VF on another chip's PF: %v, want a refusal naming chip=", err)
	}
	if ENETCModel("enetc81") != nil {
		t.Error("refused VF left registered")
	}
	vf, err := openSpec(t, "sim:enetc81?vf=1&pf=enetc80&chip=vfpf")
	if err != nil {
		t.Fatalf("VF on its PF's chip: %v", err)
	}
	if vf.Chip != pf.Chip {
		t.Errorf("VF chip %q, PF chip %q", vf.Chip, pf.Chip)
	}
	vf.Release()
}

func TestENETCChips(t *testing.T) {
	t.Parallel()
	reg := func(name string) uint32 {
		r, ok := model.Lookup(name)
		if !ok {
			t.Fatalf("no register %s in the model's table", name)
		}
		return r.Offset
	}
	var devs []*driver.Device
	for _, spec := range []string{
		"sim:enetc70?chip=a", "sim:enetc71?chip=a", "sim:enetc72?chip=b", "sim:enetc73", "sim:enetc74",
	} {
		d, err := openSpec(t, spec)
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d)
	}
	defer func() {
		for _, d := range devs {
			if err := d.Release(); err != nil {
				t.Error(err)
			}
		}
	}()
	if devs[0].Chip != devs[1].Chip || devs[0].Chip == devs[2].Chip || devs[3].Chip != devs[4].Chip || devs[3].Chip == devs[0].Chip {
		t.Fatalf("chips %q %q %q %q %q: want a a b default default, a != b != default", devs[0].Chip, devs[1].Chip, devs[2].Chip, devs[3].Chip, devs[4].Chip)
	}
	for _, c := range []struct {
		mdio, other int
		recorded    bool
	}{
		{0, 1, true},  // chip a, both functions
		{0, 2, false}, // chip a's MDIO, chip b's function
		{3, 4, true},  // the default chip
		{3, 2, false},
	} {
		m, o := ENETCModel(fmt.Sprintf("enetc7%d", c.mdio)), ENETCModel(fmt.Sprintf("enetc7%d", c.other))
		before := o.Stats().ERR050089
		// The window is one MDIO register access: another goroutine
		// hammers o while m's MDIO accesses run (the model yields inside
		// each, so one of o's accesses lands in it if the rule spans both).
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
					o.Read32(reg("SIMR"))
				}
			}
		}()
		for i := 0; i < 2000 && o.Stats().ERR050089 == before; i++ {
			m.Read32(reg("EMDIO_CFG"))
		}
		close(stop)
		<-done
		if got := o.Stats().ERR050089 - before; (got != 0) != c.recorded {
			t.Errorf("MDIO on %s, access on %s: %d ERR050089 records, want recorded %v", m.Name(), o.Name(), got, c.recorded)
		}
	}
	if _, err := openSpec(t, "sim:enetc75?chip=no/slash"); err == nil || !strings.Contains(err.Error(), "chip") {
		t.Errorf("chip=no/slash: %v, want an error naming chip", err)
	}
}

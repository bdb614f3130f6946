package driver

import (
	"errors"
	"testing"
)

// TestRegisterMapOf: a tool asks the registry for the register map of the
// driver that claims a device; a device no driver claims and a driver
// without a map are errors that say which.
func TestRegisterMapOf(t *testing.T) {
	RegisterDriver(Driver{Name: "mapdrv",
		Match: func(d *Device) bool { return d.Bus == "pci" && d.VendorID == 0xfee1 },
		RegisterMap: func(d *Device) []RegDesc {
			return []RegDesc{{Name: "CTRL", Offset: 0x10, Block: "si", Fields: []RegField{{"EN", 31, 31}}}}
		},
	})
	RegisterDriver(Driver{Name: "nomapdrv",
		Match: func(d *Device) bool { return d.Bus == "pci" && d.VendorID == 0xfee2 },
	})

	name, regs, err := RegisterMapOf(&Device{Bus: "pci", VendorID: 0xfee1})
	if err != nil || name != "mapdrv" || len(regs) != 1 || regs[0].Name != "CTRL" || regs[0].Offset != 0x10 || regs[0].Fields[0] != (RegField{"EN", 31, 31}) {
		t.Errorf("claimed device: %q %+v %v", name, regs, err)
	}
	name, _, err = RegisterMapOf(&Device{Bus: "pci", VendorID: 0xfee2})
	if !errors.Is(err, ErrNoRegisterMap) || name != "nomapdrv" {
		t.Errorf("driver without a map: %q %v, want ErrNoRegisterMap from nomapdrv", name, err)
	}
	if _, _, err := RegisterMapOf(&Device{Bus: "pci", VendorID: 0xfee3}); !errors.Is(err, ErrNoDriver) {
		t.Errorf("unclaimed device: %v, want ErrNoDriver", err)
	}
}

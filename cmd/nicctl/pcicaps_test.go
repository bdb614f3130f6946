package main

import (
	"encoding/binary"
	"testing"
)

func TestPCICaps(t *testing.T) {
	t.Parallel() // a pure function
	cfg := make([]byte, 0x200)
	binary.LittleEndian.PutUint16(cfg[6:], 0x10)
	cfg[0x34] = 0x40
	cfg[0x40], cfg[0x41] = 0x10, 0x80 // PCI Express -> 0x80
	cfg[0x80], cfg[0x81] = 0x11, 0x9c // MSI-X -> 0x9c
	cfg[0x9c], cfg[0x9d] = 0x14, 0x00 // EA, end
	binary.LittleEndian.PutUint32(cfg[0x100:], 0x0010|1<<16|0x140<<20)
	binary.LittleEndian.PutUint32(cfg[0x140:], 0x000e|1<<16)
	got := pciCaps(cfg)
	want := []string{"PCI Express @0x40", "MSI-X @0x80", "Enhanced Allocation @0x9c", "SR-IOV @0x100", "ARI @0x140"}
	if len(got) != len(want) {
		t.Fatalf("caps %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("cap %d = %s, want %s", i, got[i], want[i])
		}
	}
	// A list that points at itself ends; a config image without the
	// capabilities bit has none; a short image (non-root read) has none.
	cfg[0x9d] = 0x9c
	if n := len(pciCaps(cfg)); n > 60 {
		t.Errorf("looping list gave %d entries", n)
	}
	binary.LittleEndian.PutUint16(cfg[6:], 0)
	if n := len(pciCaps(cfg)); n != 0 {
		t.Errorf("no Capabilities List bit: %d caps", n)
	}
	if n := len(pciCaps(cfg[:32])); n != 0 {
		t.Errorf("short image: %d caps", n)
	}
}

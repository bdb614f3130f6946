package enetc_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
)

// rdbSwitchDT writes the LS1028A-RDB's PF2 and the Felix switch port that
// names it (ports/port@4: ethernet = <&enetc_port2>, the DSA binding), the
// port's status as given ("" for none), and returns PF2's node.
func rdbSwitchDT(t *testing.T, portStatus string) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "sys/firmware/devicetree/base")
	cell := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	pcie := "soc/pcie@1f0000000"
	files := map[string][]byte{
		pcie + "/ethernet@0,2/phandle":                        cell(0x30),
		pcie + "/ethernet@0,2/phy-mode":                       []byte("internal\x00"),
		pcie + "/ethernet@0,2/fixed-link/speed":               cell(2500),
		pcie + "/ethernet-switch@0,5/ports/port@4/reg":        cell(4),
		pcie + "/ethernet-switch@0,5/ports/port@4/ethernet":   cell(0x30),
		pcie + "/ethernet-switch@0,5/ports/port@4/phy-mode":   []byte("internal\x00"),
		pcie + "/ethernet-switch@0,5/ports/port@0/reg":        cell(0),
		pcie + "/ethernet-switch@0,5/ports/port@0/phy-handle": cell(0x40),
	}
	if portStatus != "" {
		files[pcie+"/ethernet-switch@0,5/ports/port@4/status"] = []byte(portStatus + "\x00")
	}
	for p, b := range files {
		f := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(base, pcie, "ethernet@0,2")
}

// TestSwitchCPUPortRefused: a PF the device tree makes the Felix switch's
// CPU port is refused at open with the switch port named and what to do;
// switch-cpu-port=take drives it anyway and says the link; a disabled
// switch port does not use the function, which then opens as any other.
func TestSwitchCPUPortRefused(t *testing.T) {
	node := rdbSwitchDT(t, "")
	spec := func(extra string) string {
		return fmt.Sprintf("sim:enetc%d?wiring=internal&link-poll=0&chip=%s&of-node=%s%s", 400+irqSeq.Add(1), testChip(t), node, extra)
	}
	_, err := driver.OpenConfig(spec(""), driver.Config{})
	if !errors.Is(err, enetc.ErrSwitchCPUPort) || !strings.Contains(err.Error(), "port@4") || !strings.Contains(err.Error(), "switch-cpu-port=take") {
		t.Fatalf("open PF2: %v, want ErrSwitchCPUPort naming port@4 and switch-cpu-port=take", err)
	}
	p, err := driver.OpenConfig(spec("&switch-cpu-port=take"), driver.Config{})
	if err != nil {
		t.Fatalf("switch-cpu-port=take: %v", err)
	}
	if l := p.(*enetc.Port).SwitchCPUPortLink(); !strings.Contains(l, "port@4") || !strings.Contains(l, "ethernet@0,2") {
		t.Errorf("SwitchCPUPortLink %q", l)
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
	if _, err := driver.OpenConfig(spec("&switch-cpu-port=yes"), driver.Config{}); err == nil || !strings.Contains(err.Error(), "switch-cpu-port") {
		t.Errorf("switch-cpu-port=yes: %v, want a refusal naming the option", err)
	}

	node = rdbSwitchDT(t, "disabled")
	p, err = driver.OpenConfig(spec(""), driver.Config{})
	if err != nil {
		t.Fatalf("PF2 with the switch port disabled: %v", err)
	}
	if l := p.(*enetc.Port).SwitchCPUPortLink(); l != "" {
		t.Errorf("SwitchCPUPortLink %q with the switch port disabled", l)
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
}

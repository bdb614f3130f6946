package gpio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChipForNode: the chip is the gpiochipN whose of_node link leads to
// the controller's node (compared below devicetree/base, so a link into
// /sys/firmware/devicetree/base matches the same node read elsewhere); a
// controller no chip claims (its driver not bound) is refused naming it.
func TestChipForNode(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "sys/firmware/devicetree/base")
	for _, n := range []string{"soc/gpio@30200000", "soc/i2c@44340000/gpio@22"} {
		if err := os.MkdirAll(filepath.Join(base, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sys := filepath.Join(dir, "sys/bus/gpio/devices")
	for name, node := range map[string]string{"gpiochip0": "soc/gpio@30200000", "gpiochip5": "soc/i2c@44340000/gpio@22"} {
		if err := os.MkdirAll(filepath.Join(sys, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(base, node), filepath.Join(sys, name, "of_node")); err != nil {
			t.Fatal(err)
		}
	}
	old := SysDevices
	SysDevices = sys
	defer func() { SysDevices = old }()

	got, err := chipForNode("/sys/firmware/devicetree/base/soc/i2c@44340000/gpio@22")
	if err != nil || got != "gpiochip5" {
		t.Fatalf("the expander's chip: %q, %v", got, err)
	}
	if _, err := chipForNode(filepath.Join(base, "soc/gpio@30210000")); err == nil || !strings.Contains(err.Error(), "gpio@30210000") || !strings.Contains(err.Error(), "not bound") {
		t.Fatalf("an unclaimed controller: %v", err)
	}
}

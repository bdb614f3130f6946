package fec_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

// TestDriverReadsTheNodeHandedToIt: the driver takes the board's wiring
// from the device-tree Node in driver.Device and from nothing else. Two
// trees side by side, and a node outside any devicetree/base directory,
// each give the port what that node says (a fixed link's speed and
// duplex); a property of the node the MAC cannot honour is refused,
// naming it.
func TestDriverReadsTheNodeHandedToIt(t *testing.T) {
	t.Parallel()
	cells := func(v ...uint32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.BigEndian.AppendUint32(b, x)
		}
		return b
	}
	write := func(node string, files map[string][]byte) string {
		for p, b := range files {
			f := filepath.Join(node, p)
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return node
	}
	tree := func(files map[string][]byte) string {
		return write(filepath.Join(t.TempDir(), "sys/firmware/devicetree/base/soc/bus@2000000/ethernet@20b4000"), files)
	}
	a := tree(map[string][]byte{"fixed-link/speed": cells(10), "fixed-link/full-duplex": nil})
	b := tree(map[string][]byte{"fixed-link": cells(0, 0, 100, 0, 0)})
	loose := write(filepath.Join(t.TempDir(), "ethernet"), map[string][]byte{"fixed-link/speed": cells(100), "fixed-link/full-duplex": nil})
	for _, c := range []struct {
		node string
		want driver.Link
	}{
		{a, driver.Link{Up: true, SpeedMbps: 10, FullDuplex: true}},
		{b, driver.Link{Up: true, SpeedMbps: 100}},
		{loose, driver.Link{Up: true, SpeedMbps: 100, FullDuplex: true}},
	} {
		p, _, err := newFixed(t, c.want.SpeedMbps, c.node, "")
		if err != nil {
			t.Fatalf("node %s: %v", c.node, err)
		}
		if l, from, ok := p.FixedLink(); !ok || l != c.want || !strings.Contains(from, "device tree") {
			t.Errorf("node %s: fixed link %v from %q, want %v from the device tree", c.node, l, from, c.want)
		}
	}
	bad := tree(map[string][]byte{"fixed-link/speed": cells(100), "tx-internal-delay-ps": cells(2000)})
	if _, _, err := newFixed(t, 100, bad, ""); err == nil || !strings.Contains(err.Error(), "tx-internal-delay-ps = 2000") {
		t.Errorf("a clock delay the i.MX6UL's MAC does not add: %v, want an error naming the node's tx-internal-delay-ps", err)
	}
}

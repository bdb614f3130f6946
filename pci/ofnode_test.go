package pci

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOFNode(t *testing.T) {
	root := t.TempDir()
	s := Sys{Root: root}
	node := filepath.Join(root, "sys/firmware/devicetree/base/soc/pcie@1f0000000/ethernet@0,0")
	if err := os.MkdirAll(node, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "elsewhere")
	os.MkdirAll(outside, 0o755)
	for _, c := range []struct {
		bdf, target, want string
	}{
		{"0000:00:00.0", "../../../../firmware/devicetree/base/soc/pcie@1f0000000/ethernet@0,0", node},
		{"0000:00:00.1", "../../../../../elsewhere", ""},
		{"0000:00:00.2", "", ""},
	} {
		dir := filepath.Join(root, "sys/bus/pci/devices", c.bdf)
		os.MkdirAll(dir, 0o755)
		if c.target != "" {
			if err := os.Symlink(c.target, filepath.Join(dir, "of_node")); err != nil {
				t.Fatal(err)
			}
		}
		want := c.want
		if want != "" {
			want, _ = filepath.EvalSymlinks(want)
		}
		if got := s.ofNode(MustParseAddress(c.bdf)).Path(); got != want {
			t.Errorf("%s: of_node %q, want %q", c.bdf, got, want)
		}
	}
}

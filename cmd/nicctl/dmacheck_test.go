package main

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// imx8mpTree copies the i.MX8MP tree (symlinks kept) so a test can change
// the board's memory layout; edit writes files into it (nil: delete).
func imx8mpTree(t *testing.T, edit map[string][]byte) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "imx8mp")
	if out, err := exec.Command("cp", "-a", "testdata/imx8mp", root).CombinedOutput(); err != nil {
		t.Fatalf("copy tree: %v: %s", err, out)
	}
	for p, b := range edit {
		f := filepath.Join(root, p)
		if b == nil {
			if err := os.RemoveAll(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func cells(v ...uint32) []byte {
	var b []byte
	for _, c := range v {
		b = binary.BigEndian.AppendUint32(b, c)
	}
	return b
}

const dtBase = "sys/firmware/devicetree/base/"

// TestDMAMemoryCheck: nicctl info on a non-coherent FEC says whether the
// board has a carve-out the driver can use and, if not, exactly what to
// add, for the layouts a board has: none (the testdata tree), a
// reserved-memory node with no-map, one without no-map, one above 4 GiB,
// and RAM left out with mem=.
func TestDMAMemoryCheck(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	const dev = "platform:30be0000.ethernet"
	rsv := dtBase + "reserved-memory/"
	for _, c := range []struct {
		name  string
		edit  map[string][]byte
		want  []string // substrings of the text output
		avoid []string
	}{
		{"none", nil, []string{
			"dma memory:    carve-out: the FEC's DMA is not coherent",
			"carve-out:     missing: add a reserved-memory node with no-map",
			"reg = <0x0 0xfc000000 0x0 0x4000000>; no-map;",
			"then open with ?dma-carveout=0xfc000000+64M",
		}, []string{"hugepages:", "mem=", "not usable"}},
		{"reserved no-map", map[string][]byte{
			rsv + "#address-cells":          cells(2),
			rsv + "#size-cells":             cells(2),
			rsv + "fec-dma@f0000000/reg":    cells(0, 0xf0000000, 0, 0x1000000),
			rsv + "fec-dma@f0000000/no-map": {},
			"proc/iomem":                    []byte("40000000-efffffff : System RAM\nf0000000-f0ffffff : reserved\nf1000000-13fffffff : System RAM\n"),
		}, []string{"carve-out:     reserved-memory/fec-dma@f0000000 0xf0000000+16 MiB: open with ?dma-carveout=0xf0000000+16M"},
			[]string{"missing"}},
		{"reserved without no-map", map[string][]byte{
			rsv + "#address-cells": cells(2),
			rsv + "#size-cells":    cells(2),
			rsv + "linux,cma/reg":  cells(0, 0xd0000000, 0, 0x10000000),
		}, []string{"reserved-memory/linux,cma 0xd0000000+256 MiB: not usable: the node has no no-map property", "missing: add a reserved-memory node"}, nil},
		{"reserved above 4 GiB", map[string][]byte{
			rsv + "#address-cells":       cells(2),
			rsv + "#size-cells":          cells(2),
			rsv + "dma@130000000/reg":    cells(1, 0x30000000, 0, 0x4000000),
			rsv + "dma@130000000/no-map": {},
			"proc/iomem":                 []byte("40000000-12fffffff : System RAM\n"),
		}, []string{"0x130000000+64 MiB: not usable: it reaches past 4 GiB", "missing:"}, nil},
		{"mem=", map[string][]byte{
			dtBase + "memory@40000000/reg": cells(0, 0x40000000, 0, 0x80000000),
			"proc/iomem":                   []byte("40000000-b7ffffff : System RAM\n"),
			"proc/cmdline":                 []byte("console=ttymxc1,115200 mem=1920M root=/dev/mmcblk2p2\n"),
		}, []string{"carve-out:     RAM past mem=1920M 0xb8000000+128 MiB: open with ?dma-carveout=0xb8000000+128M"},
			[]string{"missing"}},
		{"one bank below 4 GiB, nothing reserved", map[string][]byte{
			dtBase + "memory@40000000/reg": cells(0, 0x40000000, 0, 0x80000000),
			"proc/iomem":                   []byte("40000000-bfffffff : System RAM\n"),
		}, []string{"gopmd-dma@bc000000", "or boot with mem=1984M", "?dma-carveout=0xbc000000+64M"}, nil},
		{"iomem hidden (not root)", map[string][]byte{
			dtBase + "memory@40000000/reg": cells(0, 0x40000000, 0, 0x80000000),
			"proc/iomem":                   []byte("00000000-00000000 : System RAM\n"),
			"proc/cmdline":                 []byte("mem=1920M\n"),
		}, []string{"missing: add a reserved-memory node", "0xbc000000"}, []string{"RAM past mem="}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := "testdata/imx8mp"
			if c.edit != nil {
				root = imx8mpTree(t, c.edit)
			}
			out := mustRun(t, "--root", root, "info", dev)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.avoid {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
	// The JSON form carries the same facts.
	r := infoJSON(t, "--root", "testdata/imx8mp", dev)
	if r.DMAMemory == nil || !strings.Contains(r.DMAMemory.Missing, "dma-carveout=0xfc000000+64M") || r.Hugepages != nil {
		t.Errorf("JSON dma_memory %+v, hugepages %+v", r.DMAMemory, r.Hugepages)
	}
	// Not for devices the FEC driver does not claim (the EQOS next to it).
	if out := mustRun(t, "--root", "testdata/imx8mp", "info", "platform:30bf0000.ethernet"); strings.Contains(out, "dma memory") {
		t.Errorf("a DMA memory check for the EQOS:\n%s", out)
	}
}

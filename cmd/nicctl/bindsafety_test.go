package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/pci"
)

// put writes a file inside a copied tree.
func put(t *testing.T, root, p, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	eno1Flags = "sys/devices/platform/1f0000000.pcie/pci0000:00/0000:00:00.1/net/eno1/flags"
	eno1Oper  = "sys/devices/platform/1f0000000.pcie/pci0000:00/0000:00:00.1/net/eno1/operstate"
)

// TestBindRefusals: every bind or unbind that could cut the host off, or
// that touches a device no gopmd driver can drive, is refused with the
// reasons and the way out, and writes nothing to sysfs.
func TestBindRefusals(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	for _, c := range []struct {
		name  string
		tree  string
		prep  func(t *testing.T, root string)
		args  []string
		parts []string
	}{
		{"the root disk's controller", "ls1028a", nil, []string{"unbind", "0002:01:00.0"},
			[]string{"0002:01:00.0: refusing to unbind", "no gopmd driver (enetc, fec, xdp) claims it (PCI ID 144d:a808, class 010802)",
				"/dev/nvme0n1p1 (259:1) is mounted on /", "--force", "nothing was written"}},
		{"the root disk's controller to vfio-pci", "ls1028a", nil, []string{"bind", "0002:01:00.0", "vfio-pci"},
			[]string{"refusing to bind 0002:01:00.0 vfio-pci", "mounted on /"}},
		{"the ENETC MDIO function", "ls1028a", nil, []string{"bind", "0000:00:00.3", "vfio-pci"},
			[]string{"no gopmd driver", "1957:ee01"}},
		{"the 1588 timer while a kernel ENETC port uses it", "ls1028a", nil, []string{"bind", "0000:00:00.4", "vfio-pci"},
			[]string{"refusing to bind 0000:00:00.4 vfio-pci", "0000:00:00.1 (1957:e100, kernel driver fsl_enetc) timestamps with this timer", "--force"}},
		{"an Intel NIC no gopmd driver drives", "ls1028a", nil, []string{"bind", "0001:01:00.0", "uio_pci_generic"},
			[]string{"no gopmd driver", "8086:10d3"}},
		{"a port whose interface is up", "ls1028a", func(t *testing.T, root string) {
			put(t, root, eno1Flags, "0x1003\n")
			put(t, root, eno1Oper, "up\n")
		}, []string{"bind", "0000:00:00.1", "vfio-pci"}, []string{"interface eno1 is up (operstate up)"}},
		{"admin up without carrier", "ls1028a", func(t *testing.T, root string) {
			put(t, root, eno1Flags, "0x1003\n")
		}, []string{"unbind", "0000:00:00.1"}, []string{"interface eno1 is up (operstate down)"}},
		{"a port with an address", "ls1028a", func(t *testing.T, root string) {
			put(t, root, "proc/net/if_inet6", "20010db8000000000000000000000001 03 40 00 80     eno1\n")
		}, []string{"unbind", "0000:00:00.1"}, []string{"interface eno1 has address 2001:db8::1/64"}},
		{"a port with routes", "ls1028a", func(t *testing.T, root string) {
			b, _ := os.ReadFile(filepath.Join(root, "proc/net/route"))
			put(t, root, "proc/net/route", string(b)+"eno1\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n")
			put(t, root, "proc/net/ipv6_route", "fd000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eno1\n")
		}, []string{"unbind", "0000:00:00.1"}, []string{"route 10.0.0.0/8 goes out of interface eno1", "route fd00::/8 goes out of interface eno1"}},
		{"the board's own Ethernet", "imx8mp", nil, []string{"unbind", "platform:30bf0000.ethernet"},
			[]string{"no gopmd driver", "compatible nxp,imx8mp-dwmac-eqos", "interface eth0 is up", "route 192.168.1.0/24 goes out of interface eth0", "fe80::200:ff:fe00:aa/64"}},
		{"no mountinfo to check", "ls1028a", func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "proc/self/mountinfo"))
		}, []string{"unbind", "0000:00:00.0"}, []string{"refusing to unbind", "mountinfo", "findmnt", "nothing was written"}},
		{"a planted link for driver_override", "ls1028a", func(t *testing.T, root string) {
			p := filepath.Join(root, "sys/devices/platform/1f0000000.pcie/pci0000:00/0000:00:00.1/driver_override")
			os.Remove(p)
			os.Symlink(filepath.Join(root, "victim"), p)
		}, []string{"bind", "0000:00:00.1", "uio_pci_generic"}, []string{"refusing to write", "symbolic link"}},
		{"a driver link out of sysfs", "ls1028a", func(t *testing.T, root string) {
			p := filepath.Join(root, "sys/devices/platform/1f0000000.pcie/pci0000:00/0000:00:00.0/driver")
			os.Remove(p)
			os.Symlink(filepath.Join(root, "elsewhere"), p)
		}, []string{"unbind", "0000:00:00.0"}, []string{"refusing to write", "outside /sys"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := copyTree(t, "testdata/"+c.tree)
			put(t, root, "victim", "precious")
			os.MkdirAll(filepath.Join(root, "elsewhere"), 0o755)
			put(t, root, "elsewhere/unbind", "")
			if c.prep != nil {
				c.prep(t, root)
			}
			fakeKernel(t, root, "pci", nil)
			before := bindingState(t, root)
			wantError(t, exitFailed, append([]string{"--root", root}, c.args...), c.parts...)
			after := bindingState(t, root)
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s: %q became %q", strings.TrimPrefix(k, root), v, after[k])
				}
			}
			for _, f := range []string{"victim", "elsewhere/unbind"} {
				if b, _ := os.ReadFile(filepath.Join(root, f)); string(b) != map[string]string{"victim": "precious", "elsewhere/unbind": ""}[f] {
					t.Errorf("%s written: %q", f, b)
				}
			}
		})
	}
	// Names that are no sysfs names are bad input, refused before any path
	// is built.
	for _, dev := range []string{"platform:../../../../tmp/x", "platform:..", "platform:a\x01b"} {
		wantError(t, exitUsage, []string{"--root", "testdata/imx8mp", "bind", dev, "vfio-platform"}, "device spec", "accepted forms")
	}
}

// TestBindForce: --force goes ahead, and says what it overrode.
func TestBindForce(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	root := copyTree(t, "testdata/ls1028a")
	put(t, root, eno1Flags, "0x1003\n")
	fakeKernel(t, root, "pci", nil)
	r := bindJSON(t, "--root", root, "unbind", "0000:00:00.1", "--force")
	if r.Before.Driver != "fsl_enetc" || r.After.Driver != "" || !r.Changed || len(r.Forced) != 1 || !strings.Contains(r.Forced[0], "eno1 is up") {
		t.Fatalf("forced unbind: %+v", r)
	}
	put(t, root, eno1Flags, "0x1003\n")
	out := mustRun(t, "--root", root, "unbind", "0002:01:00.0", "--force")
	for _, want := range []string{"--force: going ahead although no gopmd driver", "--force: going ahead although /dev/nvme0n1p1 (259:1) is mounted on /", "before: driver nvme", "after:  driver (none)"} {
		if !strings.Contains(out, want) {
			t.Errorf("forced unbind output lacks %q:\n%s", want, out)
		}
	}
}

// TestBindDryRun: --dry-run prints the sysfs writes, makes none of them,
// and they are the writes the real command then makes.
func TestBindDryRun(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	root := copyTree(t, "testdata/ls1028a")
	fakeKernel(t, root, "pci", map[string]string{"0000:00:00.0": "fsl_enetc"})
	put(t, root, "sys/bus/pci/devices/0000:00:00.0/driver_override", "vfio-pci\n")
	var made []pci.Write
	inner := writerOf(t)
	setWriter(t, func(s pci.Sys, p, v string) error {
		if s.Plan == nil {
			rel, _ := filepath.Rel(root, p)
			made = append(made, pci.Write{Path: "/" + rel, Value: v})
		}
		return inner(s, p, v)
	})
	for _, args := range [][]string{{"unbind", "0000:00:00.0"}, {"bind", "0000:00:00.0", "kernel"}} {
		before := bindingState(t, root)
		r := bindJSON(t, append(append([]string{"--root", root}, args...), "--dry-run")...)
		if !r.DryRun || r.Changed || len(r.Writes) == 0 {
			t.Fatalf("%v --dry-run: %+v", args, r)
		}
		after := bindingState(t, root)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%v --dry-run: %s: %q became %q", args, strings.TrimPrefix(k, root), v, after[k])
			}
		}
		made = nil
		bindJSON(t, append([]string{"--root", root}, args...)...)
		if len(made) != len(r.Writes) {
			t.Fatalf("%v: dry run planned %v, the command wrote %v", args, r.Writes, made)
		}
		for i := range made {
			// The plan names the path the kernel sees; the command wrote
			// through the device's links.
			if made[i].Value != r.Writes[i].Value || filepath.Base(made[i].Path) != filepath.Base(r.Writes[i].Path) {
				t.Errorf("%v: write %d planned %v, made %v", args, i, r.Writes[i], made[i])
			}
		}
	}
	// A bind through pci.Bind: the plan in words.
	out := mustRun(t, "--root", root, "bind", "0000:00:00.1", "vfio-pci", "--dry-run")
	for _, want := range []string{
		"0000:00:00.1: bind to vfio-pci (dry run: nothing written)",
		"would run: echo vfio-pci > /sys/bus/pci/devices/0000:00:00.1/driver_override",
		"would run: echo 0000:00:00.1 > /sys/bus/pci/devices/0000:00:00.1/driver/unbind",
		"would run: echo 0000:00:00.1 > /sys/bus/pci/drivers_probe",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, out)
		}
	}
	// A refused command is refused in a dry run too.
	wantError(t, exitFailed, []string{"--root", root, "unbind", "0002:01:00.0", "--dry-run"}, "refusing to unbind")
}

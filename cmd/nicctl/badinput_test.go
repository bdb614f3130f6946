package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBadInputTable runs nicctl with bad input as a careless or hostile
// user would give it: unknown commands and flags, malformed specs,
// unknown and repeated options, out-of-range values, hostile names and
// paths, binds that would cut the host off. Each must exit with the
// status its kind says (2 bad input, 1 refused or failed), print one
// line on stderr naming the thing and the fix, and write nothing to the
// tree's bind files.
func TestBadInputTable(t *testing.T) {
	ls := copyTree(t, "testdata/ls1028a")
	mp := copyTree(t, "testdata/imx8mp")
	ul := copyTree(t, "testdata/imx6ul")
	dir := t.TempDir()
	victim := filepath.Join(dir, "root-only")
	os.WriteFile(victim, []byte("precious"), 0o600)
	link := filepath.Join(dir, "planted.pcap")
	os.Symlink(victim, link)
	before := map[string]map[string]string{ls: bindingState(t, ls), mp: bindingState(t, mp), ul: bindingState(t, ul)}

	for _, c := range []struct {
		code  int
		args  []string
		parts []string // the thing, then the fix
	}{
		// Commands and flags.
		{exitUsage, []string{}, []string{"no command given", "commands: list"}},
		{exitUsage, []string{"frobnicate"}, []string{`unknown command "frobnicate"`, "commands: list"}},
		{exitUsage, []string{"--root", filepath.Join(dir, "nope"), "list"}, []string{"--root", "not a directory", "drop --root"}},
		{exitUsage, []string{"list", "--bogus"}, []string{"-bogus", "nicctl list -h"}},
		{exitUsage, []string{"regs", "--force", "sim:enetc0"}, []string{"-force", "nicctl regs -h"}},
		{exitUsage, []string{"bind"}, []string{"missing arguments", "usage: nicctl bind DEV"}},
		{exitUsage, []string{"--root", ls, "bind", "0000:00:00.1", "vfio-pci", "extra"}, []string{`unexpected argument "extra"`, "usage: nicctl bind"}},
		// bind and unbind: bad names and drivers.
		{exitUsage, []string{"--root", ls, "bind", "0000:00:00.1", "igb_uio"}, []string{`"igb_uio"`, "vfio-pci, uio_pci_generic, kernel"}},
		{exitUsage, []string{"--root", mp, "bind", "platform:30be0000.ethernet", "vfio-pci"}, []string{"30be0000.ethernet", "vfio-platform, uio_pdrv_genirq, kernel"}},
		{exitUsage, []string{"bind", "sim:enetc0", "vfio-pci"}, []string{"sim:enetc0", "needs no binding"}},
		{exitUsage, []string{"--root", ls, "unbind", "uio:/dev/uio0"}, []string{"uio:/dev/uio0", "bind its parent device"}},
		{exitUsage, []string{"--root", mp, "bind", "platform:../../../../tmp/x", "vfio-platform"}, []string{"../../../../tmp/x", "give the node name only"}},
		{exitUsage, []string{"--root", mp, "unbind", "platform:.."}, []string{`".."`, "accepted forms"}},
		{exitUsage, []string{"--root", mp, "unbind", "platform:x\ny"}, []string{"control character", "accepted forms"}},
		{exitUsage, []string{"--root", ls, "unbind", "0000:00:99.0"}, []string{"0000:00:99.0", "above 0x1f"}},
		{exitUsage, []string{"--root", ls, "unbind", "0000:00:00.1?gen=1&gen=1"}, []string{"option gen", "give each option once"}},
		{exitFailed, []string{"--root", ls, "bind", "0000:00:09.0", "vfio-pci"}, []string{"0000:00:09.0", "no such device", "nicctl list"}},
		// bind and unbind: what must not be detached.
		{exitFailed, []string{"--root", ls, "unbind", "0002:01:00.0"}, []string{"0002:01:00.0", "mounted on /", "--force"}},
		{exitFailed, []string{"--root", ls, "bind", "0002:01:00.0", "vfio-pci", "--dry-run"}, []string{"0002:01:00.0", "no gopmd driver", "--force"}},
		{exitFailed, []string{"--root", ls, "bind", "0000:00:00.3", "vfio-pci"}, []string{"0000:00:00.3", "PCI ID 1957:ee01", "--force"}},
		{exitFailed, []string{"--root", ls, "bind", "0001:01:00.0", "uio_pci_generic"}, []string{"0001:01:00.0", "PCI ID 8086:10d3", "--force"}},
		{exitFailed, []string{"--root", mp, "unbind", "platform:30bf0000.ethernet"}, []string{"30bf0000.ethernet", "interface eth0 is up", "--force"}},
		// Specs and options, on commands that open a port.
		{exitUsage, []string{"regs", "bogus"}, []string{`"bogus"`, "accepted forms"}},
		{exitUsage, []string{"regs", "uio:/tmp/uio0"}, []string{`"/tmp/uio0"`, "/dev/uioN"}},
		{exitUsage, []string{"regs", "sim:zz0"}, []string{`"zz0"`, "enetc, enetc-timer, fec"}},
		{exitUsage, []string{"regs", "sim:enetc0?color=red"}, []string{"option color", "accepted: "}},
		{exitUsage, []string{"regs", "sim:enetc0?soc=imx8mp"}, []string{"option soc", "accepted: ", "vf"}},
		{exitUsage, []string{"regs", "sim:fec0?in-band=off"}, []string{"option in-band", "the fec driver", "accepted: "}},
		{exitUsage, []string{"regs", "sim:enetc0?phy=99"}, []string{`option phy="99"`, "0 to 31, or none"}},
		{exitUsage, []string{"regs", "sim:enetc0?gen=1&gen=0"}, []string{"option gen", "give each option once"}},
		{exitUsage, []string{"info", "sim:enetc0?mtu=1"}, []string{`option mtu="1"`, "[68, 65535]"}},
		{exitUsage, []string{"link", "sim:enetc0?queues=65"}, []string{`option queues="65"`, "[1, 64]"}},
		{exitUsage, []string{"stats", "sim:fec0?soc=imx99"}, []string{`option soc="imx99"`, "imx8mp"}},
		{exitUsage, []string{"phy", "sim:fec0?phy=32"}, []string{`option phy="32"`, "0 to 31"}},
		{exitUsage, []string{"rings", "sim:enetc0?gen-rate=5G"}, []string{`option gen-rate="5G"`, "from 1 to 1G"}},
		{exitUsage, []string{"info", "sim:enetc0?pcap-out=" + link}, []string{link, "symbolic link", "remove the link"}},
		{exitUsage, []string{"regs", "sim:enetc0", "--block", "nosuch"}, []string{`no block "nosuch"`, "blocks: "}},
		// Register reads that need an opt-in, or find nothing.
		{exitUsage, []string{"--root", ul, "regs", "platform:20b4000.ethernet"}, []string{"20b4000.ethernet", "/dev/mem", "--unsafe-noiommu"}},
		{exitFailed, []string{"--root", mp, "regs", "platform:nosuch"}, []string{"nosuch", "no such device", "ls /sys/bus/platform/devices"}},
		{exitFailed, []string{"--root", ls, "regs", "0000:00:00.1"}, []string{"0000:00:00.1", "fsl_enetc"}},
		// MDIO and traffic commands: out-of-range values.
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "32", "1"}, []string{`PHY address "32"`, "from 0 to 31"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "0", "99"}, []string{`register "99"`, "from 0 to 31"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "write", "0", "0", "0x1234"}, []string{"write", "--force"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "frob", "0", "0"}, []string{"frob", "read"}},
		{exitUsage, []string{"pktgen", "sim:enetc0", "--size", "10"}, []string{"--size 10", "64"}},
		{exitUsage, []string{"bench", "sim:enetc0", "fly"}, []string{"fly", "drop"}},
		{exitUsage, []string{"selftest", "sim:enetc0", "--loopback", "sideways"}, []string{"sideways", "external"}},
		{exitUsage, []string{"selftest", "sim:enetc0?sink=1"}, []string{"option sink=", "drop it"}},
	} {
		wantError(t, c.code, c.args, c.parts...)
	}
	for root, st := range before {
		after := bindingState(t, root)
		for k, v := range st {
			if after[k] != v {
				t.Errorf("%s: %q became %q", k, v, after[k])
			}
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("a planted link's target was written: %q", b)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRig runs nicctl against a real kernel: the x86-vfio rig of the
// shared rigs boots Debian's kernel under QEMU with an emulated IOMMU and
// QEMU's edu device, which the rig leaves on vfio-pci. Hand it this test
// binary:
//
//	CGO_ENABLED=0 go test -c -o /tmp/nicctl.test ./cmd/nicctl
//	RIG_EXTRA=/tmp/nicctl.test RIG_EXTRA_ARGS='-test.run=TestRig -test.v' bash ../shared/rigs/x86-vfio/run.sh
//
// Anywhere else it is skipped. It leaves edu on vfio-pci, as it found it.
func TestRig(t *testing.T) {
	if _, err := os.Stat("/rig.conf"); err != nil {
		t.Skip("runs inside the x86-vfio rig only (see the comment above)")
	}
	edu := ""
	devs, _ := filepath.Glob("/sys/bus/pci/devices/*")
	for _, d := range devs {
		v, _ := os.ReadFile(d + "/vendor")
		p, _ := os.ReadFile(d + "/device")
		if strings.TrimSpace(string(v)) == "0x1234" && strings.TrimSpace(string(p)) == "0x11e8" {
			edu = filepath.Base(d)
		}
	}
	if edu == "" {
		t.Fatal("no edu device (1234:11e8) in /sys/bus/pci/devices")
	}
	var info infoResult
	if err := json.Unmarshal([]byte(mustRun(t, "info", edu, "--json")), &info); err != nil {
		t.Fatal(err)
	}
	t.Logf("info: driver %s group %s regions %+v (not opened: %s)", info.KernelDriver, info.IOMMUGroup, info.Regions, info.NotOpened)
	if info.KernelDriver != "vfio-pci" || info.IOMMUGroup == "" || len(info.Regions) == 0 || info.Regions[0].Size != 1<<20 {
		t.Errorf("info %s: %+v", edu, info)
	}
	steps := []struct {
		args       []string
		before     string
		after      string
		wantChange bool
	}{
		{[]string{"bind", edu, "uio_pci_generic"}, "vfio-pci", "uio_pci_generic", true},
		{[]string{"bind", edu, "vfio-pci"}, "uio_pci_generic", "vfio-pci", true},
		{[]string{"bind", edu, "vfio-pci"}, "vfio-pci", "vfio-pci", false},
		{[]string{"unbind", edu}, "vfio-pci", "", true},
	}
	for _, s := range steps {
		r := bindJSON(t, s.args...)
		t.Logf("%v: %+v -> %+v", s.args, r.Before, r.After)
		if r.Before.Driver != s.before || r.After.Driver != s.after || r.Changed != s.wantChange {
			t.Errorf("%v: %+v", s.args, r)
		}
	}
	if _, err := os.Stat("/dev/vfio/" + info.IOMMUGroup); err == nil {
		t.Logf("/dev/vfio/%s still there after unbind", info.IOMMUGroup)
	}
	// No kernel driver claims edu: bind kernel clears driver_override and
	// says so.
	wantError(t, exitFailed, []string{"bind", edu, "kernel"}, edu, "no kernel driver took it")
	r := bindJSON(t, "bind", edu, "vfio-pci")
	if r.Before.Driver != "" || r.Before.Override != "" || r.After.Driver != "vfio-pci" {
		t.Errorf("bind from no driver: %+v", r)
	}
	// regs opens the function through VFIO (container, group, device fd,
	// BAR mmap) and then finds no register map for an edu.
	wantError(t, exitFailed, []string{"regs", edu}, "no register map", "1234:11e8")
	if out := mustRun(t, "list", "--json"); !strings.Contains(out, "sim:enetc0") {
		t.Errorf("list: %s", out)
	}
}

// TestRigFEC runs nicctl in the arm-fec rig of the shared rigs: Debian's
// armmp kernel under qemu-system-arm (mcimx6ul-evk by default), with the
// ENET named by $DEV released from the kernel's fec and the top of RAM
// kept from the kernel as a carve-out at $CARVE:
//
//	GOARCH=arm GOARM=7 CGO_ENABLED=0 go test -c -o /tmp/nicctl-arm.test ./cmd/nicctl
//	RIG_EXTRA=/tmp/nicctl-arm.test RIG_EXTRA_ARGS='-test.run=TestRigFEC -test.v' bash ../shared/rigs/arm-fec/run.sh
//
// It reads the registers through /dev/mem, then brings the port up with
// gopmd's fec driver on QEMU's ENET model and asks the PHY over MDIO.
func TestRigFEC(t *testing.T) {
	dev, carve := os.Getenv("DEV"), os.Getenv("CARVE")
	if _, err := os.Stat("/rig.conf"); err != nil || dev == "" || carve == "" {
		t.Skip("runs inside the arm-fec rig only (see the comment above)")
	}
	m := listJSON(t)
	e, ok := m["platform:"+dev]
	t.Logf("list: %+v", e)
	if !ok || !e.Usable || e.Driver != "" || !strings.Contains(e.Why, "/dev/mem") {
		t.Errorf("list: the released ENET %s: %+v", dev, e)
	}
	regs, _ := regsJSON(t, "platform:"+dev)
	t.Logf("regs: ECR %#x RCR %#x MSCR %#x", regs["ECR"].Value, regs["RCR"].Value, regs["MSCR"].Value)
	if r, ok := regs["RCR"]; !ok || r.Offset != 0x84 {
		t.Errorf("regs: RCR %+v", r)
	}
	spec := "platform:" + dev + "?unsafe-noiommu=1&dma-carveout=" + carve + "+16M"
	var info infoResult
	if err := json.Unmarshal([]byte(mustRun(t, "info", spec, "--json")), &info); err != nil {
		t.Fatal(err)
	}
	t.Logf("info: %+v", info)
	if info.Driver != "fec" || info.Backend != "devmem" || info.MAC == "" || info.DMACoherent == nil || *info.DMACoherent {
		t.Errorf("info: %+v", info)
	}
	var phy phyResult
	if err := json.Unmarshal([]byte(mustRun(t, "phy", spec, "--json")), &phy); err != nil {
		t.Fatal(err)
	}
	t.Logf("phy: address %d ID %#08x link %v resolved %q", phy.PHY, phy.ID, phy.Link, phy.Resolved)
	if phy.ID != 0x0007c0d1 { // QEMU's LAN9118-style PHY
		t.Errorf("PHY ID %#08x, want 0x0007c0d1", phy.ID)
	}
	t.Log(strings.TrimSpace(mustRun(t, "link", spec)))
	var pg pktgenResult
	if err := json.Unmarshal([]byte(mustRun(t, "pktgen", spec, "--count", "16", "--json")), &pg); err != nil {
		t.Fatal(err)
	}
	t.Logf("pktgen: %+v", pg)
	if pg.Sent != 16 {
		t.Errorf("pktgen sent %d of 16", pg.Sent)
	}
}

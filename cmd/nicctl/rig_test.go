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
//	RIG_EXTRA=/tmp/nicctl.test RIG_EXTRA_ARGS='-test.run=TestRig -test.v' bash rigs/x86-vfio/run.sh
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

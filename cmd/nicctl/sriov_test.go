package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	pf0Dir = "sys/devices/platform/1f0000000.pcie/pci0000:00/0000:00:00.0"
	pf1Dir = "sys/devices/platform/1f0000000.pcie/pci0000:00/0000:00:00.1"
)

// sriovTree is the LS1028A tree with SR-IOV attributes on PF0 (vfio-pci)
// and PF1 (fsl_enetc): two VFs each, none created.
func sriovTree(t *testing.T) string {
	root := copyTree(t, "testdata/ls1028a")
	for _, d := range []string{pf0Dir, pf1Dir} {
		put(t, root, d+"/sriov_totalvfs", "2\n")
		put(t, root, d+"/sriov_numvfs", "0\n")
	}
	return root
}

func numvfs(t *testing.T, root, dir string) string {
	b, err := os.ReadFile(filepath.Join(root, dir, "sriov_numvfs"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func sriovJSON(t *testing.T, args ...string) sriovResult {
	t.Helper()
	var r sriovResult
	out := mustRun(t, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

// TestSRIOVKernelPF: on a PF the kernel drives, creating VFs is one write.
func TestSRIOVKernelPF(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	root := sriovTree(t)
	r := sriovJSON(t, "--root", root, "sriov", "0000:00:00.1", "2")
	if r.Before != 0 || r.After != 2 || !r.Changed || r.Total != 2 || len(r.Forced) != 0 {
		t.Fatalf("%+v", r)
	}
	if got := numvfs(t, root, pf1Dir); got != "2" {
		t.Fatalf("sriov_numvfs %q", got)
	}
}

// TestSRIOVRefusals: what could remove VFs in use is refused with the
// reason and the way out, writing nothing; --force goes ahead and says what
// it overrode. VFs of a PF on vfio-pci are created with a note on the VF
// token they open with.
func TestSRIOVRefusals(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	root := sriovTree(t)
	// A PF on vfio-pci without enable_sriov: the kernel would refuse.
	wantError(t, exitFailed, []string{"--root", root, "sriov", "0000:00:00.0", "2"},
		"vfio-pci", "enable_sriov=1", "modprobe vfio-pci enable_sriov=1", "nothing was written")
	// With it: the VFs are created, and the note says how to open them.
	os.MkdirAll(filepath.Join(root, "sys/module/vfio_pci/parameters"), 0o755)
	put(t, root, "sys/module/vfio_pci/parameters/enable_sriov", "Y\n")
	out := mustRun(t, "--root", root, "sriov", "0000:00:00.0", "2", "--dry-run")
	for _, w := range []string{"would run: echo 2 > /sys/bus/pci/devices/0000:00:00.0/sriov_numvfs", "note: the PF is on vfio-pci", "pci:0000:00:00.0?vf-token=UUID", "each VF with the same ?vf-token=UUID"} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run lacks %q:\n%s", w, out)
		}
	}
	r := sriovJSON(t, "--root", root, "sriov", "0000:00:00.0", "2")
	if r.After != 2 || len(r.Forced) != 0 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "vf-token=") {
		t.Fatalf("vfio-pci PF: %+v", r)
	}
	if got := numvfs(t, root, pf0Dir); got != "2" {
		t.Fatalf("sriov_numvfs %q", got)
	}

	// Changing the count of a PF with VFs removes them first.
	put(t, root, pf1Dir+"/sriov_numvfs", "2\n")
	vf := "sys/devices/platform/1f0000000.pcie/pci0000:00/0000:00:01.0"
	os.MkdirAll(filepath.Join(root, vf), 0o755)
	os.Symlink("../0000:00:01.0", filepath.Join(root, pf1Dir, "virtfn0"))
	os.Symlink("../../../../"+vf[len("sys/"):], filepath.Join(root, "sys/bus/pci/devices/0000:00:01.0"))
	wantError(t, exitFailed, []string{"--root", root, "sriov", "0000:00:00.1", "1"},
		"its 2 VFs are removed first", "0000:00:01.0 (no driver)", "--force")
	out = mustRun(t, "--root", root, "sriov", "0000:00:00.1", "1", "--force", "--dry-run")
	i0, i1 := strings.Index(out, "echo 0 > /sys/bus/pci/devices/0000:00:00.1/sriov_numvfs"), strings.Index(out, "echo 1 > /sys/bus/pci/devices/0000:00:00.1/sriov_numvfs")
	if !strings.Contains(out, "going ahead although its 2 VFs are removed first") || i0 < 0 || i1 < i0 {
		t.Fatalf("dry run:\n%s", out)
	}
	if got := numvfs(t, root, pf1Dir); got != "2" {
		t.Fatalf("a dry run wrote sriov_numvfs %q", got)
	}

	// Bad input and a function without SR-IOV.
	wantError(t, exitUsage, []string{"--root", root, "sriov", "0000:00:00.1", "3"}, "at most 2 VFs")
	wantError(t, exitUsage, []string{"--root", root, "sriov", "0000:00:00.1", "two"}, "VF count")
	wantError(t, exitFailed, []string{"--root", root, "sriov", "0000:00:00.3", "1"}, "not an SR-IOV physical function")
}

// TestSRIOVUnclaimedPF: the VF count of a PF no gopmd driver claims (an
// Intel NIC on its kernel driver) is the host's: refused with the reason
// and the way out, nothing written; --force changes it and says what it
// overrode.
func TestSRIOVUnclaimedPF(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	root := sriovTree(t)
	const intel = "sys/devices/platform/1f0000000.pcie/pci0000:00/0001:01:00.0"
	put(t, root, intel+"/sriov_totalvfs", "8\n")
	put(t, root, intel+"/sriov_numvfs", "0\n")
	wantError(t, exitFailed, []string{"--root", root, "sriov", "0001:01:00.0", "8"},
		"0001:01:00.0: refusing to set sriov_numvfs to 8", "no gopmd driver (enetc, fec, xdp) claims the PF (PCI ID 8086:10d3", "nothing was written", "--force")
	if got := numvfs(t, root, intel); got != "0" {
		t.Fatalf("a refusal wrote sriov_numvfs %q", got)
	}
	r := sriovJSON(t, "--root", root, "sriov", "0001:01:00.0", "8", "--force")
	if r.After != 8 || !r.Changed || len(r.Forced) != 1 || !strings.Contains(r.Forced[0], "no gopmd driver") {
		t.Fatalf("--force: %+v", r)
	}
	if got := numvfs(t, root, intel); got != "8" {
		t.Fatalf("--force: sriov_numvfs %q", got)
	}
}

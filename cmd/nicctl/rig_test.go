package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/internal/rigtest"
	"github.com/gopmd/gopmd/internal/testnote"
)

// The kernel rig tests run twice over. On the host, with GOPMD_RIGS=1, each
// builds this test binary statically for the rig's guest, hands it to the
// project's rig script (rigs/x86-vfio/run.sh, rigs/arm-fec/run.sh) as
// RIG_EXTRA with -test.run naming itself, and fails unless the rig passes
// and the binary exits 0 in the guest. In the guest, where /rig.conf names
// the rig, the same test runs nicctl against the real kernel. Anywhere else
// it is skipped with a note saying how to run it.

// rigRun describes how the host runs one rig with this test binary inside.
type rigRun struct {
	rig    string   // directory under rigs/
	goarch []string // GOARCH and friends for the guest binary
	env    []string // extra environment for run.sh
	what   string   // for the skip note
}

// hostRig runs the test named t.Name() inside r's rig, or skips it when
// GOPMD_RIGS is not 1.
func hostRig(t *testing.T, r rigRun) {
	how := fmt.Sprintf("set GOPMD_RIGS=1 (root, QEMU, Debian apt sources; a few minutes): "+
		"GOPMD_RIGS=1 go test -count=1 -run '^%s$' -v ./cmd/nicctl "+
		"(builds this test binary and runs it inside rigs/%s/run.sh)", t.Name(), r.rig)
	if os.Getenv("GOPMD_RIGS") != "1" {
		testnote.Skip(t, r.what, how)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "rigs", r.rig, "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("no rig script: %v", err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building the guest's test binary needs the go command on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "nicctl-"+r.rig+".test")
	t0 := time.Now()
	build := exec.Command(goTool, "test", "-c", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), append([]string{"GOOS=linux", "CGO_ENABLED=0"}, r.goarch...)...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c (%s): %v\n%s", strings.Join(r.goarch, " "), err, out)
	}
	tBuild := time.Since(t0)
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), r.env...)
	cmd.Env = append(cmd.Env,
		"RIG_EXTRA="+bin,
		"RIG_EXTRA_ARGS=-test.run=^"+t.Name()+"$ -test.timeout=5m -test.v",
		"RIG_OUT=/tmp/rigs-out/gopmd-"+r.rig+"-nicctl")
	if os.Getenv("TIMEOUT") == "" {
		cmd.Env = append(cmd.Env, "TIMEOUT=420")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t1 := time.Now()
	err = cmd.Run()
	tRig := time.Since(t1)
	o := out.String()
	t.Logf("built the %s test binary in %v; rig ran %v", strings.Join(r.goarch, " "), tBuild.Round(100*time.Millisecond), tRig.Round(100*time.Millisecond))
	for _, l := range regexp.MustCompile(`(?m)^TIME .*$`).FindAllString(o, -1) {
		t.Log(l)
	}
	passed := regexp.MustCompile(`(?m)^--- PASS: ` + regexp.QuoteMeta(t.Name()) + ` `).MatchString(o)
	if err != nil || !strings.Contains(o, "\nRESULT: PASS") || !strings.Contains(o, "PASS guest: extra program") || !passed {
		t.Fatalf("%s in rigs/%s failed (run.sh: %v, the guest's test passed: %v):\n%s", t.Name(), r.rig, err, passed, o)
	}
	if i, j := strings.LastIndex(o, "RIG-EXTRA-BEGIN"), strings.LastIndex(o, "RIG-EXTRA-END"); i >= 0 && j > i {
		t.Logf("in the guest:\n%s", o[i:j])
	}
}

// TestRig runs nicctl against a real kernel: the project's x86-vfio rig
// boots Debian's kernel under QEMU with an emulated IOMMU and QEMU's edu
// device. On the host it builds this test binary and runs it there:
//
//	GOPMD_RIGS=1 go test -count=1 -run '^TestRig$' -v ./cmd/nicctl
//
// In the guest it moves edu between vfio-pci, uio_pci_generic and no
// driver with bind and unbind, checks info, and opens edu through VFIO with
// regs; it leaves edu on vfio-pci.
func TestRig(t *testing.T) {
	if rigtest.Conf()["RIG"] != "x86-vfio" {
		hostRig(t, rigRun{rig: "x86-vfio", goarch: []string{"GOARCH=amd64"},
			what: "nicctl in the x86-vfio kernel rig (bind, unbind, info, regs on edu behind an emulated IOMMU)"})
		return
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
	// The rig's own program ran first and may have left edu anywhere:
	// start from vfio-pci. No gopmd driver claims edu, so every bind that
	// changes something needs --force.
	first := bindJSON(t, "bind", edu, "vfio-pci", "--force")
	t.Logf("bind %s vfio-pci: %+v -> %+v", edu, first.Before, first.After)
	if first.After.Driver != "vfio-pci" || first.Changed != (first.Before != first.After) {
		t.Fatalf("bind %s vfio-pci: %+v", edu, first)
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
	wantError(t, exitFailed, []string{"bind", edu, "uio_pci_generic"}, edu, "refusing to bind", "no gopmd driver", "1234:11e8", "--force")
	for _, s := range steps {
		r := bindJSON(t, append(s.args, "--force")...)
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
	r := bindJSON(t, "bind", edu, "vfio-pci", "--force")
	if r.Before.Driver != "" || r.Before.Override != "" || r.After.Driver != "vfio-pci" {
		t.Errorf("bind from no driver: %+v", r)
	}
	// regs refuses an edu before opening it through VFIO (which would
	// reset the function): no driver has a register map for it.
	wantError(t, exitFailed, []string{"regs", edu}, "no register map", "1234:11e8")
	if out := mustRun(t, "list", "--json"); !strings.Contains(out, "sim:enetc0") {
		t.Errorf("list: %s", out)
	}
}

// TestRigFEC runs nicctl in the project's arm-fec rig: Debian's armmp
// kernel under qemu-system-arm (mcimx6ul-evk), with no kernel driver on the
// ENETs and the top of RAM kept from the kernel as a carve-out. On the host
// it builds this test binary for GOARCH=arm GOARM=7 and runs it there:
//
//	GOPMD_RIGS=1 go test -count=1 -run '^TestRigFEC$' -v ./cmd/nicctl
//
// In the guest it reads the first ENET's registers through /dev/mem, then
// brings the port up with gopmd's fec driver on QEMU's ENET model, asks
// the PHY over MDIO and sends frames with pktgen.
func TestRigFEC(t *testing.T) {
	conf := rigtest.Conf()
	if conf["RIG"] != "arm-fec" {
		hostRig(t, rigRun{rig: "arm-fec", goarch: []string{"GOARCH=arm", "GOARM=7"},
			env:  []string{"RIG_ACCESS=devmem", "RIG_DMA=carveout", "RIG_FROM_HEAD=0"},
			what: "nicctl in the arm-fec kernel rig (list, regs, info, phy, link, pktgen on QEMU's i.MX6UL ENET)"})
		return
	}
	dev, _, _ := strings.Cut(conf["DEVS"], ",")
	carve := conf["CARVE"]
	if dev == "" || carve == "" || carve == "0" {
		t.Fatalf("/rig.conf %v: want DEVS and a carve-out base in CARVE (the rig's RIG_DMA=carveout)", conf)
	}
	m := listJSON(t)
	e, ok := m["platform:"+dev]
	t.Logf("list: %+v", e)
	if !ok || !e.Usable || e.Driver != "" || !strings.Contains(e.Why, "/dev/mem") {
		t.Errorf("list: the released ENET %s: %+v", dev, e)
	}
	// The released ENET is read through /dev/mem, which needs the opt-in.
	wantError(t, exitUsage, []string{"regs", "platform:" + dev}, dev, "/dev/mem", "--unsafe-noiommu")
	regs, _ := regsJSON(t, "platform:"+dev, "--unsafe-noiommu")
	t.Logf("regs: ECR %#x RCR %#x MSCR %#x", regs["ECR"].Value, regs["RCR"].Value, regs["MSCR"].Value)
	if r, ok := regs["RCR"]; !ok || r.Offset != 0x84 {
		t.Errorf("regs: RCR %+v", r)
	}
	// phy=scan: under QEMU 7.2 ENET1 has a PHY on its own MDIO bus, which
	// the board's device tree does not describe (docs/hardware-fec.md §5.5).
	spec := "platform:" + dev + "?unsafe-noiommu=1&phy=scan&dma-carveout=" + carve + "+16M"
	var info infoResult
	if err := json.Unmarshal([]byte(mustRun(t, "info", spec, "--json")), &info); err != nil {
		t.Fatal(err)
	}
	t.Logf("info: %+v", info)
	if info.Driver != "fec" || info.Backend != "devmem" || info.MAC == "" || info.DMACoherent == nil || *info.DMACoherent {
		t.Errorf("info: %+v", info)
	}
	// The rig boots with mem= and leaves the top of RAM to the carve-out:
	// the DMA memory check must find exactly that range, from the kernel's
	// own /proc/iomem, /proc/cmdline and device tree.
	if dm := info.DMAMemory; dm == nil || dm.Missing != "" {
		t.Errorf("info: DMA memory check %+v, want the rig's carve-out found", dm)
	} else {
		t.Logf("info: DMA memory %+v", *dm)
		found := false
		for _, c := range dm.Carveouts {
			found = found || c.Unusable == "" && fmt.Sprintf("%#x", c.Addr) == carve && strings.HasPrefix(c.Source, "RAM past mem=")
		}
		if !found {
			t.Errorf("info: carve-outs %+v, want one at %s past mem=", dm.Carveouts, carve)
		}
	}
	var phy phyResult
	if err := json.Unmarshal([]byte(mustRun(t, "phy", spec, "--json")), &phy); err != nil {
		t.Fatal(err)
	}
	t.Logf("phy: address %d ID %#08x link %v resolved %q", phy.PHY, phy.ID, phy.Link, phy.Resolved)
	if phy.ID != 0x0007c0d1 { // QEMU's LAN9118-style PHY
		t.Errorf("PHY ID %#08x, want 0x0007c0d1", phy.ID)
	}
	// The board's device tree, read through of_node: ENET1's phy-handle
	// names a PHY on ENET2's MDIO bus, which no port of this nicctl process
	// drives and no kernel interface owns, so without phy=scan it is
	// refused naming the ways out; ENET2's phy-handle names
	// address 1 on its own bus, taken without a scan (docs/hardware-fec.md §5.5).
	dtSpec := strings.Replace(spec, "&phy=scan", "", 1)
	if code, _, errOut := nicctl(t, "phy", dtSpec); code == 0 || !strings.Contains(errOut, "phy-handle") || !strings.Contains(errOut, "phy=scan") {
		t.Errorf("phy %s (phy-handle on the other ENET's bus): exit %d, %q", dtSpec, code, errOut)
	}
	if _, dev2, ok := strings.Cut(conf["DEVS"], ","); ok {
		spec2 := "platform:" + dev2 + "?unsafe-noiommu=1&dma-carveout=" + carve + "+16M"
		var phy2 phyResult
		if err := json.Unmarshal([]byte(mustRun(t, "phy", spec2, "--json")), &phy2); err != nil {
			t.Fatal(err)
		}
		t.Logf("phy %s: address %d from the device tree", dev2, phy2.PHY)
		if phy2.PHY != 1 {
			t.Errorf("phy %s: address %d, want 1 (its phy-handle's reg)", dev2, phy2.PHY)
		}
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

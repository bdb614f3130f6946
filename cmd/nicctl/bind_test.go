package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gopmd/gopmd/pci"
)

// copyTree copies a testdata tree (files, directories, symlinks as they
// are) into a temporary directory a test may write to.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, out)
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(out, b, 0o644)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// relink points link (inside root) at target (inside root), relatively.
func relink(t *testing.T, root, link, target string) {
	t.Helper()
	l := filepath.Join(root, link)
	dir, err := filepath.EvalSymlinks(filepath.Dir(l))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := filepath.EvalSymlinks(root)
	rel, err := filepath.Rel(dir, filepath.Join(r, target))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, filepath.Base(l)))
	if err := os.Symlink(rel, filepath.Join(dir, filepath.Base(l))); err != nil {
		t.Fatal(err)
	}
}

// writers holds each test's sysfs writer, by *testing.T: nicctl() runs
// the command with the writer of the test that runs it, so tests that
// play the kernel differently can run at the same time.
var writers sync.Map

type sysWriter = func(s pci.Sys, path, value string) error

// writerOf is t's sysfs writer: the one setWriter gave it, or nicctl's own.
func writerOf(t *testing.T) sysWriter {
	if w, ok := writers.Load(t); ok {
		return w.(sysWriter)
	}
	return sysWrite
}

// setWriter makes w the sysfs writer of the commands t runs, until t ends.
func setWriter(t *testing.T, w sysWriter) {
	writers.Store(t, w)
	t.Cleanup(func() { writers.Delete(t) })
}

// fakeKernel makes nicctl's own sysfs writes behave as the kernel's do:
// unbind removes the driver link, drivers_probe binds driver_override or
// the device's kernel driver (home), an empty driver_override reads (null).
func fakeKernel(t *testing.T, root, bus string, home map[string]string) {
	t.Helper()
	old := writerOf(t)
	setWriter(t, func(s pci.Sys, p, v string) error {
		if err := old(s, p, v); err != nil || s.Plan != nil {
			return err // a dry run: the kernel saw nothing
		}
		name := strings.TrimSpace(v)
		dev := "/sys/bus/" + bus + "/devices/" + name
		switch {
		case strings.HasSuffix(p, "/unbind"):
			return os.Remove(filepath.Join(root, dev, "driver"))
		case strings.HasSuffix(p, "/drivers_probe"):
			if _, err := os.Lstat(filepath.Join(root, dev, "driver")); err == nil {
				return nil
			}
			want := home[name]
			if b, _ := os.ReadFile(filepath.Join(root, dev, "driver_override")); strings.TrimSpace(string(b)) != "(null)" {
				want = strings.TrimSpace(string(b))
			}
			if want != "" {
				relink(t, root, dev+"/driver", "/sys/bus/"+bus+"/drivers/"+want)
			}
		case strings.HasSuffix(p, "/driver_override") && v == "\n":
			return os.WriteFile(p, []byte("(null)\n"), 0o644)
		}
		return nil
	})
}

func bindJSON(t *testing.T, args ...string) bindResult {
	t.Helper()
	var r bindResult
	out := mustRun(t, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

func TestBindToVFIO(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	root := copyTree(t, "testdata/ls1028a")
	// pci.Bind writes unbind and drivers_probe itself: two FIFOs let this
	// goroutine play the kernel between the writes, in order.
	unbind := filepath.Join(root, "sys/bus/pci/drivers/fsl_enetc/unbind")
	probe := filepath.Join(root, "sys/bus/pci/drivers_probe")
	for _, f := range []string{unbind, probe} {
		os.Remove(f)
		if err := syscall.Mkfifo(f, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	done := make(chan string)
	go func() {
		b, _ := os.ReadFile(unbind) // returns once the unbind write is closed
		os.Remove(filepath.Join(root, "sys/bus/pci/devices/0000:00:00.1/driver"))
		relink(t, root, "/sys/bus/pci/devices/0000:00:00.1/driver", "/sys/bus/pci/drivers/vfio-pci")
		p, _ := os.ReadFile(probe) // lets the probe write through only now
		done <- string(b) + "|" + string(p)
	}()
	r := bindJSON(t, "--root", root, "bind", "0000:00:00.1", "vfio-pci")
	if got := <-done; got != "0000:00:00.1|0000:00:00.1" {
		t.Errorf("kernel saw %q", got)
	}
	if r.Before.Driver != "fsl_enetc" || r.After.Driver != "vfio-pci" || r.After.Override != "vfio-pci" || !r.Changed || r.After.IOMMUGroup != "6" {
		t.Errorf("result %+v", r)
	}
}

func TestBindNoChange(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	out := mustRun(t, "--root", "testdata/ls1028a", "bind", "0000:00:00.0", "vfio-pci")
	for _, want := range []string{"0000:00:00.0: bind to vfio-pci", "before: driver vfio-pci, IOMMU group 5", "after:  driver vfio-pci", "nothing changed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBindKernelAndUnbind(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	root := copyTree(t, "testdata/ls1028a")
	fakeKernel(t, root, "pci", map[string]string{"0000:00:00.0": "fsl_enetc"})
	os.WriteFile(filepath.Join(root, "sys/bus/pci/devices/0000:00:00.0/driver_override"), []byte("vfio-pci\n"), 0o644)

	r := bindJSON(t, "--root", root, "unbind", "0000:00:00.0")
	if r.Before.Driver != "vfio-pci" || r.After.Driver != "" || !r.Changed || !strings.Contains(r.Note, "driver_override is vfio-pci") {
		t.Errorf("unbind: %+v", r)
	}
	r = bindJSON(t, "--root", root, "unbind", "0000:00:00.0")
	if r.Changed || r.Note != "no driver was bound" {
		t.Errorf("unbind again: %+v", r)
	}
	r = bindJSON(t, "--root", root, "bind", "0000:00:00.0", "kernel")
	if r.Before.Override != "vfio-pci" || r.After.Driver != "fsl_enetc" || r.After.Override != "" || !r.Changed {
		t.Errorf("bind kernel: %+v", r)
	}
	// A device no kernel driver claims.
	wantError(t, exitFailed, []string{"--root", root, "bind", "0000:00:01.0", "kernel"}, "0000:00:01.0", "no kernel driver took it", "modprobe")
}

func TestBindErrors(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	ls := []string{"--root", copyTree(t, "testdata/ls1028a")}
	for _, c := range []struct {
		code  int
		args  []string
		parts []string
	}{
		{exitUsage, []string{"bind", "0000:00:00.0"}, []string{"missing arguments", "vfio-pci|uio_pci_generic|kernel"}},
		{exitUsage, []string{"bind", "0000:00:00.0", "igb_uio"}, []string{`"igb_uio"`, "vfio-pci, uio_pci_generic, kernel"}},
		{exitUsage, []string{"bind", "platform:2188000.ethernet", "vfio-pci"}, []string{"vfio-platform, uio_pdrv_genirq, kernel"}},
		{exitUsage, []string{"bind", "sim:enetc0", "vfio-pci"}, []string{"device model", "needs no binding"}},
		{exitUsage, []string{"bind", "uio:/dev/uio0", "kernel"}, []string{"UIO device", "parent"}},
		{exitUsage, []string{"bind", "0000:00:00", "vfio-pci"}, []string{"0000:00:00", "accepted forms"}},
		{exitFailed, []string{"bind", "0000:00:09.0", "vfio-pci"}, []string{"0000:00:09.0", "no such device", "nicctl list"}},
		{exitFailed, []string{"bind", "0000:00:00.6", "uio_pci_generic"}, []string{"0000:00:00.6"}},
		{exitFailed, []string{"bind", "0000:00:01.0", "vfio-pci"}, []string{"0000:00:01.0", "no IOMMU group", "unsafe-noiommu"}},
		{exitUsage, []string{"unbind"}, []string{"missing arguments", "usage: nicctl unbind DEV"}},
	} {
		wantError(t, c.code, append(ls, c.args...), c.parts...)
	}
	// fec has no sysfs unbind: the error says how to free the device.
	wantError(t, exitFailed, []string{"--root", "testdata/imx6ul", "unbind", "platform:2188000.ethernet"},
		"2188000.ethernet", "suppress_bind_attrs", "rmmod fec")
	wantError(t, exitFailed, []string{"--root", copyTree(t, "testdata/imx6ul"), "bind", "platform:2188000.ethernet", "uio_pdrv_genirq"},
		"2188000.ethernet", "rmmod fec")
}

func TestBindPlatform(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	root := copyTree(t, "testdata/imx8mp")
	fakeKernel(t, root, "platform", map[string]string{"30be0000.ethernet": "uio_pdrv_genirq"})
	r := bindJSON(t, "--root", root, "unbind", "platform:30be0000.ethernet")
	if r.Before.Driver != "uio_pdrv_genirq" || r.After.Driver != "" || !r.Changed {
		t.Errorf("unbind from uio_pdrv_genirq: %+v", r)
	}
	// The package binds through driver_override and a probe; the tree has
	// no kernel to answer, as when the module is not loaded.
	wantError(t, exitFailed, []string{"--root", root, "bind", "platform:30be0000.ethernet", "vfio-platform"},
		"30be0000.ethernet", "modprobe vfio-platform")
	// bind kernel: the probe gives the node to the driver its compatible
	// matches (here generic-uio's).
	os.WriteFile(filepath.Join(root, "sys/bus/platform/devices/30be0000.ethernet/driver_override"), []byte("(null)\n"), 0o644)
	r = bindJSON(t, "--root", root, "bind", "platform:30be0000.ethernet", "kernel")
	if r.Before.Driver != "" || r.After.Driver != "uio_pdrv_genirq" {
		t.Errorf("bind kernel: %+v", r)
	}
}

// bindingState records what decides which driver has a device in a tree:
// the driver links and driver_override, and what was written to the
// bind, unbind and probe files.
func bindingState(t *testing.T, root string) map[string]string {
	t.Helper()
	st := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		switch fi.Name() {
		case "driver":
			if fi.Mode()&os.ModeSymlink != 0 {
				l, _ := os.Readlink(p)
				st[p] = l
			}
		case "driver_override", "bind", "unbind", "drivers_probe", "new_id", "remove_id":
			if fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				st[p] = string(b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestNothingRebound runs every command but bind and unbind on every
// device of each fake tree and finds no driver changed and nothing
// written to a bind, unbind or probe file.
func TestNothingRebound(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	for _, tree := range []string{"ls1028a", "imx8mp", "imx6ul"} {
		t.Run(tree, func(t *testing.T) {
			t.Parallel()
			root := copyTree(t, "testdata/"+tree)
			before := bindingState(t, root)
			var specs []string
			for spec := range listJSON(t, "--root", root, "--all") {
				if !strings.HasPrefix(spec, "sim:") {
					specs = append(specs, spec)
				}
			}
			if len(specs) == 0 {
				t.Fatal("no devices listed")
			}
			for _, dev := range specs {
				for _, args := range [][]string{
					{"info", dev}, {"regs", dev}, {"mdio", dev, "read", "0", "1"}, {"phy", dev}, {"link", dev},
					{"stats", dev}, {"rings", dev}, {"selftest", dev, "--loopback", "external"},
					{"pktgen", dev, "--count", "1"}, {"bench", dev, "drop"},
				} {
					nicctl(t, append([]string{"--root", root}, args...)...)
				}
			}
			after := bindingState(t, root)
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s: %q became %q", strings.TrimPrefix(k, root), v, after[k])
				}
			}
			for k, v := range after {
				if _, ok := before[k]; !ok {
					t.Errorf("%s appeared: %q", strings.TrimPrefix(k, root), v)
				}
			}
		})
	}
}

// TestBindWriteErrors: a sysfs write that fails names the file and the
// fix: root for a permission error, the module for a missing file.
func TestBindWriteErrors(t *testing.T) {
	t.Parallel() // a tree of its own, its own sysfs writer (see main_test.go)
	root := copyTree(t, "testdata/ls1028a")
	setWriter(t, func(s pci.Sys, p, v string) error { return &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission} })
	wantError(t, exitFailed, []string{"--root", root, "unbind", "0000:00:00.0"}, "0000:00:00.0", "driver/unbind", "permission denied", "run nicctl as root")
	setWriter(t, sysWrite)
	if err := os.Remove(filepath.Join(root, "sys/bus/pci/drivers/vfio-pci/unbind")); err != nil {
		t.Fatal(err)
	}
	wantError(t, exitFailed, []string{"--root", root, "unbind", "0000:00:00.0"}, "driver/unbind", "does not exist", "module loaded")
	if err := os.Remove(filepath.Join(root, "sys/bus/pci/drivers_probe")); err != nil {
		t.Fatal(err)
	}
	wantError(t, exitFailed, []string{"--root", root, "bind", "0000:00:01.0", "kernel"}, "drivers_probe", "does not exist")
}

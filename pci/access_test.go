package pci

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/testnote"
)

// Both IOMMU mappers tell dma.SameDomain which address space they are.
var (
	_ interface{ Domain() any } = (*Container)(nil)
	_ interface{ Domain() any } = (*IOMMUFD)(nil)
)

func TestMapperDomains(t *testing.T) {
	a, b := &Container{}, &Container{}
	if !dma.SameDomain(a, a) || dma.SameDomain(a, b) || dma.SameDomain(a, &IOMMUFD{}) {
		t.Error("containers: one domain each")
	}
}

// wantErr checks that err matches target (when set) and mentions every
// part: the device and the fix.
func wantErr(t *testing.T, what string, err, target error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("%s: %v is not %v", what, err, target)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %q does not mention %q", what, err, p)
		}
	}
}

// vfioBound puts fake function addr on vfio-pci with its group node.
func vfioBound(tr *tree, addr, group string) {
	tr.link("/sys/devices/pci0000:00/"+addr+"/driver", "/sys/bus/pci/drivers/vfio-pci").
		file("/dev/vfio/"+group, "")
}

// A group whose other function is still on a kernel driver is refused
// before VFIO is touched, naming that function and how to free it.
func TestOpenPCIGroupNotViable(t *testing.T) {
	tr := pciTree(t)
	vfioBound(tr, "0000:00:03.0", "3")
	_, err := tr.sys().OpenPCI(spec(t, "pci:0000:00:03.0"), driver.Config{})
	wantErr(t, "shared group", err, ErrNotViable, "0000:00:03.0", "IOMMU group 3", "0000:00:03.1 (8086:10d3, driver e1000e)", "bind those to vfio-pci")
	if !errors.Is(err, ErrGroupBusy) {
		t.Errorf("%v is not ErrGroupBusy", err)
	}
	// With the other function on vfio-pci too the group is viable and the
	// open goes on to the container.
	if _, err := tr.sys().Bind(MustParseAddress("0000:00:03.1"), DriverVFIO); err != nil {
		t.Fatal(err)
	}
	_, err = tr.sys().OpenPCI(spec(t, "pci:0000:00:03.0"), driver.Config{})
	wantErr(t, "viable group", err, nil, "0000:00:03.0", "/dev/vfio/vfio")
	if errors.Is(err, ErrNotViable) {
		t.Errorf("viable group refused: %v", err)
	}
}

// The interface is chosen from what the fake kernel offers; each choice
// shows in which node the open then fails on (the fake tree has plain
// files where the kernel has character devices).
func TestOpenPCIChoosesInterface(t *testing.T) {
	cases := []struct {
		name  string
		prep  func(*tree)
		spec  string
		parts []string
	}{
		{"type1 without iommufd", func(*tree) {}, "pci:0000:00:01.0", []string{"0000:00:01.0", "/dev/vfio/vfio", "modprobe vfio-pci"}},
		{"iommufd with cdev", func(tr *tree) {
			tr.file("/dev/iommu", "").dir("/sys/devices/pci0000:00/0000:00:01.0/vfio-dev/vfio0").file("/dev/vfio/devices/vfio0", "")
		}, "pci:0000:00:01.0", []string{"0000:00:01.0", "/dev/iommu", "allocate IOAS"}},
		{"iommufd overridden", func(tr *tree) {
			tr.file("/dev/iommu", "").dir("/sys/devices/pci0000:00/0000:00:01.0/vfio-dev/vfio0")
		}, "pci:0000:00:01.0?iommu=type1", []string{"0000:00:01.0", "/dev/vfio/vfio"}},
		{"iommufd asked, no cdev", func(tr *tree) { tr.file("/dev/iommu", "") }, "pci:0000:00:01.0?iommu=iommufd",
			[]string{"0000:00:01.0", "CONFIG_VFIO_DEVICE_CDEV", "iommu=type1"}},
		{"group node missing", func(tr *tree) { tr.remove("/dev/vfio/1") }, "pci:0000:00:01.0",
			[]string{"0000:00:01.0", "no /dev/vfio/1", "devtmpfs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := pciTree(t)
			vfioBound(tr, "0000:00:01.0", "1")
			c.prep(tr)
			_, err := tr.sys().OpenPCI(spec(t, c.spec), driver.Config{})
			wantErr(t, c.name, err, nil, c.parts...)
		})
	}
}

// A node bound to vfio-platform: without an IOMMU group it is refused; a
// no-IOMMU group needs the opt-in; with a group it goes to the container.
func TestOpenVFIOPlatform(t *testing.T) {
	cases := []struct {
		name    string
		prep    func(*tree)
		noIOMMU bool
		target  error
		parts   []string
	}{
		{"no IOMMU group", func(*tree) {}, true, ErrNoIOMMU, []string{enet, "iommus", "UIO"}},
		{"no-IOMMU group without opt-in", func(tr *tree) {
			tr.link(enetDev+"/iommu_group", "/sys/kernel/iommu_groups/0").file("/dev/vfio/noiommu-0", "")
		}, false, ErrNeedsOptIn, []string{enet, "noiommu-0", "unsafe-noiommu=1"}},
		{"group, no container node", func(tr *tree) {
			tr.link(enetDev+"/iommu_group", "/sys/kernel/iommu_groups/5").file("/dev/vfio/5", "")
		}, false, nil, []string{enet, "/dev/vfio/vfio", "modprobe"}},
		{"group without its node", func(tr *tree) {
			tr.link(enetDev+"/iommu_group", "/sys/kernel/iommu_groups/5")
		}, false, nil, []string{enet, "no /dev/vfio/5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := release(imx6ulENET(t))
			tr.dir("/sys/bus/platform/drivers/vfio-platform").link(enetDev+"/driver", "/sys/bus/platform/drivers/vfio-platform")
			c.prep(tr)
			_, err := tr.sys().OpenPlatform(spec(t, "platform:"+enet), driver.Config{UnsafeNoIOMMU: c.noIOMMU})
			wantErr(t, c.name, err, c.target, c.parts...)
		})
	}
}

func TestUnbindAndToKernel(t *testing.T) {
	tr := pciTree(t)
	s := tr.sys()
	nic := MustParseAddress("0000:00:03.1")
	if err := s.Unbind(nic); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Device(nic); d.Driver != "" {
		t.Errorf("after Unbind: driver %q", d.Driver)
	}
	if err := s.Unbind(nic); err != nil {
		t.Errorf("unbinding an unbound device: %v", err)
	}
	// On vfio-pci with driver_override set: back to e1000e, override gone.
	tr.file("/sys/devices/pci0000:00/0000:00:03.1/driver_override", "vfio-pci\n")
	tr.link("/sys/devices/pci0000:00/0000:00:03.1/driver", "/sys/bus/pci/drivers/vfio-pci")
	drv, err := s.ToKernel(nic)
	if err != nil || drv != "e1000e" {
		t.Fatalf("ToKernel: %q %v", drv, err)
	}
	if d, _ := s.Device(nic); d.Driver != "e1000e" || d.Override != "" {
		t.Errorf("after ToKernel: driver %q override %q", d.Driver, d.Override)
	}
	if drv, err := s.ToKernel(nic); err != nil || drv != "e1000e" {
		t.Errorf("ToKernel on a kernel driver: %q %v", drv, err)
	}
	// edu has no kernel driver: the error says so and what to load.
	vfioBound(tr, "0000:00:01.0", "1")
	_, err = s.ToKernel(MustParseAddress("0000:00:01.0"))
	wantErr(t, "no kernel driver", err, ErrWrongDriver, "0000:00:01.0", "modprobe", "drivers_probe")
	wantErr(t, "no device", s.Unbind(MustParseAddress("0000:07:00.0")), ErrNoDevice, "0000:07:00.0", "lspci")
}

// platformKernel makes platform sysfs writes behave like the kernel's;
// home is the driver that probes the ENET when no override says otherwise.
func platformKernel(tr *tree, home string) {
	dev := "/sys/bus/platform/devices/" + enet
	tr.onWrite = func(p, v string) {
		switch {
		case strings.HasSuffix(p, "/unbind"):
			os.Remove(tr.abs(dev + "/driver"))
		case strings.HasSuffix(p, "/drivers_probe"):
			want := home
			if ov, _ := readString(tr.abs(dev + "/driver_override")); ov != "" && ov != "(null)" {
				want = ov
			}
			if fileExists(tr.abs("/sys/bus/platform/drivers/" + want)) {
				tr.link(enetDev+"/driver", "/sys/bus/platform/drivers/"+want)
			}
		case strings.HasSuffix(p, "/driver_override") && strings.TrimSpace(v) == "":
			os.WriteFile(p, []byte("(null)\n"), 0o644)
		}
	}
}

func TestPlatformUnbindAndToKernel(t *testing.T) {
	tr := imx6ulENET(t)
	platformKernel(tr, "fec")
	tr.file("/sys/bus/platform/drivers_probe", "")
	s := tr.sys()
	wantErr(t, "fec", s.UnbindPlatform(enet), ErrWrongDriver, enet, "no sysfs unbind", "driver_override", "rmmod fec")
	// Given to uio_pdrv_genirq (override set), then back to fec.
	withUIO(tr)
	tr.file("/sys/bus/platform/drivers/uio_pdrv_genirq/unbind", "").file(enetDev+"/driver_override", "uio_pdrv_genirq\n")
	drv, err := s.PlatformToKernel(enet)
	if err != nil || drv != "fec" {
		t.Fatalf("PlatformToKernel: %q %v", drv, err)
	}
	if pd, _ := s.Platform(enet); pd.Driver != "fec" || pd.Override != "" {
		t.Errorf("after: driver %q override %q", pd.Driver, pd.Override)
	}
	wantErr(t, "no node", s.UnbindPlatform("nosuch.dev"), ErrNoDevice, "nosuch.dev")
}

func TestListPlatformAndUIO(t *testing.T) {
	tr := newTree(t)
	if us, err := tr.sys().UIODevices(); err != nil || len(us) != 0 {
		t.Errorf("no UIO class: %v %v", us, err)
	}
	tr = withUIO(imx6ulENET(t))
	tr.dir("/sys/devices/platform/serial@2020000").link("/sys/bus/platform/devices/2020000.serial", "/sys/devices/platform/serial@2020000")
	pds, err := tr.sys().PlatformDevices()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pd := range pds {
		names = append(names, pd.Name+"/"+pd.Driver)
	}
	if strings.Join(names, " ") != "2020000.serial/ 2188000.ethernet/uio_pdrv_genirq" {
		t.Errorf("platform devices %v", names)
	}
	if pds[1].UIO[0] != "uio0" || pds[1].Reg[0] != (PhysRange{0x2188000, 0x4000}) {
		t.Errorf("ENET %+v", pds[1])
	}
	// uio10 sorts after uio2.
	for _, n := range []string{"uio10", "uio2"} {
		u := "/sys/devices/virtual/uio/" + n
		tr.file(u+"/name", "x\n").link("/sys/class/uio/"+n, u)
	}
	us, err := tr.sys().UIODevices()
	if err != nil {
		t.Fatal(err)
	}
	var devs []string
	for _, u := range us {
		devs = append(devs, u.Dev)
	}
	if strings.Join(devs, " ") != "/dev/uio0 /dev/uio2 /dev/uio10" || len(us[0].Maps) != 2 || us[0].Parent != enet {
		t.Errorf("UIO devices %v, first %+v", devs, us[0])
	}
}

func TestIOVASpaceRestrict(t *testing.T) {
	s := newIOVASpace([]iovaRange{{0, 1<<32 - 1}}, 1<<64-1)
	a, _ := s.alloc(0x1000, 0x1000) // 0x100000
	// A second group reserves 0x200000-0x2fffff and everything above 4 GiB-1M.
	s.restrict([]iovaRange{{0, 0x1fffff}, {0x300000, 0xffefffff}})
	b, err := s.alloc(0x200000, 0x200000)
	if err != nil || b != 0x400000 {
		t.Errorf("alloc after restrict: %#x %v, want 0x400000", b, err)
	}
	if _, err := s.alloc(0x100000, 0x1000); err != nil {
		t.Error(err)
	}
	s.release(a)
	if c, _ := s.alloc(0x1000, 0x1000); c != a {
		t.Errorf("released IOVA %#x not reused: %#x", a, c)
	}
}

// asUnprivileged runs fn as an ordinary user: as root it drops the
// effective uid to nobody for the duration (the tree's files stay
// root-owned, readable and not writable); otherwise it runs fn as is.
func asUnprivileged(t *testing.T, tr *tree, fn func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		filepath.Walk(tr.root, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				os.Chmod(p, 0o444)
			}
			return nil
		})
		fn()
		return
	}
	for d := tr.root; d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(d, fi.Mode().Perm()|0o755)
		}
		if d == os.TempDir() {
			break
		}
	}
	if err := syscall.Seteuid(65534); err != nil {
		testnote.Skip(t, "the permission-denied checks", "they drop the effective uid to 65534, which failed here ("+err.Error()+"): run them as an ordinary user")
	}
	defer func() {
		if err := syscall.Seteuid(0); err != nil {
			panic("cannot return to uid 0: " + err.Error())
		}
	}()
	fn()
}

// Every way in fails with a permission error that names the device and
// says to run as root.
func TestPermissionDenied(t *testing.T) {
	tr := pciTree(t)
	edu := "/sys/devices/pci0000:00/0000:00:01.0"
	tr.file("/dev/vfio/vfio", "").file("/dev/vfio/2", "").
		link("/sys/devices/pci0000:00/0000:00:02.0/driver", "/sys/bus/pci/drivers/vfio-pci").
		sparse(edu+"/resource0", 1<<20, 0, le32(0x010000ed)).sparse(edu+"/config", 256, 0, []byte{0x34, 0x12})
	pt := imx6ulENET(t)
	release(pt)
	pt.sparse("/dev/mem", 0x2190000, 0x2188024, le32(0xf0000000))
	ut := withUIO(imx6ulENET(t))
	s, ps, us := tr.sys(), pt.sys(), ut.sys()
	var errs []struct {
		what string
		err  error
		dev  string
	}
	add := func(what, dev string, err error) {
		errs = append(errs, struct {
			what string
			err  error
			dev  string
		}{what, err, dev})
	}
	asUnprivileged(t, tr, func() {
		_, err := s.Bind(MustParseAddress("0000:00:01.0"), DriverVFIO)
		add("bind", "0000:00:01.0", err)
		_, err = s.OpenPCI(spec(t, "pci:0000:00:02.0"), driver.Config{})
		add("VFIO container", "0000:00:02.0", err)
	})
	tr.link(edu+"/driver", "/sys/bus/pci/drivers/uio_pci_generic")
	asUnprivileged(t, tr, func() {
		_, err := s.OpenPCI(spec(t, "pci:0000:00:01.0"), driver.Config{UnsafeNoIOMMU: true})
		add("resource0", "0000:00:01.0", err)
	})
	asUnprivileged(t, pt, func() {
		_, err := ps.OpenPlatform(spec(t, "platform:"+enet), driver.Config{UnsafeNoIOMMU: true})
		add("/dev/mem", enet, err)
	})
	asUnprivileged(t, ut, func() {
		_, err := us.OpenUIOBackend(spec(t, "uio:/dev/uio0"), driver.Config{UnsafeNoIOMMU: true})
		add("/dev/uio0", "/dev/uio0", err)
	})
	for _, e := range errs {
		t.Logf("%s: %v", e.what, e.err)
		wantErr(t, e.what, e.err, ErrPermission, e.dev, "run as root")
	}
}

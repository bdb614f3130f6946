package pci

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDeviceAndInventory(t *testing.T) {
	tr := pciTree(t)
	d, err := tr.sys().Device(MustParseAddress("0000:00:01.0"))
	if err != nil {
		t.Fatal(err)
	}
	if d.ID() != "1234:11e8" || d.Class != 0x00ff00 || d.Revision != 0x10 || d.IOMMUGroup != "1" || d.Driver != "" || d.NUMANode != -1 {
		t.Errorf("device %+v", d)
	}
	if len(d.BARs) != 6 || d.BARs[0].Size != 1<<20 || !d.BARs[0].IsMem() || d.BARs[1].Size != 0 {
		t.Errorf("BARs %+v", d.BARs)
	}
	inv, err := tr.sys().Inventory()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range inv {
		got = append(got, d.Address.String()+"="+d.ID()+"/"+d.Driver)
	}
	want := "0000:00:01.0=1234:11e8/ 0000:00:02.0=1af4:1110/ 0000:00:03.0=8086:10d3/e1000e 0000:00:03.1=8086:10d3/e1000e"
	if strings.Join(got, " ") != want {
		t.Errorf("inventory\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	// A pci.ids under the root names devices; nothing is fetched.
	tr.file("/usr/share/hwdata/pci.ids", "1234  QEMU Test Vendor\n\t11e8  Education device\n")
	inv, _ = tr.sys().Inventory()
	if inv[0].VendorName != "QEMU Test Vendor" || inv[0].ProductName != "Education device" {
		t.Errorf("names from pci.ids: %q %q", inv[0].VendorName, inv[0].ProductName)
	}
	if _, err := tr.sys().Device(MustParseAddress("0000:05:00.0")); !errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), "0000:05:00.0") {
		t.Errorf("missing device: %v", err)
	}
}

func TestBind(t *testing.T) {
	cases := []struct {
		name    string
		addr    string
		drv     string
		prep    func(*tree)
		wantErr error
		msg     []string
	}{
		{name: "edu to vfio-pci", addr: "0000:00:01.0", drv: DriverVFIO},
		{name: "edu to uio_pci_generic", addr: "0000:00:01.0", drv: DriverUIO},
		{name: "no such device", addr: "0000:09:00.0", drv: DriverVFIO, wantErr: ErrNoDevice, msg: []string{"0000:09:00.0", "lspci"}},
		{name: "group shared with a kernel driver", addr: "0000:00:03.0", drv: DriverVFIO, wantErr: ErrGroupBusy,
			msg: []string{"0000:00:03.0", "IOMMU group 3", "0000:00:03.1 (8086:10d3, driver e1000e)", "bind those to vfio-pci"}},
		{name: "no IOMMU group", addr: "0000:00:01.0", drv: DriverVFIO, prep: func(tr *tree) {
			tr.remove("/sys/devices/pci0000:00/0000:00:01.0/iommu_group")
		}, wantErr: ErrNoIOMMU, msg: []string{"0000:00:01.0", "intel_iommu=on", "unsafe-noiommu"}},
		{name: "driver not loaded", addr: "0000:00:01.0", drv: DriverVFIO, prep: func(tr *tree) {
			tr.remove("/sys/bus/pci/drivers/vfio-pci")
		}, wantErr: ErrWrongDriver, msg: []string{"0000:00:01.0", "modprobe vfio-pci"}},
		{name: "no drivers_probe", addr: "0000:00:01.0", drv: DriverVFIO, prep: func(tr *tree) {
			tr.remove("/sys/bus/pci/drivers_probe")
		}, msg: []string{"0000:00:01.0 probe", "does not exist"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := pciTree(t)
			if c.prep != nil {
				c.prep(tr)
			}
			s := tr.sys()
			b, err := s.Bind(MustParseAddress(c.addr), c.drv)
			if len(c.msg) > 0 || c.wantErr != nil {
				if err == nil {
					t.Fatal("bound, want an error")
				}
				if c.wantErr != nil && !errors.Is(err, c.wantErr) {
					t.Errorf("error %v is not %v", err, c.wantErr)
				}
				for _, m := range c.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not mention %q", err, m)
					}
				}
				if d, _ := s.Device(MustParseAddress("0000:00:01.0")); d.Override != "" {
					t.Errorf("failed bind left driver_override %q", d.Override)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, _ := s.Device(MustParseAddress(c.addr))
			if d.Driver != c.drv || d.Override != c.drv {
				t.Errorf("after Bind: driver %q override %q", d.Driver, d.Override)
			}
			if err := b.Restore(); err != nil {
				t.Fatal(err)
			}
			d, _ = s.Device(MustParseAddress(c.addr))
			if d.Driver != "" || d.Override != "" {
				t.Errorf("after Restore: driver %q override %q", d.Driver, d.Override)
			}
		})
	}
}

func TestBindRestoresKernelDriver(t *testing.T) {
	tr := pciTree(t,
		pciFn{"0000:01:00.0", "1957:e100", "0x020001", "4", "fsl_enetc", eduResource},
		pciFn{"0000:00:1f.0", "1957:e001", "0x060400", "4", "pcieport", eduResource})
	tr.file("/sys/bus/pci/drivers/fsl_enetc/bind", "").file("/sys/bus/pci/drivers/fsl_enetc/unbind", "")
	s := tr.sys()
	a := MustParseAddress("0000:01:00.0")
	b, err := s.Bind(a, DriverVFIO) // the bridge on pcieport keeps the group viable
	if err != nil {
		t.Fatal(err)
	}
	if b.Original != "fsl_enetc" {
		t.Errorf("original %q", b.Original)
	}
	if err := b.Restore(); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Device(a); d.Driver != "fsl_enetc" || d.Override != "" {
		t.Errorf("restored driver %q override %q", d.Driver, d.Override)
	}
}

func TestBindPlatform(t *testing.T) {
	tr := imx6ulENET(t)
	err := tr.sys().BindPlatform(enet, "uio_pdrv_genirq")
	if !errors.Is(err, ErrWrongDriver) || !strings.Contains(err.Error(), "rmmod fec") || !strings.Contains(err.Error(), enet) {
		t.Fatalf("fec without unbind: %v", err)
	}
	pd, _ := tr.sys().Platform(enet)
	if pd.Override != "uio_pdrv_genirq" {
		t.Errorf("driver_override %q, want it set so fec does not take the device back", pd.Override)
	}
	if err := tr.sys().BindPlatform("nosuch.dev", "vfio-platform"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("missing node: %v", err)
	}
}

// TestSysfsWritesStayInSysfs: a symbolic link planted where a sysfs
// attribute or a device entry should be, and a device name that climbs
// out of /sys, never lead to a write outside /sys.
func TestSysfsWritesStayInSysfs(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "root-only")
	write := func() { os.WriteFile(victim, []byte("precious"), 0o600) }
	check := func(what string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: written, want a refusal", what)
		}
		for _, w := range want {
			if err != nil && !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %q", what, err, w)
			}
		}
		if b, _ := os.ReadFile(victim); string(b) != "precious" {
			t.Fatalf("%s: the file outside sysfs now holds %q", what, b)
		}
	}

	// driver_override replaced by a link to a file elsewhere.
	tr := pciTree(t)
	write()
	dev := "/sys/devices/pci0000:00/0000:00:01.0"
	os.Remove(tr.abs(dev + "/driver_override"))
	os.Symlink(victim, tr.abs(dev+"/driver_override"))
	_, err := tr.sys().Bind(MustParseAddress("0000:00:01.0"), DriverVFIO)
	check("planted driver_override link", err, "0000:00:01.0", "refusing to write", "symbolic link")
	if !errors.Is(err, ErrOutsideSysfs) {
		t.Errorf("planted link: %v is not ErrOutsideSysfs", err)
	}

	// The device's driver link pointed at a directory outside /sys whose
	// unbind is the victim.
	tr = pciTree(t, pciFn{"0000:01:00.0", "1957:e100", "0x020001", "4", "fsl_enetc", eduResource})
	write()
	out := t.TempDir()
	os.Symlink(victim, filepath.Join(out, "unbind"))
	os.Remove(tr.abs("/sys/devices/pci0000:00/0000:01:00.0/driver"))
	os.Symlink(out, tr.abs("/sys/devices/pci0000:00/0000:01:00.0/driver"))
	err = tr.sys().Unbind(MustParseAddress("0000:01:00.0"))
	check("driver link out of sysfs", err, "0000:01:00.0", "outside /sys")

	// A platform name that climbs out of the platform devices directory.
	tr = imx6ulENET(t)
	for _, name := range []string{"../../../../tmp/x", "..", "a/b", "x\n"} {
		err := tr.sys().BindPlatform(name, "vfio-platform")
		check("platform name "+name, err, "give the node name")
		if _, err := tr.sys().PlatformToKernel(name); err == nil {
			t.Errorf("PlatformToKernel(%q) accepted the name", name)
		}
		if err := tr.sys().UnbindPlatform(name); err == nil {
			t.Errorf("UnbindPlatform(%q) accepted the name", name)
		}
	}
}

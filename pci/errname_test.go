package pci

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

// An open that fails anywhere on the way (sysfs, a shared VFIO or iommufd
// node, /dev/mem, a UIO node) names the device the spec named exactly
// once, and the cause.
func TestOpenErrorsNameTheDeviceOnce(t *testing.T) {
	edu := "/sys/devices/pci0000:00/0000:00:01.0"
	uioPCI := func(tr *tree) {
		tr.link(edu+"/driver", "/sys/bus/pci/drivers/uio_pci_generic").
			sparse(edu+"/resource0", 1<<20, 0, le32(0x010000ed)).sparse(edu+"/config", 256, 0, []byte{0x34, 0x12})
	}
	cases := []struct {
		name   string
		tree   func(t *testing.T) *tree
		spec   string
		dev    string
		target error
		cause  string
	}{
		{"no such function", func(t *testing.T) *tree { return pciTree(t) }, "pci:0000:00:09.0", "0000:00:09.0", ErrNoDevice, "lspci"},
		{"no VFIO container", func(t *testing.T) *tree {
			tr := pciTree(t)
			vfioBound(tr, "0000:00:01.0", "1")
			return tr
		}, "pci:0000:00:01.0", "0000:00:01.0", fs.ErrNotExist, "/dev/vfio/vfio"},
		{"iommufd refuses the IOAS", func(t *testing.T) *tree {
			tr := pciTree(t)
			vfioBound(tr, "0000:00:01.0", "1")
			tr.file("/dev/iommu", "").dir(edu+"/vfio-dev/vfio0").file("/dev/vfio/devices/vfio0", "")
			return tr
		}, "pci:0000:00:01.0", "0000:00:01.0", nil, "allocate IOAS"},
		{"uio_pci_generic without resource0", func(t *testing.T) *tree {
			tr := pciTree(t)
			uioPCI(tr)
			return tr.remove(edu + "/resource0")
		}, "pci:0000:00:01.0?unsafe-noiommu=1", "0000:00:01.0", fs.ErrNotExist, "resource0"},
		{"uio_pci_generic without its config", func(t *testing.T) *tree {
			tr := pciTree(t)
			uioPCI(tr)
			return tr.remove(edu + "/config")
		}, "pci:0000:00:01.0?unsafe-noiommu=1", "0000:00:01.0", fs.ErrNotExist, "sysfs config"},
		{"carve-out without /dev/mem", func(t *testing.T) *tree {
			tr := pciTree(t)
			uioPCI(tr)
			return tr
		}, "pci:0000:00:01.0?unsafe-noiommu=1&dma-carveout=0x9f000000+16M", "0000:00:01.0", fs.ErrNotExist, "dma-carveout: open"},
		{"vfio-platform without a container", func(t *testing.T) *tree {
			tr := release(imx6ulENET(t))
			tr.dir("/sys/bus/platform/drivers/vfio-platform").link(enetDev+"/driver", "/sys/bus/platform/drivers/vfio-platform").
				link(enetDev+"/iommu_group", "/sys/kernel/iommu_groups/5").file("/dev/vfio/5", "")
			return tr
		}, "platform:" + enet, enet, fs.ErrNotExist, "/dev/vfio/vfio"},
		{"/dev/mem window without /dev/mem", func(t *testing.T) *tree { return release(imx6ulENET(t)) },
			"platform:" + enet + "?unsafe-noiommu=1", enet, fs.ErrNotExist, "reg0: open"},
		{"UIO node missing", func(t *testing.T) *tree { return withUIO(imx6ulENET(t)).remove("/dev/uio0") },
			"platform:" + enet + "?unsafe-noiommu=1", enet, fs.ErrNotExist, "/dev/uio0: open"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.tree(t).sys()
			sp := spec(t, c.spec)
			cfg := driver.Config{UnsafeNoIOMMU: sp.Options.Get("unsafe-noiommu") == "1"}
			var err error
			if strings.HasPrefix(c.spec, "pci:") {
				_, err = s.OpenPCI(sp, cfg)
			} else {
				_, err = s.OpenPlatform(sp, cfg)
			}
			if err == nil {
				t.Fatal("opened, want an error")
			}
			if n := strings.Count(err.Error(), c.dev); n != 1 {
				t.Errorf("%q names %s %d times, want once", err, c.dev, n)
			}
			var de *DeviceError
			if !errors.As(err, &de) || de.Device != c.dev {
				t.Errorf("%q: the outer DeviceError is not about %s", err, c.dev)
			}
			if c.target != nil && !errors.Is(err, c.target) {
				t.Errorf("%q is not %v", err, c.target)
			}
			if !strings.Contains(err.Error(), c.cause) {
				t.Errorf("%q does not name the cause %q", err, c.cause)
			}
		})
	}
}

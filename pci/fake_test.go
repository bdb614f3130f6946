package pci

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

// tree builds a fake root (sysfs, device tree, /dev) in a temporary
// directory: the kernel's files as plain files, its symlinks as relative
// symlinks, as sysfs has them.
type tree struct {
	t       *testing.T
	root    string
	onWrite func(path, value string) // the fake kernel, if any
}

func newTree(t *testing.T) *tree {
	t.Helper()
	return &tree{t: t, root: t.TempDir()}
}

func (tr *tree) sys() Sys {
	return Sys{Root: tr.root, kernel: func(p, v string) {
		if tr.onWrite != nil {
			tr.onWrite(p, v)
		}
	}}
}

func (tr *tree) abs(p string) string { return filepath.Join(tr.root, p) }

func (tr *tree) file(p string, content string) *tree {
	tr.t.Helper()
	a := tr.abs(p)
	if err := os.MkdirAll(filepath.Dir(a), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(a, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
	return tr
}

func (tr *tree) dir(p string) *tree {
	tr.t.Helper()
	if err := os.MkdirAll(tr.abs(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	return tr
}

// link makes p a symlink to target (both absolute inside the tree), written
// relative as sysfs does.
func (tr *tree) link(p, target string) *tree {
	tr.t.Helper()
	a := tr.abs(p)
	if err := os.MkdirAll(filepath.Dir(a), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(a))
	if err != nil {
		tr.t.Fatal(err)
	}
	a = filepath.Join(dir, filepath.Base(a))
	root, _ := filepath.EvalSymlinks(tr.root)
	rel, err := filepath.Rel(dir, filepath.Join(root, target))
	if err != nil {
		tr.t.Fatal(err)
	}
	os.Remove(a)
	if err := os.Symlink(rel, a); err != nil {
		tr.t.Fatal(err)
	}
	return tr
}

func (tr *tree) remove(p string) *tree {
	tr.t.Helper()
	if err := os.RemoveAll(tr.abs(p)); err != nil {
		tr.t.Fatal(err)
	}
	return tr
}

// sparse makes p a sparse file of size bytes with data written at off: a
// stand-in for /dev/mem or /dev/uioN that mmap accepts.
func (tr *tree) sparse(p string, size int64, off int64, data []byte) *tree {
	tr.t.Helper()
	a := tr.abs(p)
	os.MkdirAll(filepath.Dir(a), 0o755)
	f, err := os.OpenFile(a, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		tr.t.Fatal(err)
	}
	defer f.Close()
	if st, _ := f.Stat(); st.Size() < size {
		if err := f.Truncate(size); err != nil {
			tr.t.Fatal(err)
		}
	}
	if _, err := f.WriteAt(data, off); err != nil {
		tr.t.Fatal(err)
	}
	return tr
}

func be32(v ...uint32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.BigEndian.PutUint32(b[4*i:], x)
	}
	return string(b)
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

const (
	dtBase  = "/sys/firmware/devicetree/base"
	enetDT  = dtBase + "/soc/bus@2100000/ethernet@2188000"
	enetDev = "/sys/devices/platform/soc/2100000.bus/2188000.ethernet"
	enet    = "2188000.ethernet"
)

// imx6ulENET is an i.MX6UL ENET1 as the Debian armmp kernel shows it, bound
// to fec (which has no sysfs unbind).
func imx6ulENET(t *testing.T) *tree {
	tr := newTree(t)
	tr.file(dtBase+"/#address-cells", be32(1)).file(dtBase+"/#size-cells", be32(1)).
		file(dtBase+"/soc/#address-cells", be32(1)).file(dtBase+"/soc/#size-cells", be32(1)).
		file(dtBase+"/soc/ranges", "").
		file(dtBase+"/soc/bus@2100000/#address-cells", be32(1)).file(dtBase+"/soc/bus@2100000/#size-cells", be32(1)).
		file(dtBase+"/soc/bus@2100000/ranges", be32(0x2100000, 0x2100000, 0x100000)).
		file(enetDT+"/compatible", "fsl,imx6ul-fec\x00fsl,imx6q-fec\x00").
		file(enetDT+"/reg", be32(0x2188000, 0x4000)).
		file(enetDev+"/driver_override", "(null)\n").
		link(enetDev+"/of_node", enetDT).
		link(enetDev+"/subsystem", "/sys/bus/platform").
		dir("/sys/bus/platform/drivers/fec").
		link(enetDev+"/driver", "/sys/bus/platform/drivers/fec").
		link("/sys/bus/platform/devices/"+enet, enetDev)
	return tr
}

// release makes the ENET unbound (after driver_override + rmmod fec).
func release(tr *tree) *tree {
	return tr.remove(enetDev+"/driver").file(enetDev+"/driver_override", "gopmd\n")
}

// withUIO binds the ENET to uio_pdrv_genirq as uio0 with two maps: map0 the
// registers (offset 0), map1 a small window at offset 0x100 in its page.
func withUIO(tr *tree) *tree {
	release(tr)
	u := "/sys/devices/platform/soc/2100000.bus/2188000.ethernet/uio/uio0"
	tr.dir("/sys/bus/platform/drivers/uio_pdrv_genirq").
		link(enetDev+"/driver", "/sys/bus/platform/drivers/uio_pdrv_genirq").
		file(u+"/name", "2188000.ethernet\n").file(u+"/version", "devicetree\n").
		file(u+"/maps/map0/name", "ethernet@2188000\n").file(u+"/maps/map0/addr", "0x02188000\n").
		file(u+"/maps/map0/size", "0x00004000\n").file(u+"/maps/map0/offset", "0x0\n").
		file(u+"/maps/map1/addr", "0x0218c000\n").file(u+"/maps/map1/size", "0x00000100\n").
		file(u+"/maps/map1/offset", "0x100\n").
		link(u+"/device", enetDev).
		link("/sys/class/uio/uio0", u)
	ps := int64(os.Getpagesize())
	tr.sparse("/dev/uio0", 2*ps, 0x24, le32(0xf0000000)). // map0: ECR reset value
								sparse("/dev/uio0", 2*ps, ps+0x100, le32(0x12345678)) // map1 at its offset
	return tr
}

func readFileBytes(p string) ([]byte, error) { return os.ReadFile(p) }

// The fake trees' NICs are claimed by a stand-in for the enetc and fec
// drivers (which pci cannot import), so open errors about them suggest
// binding, as they would in a program that links those drivers.
func init() {
	driver.RegisterDriver(driver.Driver{Name: "fake-nic",
		Match: func(d *driver.Device) bool {
			if d.Bus == "pci" {
				return d.VendorID == 0x1957 && (d.DeviceID == 0xe100 || d.DeviceID == 0xef00)
			}
			for _, c := range d.Compatible {
				if strings.HasPrefix(c, "fsl,") && strings.HasSuffix(c, "-fec") {
					return true
				}
			}
			return false
		},
		New: func(d *driver.Device, cfg driver.Config) (driver.Port, error) {
			return nil, errors.New("fake-nic brings up no port")
		}})
}

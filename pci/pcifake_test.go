package pci

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pciFn describes one fake PCI function.
type pciFn struct {
	addr, id, class string // "0000:00:01.0", "1234:11e8", "0x00ff00"
	group, driver   string
	resource        string
}

const eduResource = "0x00000000fea00000 0x00000000feafffff 0x0000000000040200\n" +
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"

// pciTree is the x86 rig's guest seen through sysfs (edu alone in group 1),
// plus a two-function card sharing group 3 with a function on e1000e, and
// a fake kernel that binds and unbinds on sysfs writes.
func pciTree(t *testing.T, fns ...pciFn) *tree {
	tr := newTree(t)
	if fns == nil {
		fns = []pciFn{
			{"0000:00:01.0", "1234:11e8", "0x00ff00", "1", "", eduResource},
			{"0000:00:02.0", "1af4:1110", "0x050000", "2", "", eduResource},
			{"0000:00:03.0", "8086:10d3", "0x020000", "3", "e1000e", eduResource},
			{"0000:00:03.1", "8086:10d3", "0x020000", "3", "e1000e", eduResource},
		}
	}
	for _, d := range []string{"vfio-pci", "uio_pci_generic", "e1000e", "pcieport"} {
		tr.file("/sys/bus/pci/drivers/"+d+"/bind", "").file("/sys/bus/pci/drivers/"+d+"/unbind", "")
	}
	tr.file("/sys/bus/pci/drivers_probe", "")
	home := map[string]string{}
	for _, f := range fns {
		dev := "/sys/devices/pci0000:00/" + f.addr
		v, d, _ := strings.Cut(f.id, ":")
		tr.file(dev+"/vendor", "0x"+v+"\n").file(dev+"/device", "0x"+d+"\n").
			file(dev+"/subsystem_vendor", "0x1af4\n").file(dev+"/subsystem_device", "0x1100\n").
			file(dev+"/class", f.class+"\n").file(dev+"/revision", "0x10\n").
			file(dev+"/driver_override", "(null)\n").file(dev+"/numa_node", "-1\n").
			file(dev+"/resource", f.resource).
			file(dev+"/modalias", fmt.Sprintf("pci:v0000%sd0000%ssv00001AF4sd00001100bc%ssc%si%s",
				strings.ToUpper(v), strings.ToUpper(d), f.class[2:4], f.class[4:6], f.class[6:8])).
			link("/sys/bus/pci/devices/"+f.addr, dev)
		if f.group != "" {
			g := "/sys/kernel/iommu_groups/" + f.group
			tr.dir(g+"/devices").link(dev+"/iommu_group", g).link(g+"/devices/"+f.addr, dev)
		}
		if f.driver != "" {
			tr.link(dev+"/driver", "/sys/bus/pci/drivers/"+f.driver)
			home[f.addr] = f.driver
		}
	}
	tr.kernelPCI(home)
	return tr
}

// kernelPCI makes writes to unbind, bind and drivers_probe behave like the
// kernel's: the device's driver link changes.
func (tr *tree) kernelPCI(home map[string]string) {
	tr.onWrite = func(p, v string) {
		addr := strings.TrimSpace(v)
		dev := "/sys/bus/pci/devices/" + addr
		switch {
		case strings.HasSuffix(p, "/unbind"):
			os.Remove(tr.abs(dev + "/driver"))
		case strings.HasSuffix(p, "/bind"):
			tr.link(dev+"/driver", "/sys/bus/pci/drivers/"+filepath.Base(filepath.Dir(p)))
		case strings.HasSuffix(p, "/drivers_probe"):
			if _, err := os.Lstat(tr.abs(dev + "/driver")); err == nil {
				return
			}
			want := home[addr]
			if ov, _ := readString(tr.abs(dev + "/driver_override")); ov != "" && ov != "(null)" {
				want = ov
			}
			if want != "" && fileExists(tr.abs("/sys/bus/pci/drivers/"+want)) {
				tr.link(dev+"/driver", "/sys/bus/pci/drivers/"+want)
			}
		case strings.HasSuffix(p, "/driver_override"):
			if v == "\n" || v == "" {
				os.WriteFile(p, []byte("(null)\n"), 0o644)
			}
		}
	}
}

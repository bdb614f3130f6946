package pci

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci/internal/vfio"
)

func TestChooseAccess(t *testing.T) {
	vfioT1 := accessFacts{driver: DriverVFIO, group: "1", groupNode: true}
	withFD := vfioT1
	withFD.iommufd, withFD.cdev = true, true
	fdNoCdev := vfioT1
	fdNoCdev.iommufd = true
	noiommu := accessFacts{driver: DriverVFIO, group: "0", noIOMMUNode: true}
	cases := []struct {
		name   string
		f      accessFacts
		opt    string
		unsafe bool
		want   Access
		err    error
		msg    string
	}{
		{"type1 by default", vfioT1, "", false, AccessType1, nil, ""},
		{"iommufd preferred when present", withFD, "", false, AccessIOMMUFD, nil, ""},
		{"iommufd overridden", withFD, "type1", false, AccessType1, nil, ""},
		{"iommufd without cdev falls back", fdNoCdev, "auto", false, AccessType1, nil, ""},
		{"iommufd asked, not there", vfioT1, "iommufd", false, "", nil, "CONFIG_IOMMUFD"},
		{"bad option", vfioT1, "smmu", false, "", nil, `option iommu="smmu": unknown IOMMU interface (accepted: auto, type1 or iommufd)`},
		{"noiommu group without opt-in", noiommu, "", false, "", ErrNeedsOptIn, "unsafe-noiommu=1"},
		{"noiommu group with opt-in", noiommu, "", true, AccessNoIOMMU, nil, ""},
		{"no IOMMU at all", accessFacts{driver: DriverVFIO}, "", true, "", ErrNoIOMMU, "intel_iommu=on"},
		{"uio without opt-in", accessFacts{driver: DriverUIO}, "", false, "", ErrNeedsOptIn, "uio_pci_generic"},
		{"uio with opt-in", accessFacts{driver: DriverUIO}, "", true, AccessUIO, nil, ""},
		{"uio but type1 asked", accessFacts{driver: DriverUIO}, "type1", true, "", ErrWrongDriver, "bind it to vfio-pci"},
		{"unbound", accessFacts{group: "1", claimed: true}, "", false, "", ErrWrongDriver, "nicctl bind 0000:01:00.0 vfio-pci"},
		{"kernel driver", accessFacts{driver: "fsl_enetc", group: "1", claimed: true}, "", true, "", ErrWrongDriver, "nicctl bind 0000:01:00.0 vfio-pci"},
		// No bind hint for what no gopmd driver can drive.
		{"unbound, not claimed", accessFacts{group: "1", id: "8086:1237"}, "", false, "", ErrWrongDriver, "no gopmd driver claims PCI ID 8086:1237"},
		{"kernel driver, not claimed", accessFacts{driver: "virtio-pci", group: "1", id: "1af4:1042"}, "", true, "", ErrWrongDriver, "leave this device to virtio-pci"},
	}
	for _, c := range cases {
		got, err := chooseAccess("0000:01:00.0", c.f, c.opt, c.unsafe)
		if c.want != "" {
			if err != nil || got != c.want {
				t.Errorf("%s: %q %v, want %q", c.name, got, err, c.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: chose %q, want an error", c.name, got)
			continue
		}
		if c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("%s: %v is not %v", c.name, err, c.err)
		}
		if !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "0000:01:00.0") {
			t.Errorf("%s: %q lacks %q or the device", c.name, err, c.msg)
		}
		if c.f.driver != DriverUIO && c.f.driver != DriverVFIO && !c.f.claimed && strings.Contains(err.Error(), "nicctl bind") {
			t.Errorf("%s: %q suggests binding a device no gopmd driver claims", c.name, err)
		}
	}
}

func putCap(buf []byte, off int, id uint16, next uint32) {
	binary.NativeEndian.PutUint16(buf[off:], id)
	binary.NativeEndian.PutUint16(buf[off+2:], 1)
	binary.NativeEndian.PutUint32(buf[off+4:], next)
}

func TestParseRegionInfoSparse(t *testing.T) {
	// A 64 KiB BAR whose MSI-X table (0x8000-0x8fff) may not be mmapped:
	// a TYPE capability first, then SPARSE_MMAP with two areas.
	buf := make([]byte, 32+16+16+2*16)
	ri := (*vfio.RegionInfo)(unsafe.Pointer(&buf[0]))
	*ri = vfio.RegionInfo{Argsz: uint32(len(buf)), Flags: vfio.RegionInfoFlagRead | vfio.RegionInfoFlagWrite | vfio.RegionInfoFlagMmap | vfio.RegionInfoFlagCaps,
		Index: 2, CapOffset: 32, Size: 0x10000, Offset: 2 << 40}
	putCap(buf, 32, vfio.RegionInfoCapType, 48)
	putCap(buf, 48, vfio.RegionInfoCapSparseMmap, 0)
	binary.NativeEndian.PutUint32(buf[56:], 2)
	for i, a := range [][2]uint64{{0, 0x8000}, {0x9000, 0x7000}} {
		binary.NativeEndian.PutUint64(buf[64+16*i:], a[0])
		binary.NativeEndian.PutUint64(buf[72+16*i:], a[1])
	}
	r, err := parseRegionInfo(buf)
	if err != nil {
		t.Fatal(err)
	}
	if r.Index != 2 || r.Size != 0x10000 || r.Offset != 2<<40 || !r.Mappable() || len(r.Sparse) != 2 || r.Sparse[1].Offset != 0x9000 {
		t.Errorf("region %+v", r)
	}
	io := &regionIO{areas: r.Sparse}
	if !io.mapped(0x7ffc, 4) || io.mapped(0x8000, 4) || io.mapped(0x7ffc, 8) || !io.mapped(0xfffc, 4) {
		t.Error("sparse area test")
	}
	// An area past the region end is refused; a chain out of bounds too.
	binary.NativeEndian.PutUint64(buf[80:], 0xf000)
	if _, err := parseRegionInfo(buf); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("bad area: %v", err)
	}
	putCap(buf, 32, vfio.RegionInfoCapType, 4000)
	if _, err := parseRegionInfo(buf); err == nil || !strings.Contains(err.Error(), "0xfa0") {
		t.Errorf("bad chain: %v", err)
	}
}

func TestParseIOMMUInfo(t *testing.T) {
	// What VT-d reports: 4K/2M/1G pages, IOVA ranges around the MSI window.
	buf := make([]byte, 24+16+2*16)
	h := (*vfio.IOMMUType1Info)(unsafe.Pointer(&buf[0]))
	*h = vfio.IOMMUType1Info{Argsz: uint32(len(buf)), Flags: vfio.IOMMUInfoPgsizes | vfio.IOMMUInfoCaps, IOVAPgsizes: 0x40201000, CapOffset: 24}
	putCap(buf, 24, vfio.IOMMUType1InfoCapIOVARange, 0)
	binary.NativeEndian.PutUint32(buf[32:], 2)
	for i, r := range [][2]uint64{{0, 0xfedfffff}, {0xfef00000, 0x7fffffffff}} {
		binary.NativeEndian.PutUint64(buf[40+16*i:], r[0])
		binary.NativeEndian.PutUint64(buf[48+16*i:], r[1])
	}
	pg, rs, err := parseIOMMUInfo(buf)
	if err != nil || pg != 0x40201000 || len(rs) != 2 || rs[1].Start != 0xfef00000 || rs[1].End != 0x7fffffffff {
		t.Errorf("pg %#x ranges %v err %v", pg, rs, err)
	}
	binary.NativeEndian.PutUint32(buf[32:], 9)
	if _, _, err := parseIOMMUInfo(buf); err == nil {
		t.Error("9 ranges in a 2-range buffer accepted")
	}
}

func TestIRQSetLayout(t *testing.T) {
	b := irqSetBuf(vfio.PCIMSIXIRQIndex, 3, []int32{7, -1}, vfio.IRQSetDataEventfd|vfio.IRQSetActionTrigger)
	want := []uint32{28, 0x24, 2, 3, 2, 7, 0xffffffff}
	for i, w := range want {
		if got := binary.NativeEndian.Uint32(b[4*i:]); got != w {
			t.Errorf("word %d = %#x, want %#x", i, got, w)
		}
	}
}

func TestOpenContainerErrors(t *testing.T) {
	tr := newTree(t)
	_, err := tr.sys().OpenContainer(false)
	if err == nil || !strings.Contains(err.Error(), "/dev/vfio/vfio") || !strings.Contains(err.Error(), "modprobe vfio-pci") {
		t.Errorf("no container node: %v", err)
	}
	tr.file("/dev/vfio/vfio", "") // a plain file answers ioctls with ENOTTY
	if _, err := tr.sys().OpenContainer(false); err == nil || !strings.Contains(err.Error(), "API version") {
		t.Errorf("not VFIO: %v", err)
	}
	if _, err := tr.sys().OpenIOMMUFD(); err == nil || !strings.Contains(err.Error(), "CONFIG_IOMMUFD") {
		t.Errorf("no iommufd: %v", err)
	}
}

func TestOpenPCIUIO(t *testing.T) {
	tr := pciTree(t)
	edu := "/sys/devices/pci0000:00/0000:00:01.0"
	tr.sparse(edu+"/resource0", 1<<20, 0, le32(0x010000ed)).
		sparse(edu+"/config", 256, 0, []byte{0x34, 0x12, 0xe8, 0x11, 0x03, 0x01}).
		dir("/sys/bus/pci/drivers/uio_pci_generic").
		link(edu+"/driver", "/sys/bus/pci/drivers/uio_pci_generic")
	s := tr.sys()
	if _, err := s.OpenPCI(spec(t, "pci:0000:00:01.0"), driver.Config{}); !errors.Is(err, ErrNeedsOptIn) {
		t.Fatalf("no opt-in: %v", err)
	}
	d, err := s.OpenPCI(spec(t, "pci:0000:00:01.0"), driver.Config{UnsafeNoIOMMU: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if d.Backend != "uio" || d.VendorID != 0x1234 || d.DeviceID != 0x11e8 || d.Regions[0] == nil || d.Regions[1] != nil {
		t.Fatalf("device %+v", d)
	}
	if id := d.Regions[0].Read32(0); id != 0x010000ed || d.Regions[0].Size() != 1<<20 {
		t.Errorf("BAR0 id %#x size %#x", id, d.Regions[0].Size())
	}
	cfg, _ := readFileBytes(tr.abs(edu + "/config"))
	if cmd := binary.LittleEndian.Uint16(cfg[4:]); cmd != 0x0107 {
		t.Errorf("command register %#04x, want 0x0107 (bus master set)", cmd)
	}
	// Unbound and on a kernel driver: refused; edu is no NIC gopmd
	// drives, so no bind command is suggested.
	tr.remove(edu + "/driver")
	if _, err := s.OpenPCI(spec(t, "pci:0000:00:01.0"), driver.Config{}); !errors.Is(err, ErrWrongDriver) ||
		!strings.Contains(err.Error(), "no gopmd driver claims PCI ID 1234:11e8") || strings.Contains(err.Error(), "nicctl bind") {
		t.Errorf("unbound: %v", err)
	}
	if _, err := s.OpenPCI(spec(t, "pci:0000:00:03.1"), driver.Config{}); !errors.Is(err, ErrWrongDriver) || !strings.Contains(err.Error(), "e1000e") {
		t.Errorf("e1000e: %v", err)
	}
}

// A sparse region's hole (an MSI-X table) is reached through the device fd,
// never through the inaccessible reservation.
func TestWindowSparseHole(t *testing.T) {
	mem := guardedPage(t)                      // page 0 mapped; page 1 PROT_NONE
	whole := unsafe.Slice(&mem[0], 2*len(mem)) // the reserved region: area + hole
	f, err := os.CreateTemp(t.TempDir(), "region")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(le32(0xabcd0123), int64(len(mem))+8)
	w := NewWindow("0000:00:00.0 BAR2", whole)
	w.io = &regionIO{fd: int(f.Fd()), areas: []vfio.RegionSparseMmapArea{{Offset: 0, Size: uint64(len(mem))}}}
	w.Write32(0, 5)
	if mem[0] != 5 {
		t.Error("store to the mapped area did not reach memory")
	}
	if v := w.Read32(uint32(len(mem)) + 8); v != 0xabcd0123 {
		t.Errorf("hole read %#x", v)
	}
	w.Write32(uint32(len(mem))+12, 0x55aa55aa)
	var b [4]byte
	f.ReadAt(b[:], int64(len(mem))+12)
	if binary.LittleEndian.Uint32(b[:]) != 0x55aa55aa {
		t.Errorf("hole write landed as % x", b)
	}
	if err := w.WriteBytes(uint32(len(mem))+16, []byte("msix")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if err := w.ReadBytes(uint32(len(mem))+16, got); err != nil || string(got) != "msix" {
		t.Errorf("hole bytes %q %v", got, err)
	}
}

// TestBackendOptionErrorsAreTyped: a bad backend option is a
// *driver.OptionError inside the device error.
func TestBackendOptionErrorsAreTyped(t *testing.T) {
	_, err := chooseAccess("0000:01:00.0", accessFacts{driver: DriverVFIO, group: "1", groupNode: true}, "smmu", false)
	var oe *driver.OptionError
	if !errors.As(err, &oe) || oe.Option != "iommu" || oe.Value != "smmu" || oe.Accepted != "auto, type1 or iommufd" {
		t.Fatalf("iommu=smmu: %#v", err)
	}
	s := Sys{Root: t.TempDir()}
	_, err = s.noIOMMUMapper("x", map[string][]string{"dma-carveout": {"lots"}}, nil, &releaser{})
	if !errors.As(err, &oe) || oe.Option != "dma-carveout" || !strings.Contains(err.Error(), "ADDR+SIZE") {
		t.Fatalf("dma-carveout=lots: %v", err)
	}
}

package fec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/internal/devtree"
)

// TestMIIIoctlABI pins struct ifreq with struct mii_ioctl_data in its
// union and the ioctl numbers to the kernel's (linux/if.h, linux/mii.h,
// linux/sockios.h): the name at 0 (IFNAMSIZ 16), then u16 phy_id,
// reg_num, val_in, val_out at 16, 18, 20, 22, and room for the 40-byte
// struct ifreq of 64-bit kernels.
func TestMIIIoctlABI(t *testing.T) {
	t.Parallel()
	var r miiIfreq
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"IFNAMSIZ", unsafe.Sizeof(r.Name), 16},
		{"phy_id", unsafe.Offsetof(r.PhyID), 16},
		{"reg_num", unsafe.Offsetof(r.RegNum), 18},
		{"val_in", unsafe.Offsetof(r.ValIn), 20},
		{"val_out", unsafe.Offsetof(r.ValOut), 22},
		{"sizeof(struct ifreq) on 64-bit", unsafe.Sizeof(r), 40},
		{"SIOCGMIIPHY", siocGMIIPHY, 0x8947},
		{"SIOCGMIIREG", siocGMIIREG, 0x8948},
		{"SIOCSMIIREG", siocSMIIREG, 0x8949},
		{"SIOCGMIIPHY (x/sys/unix)", siocGMIIPHY, unix.SIOCGMIIPHY},
		{"SIOCGMIIREG (x/sys/unix)", siocGMIIREG, unix.SIOCGMIIREG},
		{"SIOCSMIIREG (x/sys/unix)", siocSMIIREG, unix.SIOCSMIIREG},
	} {
		if c.got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

// fakeKernel plays the kernel's fec owning ENET2 as eth1: its MII ioctls
// run on the bus of ENET2's MAC (here a port of the test with no
// device-tree node, so it is not a bus the process shares), and it
// records every call.
type fakeKernel struct {
	mu    sync.Mutex
	bus   *Port // ENET2's MAC, as the kernel drives it
	down  bool  // the interface is down: the kernel answers EINVAL
	calls []string
}

func (k *fakeKernel) note(s string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, s)
	if k.down {
		return unix.EINVAL
	}
	return nil
}

func (k *fakeKernel) MIIPHY(ifname string) (int, error) {
	if err := k.note("SIOCGMIIPHY " + ifname); err != nil {
		return 0, err
	}
	return 1, nil // ENET2's own PHY
}

func (k *fakeKernel) MIIRead(ifname string, phy, reg int) (uint16, error) {
	if err := k.note(fmt.Sprintf("SIOCGMIIREG %s %d", ifname, phy)); err != nil {
		return 0, err
	}
	return k.bus.MDIORead(phy, reg)
}

func (k *fakeKernel) MIIWrite(ifname string, phy, reg int, v uint16) error {
	if err := k.note(fmt.Sprintf("SIOCSMIIREG %s %d", ifname, phy)); err != nil {
		return err
	}
	return k.bus.MDIOWrite(phy, reg, v)
}

func (k *fakeKernel) count(prefix string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, c := range k.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// kernelDT writes an i.MX6UL-EVK tree (ENET1's PHY at 2 on ENET2's bus)
// and the sysfs around it: ENET2's platform device with of_node, driver
// drv and, when ifname is not "", its network interface. It returns
// ENET1's node.
func kernelDT(t *testing.T, drv, ifname string) string {
	t.Helper()
	sys := filepath.Join(t.TempDir(), "sys")
	base := filepath.Join(sys, "firmware/devicetree/base")
	enet1 := filepath.Join(base, "soc/bus@2000000/ethernet@2188000")
	enet2 := filepath.Join(base, "soc/bus@2000000/ethernet@20b4000")
	phy := filepath.Join(enet2, "mdio/ethernet-phy@2")
	cell := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	dev := filepath.Join(sys, "devices/platform/soc/2000000.bus/20b4000.ethernet")
	for p, b := range map[string][]byte{
		filepath.Join(enet1, "phy-handle"): cell(0x10),
		filepath.Join(phy, "reg"):          cell(2),
		filepath.Join(phy, "phandle"):      cell(0x10),
		filepath.Join(dev, "uevent"):       nil,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(sys, "bus/platform/devices/20b4000.ethernet"): dev,
		filepath.Join(dev, "of_node"):                               enet2,
	}
	if drv != "" {
		links[filepath.Join(dev, "driver")] = filepath.Join(sys, "bus/platform/drivers", drv)
	}
	for l, target := range links {
		if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	if ifname != "" {
		if err := os.MkdirAll(filepath.Join(dev, "net", ifname), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return enet1
}

// TestSharedMDIOKernelIoctl: when the kernel's fec owns ENET2 (eth1),
// ENET1 reaches its PHY on ENET2's bus through eth1's MII ioctls, never
// through ENET2's registers: its link follows its PHY and frames pass;
// MDIOPath names eth1. An interface that is down (the kernel answers
// EINVAL) is refused at open naming "ip link set eth1 up"; ENET2 bound to
// another driver without an interface is refused naming the ways out.
func TestSharedMDIOKernelIoctl(t *testing.T) {
	m2, err := model.New(model.Config{Name: "enet2", SoC: "imx6ul", PHYAddr: 1, LinkSpeed: 100})
	if err != nil {
		t.Fatal(err)
	}
	m1, err := model.New(model.Config{Name: "enet1", SoC: "imx6ul", PHYAddr: 2, PHYBus: m2, LinkSpeed: 10})
	if err != nil {
		t.Fatal(err)
	}
	open := func(name string, m *model.Device, of string, opts ...string) (*Port, error) {
		spec, err := driver.ParseSpec("platform:" + name + "?link-poll=0" + strings.Join(opts, ""))
		if err != nil {
			t.Fatal(err)
		}
		return New(&driver.Device{Spec: spec, Backend: "sim", Bus: "platform", Compatible: []string{"fsl,imx6ul-fec"},
			Regions: []driver.Regs{m}, Mapper: m.IOMMU(), NonCoherent: true, Node: devtree.At(of)},
			driver.Config{RxRingSize: 16, TxRingSize: 16, PoolSize: 64})
	}
	kbus, err := open("20b4000.ethernet", m2, "", "&phy=1") // the kernel's ENET2
	if err != nil {
		t.Fatal(err)
	}
	defer kbus.Close()
	k := &fakeKernel{bus: kbus}
	old := kernelMII
	kernelMII = k
	defer func() { kernelMII = old }()

	p, err := open("2188000.ethernet", m1, kernelDT(t, "fec", "eth1"))
	if err != nil {
		t.Fatalf("ENET1 with the kernel owning ENET2 as eth1: %v", err)
	}
	defer p.Close()
	if mp := p.MDIOPath(); mp.Kind != "kernel" || mp.Interface != "eth1" || !strings.Contains(mp.String(), "SIOCGMIIREG") {
		t.Fatalf("MDIO path %+v (%s)", mp, mp)
	}
	if k.count("SIOCGMIIPHY eth1") != 1 {
		t.Fatalf("calls %v: want one SIOCGMIIPHY probe on eth1", k.calls)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if l := p.Link(); !l.Up || l.SpeedMbps != 10 || p.PHYAddr() != 2 {
		t.Fatalf("ENET1 link %v PHY %d, want its PHY at 2 and 10 Mb/s", l, p.PHYAddr())
	}
	before := k.count("SIOCGMIIREG eth1 2")
	frames1 := m1.Stats().MDIOFrames
	if err := m1.SetLinkSpeed(100); err != nil {
		t.Fatal(err)
	}
	if l := p.UpdateLink(); l.SpeedMbps != 100 {
		t.Fatalf("ENET1 after its PHY went to 100 Mb/s: %v", l)
	}
	if k.count("SIOCGMIIREG eth1 2") == before || m1.Stats().MDIOFrames != frames1 {
		t.Fatalf("the link poll ran %d ioctls on eth1 and %d frames on ENET1's own MAC; want ioctls only",
			k.count("SIOCGMIIREG eth1 2")-before, m1.Stats().MDIOFrames-frames1)
	}
	writes := k.count("SIOCSMIIREG eth1 2") // capping a gigabit PHY's advertisement at open writes too
	if err := p.MDIOWrite(2, 4, 0x01E1); err != nil || k.count("SIOCSMIIREG eth1 2") != writes+1 {
		t.Fatalf("MDIO write: %v, calls %v", err, k.calls)
	}
	spec := udpTestFrame()
	m1.Port().Receive(spec)
	pkts := make([]*driver.Packet, 1)
	if p.RxQueue(0).RxBurst(pkts) != 1 {
		t.Fatalf("no frame passed ENET1 at its PHY's speed (mismatches %d)", m1.Stats().SpeedMismatch)
	}
	pkts[0].Free()

	// The interface is down: the kernel's fec answers no MII ioctl.
	k.down = true
	_, err = open("2188000.ethernet", m1, kernelDT(t, "fec", "eth1"))
	if err == nil || !strings.Contains(err.Error(), "ip link set eth1 up") || !errors.Is(err, unix.EINVAL) && !strings.Contains(err.Error(), "invalid argument") {
		t.Fatalf("eth1 down: %v", err)
	}
	k.down = false

	// ENET2 held by uio_pdrv_genirq, not open here: no way to its bus.
	_, err = open("2188000.ethernet", m1, kernelDT(t, "uio_pdrv_genirq", ""))
	if err == nil || !strings.Contains(err.Error(), "uio_pdrv_genirq") || !strings.Contains(err.Error(), "open that MAC's port first") {
		t.Fatalf("ENET2 on UIO, not open: %v", err)
	}
}

// udpTestFrame is a 64-byte broadcast frame.
func udpTestFrame() []byte {
	f := make([]byte, 64)
	copy(f, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0, 0, 9, 0x08, 0x00})
	return f
}

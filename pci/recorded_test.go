package pci

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// The fake trees of these tests come in two kinds. Most are built by code
// (fake_test.go, pcifake_test.go): each test states its deviation next to
// its assertion, the tree is written fresh into a temporary directory (the
// fake kernel rewrites links on every bind), and /dev stand-ins are sparse
// files of tens of megabytes that would not belong in git. What a kernel
// really shows is kept in testdata as records taken from the rigs'
// guests, loaded here: the builders' files must agree with them.

// recordedTree loads a sysfs record (lines `f PATH "content"` and
// `l PATH "target"`, Go-quoted, as rigs/x86-vfio/guest prints them) into a
// fresh tree, with a fake kernel that binds drivers on sysfs writes.
func recordedTree(t *testing.T, file string) *tree {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := newTree(t)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, rest, _ := strings.Cut(line, " ")
		p, q, _ := strings.Cut(rest, " ")
		v, err := strconv.Unquote(q)
		if err != nil || !strings.HasPrefix(p, "/") {
			t.Fatalf("%s:%d: %q: want f|l /PATH \"quoted\"", file, n, line)
		}
		switch kind {
		case "f":
			tr.file(p, v)
		case "l":
			a := tr.abs(p)
			os.MkdirAll(filepath.Dir(a), 0o755)
			os.MkdirAll(filepath.Join(filepath.Dir(a), v), 0o755) // the target
			if err := os.Symlink(v, a); err != nil {
				t.Fatalf("%s:%d: %v", file, n, err)
			}
		default:
			t.Fatalf("%s:%d: unknown kind %q", file, n, kind)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	tr.kernelPCI(map[string]string{})
	return tr
}

// The x86 rig's guest as Debian's 6.1 kernel showed it: edu and ivshmem
// alone in groups 1 and 2, the ICH9 functions sharing group 3.
func TestRecordedX86Rig(t *testing.T) {
	tr := recordedTree(t, "testdata/x86-rig-sysfs.txt")
	s := tr.sys()
	inv, err := s.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range inv {
		got = append(got, d.Address.String()+"="+d.ID()+"/g"+d.IOMMUGroup)
	}
	want := "0000:00:00.0=8086:29c0/g0 0000:00:01.0=1234:11e8/g1 0000:00:02.0=1af4:1110/g2 0000:00:1f.0=8086:2918/g3 0000:00:1f.2=8086:2922/g3 0000:00:1f.3=8086:2930/g3"
	if strings.Join(got, " ") != want {
		t.Errorf("inventory\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	edu, iv := inv[1], inv[2]
	if edu.Class != 0x00ff00 || edu.NUMANode != -1 || edu.Driver != "" || edu.Override != "" ||
		edu.BARs[0].Size != 1<<20 || !edu.BARs[0].IsMem() || edu.BARs[1].Size != 0 {
		t.Errorf("edu %+v", edu)
	}
	// ivshmem-plain: BAR0 256 registers, BAR2 the 1 MiB shared memory,
	// 64-bit prefetchable.
	if iv.BARs[0].Size != 0x100 || iv.BARs[2].Size != 1<<20 || !iv.BARs[2].Prefetchable() || iv.BARs[2].Flags&resourceMem64 == 0 {
		t.Errorf("ivshmem BARs %+v", iv.BARs)
	}
	// Group 3: viable while its functions are unbound, refused once the
	// ISA bridge has its kernel driver.
	sata := MustParseAddress("0000:00:1f.2")
	if err := s.CheckGroup(sata); err != nil {
		t.Errorf("group 3 with unbound functions: %v", err)
	}
	tr.dir("/sys/bus/pci/drivers/lpc_ich").link("/sys/devices/pci0000:00/0000:00:1f.0/driver", "/sys/bus/pci/drivers/lpc_ich")
	err = s.CheckGroup(sata)
	wantErr(t, "group 3", err, ErrNotViable, "0000:00:1f.2", "IOMMU group 3", "0000:00:1f.0 (8086:2918, driver lpc_ich)")
	// edu goes to vfio-pci, to uio_pci_generic, and back to no driver.
	a := edu.Address
	b, err := s.Bind(a, DriverVFIO)
	if err != nil {
		t.Fatal(err)
	}
	tr.file("/dev/vfio/1", "")
	d, _ := s.Device(a)
	if acc, err := chooseAccess(a.String(), s.pciFacts(a, d), "", false); acc != AccessType1 || err != nil {
		t.Errorf("on vfio-pci: %q %v", acc, err)
	}
	if _, err := s.Bind(a, DriverUIO); err != nil {
		t.Fatal(err)
	}
	d, _ = s.Device(a)
	if acc, err := chooseAccess(a.String(), s.pciFacts(a, d), "", false); !errors.Is(err, ErrNeedsOptIn) {
		t.Errorf("on uio_pci_generic without opt-in: %q %v", acc, err)
	}
	if err := b.Restore(); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Device(a); d.Driver != "" || d.Override != "" {
		t.Errorf("after Restore: driver %q override %q", d.Driver, d.Override)
	}
}

// The generated PCI tree must look like the recorded one where they
// describe the same device (edu).
func TestGeneratedTreeMatchesRecord(t *testing.T) {
	rec := recordedTree(t, "testdata/x86-rig-sysfs.txt")
	gen := pciTree(t)
	dir := "/sys/devices/pci0000:00/0000:00:01.0/"
	for _, attr := range []string{"vendor", "device", "subsystem_vendor", "subsystem_device", "class", "driver_override", "numa_node"} {
		r, _ := os.ReadFile(rec.abs(dir + attr))
		g, _ := os.ReadFile(gen.abs(dir + attr))
		if string(r) != string(g) {
			t.Errorf("%s: generated %q, recorded %q", attr, g, r)
		}
	}
	rd, _ := rec.sys().Device(MustParseAddress("0000:00:01.0"))
	gd, _ := gen.sys().Device(MustParseAddress("0000:00:01.0"))
	if len(rd.BARs) != len(gd.BARs) || rd.BARs[0].Size != gd.BARs[0].Size || rd.BARs[0].Flags != gd.BARs[0].Flags {
		t.Errorf("BARs: generated %+v, recorded %+v", gd.BARs, rd.BARs)
	}
}

// The inventory never reaches the network, even when the environment asks
// for a missing pci.ids to be fetched (the variable the PCI ID library
// gopmd once used honoured): every HTTP(S) request would go to a proxy here
// that counts connections.
func TestInventoryStaysOffline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	proxy := "http://" + ln.Addr().String()
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		t.Setenv(k, proxy)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	t.Setenv("PCIDB_ENABLE_NETWORK_FETCH", "1")
	t.Setenv("HOME", t.TempDir()) // no cached pci.ids either
	tr := recordedTree(t, "testdata/x86-rig-sysfs.txt")
	inv, err := tr.sys().Inventory()
	if err != nil {
		t.Fatal(err)
	}
	if len(inv) != 6 || inv[1].VendorName != "" {
		t.Errorf("%d devices, edu vendor %q: want 6, no names without a local pci.ids", len(inv), inv[1].VendorName)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the inventory opened %d connections", n)
	}
}

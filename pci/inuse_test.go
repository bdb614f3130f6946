package pci

import (
	"os"
	"strings"
	"testing"
)

// TestInUse: interfaces and disks below a device (a bridge's children
// too) count, through device-mapper stacks, and nothing else does.
func TestInUse(t *testing.T) {
	tr := newTree(t)
	br := "/sys/devices/pci0000:00/0000:00:1c.0"
	nic := br + "/0000:02:00.0"
	disk := "/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
	tr.link("/sys/bus/pci/devices/0000:00:1c.0", br).
		link("/sys/bus/pci/devices/0000:02:00.0", nic).
		link("/sys/bus/pci/devices/0000:00:17.0", "/sys/devices/pci0000:00/0000:00:17.0").
		file(nic+"/net/enp2s0/flags", "0x1002\n").file(nic+"/net/enp2s0/operstate", "down\n").
		link("/sys/class/net/enp2s0", nic+"/net/enp2s0").
		file("/sys/devices/virtual/net/br0/flags", "0x1003\n").
		link("/sys/class/net/br0", "/sys/devices/virtual/net/br0").
		dir(disk+"/sda1").dir(disk+"/sda2").
		link("/sys/class/block/sda2", disk+"/sda2").
		dir("/sys/devices/virtual/block/dm-0/slaves").
		link("/sys/devices/virtual/block/dm-0/slaves/sda1", disk+"/sda1").
		link("/sys/dev/block/253:0", "/sys/devices/virtual/block/dm-0").
		link("/sys/class/block/dm-0", "/sys/devices/virtual/block/dm-0").
		link("/dev/mapper/swap", "/dev/dm-0").
		file("/proc/self/mountinfo", "22 1 253:0 / / rw - ext4 /dev/mapper/root rw\n30 22 0:40 / /home\\040dir rw - btrfs /dev/sda2 rw\n").
		file("/proc/swaps", "Filename Type Size Used Priority\n/dev/mapper/swap partition 1 0 -2\n").
		file("/proc/net/route", "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\nbr0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n").
		file("/proc/net/if_inet6", "").file("/proc/net/ipv6_route", "")
	os.WriteFile(tr.abs("/dev/dm-0"), nil, 0o644)
	s := tr.sys()

	got := func(bus, name string) string {
		t.Helper()
		u, err := s.InUse(bus, name)
		if err != nil {
			t.Fatal(err)
		}
		var w []string
		for _, x := range u {
			w = append(w, x.Kind+": "+x.What)
		}
		return strings.Join(w, "\n")
	}
	if g := got("pci", "0000:02:00.0"); g != "" {
		t.Errorf("a down interface with no address or route: %q", g)
	}
	tr.file(nic+"/net/enp2s0/flags", "0x1003\n")
	if g := got("pci", "0000:00:1c.0"); g != "interface: interface enp2s0 is up (operstate down)" {
		t.Errorf("the bridge above an up interface: %q", g)
	}
	want := "mount: /dev/mapper/root (253:0) is mounted on /\nmount: /dev/sda2 (0:40) is mounted on /home dir\nswap: /dev/mapper/swap is in use as swap"
	if g := got("pci", "0000:00:17.0"); g != want {
		t.Errorf("the SATA controller:\n got %s\nwant %s", g, want)
	}
	os.Remove(tr.abs("/proc/self/mountinfo"))
	if _, err := s.InUse("pci", "0000:00:17.0"); err == nil || !strings.Contains(err.Error(), "findmnt") {
		t.Errorf("no mountinfo: %v, want an error that says how to check by hand", err)
	}
}

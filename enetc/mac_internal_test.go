package enetc

import (
	"net"
	"strings"
	"testing"
)

// TestSetMACRefusesNonStation: SetMAC on a PF refuses broadcast, multicast
// and the zero address with an error naming the port and the fix, and
// leaves the port's MAC and PSIPMAR0/1(0) as they were.
func TestSetMACRefusesNonStation(t *testing.T) {
	f, d := newFakeDev(t, true)
	p := mustNew(t, d, smallCfg())
	defer closeClean(t, p)
	good := net.HardwareAddr{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}
	if err := p.SetMAC(good); err != nil {
		t.Fatal(err)
	}
	lo, hi := f.regs[regPSIPMAR0(0)/4], f.regs[regPSIPMAR1(0)/4]
	if got := macFromRegs(lo, hi); got.String() != good.String() {
		t.Fatalf("PSIPMAR0/1(0) hold %v, want %v", got, good)
	}
	for _, c := range []struct {
		mac  net.HardwareAddr
		want string
	}{
		{net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "broadcast"},
		{net.HardwareAddr{0x01, 0x00, 0x5e, 0, 0, 1}, "multicast"},
		{net.HardwareAddr{0, 0, 0, 0, 0, 0}, "all-zero"},
		{net.HardwareAddr{0x02, 0, 0, 0, 1}, "not a 6-byte"},
	} {
		err := p.SetMAC(c.mac)
		if err == nil {
			t.Errorf("SetMAC(%v) accepted", c.mac)
			continue
		}
		for _, w := range []string{"set MAC: ", c.want, "02:00:00:00:00:01"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("SetMAC(%v): %v: want %q", c.mac, err, w)
			}
		}
		if strings.Contains(err.Error(), p.name) {
			t.Errorf("SetMAC(%v): %v names the port's spec, which its caller names", c.mac, err)
		}
		if p.MAC().String() != good.String() || f.regs[regPSIPMAR0(0)/4] != lo || f.regs[regPSIPMAR1(0)/4] != hi {
			t.Errorf("SetMAC(%v) refused, yet the MAC is now %v (PSIPMAR0/1(0) %#x/%#x)", c.mac, p.MAC(), f.regs[regPSIPMAR0(0)/4], f.regs[regPSIPMAR1(0)/4])
		}
	}
}

// TestOpenMACFromRegisters: at open without mac=, the address the
// bootloader left in PSIPMAR0/1(0) is kept when it is a station's; when it
// is zero, multicast or broadcast the port takes a random locally
// administered unicast address instead.
func TestOpenMACFromRegisters(t *testing.T) {
	for _, c := range []struct {
		name   string
		lo, hi uint32
		keep   bool
	}{
		{"station address", 0x33221100 | 0x02, 0x5544, true},
		{"zero", 0, 0, false},
		{"broadcast", 0xffffffff, 0xffff, false},
		{"multicast", 0x005e0001, 0x0100, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, d := newFakeDev(t, true)
			f.regs[regPSIPMAR0(0)/4], f.regs[regPSIPMAR1(0)/4] = c.lo, c.hi
			p := mustNew(t, d, smallCfg())
			defer closeClean(t, p)
			left := macFromRegs(c.lo, c.hi)
			got := p.MAC()
			if c.keep != (got.String() == left.String()) {
				t.Fatalf("PSIPMAR0/1(0) held %v: the port's MAC is %v", left, got)
			}
			if got[0]&1 != 0 || got[0]|got[1]|got[2]|got[3]|got[4]|got[5] == 0 {
				t.Fatalf("the port's MAC %v is no station's", got)
			}
			if reg := macFromRegs(f.regs[regPSIPMAR0(0)/4], f.regs[regPSIPMAR1(0)/4]); reg.String() != got.String() {
				t.Fatalf("PSIPMAR0/1(0) hold %v, the port says %v", reg, got)
			}
		})
	}
}

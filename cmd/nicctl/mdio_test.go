package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// enetcPHY is the MDIO address of the ENETC model's PHY, as phy finds it.
func enetcPHY(t *testing.T) string {
	t.Helper()
	var r phyResult
	if err := json.Unmarshal([]byte(mustRun(t, "phy", "sim:enetc0", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(r.PHY)
}

func TestMDIO(t *testing.T) {
	var r mdioResult
	phy := enetcPHY(t)
	out := mustRun(t, "mdio", "sim:enetc0", "read", phy, "1", "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Name != "BMSR" || r.Value&(1<<2) == 0 || r.DevAd != nil || !strings.Contains(strings.Join(r.Bits, " "), "LINK") {
		t.Errorf("BMSR of the ENETC model's PHY: %+v", r)
	}
	// PHYID1 of the FEC model's PHY (0x0022:0x1622), in hex by default.
	if out := mustRun(t, "mdio", "sim:fec0", "read", "0", "0x2"); !strings.Contains(out, "phy 0 reg 0x2 (PHYID1) = 0x0022") {
		t.Errorf("PHYID1: %q", out)
	}
	// Clause 45, both spellings.
	a := mustRun(t, "mdio", "sim:enetc0", "read", phy+".1", "1")
	b := mustRun(t, "mdio", "sim:enetc0", "read", phy, "1", "--devad", "1")
	if a != b || !strings.Contains(a, "devad 1") {
		t.Errorf("PHY.DEVAD %q and --devad %q differ", a, b)
	}
	// A write goes through with --force (the model's BMCR takes it).
	if out := mustRun(t, "mdio", "sim:fec0", "write", "0", "0", "0x1140", "--force"); !strings.Contains(out, "(BMCR) <- 0x1140") {
		t.Errorf("write: %q", out)
	}
}

func TestMDIOErrors(t *testing.T) {
	for _, c := range []struct {
		code  int
		args  []string
		parts []string
	}{
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "0"}, []string{"missing arguments", "PHY[.DEVAD] REG"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "peek", "0", "1"}, []string{`"peek"`, "read or write"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "32", "1"}, []string{`PHY address "32"`, "0 to 31"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "0", "32"}, []string{`register "32"`, "0 to 31"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "0.1", "0x10000"}, []string{"0 to 65535"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "0.40", "1"}, []string{"DEVAD", "0 to 31"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "0.1", "1", "--devad", "3"}, []string{"DEVAD given twice"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "x", "1"}, []string{`"x"`}},
		{exitUsage, []string{"mdio", "sim:enetc0", "read", "0", "1", "5"}, []string{"no value"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "write", "0", "0"}, []string{"needs a value"}},
		{exitFailed, []string{"mdio", "sim:enetc0", "read", "17", "1"}, []string{"no PHY answered", "nicctl phy"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "write", "0", "0", "0x10000", "--force"}, []string{"value", "65535"}},
		{exitUsage, []string{"mdio", "sim:enetc0", "write", "0", "0", "0x1140"}, []string{"--force"}},
		{exitUsage, []string{"list", "--force"}, []string{"-force"}},
		{exitFailed, []string{"mdio", "sim:fec0", "read", "0.1", "1"}, []string{"clause-45"}},
		{exitFailed, []string{"mdio", "sim:enetc1?vf=1", "read", "0", "1"}, []string{"physical function", "use the PF's spec"}},
		{exitFailed, []string{"--root", "testdata/ls1028a", "mdio", "0000:00:00.0", "read", "0", "1"}, []string{"offline tree"}},
	} {
		wantError(t, c.code, c.args, c.parts...)
	}
}

func TestPHY(t *testing.T) {
	var r phyResult
	if err := json.Unmarshal([]byte(mustRun(t, "phy", "sim:fec0", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != 0x00221622 || r.Model != 0x22 || r.Rev != 2 || !r.Link || !r.ANComplete || r.Resolved != "1000full" {
		t.Errorf("FEC model PHY: %+v", r)
	}
	names := map[string]phyRegister{}
	for _, g := range r.Registers {
		names[g.Name] = g
	}
	for _, n := range []string{"BMCR", "BMSR", "ANAR", "ANLPAR", "CTRL1000", "STAT1000"} {
		if _, ok := names[n]; !ok {
			t.Errorf("phy report lacks %s", n)
		}
	}
	if !strings.Contains(strings.Join(names["BMCR"].Bits, " "), "ANENABLE") {
		t.Errorf("BMCR bits %v", names["BMCR"].Bits)
	}
	// The part by its id, and what the driver did to it at open.
	if !strings.Contains(r.Name, "KSZ9031") || r.Setup == nil || r.Setup.ID != r.ID || !strings.Contains(r.Setup.Left, "boot loader") {
		t.Errorf("FEC model PHY name %q, set-up %+v", r.Name, r.Setup)
	}
	out := mustRun(t, "phy", "sim:enetc0")
	for _, want := range []string{"ID 0x004dd074", "AR8031/AR8033", "programmed: copper page selected", "link up", "resolved 1000full", "BMSR", "LP_1000FULL"} {
		if !strings.Contains(out, want) {
			t.Errorf("phy sim:enetc0 lacks %q:\n%s", want, out)
		}
	}
	// Link down: BMSR says so and nothing is resolved.
	if out := mustRun(t, "phy", "sim:fec0?link=down"); !strings.Contains(out, "link down") {
		t.Errorf("link=down:\n%s", out)
	}
	wantError(t, exitFailed, []string{"phy", "sim:enetc1?vf=1"}, "fixed link", "--phy")
	wantError(t, exitUsage, []string{"phy", "sim:enetc0", "--phy", "40"}, "0 to 31")
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		anar, anlpar, c1000, s1000 uint16
		want                       string
	}{
		{0x01e1, 0x41e1, 0x0300, 0x3c00, "1000full"},
		{0x01e1, 0x41e1, 0x0100, 0x0400, "1000half"},
		{0x01e1, 0x41e1, 0, 0, "100full"},
		{0x00a1, 0x4081, 0, 0, "100half"},
		{0x0061, 0x4041, 0, 0, "10full"},
		{0x0001, 0x4001, 0, 0, ""},
	} {
		if got := resolve(c.anar, c.anlpar, c.c1000, c.s1000); got != c.want {
			t.Errorf("resolve(%#x, %#x, %#x, %#x) = %q, want %q", c.anar, c.anlpar, c.c1000, c.s1000, got, c.want)
		}
	}
	for v, want := range map[uint16]string{0x1140: "1000", 0x2100: "100", 0x0100: "10", 0x2040: "reserved"} {
		if got := bmcrSpeed(v); got != want {
			t.Errorf("bmcrSpeed(%#x) = %s, want %s", v, got, want)
		}
	}
}

package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
)

// sictr hides the model's free-running 1588 clock (SICTR0/1), the one
// register whose value differs from run to run.
var sictr = regexp.MustCompile(`(SICTR[01]\s+)0x[0-9a-f]{8}`)

// iovaLine finds the registers that hold a ring's DMA address in the text
// dump. The sim devices of one process share a simulated IOMMU address
// space, so the address a ring gets depends on what ran before it (other
// tests, -run, -shuffle): the sim goldens record only whether it is set.
var iovaLine = regexp.MustCompile(`(?m)^(\s+0x[0-9a-f]{5}\s+(?:SICBDRBAR[01]|[TR]BBAR[01]\(\d+\)|[RT]DSR\d?)\s+)0x([0-9a-f]{8})`)

// iovaName is iovaLine's register names, for the JSON dump.
var iovaName = regexp.MustCompile(`^(SICBDRBAR[01]|[TR]BBAR[01]\(\d+\)|[RT]DSR\d?)$`)

// maskIOVA replaces a set ring address in a text dump with (iova).
func maskIOVA(s string) string {
	return iovaLine.ReplaceAllStringFunc(s, func(m string) string {
		sub := iovaLine.FindStringSubmatch(m)
		if sub[2] == "00000000" {
			return m
		}
		return sub[1] + "(iova)"
	})
}

// regValue is a register as regs --json prints it (driver.RegValue's JSON
// form), decoded for the checks.
type regValue struct {
	Name   string  `json:"name"`
	Offset uint32  `json:"offset"`
	Block  string  `json:"block"`
	Value  uint32  `json:"value"`
	Fields []field `json:"fields"`
}

// field is a decoded bit field of a register value.
type field struct {
	Name  string `json:"name"`
	Lo    uint   `json:"lo"`
	Hi    uint   `json:"hi"`
	Value uint32 `json:"value"`
}

// goldenReg is a register as the JSON goldens hold it: value is a string
// where it varies from run to run ("(clock)", "(iova)").
type goldenReg struct {
	Name   string  `json:"name"`
	Offset uint32  `json:"offset"`
	Block  string  `json:"block"`
	Value  any     `json:"value"`
	Fields []field `json:"fields"`
}

func TestRegsGolden(t *testing.T) {
	ls := copyTree(t, "testdata/ls1028a") // opening through UIO sets Bus Master Enable in config
	cases := []struct {
		name string
		args []string
	}{
		{"ls1028a-pf-uio", []string{"--root", ls, "regs", "0000:00:00.2"}},
		{"imx8mp-uio", []string{"--root", "testdata/imx8mp", "regs", "platform:30be0000.ethernet"}},
		{"sim-enetc0", []string{"regs", "sim:enetc0"}},
		{"sim-enetc0-vf", []string{"regs", "sim:enetc3?vf=1"}},
		{"sim-fec0-imx6ul", []string{"regs", "sim:fec0?soc=imx6ul"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sim := strings.HasPrefix(c.name, "sim-")
			text := sictr.ReplaceAllString(mustRun(t, c.args...), "${1}(clock)")
			if sim {
				text = maskIOVA(text)
			}
			golden(t, "regs-"+c.name+".txt", text)
			var regs []regValue
			if err := json.Unmarshal([]byte(mustRun(t, append(c.args, "--json")...)), &regs); err != nil {
				t.Fatal(err)
			}
			out := make([]goldenReg, len(regs))
			for i, r := range regs {
				out[i] = goldenReg{Name: r.Name, Offset: r.Offset, Block: r.Block, Value: r.Value, Fields: r.Fields}
				switch {
				case strings.HasPrefix(r.Name, "SICTR"):
					out[i].Value = "(clock)"
				case sim && iovaName.MatchString(r.Name) && r.Value != 0:
					out[i].Value = "(iova)"
				}
			}
			b, _ := json.MarshalIndent(out, "", "  ")
			golden(t, "regs-"+c.name+".json", string(b)+"\n")
		})
	}
}

// regsJSON runs regs --json and indexes the registers by name.
func regsJSON(t *testing.T, args ...string) (map[string]regValue, []regValue) {
	t.Helper()
	out := mustRun(t, append([]string{"regs", "--json"}, args...)...)
	var raw []map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("regs --json is not an array of objects: %v\n%s", err, out)
	}
	for _, r := range raw {
		for _, k := range []string{"name", "offset", "value", "fields"} {
			if _, ok := r[k]; !ok {
				t.Fatalf("register %v has no %q", r, k)
			}
		}
		if _, ok := r["offset"].(float64); !ok {
			t.Fatalf("offset of %v is not a number", r)
		}
	}
	var regs []regValue
	json.Unmarshal([]byte(out), &regs)
	m := map[string]regValue{}
	for _, r := range regs {
		m[r.Name] = r
	}
	return m, regs
}

func fieldOf(r regValue, name string) (uint32, bool) {
	for _, f := range r.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

func TestRegsENETC(t *testing.T) {
	m, regs := regsJSON(t, "sim:enetc0")
	// Absolute BAR0 offsets of the reference: rings at 0x8000 + 0x200·n,
	// port registers at 0x10000, the MAC at 0x18000.
	for name, off := range map[string]uint32{"SIMR": 0, "SICAPR0": 0x900, "TBMR(0)": 0x8000, "RBMR(0)": 0x8100, "PMR": 0x10000, "PM0_CMD_CFG": 0x18008} {
		if r, ok := m[name]; !ok || r.Offset != off {
			t.Errorf("%s: %+v, want offset %#x", name, r, off)
		}
	}
	if v, ok := fieldOf(m["SIMR"], "EN"); !ok || v != 1 {
		t.Errorf("SIMR.EN after bring-up = %d (%v)", v, ok)
	}
	if v, _ := fieldOf(m["TBMR(0)"], "EN"); v != 1 {
		t.Error("TX ring 0 is not enabled after Start")
	}
	// Every ring the SI owns is dumped (8 TX, 8 RX on a PF).
	if _, ok := m["TBMR(7)"]; !ok {
		t.Error("TBMR(7) missing: the dump must cover every ring")
	}
	if _, ok := m["RBMR(7)"]; !ok {
		t.Error("RBMR(7) missing")
	}
	for _, r := range regs {
		if r.Block == "mdio" {
			t.Errorf("%s read: MDIO data registers must not be read by a dump", r.Name)
		}
	}
	// A VF has only the SI block.
	vf, _ := regsJSON(t, "sim:enetc2?vf=1")
	if _, ok := vf["PMR"]; ok {
		t.Error("a VF dump shows the port block")
	}
	// --block keeps one block.
	port, regs := regsJSON(t, "sim:enetc0", "--block", "tx-ring")
	if len(regs) == 0 || len(port) == 0 {
		t.Fatal("no tx-ring registers")
	}
	for _, r := range regs {
		if r.Block != "tx-ring" {
			t.Errorf("--block tx-ring shows %s (%s)", r.Name, r.Block)
		}
	}
}

func TestRegsRaw(t *testing.T) {
	t.Parallel() // a tree of its own or read-only, no sim device (see main_test.go)
	m, _ := regsJSON(t, "--root", "testdata/imx8mp", "platform:30be0000.ethernet")
	if r := m["ECR"]; r.Offset != 0x24 || r.Value != 0xf0000132 {
		t.Errorf("ECR %+v: want 0xf0000132 at 0x24, as the fake /dev/uio0 holds", r)
	}
	if v, _ := fieldOf(m["RCR"], "MAX_FL"); v != 1984 {
		t.Errorf("RCR.MAX_FL = %d, want 1984", v)
	}
	m, _ = regsJSON(t, "--root", copyTree(t, "testdata/ls1028a"), "0000:00:00.2")
	if r := m["TBPIR(0)"]; r.Offset != 0x8018 || r.Value != 5 {
		t.Errorf("TBPIR(0) %+v", r)
	}
	if r := m["PM0_CMD_CFG"]; r.Value != 0x8813 {
		t.Errorf("PM0_CMD_CFG %+v", r)
	}
}

func TestRegsErrors(t *testing.T) {
	for _, c := range []struct {
		code  int
		args  []string
		parts []string
	}{
		{exitUsage, []string{"regs"}, []string{"missing arguments", "usage: nicctl regs DEV"}},
		{exitUsage, []string{"regs", "sim:enetc0", "--block", "nosuch"}, []string{`no block "nosuch"`, "tx-ring", "mac"}},
		{exitUsage, []string{"regs", "sim:enetc0", "--block"}, []string{"flag needs an argument", "-block"}},
		{exitUsage, []string{"regs", "bogus"}, []string{`"bogus"`, "accepted forms"}},
		{exitUsage, []string{"regs", "0000:00:99.0"}, []string{"0000:00:99.0", "above 0x1f"}},
		{exitUsage, []string{"regs", "sim:enetc0?color=red"}, []string{"option color: unknown option", "accepted: "}},
		{exitUsage, []string{"regs", "sim:zz0"}, []string{"zz0", "enetc, enetc-timer, fec"}},
		{exitFailed, []string{"--root", "testdata/imx8mp", "regs", "platform:30bf0000.ethernet"}, []string{"30bf0000.ethernet", "imx-dwmac"}},
		{exitFailed, []string{"--root", "testdata/imx8mp", "regs", "platform:nosuch"}, []string{"nosuch", "no such device"}},
		{exitFailed, []string{"--root", "testdata/ls1028a", "regs", "0000:00:00.1"}, []string{"0000:00:00.1", "fsl_enetc"}},
		// /dev/mem needs the opt-in, as every other /dev/mem path does.
		{exitUsage, []string{"--root", "testdata/imx6ul", "regs", "platform:20b4000.ethernet"}, []string{"20b4000.ethernet", "/dev/mem", "--unsafe-noiommu"}},
		{exitFailed, []string{"--root", "testdata/imx6ul", "regs", "platform:20b4000.ethernet", "--unsafe-noiommu"}, []string{"20b4000.ethernet: reg0: open", "dev/mem: no such file"}},
		{exitFailed, []string{"--root", "testdata/imx6ul", "regs", "platform:20b4000.ethernet?unsafe-noiommu=1"}, []string{"20b4000.ethernet: reg0: open", "dev/mem: no such file"}},
	} {
		wantError(t, c.code, c.args, c.parts...)
	}
	if strings.Contains(sictr.ReplaceAllString("SICTR0  0x12345678", "${1}(clock)"), "0x1234") {
		t.Error("the clock mask does not mask")
	}
	for in, want := range map[string]string{
		"  0x08010  TBBAR0(0)   0x43fc0000\n": "  0x08010  TBBAR0(0)   (iova)\n",
		"  0x08214  TBBAR1(1)   0x00000000\n": "  0x08214  TBBAR1(1)   0x00000000\n",
		"  0x00184  TDSR        0x427a0000\n": "  0x00184  TDSR        (iova)\n",
		"  0x00064  MIBC        0x40000000\n": "  0x00064  MIBC        0x40000000\n",
	} {
		if got := maskIOVA(in); got != want {
			t.Errorf("maskIOVA(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRegsVFIONote: before regs opens a function through VFIO (which
// resets it) it says so, and where a running port's registers are.
func TestRegsVFIONote(t *testing.T) {
	code, out, errOut := nicctl(t, "--root", "testdata/ls1028a", "regs", "0000:00:00.0")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != exitFailed || out != "" || len(lines) != 2 {
		t.Fatalf("exit %d, stdout %q, stderr %q: want the note, then the open error (the tree has no /dev/vfio)", code, out, errOut)
	}
	if !strings.Contains(lines[0], "note: opening 0000:00:00.0 through VFIO resets the function") || !strings.Contains(lines[0], "GET /regs") {
		t.Errorf("first line %q is not the reset note", lines[0])
	}
	if !strings.Contains(lines[1], "/dev/vfio/5") {
		t.Errorf("second line %q is not the open error", lines[1])
	}
	// A function on uio_pci_generic is not reset: no note.
	if _, _, errOut := nicctl(t, "--root", "testdata/ls1028a", "regs", "0000:00:00.2"); strings.Contains(errOut, "resets") {
		t.Errorf("uio_pci_generic: %q", errOut)
	}
}

// TestRegsOneDescription: both drivers' register maps reach a tool in one
// type, driver.RegDesc. What regs prints for a simulated ENETC and a
// simulated FEC carries the description the open port's RegisterDumper
// gives (name, offset, block, field bits), and each field's value is its
// bits of the register's value.
func TestRegsOneDescription(t *testing.T) {
	for _, c := range []struct {
		spec, reg, field string
		want             uint32
	}{
		{"sim:enetc0", "SIMR", "EN", 1},
		{"sim:fec0?soc=imx6ul", "ECR", "ETHEREN", 1},
	} {
		m, regs := regsJSON(t, c.spec)
		for _, r := range regs {
			for _, f := range r.Fields {
				if want := r.Value >> f.Lo & uint32(uint64(1)<<(f.Hi-f.Lo+1)-1); f.Value != want {
					t.Errorf("%s: %s.%s = %#x in %#x, want %#x", c.spec, r.Name, f.Name, f.Value, r.Value, want)
				}
			}
		}
		if v, ok := fieldOf(m[c.reg], c.field); !ok || v != c.want {
			t.Errorf("%s: %s.%s = %d (%v) after bring-up, want %d", c.spec, c.reg, c.field, v, ok, c.want)
		}
		p, err := driver.Open(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		dumped := p.(driver.RegisterDumper).Registers()
		p.Close()
		for _, d := range dumped {
			r, ok := m[d.Name]
			if !ok {
				t.Errorf("%s: the port dumps %s, regs does not", c.spec, d.Name)
				continue
			}
			var bits []field
			for _, f := range d.Fields {
				bits = append(bits, field{Name: f.Name, Lo: f.Lo, Hi: f.Hi})
			}
			var got []field
			for _, f := range r.Fields {
				got = append(got, field{Name: f.Name, Lo: f.Lo, Hi: f.Hi})
			}
			if r.Offset != d.Offset || r.Block != d.Block || !slices.Equal(got, bits) {
				t.Errorf("%s: regs prints %s at %#x in %q with %v; the port describes it at %#x in %q with %v",
					c.spec, d.Name, r.Offset, r.Block, got, d.Offset, d.Block, bits)
			}
		}
		if len(dumped) < 40 {
			t.Errorf("%s: the port dumps only %d registers", c.spec, len(dumped))
		}
	}
}

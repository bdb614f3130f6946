package fec_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/internal/devtree"
	"github.com/gopmd/gopmd/internal/gpio/gpiotest"
	"github.com/gopmd/gopmd/internal/mii"
)

// evkTree writes an i.MX8MP-EVK-like FEC node (imx8mp-evk.dts: phy-mode,
// phy-handle to ethernet-phy@1 in the FEC's mdio node, the PHY's
// reset-gpios = <&gpio4 2 GPIO_ACTIVE_LOW> with reset-assert-us = <10000>
// and reset-deassert-us = <80000>) with the given properties added (nil
// value: left out), and returns the FEC node and the GPIO controller.
func evkTree(t *testing.T, props map[string][]byte) (node, ctrl string) {
	t.Helper()
	base := filepath.Join(t.TempDir(), "sys/firmware/devicetree/base")
	cell := func(v ...uint32) []byte {
		var b []byte
		for _, c := range v {
			b = binary.BigEndian.AppendUint32(b, c)
		}
		return b
	}
	files := map[string][]byte{
		"soc/gpio@30230000/phandle":                                   cell(0x40),
		"soc/gpio@30230000/compatible":                                []byte("fsl,imx8mp-gpio\x00"),
		"soc/ethernet@30be0000/compatible":                            []byte("fsl,imx8mp-fec\x00"),
		"soc/ethernet@30be0000/phy-handle":                            cell(0x41),
		"soc/ethernet@30be0000/mdio/ethernet-phy@1/reg":               cell(1),
		"soc/ethernet@30be0000/mdio/ethernet-phy@1/phandle":           cell(0x41),
		"soc/ethernet@30be0000/mdio/ethernet-phy@1/reset-gpios":       cell(0x40, 2, 1),
		"soc/ethernet@30be0000/mdio/ethernet-phy@1/reset-assert-us":   cell(10000),
		"soc/ethernet@30be0000/mdio/ethernet-phy@1/reset-deassert-us": cell(80000),
	}
	for k, v := range props {
		if v == nil {
			delete(files, k)
			continue
		}
		files[k] = v
	}
	for p, b := range files {
		f := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(base, "soc/ethernet@30be0000"), filepath.Join(base, "soc/gpio@30230000")
}

// openEVK opens a port on m with the device-tree node node and options.
func openEVK(t *testing.T, m *model.Device, soc, node, opts string) (*fec.Port, error) {
	t.Helper()
	spec, err := driver.ParseSpec("platform:30be0000.ethernet" + opts)
	if err != nil {
		t.Fatal(err)
	}
	compat := map[string][]string{"imx8mp": {"fsl,imx8mp-fec", "fsl,imx8mq-fec", "fsl,imx6sx-fec"},
		"imx6ul": {"fsl,imx6ul-fec", "fsl,imx6q-fec"}, "imx8qm": {"fsl,imx8qm-fec", "fsl,imx6sx-fec"}}[soc]
	d := &driver.Device{Spec: spec, Backend: "sim", Bus: "platform", Compatible: compat,
		Regions: []driver.Regs{m}, Mapper: m.IOMMU(), NonCoherent: true, Node: devtree.At(node)}
	p, err := fec.New(d, driver.Config{RxRingSize: 16, TxRingSize: 16, PoolSize: 64})
	if err == nil {
		t.Cleanup(func() { p.Close() })
	}
	return p, err
}

// TestPHYResetLine: the PHY node's reset-gpios is pulsed through the GPIO
// chip before the PHY is spoken to (active, then inactive, as the
// kernel's PHY layer does at probe), so what a boot loader left in the
// PHY is gone; phy-reset=keep leaves it; a line the kernel holds is
// refused with its holder's name and the way out. Not parallel: it
// replaces the driver's GPIO opener.
func TestPHYResetLine(t *testing.T) {
	node, ctrl := evkTree(t, map[string][]byte{"soc/ethernet@30be0000/phy-mode": []byte("rgmii-id\x00")})
	m, err := model.New(model.Config{Name: "evk", SoC: "imx8mp", PHYAddr: 1, PHYID: 0x001cc878})
	if err != nil {
		t.Fatal(err)
	}
	chip := &gpiotest.Chip{OnSet: func(_ uint32, active bool) { m.HoldPHYReset(active) }}
	defer fec.SetGPIOOpener(chip.Opener(ctrl))()

	// A boot loader's setting: 10 Mb/s half duplex only.
	p, err := openEVK(t, m, "imx8mp", node, "?phy-reset=keep")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.PHYSetup().Reset; !strings.Contains(got, "phy-reset=keep") || !strings.Contains(got, "line 2 of gpio@30230000") {
		t.Fatalf("reset with phy-reset=keep: %q", got)
	}
	if err := p.MDIOWrite(1, mii.ANAR, mii.ANAR_10HALF|mii.ANAR_CSMA); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if len(chip.Log) != 0 {
		t.Fatalf("phy-reset=keep drove the line: %v", chip.Log)
	}

	p, err = openEVK(t, m, "imx8mp", node, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(chip.Log, " "); got != "2=true 2=false" {
		t.Fatalf("reset line levels %q, want active then inactive", got)
	}
	if got := p.PHYSetup().Reset; !strings.HasPrefix(got, "pulsed") || !strings.Contains(got, "10ms") || !strings.Contains(got, "80ms") {
		t.Fatalf("reset: %q", got)
	}
	anar, err := p.MDIORead(1, mii.ANAR)
	if err != nil || anar&mii.ANAR_100FULL == 0 {
		t.Fatalf("ANAR %#x (%v) after the reset: the boot loader's setting survived", anar, err)
	}

	held := &gpiotest.Chip{Held: map[uint32]string{2: "reset"}}
	restore := fec.SetGPIOOpener(held.Opener(ctrl))
	_, err = openEVK(t, m, "imx8mp", node, "")
	restore()
	if err == nil || !strings.Contains(err.Error(), `held by "reset"`) || !strings.Contains(err.Error(), "phy-reset=keep") || !strings.Contains(err.Error(), "reset-gpios") {
		t.Fatalf("a held line: %v, want a refusal naming the holder, the property and phy-reset=keep", err)
	}
	if _, err := openEVK(t, m, "imx8mp", node, "?phy-reset=now"); err == nil || !strings.Contains(err.Error(), "phy-reset") {
		t.Fatalf("phy-reset=now: %v", err)
	}
}

// TestPHYRGMIIDelays: the RTL8211F on the i.MX8MP-EVK (id 0x001cc878) and
// the i.MX93-EVK (0x001cc916) gets the RGMII clock delays its phy-mode
// asks of the PHY (realtek: page 0xd08, TXCR bit 8, RXCR bit 3): both for
// rgmii-id, one for rgmii-txid and rgmii-rxid, none for rgmii (whatever
// its straps gave); without a phy-mode they are left as strapped. The
// model's PHY shows the bits.
func TestPHYRGMIIDelays(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id             uint32
		mode, opt      string
		straps, rx, tx bool
		programmed     bool
	}{
		{0x001cc878, "rgmii-id", "", false, true, true, true},
		{0x001cc916, "rgmii-id", "", false, true, true, true},
		{0x001cc878, "rgmii", "", true, false, false, true},
		{0x001cc878, "rgmii-txid", "", false, false, true, true},
		{0x001cc878, "rgmii-rxid", "", false, true, false, true},
		{0x001cc878, "", "", true, true, true, false},
		{0x001cc878, "rgmii", "?phy-mode=rgmii-id", false, true, true, true},
	}
	for _, c := range cases {
		props := map[string][]byte{"soc/ethernet@30be0000/mdio/ethernet-phy@1/reset-gpios": nil}
		if c.mode != "" {
			props["soc/ethernet@30be0000/phy-mode"] = []byte(c.mode + "\x00")
		}
		node, _ := evkTree(t, props)
		m, err := model.New(model.Config{Name: "evk", SoC: "imx8mp", PHYAddr: 1, PHYID: c.id, RGMIIStrapDelays: c.straps})
		if err != nil {
			t.Fatal(err)
		}
		p, err := openEVK(t, m, "imx8mp", node, c.opt)
		if err != nil {
			t.Fatalf("%#x %q%s: %v", c.id, c.mode, c.opt, err)
		}
		rx, tx, ok := m.PHYRGMIIDelays()
		if !ok || rx != c.rx || tx != c.tx {
			t.Errorf("%#x phy-mode %q%s: PHY delays rx %v tx %v, want rx %v tx %v", c.id, c.mode, c.opt, rx, tx, c.rx, c.tx)
		}
		s := p.PHYSetup()
		if !strings.Contains(s.Name, "RTL8211F") {
			t.Errorf("%#x: named %q", c.id, s.Name)
		}
		if got := len(s.Programmed) > 0; got != c.programmed {
			t.Errorf("%#x phy-mode %q%s: programmed %q, left %q", c.id, c.mode, c.opt, s.Programmed, s.Left)
		}
		// The page the PHY was on is put back.
		if pg, err := p.MDIORead(1, mii.RTL8211F_PAGE_SELECT); err != nil || pg != 0 {
			t.Errorf("%#x: page register %#x (%v) after set-up, want 0", c.id, pg, err)
		}
		p.Close()
	}
}

// TestKSZ8081RMIIClock: the i.MX6UL-EVK's KSZ8081 (imx6ul-14x14-evk.dtsi:
// clock-names = "rmii-ref", the ENET's 50 MHz RMII reference) gets reg
// 0x1f bit 7 set (micrel: the 50 MHz case of kszphy_probe), cleared on a
// part with micrel,rmii-reference-clock-select-25-mhz; without an
// rmii-ref clock it is left alone.
func TestKSZ8081RMIIClock(t *testing.T) {
	t.Parallel()
	const phy = "soc/ethernet@30be0000/mdio/ethernet-phy@1/"
	cases := []struct {
		props      map[string][]byte
		want, prog bool
	}{
		{map[string][]byte{phy + "clock-names": []byte("rmii-ref\x00")}, true, true},
		{map[string][]byte{phy + "clock-names": []byte("rmii-ref\x00"), phy + "micrel,rmii-reference-clock-select-25-mhz": {}}, false, true},
		{map[string][]byte{}, false, false},
	}
	for i, c := range cases {
		c.props[phy+"reset-gpios"] = nil
		c.props["soc/ethernet@30be0000/phy-mode"] = []byte("rmii\x00")
		node, _ := evkTree(t, c.props)
		m, err := model.New(model.Config{Name: "evk", SoC: "imx6ul", PHYAddr: 1, PHYID: 0x00221561, LinkSpeed: 100})
		if err != nil {
			t.Fatal(err)
		}
		// A boot loader that set the bit for a 25 MHz part.
		if !c.want && c.prog {
			p, err := openEVK(t, m, "imx6ul", "", "?phy=1")
			if err != nil {
				t.Fatal(err)
			}
			if err := p.MDIOWrite(1, mii.KSZ8081_CTRL2, mii.KSZ8081_RMII_50MHZ_CLK); err != nil {
				t.Fatal(err)
			}
			p.Close()
		}
		p, err := openEVK(t, m, "imx6ul", node, "")
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		set, ok := m.PHYRMII50MHz()
		if !ok || set != c.want {
			t.Errorf("case %d: reg 0x1f bit 7 %v, want %v", i, set, c.want)
		}
		s := p.PHYSetup()
		if got := len(s.Programmed) > 0; got != c.prog || !strings.Contains(s.Name, "KSZ8081") {
			t.Errorf("case %d: %s programmed %q, left %q", i, s.Name, s.Programmed, s.Left)
		}
		p.Close()
	}
}

// TestMACClockDelays: on the i.MX8QM tx-internal-delay-ps = <2000> and
// rx-internal-delay-ps set ECR.TXC_DLY and RXC_DLY when the MAC runs (Linux
// fec_enet_parse_rgmii_delay, fec_restart; the model shows the bits);
// another value, or a part whose MAC adds no delay, is refused naming the
// property.
func TestMACClockDelays(t *testing.T) {
	t.Parallel()
	const fecNode = "soc/ethernet@30be0000/"
	cell := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	for _, c := range []struct {
		soc      string
		tx, rx   uint32 // 1: property absent
		wantTx   bool
		wantRx   bool
		errParts []string
	}{
		{"imx8qm", 2000, 0, true, false, nil},
		{"imx8qm", 1, 2000, false, true, nil},
		{"imx8qm", 2000, 2000, true, true, nil},
		{"imx8qm", 1000, 1, false, false, []string{"tx-internal-delay-ps = 1000", "0 or 2000"}},
		{"imx8mp", 2000, 1, false, false, []string{"tx-internal-delay-ps = 2000", "only the i.MX8QM", "rgmii-id"}},
	} {
		props := map[string][]byte{fecNode + "mdio/ethernet-phy@1/reset-gpios": nil}
		if c.tx != 1 {
			props[fecNode+"tx-internal-delay-ps"] = cell(c.tx)
		}
		if c.rx != 1 {
			props[fecNode+"rx-internal-delay-ps"] = cell(c.rx)
		}
		node, _ := evkTree(t, props)
		m, err := model.New(model.Config{Name: "qm", SoC: c.soc, PHYAddr: 1})
		if err != nil {
			t.Fatal(err)
		}
		p, err := openEVK(t, m, c.soc, node, "")
		if c.errParts != nil {
			for _, part := range c.errParts {
				if err == nil || !strings.Contains(err.Error(), part) {
					t.Errorf("%s tx %d rx %d: %v, want an error with %q", c.soc, c.tx, c.rx, err, part)
				}
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s tx %d rx %d: %v", c.soc, c.tx, c.rx, err)
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		tx, rx := m.MACClockDelays()
		if tx != c.wantTx || rx != c.wantRx {
			t.Errorf("%s tx %d rx %d: ECR TXC_DLY %v RXC_DLY %v, want %v %v", c.soc, c.tx, c.rx, tx, rx, c.wantTx, c.wantRx)
		}
		p.Close()
	}
}

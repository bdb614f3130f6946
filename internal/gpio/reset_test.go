package gpio_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/internal/devtree"
	"github.com/gopmd/gopmd/internal/gpio"
	"github.com/gopmd/gopmd/internal/gpio/gpiotest"
)

func writeTree(t *testing.T, files map[string][]byte) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "sys/firmware/devicetree/base")
	for p, b := range files {
		f := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

func cells(v ...uint32) []byte {
	var b []byte
	for _, c := range v {
		b = binary.BigEndian.AppendUint32(b, c)
	}
	return b
}

// TestReadReset: the i.MX8MP-EVK's FEC PHY node (reset-gpios = <&gpio4 2
// GPIO_ACTIVE_LOW>, reset-assert-us = <10000>, reset-deassert-us =
// <80000>, imx8mp-evk.dts) and the older MAC property phy-reset-gpios with
// its millisecond timings (fsl,fec.yaml).
func TestReadReset(t *testing.T) {
	base := writeTree(t, map[string][]byte{
		"gpio@30230000/phandle":                     cells(0x20),
		"fec/mdio/ethernet-phy@1/reset-gpios":       cells(0x20, 2, 1),
		"fec/mdio/ethernet-phy@1/reset-assert-us":   cells(10000),
		"fec/mdio/ethernet-phy@1/reset-deassert-us": cells(80000),
		"fec2/phy-reset-gpios":                      cells(0x20, 9, 0),
		"fec2/phy-reset-duration":                   cells(20),
		"fec2/phy-reset-post-delay":                 cells(5000), // over 1000 ms: ignored, as fec_main.c does
		"fec3/phy-reset-gpios":                      cells(0x20, 9, 1),
		"fec3/mdio/ethernet-phy@0/reset-gpios":      cells(0x20, 3),
		"fec4/mdio/ethernet-phy@0/reset-gpios":      cells(0x77, 3, 0),
		"fec5/mdio/ethernet-phy@0/compatible":       []byte("ethernet-phy-ieee802.3-c22\x00"),
		"fec5/mdio/ethernet-phy@0/reset-assert-us":  cells(1),
		"fec2/mdio/ethernet-phy@0/compatible":       []byte("x\x00"),
		"fec/mdio/ethernet-phy@1/compatible":        []byte("ethernet-phy-ieee802.3-c22\x00"),
		"fec3/mdio/ethernet-phy@0/compatible":       []byte("x\x00"),
		"fec4/mdio/ethernet-phy@0/compatible":       []byte("x\x00"),
		"gpio@30230000/compatible":                  []byte("fsl,imx8mp-gpio\x00"),
		"fec/phy-mode":                              []byte("rgmii-id\x00"),
		"fec2/phy-mode":                             []byte("rgmii-id\x00"),
		"fec3/phy-mode":                             []byte("rgmii-id\x00"),
		"fec4/phy-mode":                             []byte("rgmii-id\x00"),
		"fec5/phy-mode":                             []byte("rgmii-id\x00"),
	})
	n := func(p string) string { return filepath.Join(base, p) }
	nd := func(p string) devtree.Node { return devtree.At(n(p)) }

	r, ok, err := gpio.ReadReset(nd("fec/mdio/ethernet-phy@1"), nd("fec"))
	if err != nil || !ok {
		t.Fatalf("PHY node: %v %v", ok, err)
	}
	if r.Ctrl != n("gpio@30230000") || r.Offset != 2 || !r.ActiveLow || r.Assert != 10*time.Millisecond || r.Deassert != 80*time.Millisecond {
		t.Fatalf("PHY node's reset: %+v", r)
	}

	r, ok, err = gpio.ReadReset(nd("fec2/mdio/ethernet-phy@0"), nd("fec2"))
	if err != nil || !ok {
		t.Fatalf("MAC node: %v %v", ok, err)
	}
	if r.Offset != 9 || r.ActiveLow || r.Assert != 20*time.Millisecond || r.Deassert != 0 || !strings.HasSuffix(r.From, "phy-reset-gpios") {
		t.Fatalf("MAC node's reset: %+v", r)
	}

	if _, _, err := gpio.ReadReset(nd("fec3/mdio/ethernet-phy@0"), nd("fec3")); err == nil || !strings.Contains(err.Error(), "reset-gpios") {
		t.Fatalf("a two-cell specifier: %v, want an error naming the property", err)
	}
	if _, _, err := gpio.ReadReset(nd("fec4/mdio/ethernet-phy@0"), devtree.Node{}); err == nil || !strings.Contains(err.Error(), "0x77") {
		t.Fatalf("an unknown controller: %v, want an error naming the phandle", err)
	}
	if _, ok, err := gpio.ReadReset(nd("fec5/mdio/ethernet-phy@0"), nd("fec5")); ok || err != nil {
		t.Fatalf("no reset line: %v %v", ok, err)
	}
}

// TestPulse: the line is driven active, held r.Assert, released, and the
// PHY left r.Deassert; a line the kernel holds is refused with its holder.
func TestPulse(t *testing.T) {
	var slept []time.Duration
	sleep := func(d time.Duration) { slept = append(slept, d) }
	chip := &gpiotest.Chip{}
	r := gpio.Reset{Ctrl: "ctrl", Offset: 2, ActiveLow: true, Assert: 10 * time.Millisecond, Deassert: 80 * time.Millisecond, From: "x/reset-gpios"}
	if err := r.Pulse(chip.Opener("ctrl"), "gopmd", sleep); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(chip.Log, " "); got != "2=true 2=false" {
		t.Fatalf("levels %q, want active then inactive", got)
	}
	if len(slept) != 2 || slept[0] != r.Assert || slept[1] != r.Deassert {
		t.Fatalf("waits %v, want %v then %v", slept, r.Assert, r.Deassert)
	}

	held := &gpiotest.Chip{Held: map[uint32]string{2: "phy-reset"}}
	err := r.Pulse(held.Opener("ctrl"), "gopmd", sleep)
	var busy *gpio.BusyError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), `"phy-reset"`) || !strings.Contains(err.Error(), "x/reset-gpios") {
		t.Fatalf("held line: %v, want a BusyError naming the holder and the property", err)
	}
	if len(held.Log) != 0 {
		t.Fatalf("a held line was driven: %v", held.Log)
	}
}

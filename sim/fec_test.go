package sim

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/sim/simdma"
)

func openFECSpec(t *testing.T, raw string) (*driver.Device, error) {
	t.Helper()
	s, err := driver.ParseSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	return openSim(s, driver.Config{})
}

func TestFECOpenDefault(t *testing.T) {
	t.Parallel()
	d, err := openFECSpec(t, "sim:fec0")
	if err != nil {
		t.Fatal(err)
	}
	m := FECModel("fec0")
	if m == nil || d.Extra != m || len(d.Regions) != 1 || d.Regions[0] != driver.Regs(m) {
		t.Fatalf("model not reachable: FECModel %p, Extra %v", m, d.Extra)
	}
	if d.Backend != "sim" || d.Bus != "platform" || !d.NonCoherent {
		t.Fatalf("device %+v", d)
	}
	want := []string{"fsl,imx8mp-fec", "fsl,imx8mq-fec", "fsl,imx6sx-fec"}
	if !slices.Equal(d.Compatible, want) {
		t.Fatalf("compatible %v, want %v (default profile %s)", d.Compatible, want, model.DefaultSoC)
	}
	if mmu, ok := d.Mapper.(*simdma.IOMMU); !ok || !mmu.NonCoherent() || mmu != m.IOMMU() {
		t.Fatal("mapper is not the model's non-coherent simdma.IOMMU")
	}
	if d.Regions[0].Size() != 0x10000 {
		t.Fatalf("window %#x", d.Regions[0].Size())
	}
	if _, err := openFECSpec(t, "sim:fec0?soc=imx6q"); err == nil || !strings.Contains(err.Error(), "sim:fec0") {
		t.Fatalf("second open of fec0: %v", err)
	}
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	if FECModel("fec0") != nil {
		t.Fatal("released model still registered")
	}
	d, err = openFECSpec(t, "sim:fec0")
	if err != nil {
		t.Fatalf("reopen after release: %v", err)
	}
	_ = d.Release()
}

func TestFECOpenOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec    string
		errWant string
		check   func(t *testing.T, d *driver.Device, m *model.Device)
	}{
		{spec: "sim:fec1?soc=imx6ul", check: func(t *testing.T, d *driver.Device, m *model.Device) {
			if !slices.Equal(d.Compatible, []string{"fsl,imx6ul-fec", "fsl,imx6q-fec"}) || d.Regions[0].Size() != 0x4000 {
				t.Fatalf("imx6ul: %v, window %#x", d.Compatible, d.Regions[0].Size())
			}
		}},
		{spec: "sim:fec1?soc=imx7d&mode=engine", check: func(t *testing.T, d *driver.Device, m *model.Device) {
			if !m.Engine() || m.Start() == nil {
				t.Fatal("engine mode not running")
			}
		}},
		{spec: "sim:fec1?link=down", check: func(t *testing.T, d *driver.Device, m *model.Device) {
			if m.LinkUp() {
				t.Fatal("link=down left the link up")
			}
		}},
		{spec: "sim:fec1?mmio-cost=50ns&mode=sync"},
		{spec: "sim:fec1?soc=imx99", errWant: "imx6q, imx6sx, imx6ul, imx7d, imx8mp, imx8mq, imx8qm, imx93"},
		{spec: "sim:fec1?phy-addr=3&shared-phy=1,2", check: func(t *testing.T, d *driver.Device, m *model.Device) {
			if m.PHYAddr() != 3 {
				t.Fatalf("phy-addr=3: PHY at %d", m.PHYAddr())
			}
		}},
		{spec: "sim:fec1?phy-addr=40", errWant: "not an MDIO address"},
		{spec: "sim:fec1?shared-phy=0", errWant: "other than the port's PHY's"},
		{spec: "sim:fec1?mode=fast", errWant: "or engine (a DMA-engine goroutine)"},
		{spec: "sim:fec1?mmio-cost=fast", errWant: "mmio-cost"},
		{spec: "sim:fec1?link=sideways", errWant: "up or down"},
	} {
		t.Run(c.spec, func(t *testing.T) {
			d, err := openFECSpec(t, c.spec)
			if c.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), c.errWant) {
					t.Fatalf("error %v, want one mentioning %q", err, c.errWant)
				}
				if FECModel("fec1") != nil {
					t.Fatal("failed open left the name taken")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Release()
			if c.check != nil {
				c.check(t, d, FECModel("fec1"))
			}
		})
	}
}

// TestFECOpenWithoutDriver: through driver.Open the spec options are
// accepted, and with no FEC driver linked the model is released again.
func TestFECOpenWithoutDriver(t *testing.T) {
	t.Parallel()
	_, err := driver.Open("sim:fec7?soc=imx93&mode=sync")
	if !errors.Is(err, driver.ErrNoDriver) {
		t.Fatalf("Open: %v, want ErrNoDriver (no fec driver in this test binary)", err)
	}
	if !strings.Contains(err.Error(), "fsl,imx93-fec") {
		t.Fatalf("error %q does not name the compatible", err)
	}
	if FECModel("fec7") != nil {
		t.Fatal("model not released after a failed Open")
	}
	if _, err := driver.Open("sim:fec7?bogus-opt=1"); err == nil || !strings.Contains(err.Error(), "unknown option") {
		t.Fatalf("unknown option: %v", err)
	}
}

func TestFECResetHook(t *testing.T) {
	t.Parallel()
	d, err := openFECSpec(t, "sim:fec2")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	r := d.Regions[0]
	r.Write32(0x084, 0) // RCR
	if err := d.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := r.Read32(0x084); got != 0x05EE0001 {
		t.Fatalf("RCR after Reset %#x", got)
	}
}

// TestFECCable: two FEC models cabled with peer= carry each other's frames.
func TestFECCable(t *testing.T) {
	t.Parallel()
	a, err := openFECSpec(t, "sim:fec20")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, err := openFECSpec(t, "sim:fec21?peer=sim:fec20")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	ma, mb := FECModel("fec20"), FECModel("fec21")
	frame := make([]byte, 60)
	mb.Wire().Transmit(frame) // fec21's TX side
	ma.Wire().Transmit(frame)
	// Both MACs are still disabled (no driver brought them up): each
	// frame reaches the far model and is dropped there, as silicon would.
	if ma.Stats().RxDropped != 1 || mb.Stats().RxDropped != 1 {
		t.Fatalf("far ends saw %d and %d frames, want 1 each", ma.Stats().RxDropped, mb.Stats().RxDropped)
	}
}

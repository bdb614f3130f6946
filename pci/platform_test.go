package pci

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
)

func spec(t *testing.T, s string) driver.Spec {
	t.Helper()
	sp, err := driver.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Options == nil {
		sp.Options = url.Values{}
	}
	return sp
}

func TestPlatformInfo(t *testing.T) {
	tr := imx6ulENET(t)
	pd, err := tr.sys().Platform(enet)
	if err != nil {
		t.Fatal(err)
	}
	if pd.Driver != "fec" || !pd.NoUnbind || pd.Override != "" || pd.DMACoherent {
		t.Errorf("driver %q noUnbind %v override %q coherent %v", pd.Driver, pd.NoUnbind, pd.Override, pd.DMACoherent)
	}
	if strings.Join(pd.Compatible, ",") != "fsl,imx6ul-fec,fsl,imx6q-fec" {
		t.Errorf("compatible %q", pd.Compatible)
	}
	if len(pd.Reg) != 1 || pd.Reg[0] != (PhysRange{0x2188000, 0x4000}) {
		t.Errorf("reg %v", pd.Reg)
	}
}

func TestDeviceTreeRangesTranslate(t *testing.T) {
	tr := imx6ulENET(t)
	bus := dtBase + "/soc/bus@30000000"
	tr.file(bus+"/#address-cells", be32(1)).file(bus+"/#size-cells", be32(1)).
		file(bus+"/ranges", be32(0, 0x30000000, 0x10000)).
		file(bus+"/dev@800/reg", be32(0x800, 0x100, 0x900, 0x10)).
		file(bus+"/dev@800/compatible", "x,y\x00").
		link("/sys/devices/platform/soc/30000000.bus/800.dev/of_node", bus+"/dev@800").
		link("/sys/bus/platform/devices/800.dev", "/sys/devices/platform/soc/30000000.bus/800.dev")
	pd, err := tr.sys().Platform("800.dev")
	if err != nil {
		t.Fatal(err)
	}
	want := []PhysRange{{0x30000800, 0x100}, {0x30000900, 0x10}}
	if len(pd.Reg) != 2 || pd.Reg[0] != want[0] || pd.Reg[1] != want[1] {
		t.Errorf("reg %v, want %v", pd.Reg, want)
	}
	// An address no range covers is an error naming the bus.
	tr.file(bus+"/dev@800/reg", be32(0x20000, 0x100))
	if _, err := tr.sys().Platform("800.dev"); err == nil || !strings.Contains(err.Error(), "outside every range") || !strings.Contains(err.Error(), "800.dev") {
		t.Errorf("untranslatable reg: %v", err)
	}
}

func TestOpenPlatform(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(*tree)
		spec    string
		noIOMMU bool
		wantErr error
		msg     []string // parts of the error
		backend string
	}{
		{name: "no such device", setup: func(*tree) {}, spec: "platform:30be0000.ethernet", noIOMMU: true,
			wantErr: ErrNoDevice, msg: []string{"30be0000.ethernet", "ls /sys/bus/platform/devices"}},
		{name: "held by fec", setup: func(*tree) {}, spec: "platform:" + enet, noIOMMU: true,
			wantErr: ErrWrongDriver, msg: []string{enet, "fec", "driver_override", "rmmod fec", "no sysfs unbind"}},
		{name: "released but no opt-in", setup: func(tr *tree) { release(tr) }, spec: "platform:" + enet,
			wantErr: ErrNeedsOptIn, msg: []string{enet, "unsafe-noiommu=1"}},
		{name: "released, /dev/mem", setup: func(tr *tree) { release(tr) }, spec: "platform:" + enet, noIOMMU: true, backend: "devmem"},
		{name: "uio without opt-in", setup: func(tr *tree) { withUIO(tr) }, spec: "platform:" + enet,
			wantErr: ErrNeedsOptIn, msg: []string{"uio0", "unsafe-noiommu"}},
		{name: "uio", setup: func(tr *tree) { withUIO(tr) }, spec: "platform:" + enet, noIOMMU: true, backend: "uio"},
		{name: "bad reg option", setup: func(tr *tree) { release(tr) }, spec: "platform:" + enet + "?reg=0x2188000", noIOMMU: true,
			msg: []string{enet, "ADDR+SIZE"}},
		{name: "no /dev/mem", setup: func(tr *tree) { release(tr); tr.remove("/dev/mem") }, spec: "platform:" + enet, noIOMMU: true,
			msg: []string{enet + ": reg0: open", "/dev/mem", "devtmpfs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := imx6ulENET(t)
			tr.sparse("/dev/mem", 0x2190000, 0x2188024, le32(0xf0000000))
			c.setup(tr)
			d, err := tr.sys().OpenPlatform(spec(t, c.spec), driver.Config{UnsafeNoIOMMU: c.noIOMMU})
			if c.backend == "" {
				if err == nil {
					t.Fatal("opened, want an error")
				}
				if c.wantErr != nil && !errors.Is(err, c.wantErr) {
					t.Errorf("error %v is not %v", err, c.wantErr)
				}
				for _, m := range c.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not mention %q", err, m)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Release()
			if d.Backend != c.backend || d.Bus != "platform" || !d.NonCoherent || len(d.Compatible) != 2 {
				t.Errorf("device %+v", d)
			}
			if len(d.Regions) == 0 || d.Regions[0].Size() != 0x4000 {
				t.Fatalf("regions %v", d.Regions)
			}
			if ecr := d.Regions[0].Read32(0x24); ecr != 0xf0000000 {
				t.Errorf("ECR via %s = %#x, want the value at phys 0x2188024", c.backend, ecr)
			}
			if _, ok := d.Mapper.(*dma.Pagemap); !ok {
				t.Errorf("mapper %T, want pagemap without a carve-out", d.Mapper)
			}
		})
	}
}

func TestUIOMaps(t *testing.T) {
	tr := withUIO(imx6ulENET(t))
	info, err := tr.sys().UIO("/dev/uio0")
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != enet || info.Parent != enet || info.ParentBus != "platform" || len(info.Maps) != 2 {
		t.Fatalf("info %+v", info)
	}
	if m := info.Maps[1]; m.Addr != 0x218c000 || m.Size != 0x100 || m.Offset != 0x100 {
		t.Errorf("map1 %+v", m)
	}
	u, err := tr.sys().OpenUIO("uio0")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	// map1 is mmapped at offset 1 page and starts 0x100 into it.
	if v := u.Windows[1].Read32(0); v != 0x12345678 || u.Windows[1].Size() != 0x100 {
		t.Errorf("map1 word 0 = %#x size %#x", v, u.Windows[1].Size())
	}
	for _, bad := range []struct{ dev, msg string }{
		{"/dev/uio7", "ls /sys/class/uio"},
		{"/dev/mem", "not a UIO device"},
	} {
		if _, err := tr.sys().OpenUIO(bad.dev); err == nil || !strings.Contains(err.Error(), bad.dev) || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("OpenUIO(%s) = %v, want an error naming it and %q", bad.dev, err, bad.msg)
		}
	}
	tr.file("/sys/class/uio/uio0/maps/map1/size", "lots\n")
	if _, err := tr.sys().UIO("uio0"); err == nil || !strings.Contains(err.Error(), "map1") {
		t.Errorf("malformed map: %v", err)
	}
}

func TestUIOBackendNeedsOptIn(t *testing.T) {
	tr := withUIO(imx6ulENET(t))
	_, err := tr.sys().OpenUIOBackend(spec(t, "uio:/dev/uio0"), driver.Config{})
	if !errors.Is(err, ErrNeedsOptIn) || !strings.Contains(err.Error(), "/dev/uio0") {
		t.Fatalf("err %v", err)
	}
	d, err := tr.sys().OpenUIOBackend(spec(t, "uio:/dev/uio0?dma-map=1"), driver.Config{UnsafeNoIOMMU: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if _, ok := d.Extra.(*UIODevice); !ok || d.Backend != "uio" || d.Compatible[0] != "fsl,imx6ul-fec" {
		t.Errorf("device %+v", d)
	}
	// dma-map=1 makes UIO map1 the DMA memory: bus address = its physical one.
	r, err := dma.Alloc(d.Mapper, 0x100, dma.Options{Attr: dma.Attr{Name: "ring", Contiguous: true}})
	if err == nil {
		t.Errorf("a 0x100-byte map gave a page-sized region at %#x", r.IOVA())
	}
	// A map smaller than the driver needs: the error names the window.
	if err := RequireSize(d.Regions[1], 0x4000, "FEC registers"); !errors.Is(err, ErrRegionTooSmall) || !strings.Contains(err.Error(), "/dev/uio0 map1") || !strings.Contains(err.Error(), "need 0x4000") {
		t.Errorf("map1 as the FEC window: %v", err)
	}
	if _, err := tr.sys().OpenUIOBackend(spec(t, "uio:/dev/uio0?dma-map=5"), driver.Config{UnsafeNoIOMMU: true}); err == nil || !strings.Contains(err.Error(), `option dma-map="5": no such UIO map (accepted: 0 to 1`) {
		t.Errorf("dma-map=5: %v", err)
	}
}

func TestCarveout(t *testing.T) {
	tr := imx6ulENET(t)
	release(tr)
	const base = 0x1c000000
	tr.sparse("/dev/mem", base+0x10000, base+0x2000, []byte("carve"))
	d, err := tr.sys().OpenPlatform(spec(t, "platform:"+enet+"?dma-carveout=0x1c000000+64K"), driver.Config{UnsafeNoIOMMU: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	c, ok := d.Mapper.(*Carveout)
	if !ok {
		t.Fatalf("mapper %T", d.Mapper)
	}
	var regions []*dma.Region
	for i, want := range []uint64{base, base + 0x2000, base + 0x3000} {
		size := 0x1000
		if i == 0 {
			size = 0x1800
		}
		r, err := dma.Alloc(c, size, dma.Options{Attr: dma.Attr{Name: "r", Contiguous: true}})
		if err != nil {
			t.Fatal(err)
		}
		if r.IOVA() != want {
			t.Errorf("region %d at %#x, want %#x", i, r.IOVA(), want)
		}
		regions = append(regions, r)
	}
	// The memory is the carve-out itself (cleared on allocation).
	regions[1].Bytes()[0] = 'Z'
	if b := regions[1].Bytes()[:1]; string(b) != "Z" {
		t.Errorf("region bytes %q", b)
	}
	if _, err := dma.Alloc(c, 0x10000, dma.Options{Attr: dma.Attr{Name: "huge"}}); err == nil || !strings.Contains(err.Error(), "larger dma-carveout") {
		t.Errorf("oversized alloc: %v", err)
	}
	regions[0].Close()
	if r, err := dma.Alloc(c, 0x2000, dma.Options{}); err != nil || r.IOVA() != base {
		t.Errorf("freed piece not reused: %v", err)
	}
	if _, err := c.Map(make([]byte, 4096), dma.Attr{Name: "heap"}); err == nil || !strings.Contains(err.Error(), "not inside carve-out") {
		t.Errorf("foreign memory mapped: %v", err)
	}
}

func TestParsePhysRange(t *testing.T) {
	for _, c := range []struct {
		in   string
		want PhysRange
		bad  string
	}{
		{"0x1c000000+0x4000000", PhysRange{0x1c000000, 0x4000000}, ""},
		{"0x1c000000+64M", PhysRange{0x1c000000, 64 << 20}, ""},
		{"4096+4K", PhysRange{4096, 4096}, ""},
		{"0x1c000000", PhysRange{}, "ADDR+SIZE"},
		{"0x1c000001+4K", PhysRange{}, "page size"},
		{"x+4K", PhysRange{}, "address"},
		{"0+0", PhysRange{}, "positive"},
	} {
		r, err := ParsePhysRange(c.in)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), c.in) {
				t.Errorf("%q: %v, want error with %q", c.in, err, c.bad)
			}
		} else if err != nil || r != c.want {
			t.Errorf("%q: %v %v", c.in, r, err)
		}
	}
}

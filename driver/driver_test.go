package driver

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/dma"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in             string
		scheme, name   string
		opt, val, errs string
	}{
		{in: "0000:01:00.0", scheme: "pci", name: "0000:01:00.0"},
		{in: "0000:0A:1f.7", scheme: "pci", name: "0000:0a:1f.7"},
		{in: "pci:0000:00:00.0?unsafe-noiommu=1", scheme: "pci", name: "0000:00:00.0", opt: "unsafe-noiommu", val: "1"},
		{in: "uio:/dev/uio0", scheme: "uio", name: "/dev/uio0"},
		{in: "platform:30be0000.ethernet", scheme: "platform", name: "30be0000.ethernet"},
		{in: "sim:enetc0?peer=sim:enetc1", scheme: "sim", name: "enetc0", opt: "peer", val: "sim:enetc1"},
		{in: "sim:fec0?soc=imx8mp&mode=engine", scheme: "sim", name: "fec0", opt: "soc", val: "imx8mp"},
		{in: "", errs: "empty device name"},
		{in: "eth0", errs: "no scheme"},
		{in: "usb:1-2", errs: `unknown scheme "usb"`},
		{in: "pci:01:00.0", errs: "domain:bus:device.function"},
		{in: "sim:", errs: "empty device name after sim:"},
		{in: "sim:enetc0?a=%zz", errs: "options"},
	} {
		s, err := ParseSpec(tc.in)
		if tc.errs != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errs) || !strings.Contains(err.Error(), "accepted forms") {
				t.Errorf("ParseSpec(%q) error %v, want one containing %q and the accepted forms", tc.in, err, tc.errs)
			}
			continue
		}
		if err != nil || s.Scheme != tc.scheme || s.Name != tc.name {
			t.Errorf("ParseSpec(%q) = %+v, %v", tc.in, s, err)
			continue
		}
		if tc.opt != "" && s.Options.Get(tc.opt) != tc.val {
			t.Errorf("ParseSpec(%q) option %s = %q", tc.in, tc.opt, s.Options.Get(tc.opt))
		}
	}
}

// fakePort is the smallest Port a test driver can return.
type fakePort struct {
	Port
	cfg Config
}

func TestOpenRegistry(t *testing.T) {
	released := 0
	RegisterBackend(Backend{Scheme: "uio", Options: []string{"map"}, Open: func(s Spec, cfg Config) (*Device, error) {
		if s.Name == "/dev/missing" {
			return nil, errors.New("no such device")
		}
		bus, vid := "pci", uint16(0x1957)
		if s.Name == "/dev/uio9" {
			vid = 0x8086
		}
		return &Device{Bus: bus, VendorID: vid, DeviceID: 0xe100, Mapper: dma.NewSimIOMMU(false),
			Release: func() error { released++; return nil }}, nil
	}})
	RegisterDriver(Driver{Name: "testdrv", Options: []string{"drvopt"},
		Match: func(d *Device) bool { return d.VendorID == 0x1957 },
		New: func(d *Device, cfg Config) (Port, error) {
			if d.Spec.Options.Get("drvopt") == "fail" {
				return nil, errors.New("bring-up failed")
			}
			return &fakePort{cfg: cfg}, nil
		}})

	p, err := OpenConfig("uio:/dev/uio0?queues=4&rx-ring=1024&promisc=0&drvopt=x", Config{TxRingSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.(*fakePort).cfg
	if cfg.RxQueues != 4 || cfg.TxQueues != 4 || cfg.RxRingSize != 1024 || cfg.TxRingSize != 64 || *cfg.Promiscuous || cfg.MTU != 1500 {
		t.Fatalf("config after options and defaults: %+v", cfg)
	}
	for _, tc := range []struct{ spec, want string }{
		{"uio:/dev/uio0?bogus=1", `unknown option "bogus"`},
		{"uio:/dev/uio0?queues=0", "queues=\"0\" must be a number in [1, 64]"},
		{"uio:/dev/uio0?promisc=maybe", "must be true or false"},
		{"uio:/dev/missing", "open uio:/dev/missing: no such device"},
		{"uio:/dev/uio9", "no driver for this device (PCI ID 8086:e100)"},
		{"uio:/dev/uio0?drvopt=fail", "testdrv uio:/dev/uio0?drvopt=fail: bring-up failed"},
		{"platform:foo", `scheme "platform" is not linked`},
	} {
		before := released
		_, err := Open(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) = %v, want error containing %q", tc.spec, err, tc.want)
		}
		if strings.Contains(tc.want, "failed") || strings.Contains(tc.want, "no driver") {
			if released != before+1 {
				t.Errorf("Open(%q) failed without releasing the device", tc.spec)
			}
		}
	}
}

func TestCounters(t *testing.T) {
	var c Counters
	c.Add(32, 32*64)
	c.Add(0, 100) // an empty burst counts nothing
	c.Drop(CauseCRC, 2)
	c.Drop(CauseNoBuffer, 5)
	c.Drop(NumCauses, 7) // out of range: ignored
	s := c.Snapshot()
	if s.Packets != 32 || s.Bytes != 2048 || s.Drops[CauseCRC] != 2 || s.TotalDrops() != 7 {
		t.Fatalf("snapshot %+v", s)
	}
	var sum QueueStats
	sum.Add(s)
	sum.Add(s)
	if sum.Packets != 64 || sum.Drops[CauseNoBuffer] != 10 {
		t.Fatalf("sum %+v", sum)
	}
	if CauseBadDescriptor.String() != "bad_descriptor" || Cause(200).String() != "cause(200)" {
		t.Fatal("cause names")
	}
	if a, err := ParseAction("tx"); err != nil || a != Tx || a.String() != "tx" {
		t.Fatal("ParseAction")
	}
	if _, err := ParseAction("bounce"); err == nil {
		t.Fatal("ParseAction accepted nonsense")
	}
	if l := (Link{Up: true, SpeedMbps: 1000, FullDuplex: true}); l.String() != "up 1000 Mb/s full duplex" {
		t.Fatal(l.String())
	}
}

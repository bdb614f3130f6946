package driver

import (
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/sim/simdma"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
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

// Serial: it registers schemes and drivers in the process-wide registry
// that driver.Open reads (as a backend's or driver's init does), and takes
// them out again at cleanup.
func TestOpenRegistry(t *testing.T) {
	released := 0
	RegisterBackend(Backend{Scheme: "uio", Options: []string{"map"}, Open: func(s Spec, cfg Config) (*Device, error) {
		if s.Name == "/dev/uio7" {
			return nil, errors.New("no such device")
		}
		bus, vid := "pci", uint16(0x1957)
		if s.Name == "/dev/uio9" {
			vid = 0x8086
		}
		return &Device{Bus: bus, VendorID: vid, DeviceID: 0xe100, Mapper: simdma.NewIOMMU(false),
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
	// Messages name the spec once, then the driver whose error it is, and
	// options by *OptionError.
	for _, tc := range []struct{ spec, want string }{
		{"uio:/dev/uio0?bogus=1", `option bogus: unknown option`},
		{"uio:/dev/uio0?queues=0", `option queues="0": out of range (accepted: a number in [1, 64])`},
		{"uio:/dev/uio0?promisc=maybe", "(accepted: 1 or 0"},
		{"uio:/dev/uio7", "uio:/dev/uio7: no such device"},
		{"uio:/dev/uio9", "no driver for this device (PCI ID 8086:e100)"},
		{"uio:/dev/uio0?drvopt=fail", "uio:/dev/uio0?drvopt=fail: testdrv: bring-up failed"},
		{"platform:foo", `scheme "platform" is not linked`},
	} {
		before := released
		_, err := Open(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) = %v, want error containing %q", tc.spec, err, tc.want)
		}
		if n := strings.Count(err.Error(), tc.spec); n != 1 {
			t.Errorf("Open(%q) names the spec %d times: %v", tc.spec, n, err)
		}
		if strings.Contains(tc.want, "failed") || strings.Contains(tc.want, "no driver") {
			if released != before+1 {
				t.Errorf("Open(%q) failed without releasing the device", tc.spec)
			}
		}
	}
}

func TestCounters(t *testing.T) {
	t.Parallel()
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

func TestParseSpecRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"sim:enetc0?gen=1&gen=0", `option gen: given 2 times (1, 0)`},
		{"sim:enetc0?mtu=1500&mtu=1500", "given 2 times"},
		{"sim:enetc0?=1", "an option with no name"},
		{"platform:../../../../tmp/x", "holds '/'"},
		{"platform:..", "directory reference"},
		{"platform:.", "directory reference"},
		{"platform:eth\x01er", "control character"},
		{"platform:a\nb", "control character"},
		{"platform:a b", "control character or space"},
		{"platform:" + strings.Repeat("a", 256), "longer than a sysfs name"},
		{"sim:../enetc0", "holds '/'"},
		{"uio:/tmp/uio0", "not /dev/uioN"},
		{"uio:/dev/../etc/uio0", "not /dev/uioN"},
	} {
		in := tc.in
		_, err := ParseSpec(in)
		var se *SpecError
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSpec(%q) = %v, want a *SpecError containing %q", in, err, tc.want)
		}
	}
	_, err := ParseSpec("sim:enetc0?gen=1&gen=0")
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "gen" {
		t.Fatalf("a repeated option is not an *OptionError naming it: %#v", err)
	}
}

// TestOptionsOfTheClaimingDriver: an option only another driver takes is
// refused once the device's driver is known, and the device is released.
// Serial: it registers schemes and drivers in the process-wide registry
// that driver.Open reads (as a backend's or driver's init does), and takes
// them out again at cleanup.
func TestOptionsOfTheClaimingDriver(t *testing.T) {
	released := 0
	RegisterBackend(Backend{Scheme: "platform", Options: []string{"reg"}, Open: func(s Spec, cfg Config) (*Device, error) {
		return &Device{Bus: "platform", Compatible: []string{"test,a"}, Mapper: simdma.NewIOMMU(false),
			Release: func() error { released++; return nil }}, nil
	}})
	t.Cleanup(func() {
		regMu.Lock()
		delete(backends, "platform")
		drivers = drivers[:len(drivers)-2]
		regMu.Unlock()
	})
	RegisterDriver(Driver{Name: "adrv", Options: []string{"aopt"},
		Match: func(d *Device) bool { return d.Bus == "platform" && d.Compatible[0] == "test,a" },
		New:   func(d *Device, cfg Config) (Port, error) { return &fakePort{cfg: cfg}, nil }})
	RegisterDriver(Driver{Name: "bdrv", Options: []string{"bopt"},
		Match: func(d *Device) bool { return d.Bus == "platform" && d.Compatible[0] == "test,b" },
		New:   func(d *Device, cfg Config) (Port, error) { return &fakePort{cfg: cfg}, nil }})
	if _, err := Open("platform:x?aopt=1&reg=1"); err != nil {
		t.Fatal(err)
	}
	_, err := Open("platform:x?bopt=1")
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "bopt" || !strings.Contains(err.Error(), "adrv driver") || !strings.Contains(err.Error(), "aopt") {
		t.Fatalf("bdrv's option on an adrv device: %v", err)
	}
	if released != 1 {
		t.Fatalf("device released %d times after the refused option, want 1", released)
	}
	if name, ok := Claims(&Device{Bus: "platform", Compatible: []string{"test,b"}}); !ok || name != "bdrv" {
		t.Fatalf("Claims = %q, %v", name, ok)
	}
	if _, ok := Claims(&Device{Bus: "platform", Compatible: []string{"test,c"}}); ok {
		t.Fatal("Claims claimed an unknown device")
	}
}

// TestRegValueString: a register prints its name, offset and value, a set
// one-bit field by name, a clear one not at all, a wider field as a value.
func TestRegValueString(t *testing.T) {
	t.Parallel()
	v := RegValue{RegDesc: RegDesc{Name: "ECR", Offset: 0x24, Fields: []RegField{
		{Name: "ETHEREN", Lo: 1, Hi: 1}, {Name: "SLEEP", Lo: 3, Hi: 3}, {Name: "SPEED", Lo: 4, Hi: 6}}}, Value: 0x52}
	got := v.String()
	want := "ECR            0x00024 = 0x00000052 ETHEREN SPEED=0x5"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestRegValueJSON: a register's JSON form carries its description and
// each field's value decoded from the register's (a 32-bit field whole),
// with fields an empty array, not null, when it has none.
func TestRegValueJSON(t *testing.T) {
	t.Parallel()
	v := RegValue{RegDesc: RegDesc{Name: "PAUR", Offset: 0xe8, Block: "mac", Fields: []RegField{
		{Name: "PADDR2", Lo: 16, Hi: 31}, {Name: "ON", Lo: 3, Hi: 3}, {Name: "ALL", Lo: 0, Hi: 31}}}, Value: 0xabcd8808}
	b, err := json.Marshal(v)
	want := `{"name":"PAUR","offset":232,"block":"mac","value":2882373640,"fields":[` +
		`{"name":"PADDR2","lo":16,"hi":31,"value":43981},{"name":"ON","lo":3,"hi":3,"value":1},` +
		`{"name":"ALL","lo":0,"hi":31,"value":2882373640}]}`
	if err != nil || string(b) != want {
		t.Errorf("got  %s (%v)\nwant %s", b, err, want)
	}
	b, _ = json.Marshal(RegValue{RegDesc: RegDesc{Name: "TIPG", Offset: 0x1ac, Block: "mac"}, Value: 12})
	if want := `{"name":"TIPG","offset":428,"block":"mac","value":12,"fields":[]}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// TestCheckUnicast: a port's own address must be a 6-byte unicast address
// other than zero; each refusal names the operation, the address and the fix.
func TestCheckUnicast(t *testing.T) {
	for _, c := range []struct {
		mac  net.HardwareAddr
		want string
	}{
		{net.HardwareAddr{0x02, 0, 0, 0, 0, 1}, ""},
		{net.HardwareAddr{0x00, 0x04, 0x9f, 1, 2, 3}, ""},
		{net.HardwareAddr{0x02, 0, 0, 0, 1}, "not a 6-byte MAC address"},
		{nil, "not a 6-byte MAC address"},
		{net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "broadcast"},
		{net.HardwareAddr{0x01, 0, 0x5e, 0, 0, 1}, "multicast"},
		{net.HardwareAddr{0x33, 0x33, 0, 0, 0, 1}, "multicast"},
		{net.HardwareAddr{0, 0, 0, 0, 0, 0}, "all-zero"},
	} {
		err := CheckUnicast("set MAC", c.mac)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.mac, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%v: accepted", c.mac)
			continue
		}
		for _, w := range []string{"set MAC: ", c.want, "such as the locally administered 02:00:00:00:00:01"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v: want %q", c.mac, err, w)
			}
		}
	}
}

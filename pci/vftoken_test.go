package pci

import (
	"encoding/binary"
	"errors"
	"net/url"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci/internal/vfio"
)

const tokText = "bd8d9d2b-5a5f-4f5a-a211-f591514ba1f3"

func mustToken(t *testing.T, s string) VFToken {
	t.Helper()
	tok, err := ParseVFToken(s)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestParseVFToken(t *testing.T) {
	tok := mustToken(t, strings.ToUpper(tokText))
	if tok[0] != 0xbd || tok[4] != 0x5a || tok[15] != 0xf3 {
		t.Errorf("bytes % x, want the text's order (bd 8d ... f3)", tok[:])
	}
	if tok.String() != tokText {
		t.Errorf("String() = %q, want %q", tok.String(), tokText)
	}
	bad := []struct{ in, want string }{
		{"", "0 characters"},
		{tokText[:35], "35 characters"},
		{"bd8d9d2b5a5f-4f5a-a211-f591514ba1f3x", "character 9"},
		{"bd8d9d2b-5a5f-4f5a-a211-f591514ba1fg", "not hexadecimal"},
		{"{d8d9d2b-5a5f-4f5a-a211-f591514ba1f}", "not hexadecimal"},
	}
	for _, c := range bad {
		if _, err := ParseVFToken(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseVFToken(%q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

// sriovPCITree is an LS1028A-like tree: PF0 on vfio-pci with its VF, PF1
// on the kernel's fsl_enetc with its VF, and edu (no SR-IOV).
func sriovPCITree(t *testing.T) *tree {
	const res = eduResource
	tr := pciTree(t,
		pciFn{"0000:00:00.0", "1957:e100", "0x020001", "5", "vfio-pci", res},
		pciFn{"0000:00:00.1", "1957:e100", "0x020001", "6", "fsl_enetc", res},
		pciFn{"0000:00:01.0", "1957:ef00", "0x020001", "7", "vfio-pci", res},
		pciFn{"0000:00:01.1", "1957:ef00", "0x020001", "8", "vfio-pci", res},
		pciFn{"0000:00:02.0", "1234:11e8", "0x00ff00", "9", "vfio-pci", res},
	)
	root := "/sys/devices/pci0000:00/"
	tr.file(root+"0000:00:00.0/sriov_totalvfs", "2\n").file(root+"0000:00:00.0/sriov_numvfs", "1\n").
		file(root+"0000:00:00.1/sriov_totalvfs", "2\n").file(root+"0000:00:00.1/sriov_numvfs", "1\n").
		link(root+"0000:00:01.0/physfn", root+"0000:00:00.0").link(root+"0000:00:00.0/virtfn0", root+"0000:00:01.0").
		link(root+"0000:00:01.1/physfn", root+"0000:00:00.1").link(root+"0000:00:00.1/virtfn0", root+"0000:00:01.1")
	for _, g := range []string{"5", "6", "7", "8", "9"} {
		tr.file("/dev/vfio/"+g, "")
	}
	return tr
}

func TestVFTokenOption(t *testing.T) {
	s := sriovPCITree(t).sys()
	role := func(a string) sriovRole { return s.sriovRoleOf(mustAddr(t, a)) }
	if r := role("0000:00:01.0"); r.pf || r.physfn != "0000:00:00.0" || r.pfDriver != DriverVFIO {
		t.Fatalf("VF role %+v", r)
	}
	if r := role("0000:00:00.0"); !r.pf || r.physfn != "" {
		t.Fatalf("PF role %+v", r)
	}
	opts := func(v string) url.Values { return url.Values{"vf-token": {v}} }
	// Good: a PF on vfio-pci and its VF, upper case taken.
	for _, a := range []string{"0000:00:00.0", "0000:00:01.0"} {
		tok, err := vfTokenOption(a, role(a), opts(strings.ToUpper(tokText)), AccessType1)
		if err != nil || tok == nil || tok.String() != tokText {
			t.Errorf("%s: %v %v", a, tok, err)
		}
	}
	if tok, err := vfTokenOption("0000:00:01.0", role("0000:00:01.0"), url.Values{}, AccessType1); tok != nil || err != nil {
		t.Errorf("not given: %v %v", tok, err)
	}
	bad := []struct {
		name, dev, val string
		acc            Access
		want           []string
	}{
		{"not a UUID", "0000:00:00.0", "secret", AccessType1, []string{`vf-token="secret"`, "not a UUID", "8-4-4-4-12", "0000:00:00.0"}},
		{"no SR-IOV", "0000:00:02.0", tokText, AccessType1, []string{"0000:00:02.0 is neither an SR-IOV PF nor a VF", "drop vf-token="}},
		{"PF on a kernel driver", "0000:00:01.1", tokText, AccessType1, []string{"VF of 0000:00:00.1", "on fsl_enetc, not vfio-pci"}},
		{"uio", "0000:00:00.0", tokText, AccessUIO, []string{"uio_pci_generic", "vfio-pci's"}},
	}
	for _, c := range bad {
		_, err := vfTokenOption(c.dev, role(c.dev), opts(c.val), c.acc)
		var oe *driver.OptionError
		if !errors.As(err, &oe) || oe.Option != "vf-token" {
			t.Errorf("%s: %v is no vf-token option error", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
	}
	// Through the backend: refused before any VFIO node is opened.
	_, err := s.OpenPCI(spec(t, "pci:0000:00:02.0?vf-token="+tokText), driver.Config{})
	var oe *driver.OptionError
	if !errors.As(err, &oe) || oe.Option != "vf-token" || !strings.Contains(err.Error(), "neither an SR-IOV PF nor a VF") {
		t.Errorf("OpenPCI edu with a token: %v", err)
	}
}

// mustAddr parses a PCI address or fails the test.
func mustAddr(t *testing.T, s string) Address {
	t.Helper()
	a, err := ParseAddress(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fakeVFIO stands in for the kernel's VFIO ioctls of the VF token: it
// records each call's request and argument and answers with errs in turn.
type fakeVFIO struct {
	reqs []uintptr
	args [][]byte
	errs []error
}

func (f *fakeVFIO) install(t *testing.T, argLen func(req uintptr, p unsafe.Pointer) int) {
	old := vfioIoctl
	t.Cleanup(func() { vfioIoctl = old })
	vfioIoctl = func(fd int, req uintptr, p unsafe.Pointer, name string) (int, error) {
		f.reqs = append(f.reqs, req)
		f.args = append(f.args, append([]byte(nil), unsafe.Slice((*byte)(p), argLen(req, p))...))
		var err error
		if len(f.errs) > 0 {
			err, f.errs = f.errs[0], f.errs[1:]
		}
		if err != nil {
			// As vfio.Ioctl: the call's name, the errno reachable with errors.Is.
			return -1, &wrappedErrno{msg: name + ": " + err.Error(), errno: err}
		}
		return 0, nil
	}
}

type wrappedErrno struct {
	msg   string
	errno error
}

func (w *wrappedErrno) Error() string { return w.msg }
func (w *wrappedErrno) Unwrap() error { return w.errno }

// cString is a NUL-terminated argument's length.
func cString(_ uintptr, p unsafe.Pointer) int {
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return n
}

// argsz is a VFIO struct's length, from its leading argsz.
func argsz(_ uintptr, p unsafe.Pointer) int { return int(*(*uint32)(p)) }

func TestVFTokenFeaturePayload(t *testing.T) {
	tok := mustToken(t, tokText)
	b := vfTokenFeature(tok)
	if len(b) != 24 || binary.NativeEndian.Uint32(b[0:]) != 24 || binary.NativeEndian.Uint32(b[4:]) != 0x20000 {
		t.Fatalf("header % x: want argsz 24, flags SET|PCI_VF_TOKEN (0x20000)", b[:8])
	}
	if string(b[8:]) != string(tok[:]) {
		t.Errorf("data % x, want % x", b[8:], tok[:])
	}
	var f fakeVFIO
	f.install(t, argsz)
	d := &VFIODevice{Name: "0000:00:00.0", fd: 42}
	if err := d.SetVFToken(tok); err != nil {
		t.Fatal(err)
	}
	if len(f.reqs) != 1 || f.reqs[0] != vfio.DeviceFeature || string(f.args[0]) != string(b) {
		t.Fatalf("calls %#x %x, want one VFIO_DEVICE_FEATURE with % x", f.reqs, f.args, b)
	}
	// Not a PF (or a kernel before 5.7): ENOTTY, said plainly.
	f.errs = []error{unix.ENOTTY}
	err := d.SetVFToken(tok)
	if !errors.Is(err, unix.ENOTTY) || !strings.Contains(err.Error(), "0000:00:00.0") || !strings.Contains(err.Error(), "only for an SR-IOV PF") {
		t.Errorf("ENOTTY: %v", err)
	}
}

func TestOpenDeviceTokenName(t *testing.T) {
	tr := sriovPCITree(t)
	g := &Group{c: &Container{sys: tr.sys()}, fd: -1, ID: "7"}
	tok := mustToken(t, strings.ToUpper(tokText))
	var f fakeVFIO
	f.install(t, cString)
	// A VF with a token: the name carries it; a wrong one is EACCES.
	f.errs = []error{unix.EACCES}
	_, err := g.OpenDeviceToken("0000:00:01.0", &tok)
	if len(f.reqs) != 1 || f.reqs[0] != vfio.GroupGetDeviceFD || string(f.args[0]) != "0000:00:01.0 vf_token="+tokText {
		t.Fatalf("asked for %q (request %#x)", f.args, f.reqs)
	}
	if !errors.Is(err, ErrVFToken) || !errors.Is(err, unix.EACCES) {
		t.Fatalf("wrong token: %v", err)
	}
	for _, w := range []string{"0000:00:01.0: ", "vf-token=" + tokText + " is not the token of this VF's PF 0000:00:00.0", "pci:0000:00:00.0?vf-token=UUID"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("wrong token: %q lacks %q", err, w)
		}
	}
	// Without one: the bare name, and the error says where the token goes.
	f.errs = []error{unix.EACCES}
	_, err = g.OpenDeviceToken("0000:00:01.0", nil)
	if string(f.args[1]) != "0000:00:01.0" {
		t.Errorf("asked for %q without a token", f.args[1])
	}
	for _, w := range []string{"VF 0000:00:01.0 belongs to PF 0000:00:00.0 on vfio-pci", "pci:0000:00:00.0?vf-token=UUID", "pci:0000:00:01.0?vf-token=UUID"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("no token: %q lacks %q", err, w)
		}
	}
	// Any other failure keeps its own message.
	f.errs = []error{unix.EBUSY}
	_, err = g.OpenDeviceToken("0000:00:01.0", &tok)
	if errors.Is(err, ErrVFToken) || !strings.Contains(err.Error(), "already open") {
		t.Errorf("EBUSY: %v", err)
	}
}

func TestVFTokenRefusal(t *testing.T) {
	s := sriovPCITree(t).sys()
	tok := mustToken(t, tokText)
	// As OpenDevice and the bind report the kernel's answer.
	kernel := func(e unix.Errno) error {
		return &DeviceError{Device: "x", Op: "get device", Err: &wrappedErrno{msg: "VFIO_GROUP_GET_DEVICE_FD: " + e.Error(), errno: e}}
	}
	cases := []struct {
		name, dev string
		tok       *VFToken
		errno     unix.Errno
		want      []string // nil: not a token refusal
	}{
		{"VF, none", "0000:00:01.0", nil, unix.EACCES, []string{"belongs to PF 0000:00:00.0", "?vf-token=UUID"}},
		{"VF, wrong", "0000:00:01.0", &tok, unix.EACCES, []string{"is not the token of this VF's PF 0000:00:00.0"}},
		{"PF with VFs open, none", "0000:00:00.0", nil, unix.EACCES, []string{"PF 0000:00:00.0 has VFs open", "add ?vf-token=UUID"}},
		{"PF with VFs open, wrong", "0000:00:00.0", &tok, unix.EACCES, []string{"another VF token than vf-token=" + tokText}},
		{"token where none applies", "0000:00:01.1", &tok, unix.EINVAL, []string{"only for a PF bound to it", "drop vf-token="}},
		{"no SR-IOV", "0000:00:02.0", nil, unix.EACCES, nil},
		{"other errno", "0000:00:01.0", &tok, unix.ENODEV, nil},
		{"EINVAL without a token", "0000:00:01.0", nil, unix.EINVAL, nil},
		{"not a PCI name", "2188000.ethernet", &tok, unix.EACCES, nil},
	}
	for _, c := range cases {
		err := s.vfTokenRefusal(c.dev, c.tok, kernel(c.errno))
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v, want no token refusal", c.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrVFToken) || !errors.Is(err, c.errno) || !strings.HasPrefix(err.Error(), c.dev+": ") {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if strings.Count(err.Error(), c.dev+":") != 1 {
			t.Errorf("%s: %q names the device more than once", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
	}
}

func TestBindIOMMUFDToken(t *testing.T) {
	s := sriovPCITree(t).sys()
	tok := mustToken(t, tokText)
	var f fakeVFIO
	var seen [][16]byte
	f.install(t, func(req uintptr, p unsafe.Pointer) int {
		if n := argsz(req, p); n >= 24 {
			// token_uuid_ptr, read as the pointer it holds (its low
			// bytes on a little-endian 32-bit machine).
			ptr := *(*unsafe.Pointer)(unsafe.Add(p, 16))
			seen = append(seen, *(*[16]byte)(ptr))
		}
		return argsz(req, p)
	})
	// A kernel with the flag: one bind, argsz 24, flag set, the token
	// behind the pointer.
	if err := s.bindIOMMUFD(3, 9, "0000:00:01.0", &tok); err != nil {
		t.Fatal(err)
	}
	a := f.args[0]
	if len(f.reqs) != 1 || f.reqs[0] != vfio.DeviceBindIOMMUFD || len(a) != 24 || binary.NativeEndian.Uint32(a[4:]) != 1 || binary.NativeEndian.Uint32(a[8:]) != 9 {
		t.Fatalf("bind % x (request %#x)", a, f.reqs)
	}
	if len(seen) != 1 || seen[0] != tok {
		t.Fatalf("token behind the pointer: % x", seen)
	}
	// A kernel before the flag (EINVAL): bound again the old way.
	f = fakeVFIO{errs: []error{unix.EINVAL, nil}}
	if err := s.bindIOMMUFD(3, 9, "0000:00:01.0", &tok); err != nil {
		t.Fatal(err)
	}
	if len(f.args) != 2 || len(f.args[1]) != 16 || binary.NativeEndian.Uint32(f.args[1][4:]) != 0 {
		t.Fatalf("retry % x", f.args)
	}
	// A refused token is said as such; without one, one bind of 16 bytes.
	f = fakeVFIO{errs: []error{unix.EACCES}}
	err := s.bindIOMMUFD(3, 9, "0000:00:01.0", &tok)
	if !errors.Is(err, ErrVFToken) || !strings.Contains(err.Error(), "is not the token of this VF's PF 0000:00:00.0") || len(f.args) != 1 {
		t.Errorf("wrong token: %v after %d binds", err, len(f.args))
	}
	f = fakeVFIO{errs: []error{unix.EACCES}}
	err = s.bindIOMMUFD(3, 9, "0000:00:01.0", nil)
	if len(f.args) != 1 || len(f.args[0]) != 16 || !errors.Is(err, ErrVFToken) || !strings.Contains(err.Error(), "belongs to PF 0000:00:00.0") {
		t.Errorf("no token: %v, binds % x", err, f.args)
	}
}

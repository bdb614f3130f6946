package pci

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci/internal/vfio"
)

// The VF token (docs/hardware.md, "Bind the port to vfio-pci"): vfio-pci
// gives every SR-IOV PF bound to it a VF token, a UUID, and opens a VF the
// PF created only for a caller that names the same UUID. The kernel starts
// each PF with a random token nobody knows, so the PF's user sets one
// (VFIO_DEVICE_FEATURE, feature PCI_VF_TOKEN; it cannot be read back) and
// hands it to the VFs' users. While any of its VFs is open, the PF itself
// opens only with that token. A device that is neither such a PF nor its
// VF is refused when given a token (EINVAL); a missing or wrong token is
// EACCES. The group path passes the token after the device name given to
// VFIO_GROUP_GET_DEVICE_FD ("0000:00:01.0 vf_token=UUID"); the cdev path
// passes it to VFIO_DEVICE_BIND_IOMMUFD with VFIO_DEVICE_BIND_FLAG_TOKEN,
// which kernels from 2025 on define and check (earlier cdev kernels refuse
// the flag and check no token there).
//
// gopmd sets and passes a token only when the spec gives one (vf-token=):
// it is a shared secret the administrator picks once (uuidgen) and writes
// into the PF's and the VFs' specs, so it outlives restarts and never has
// to be printed or logged.

// VFToken is a VF token: the UUID an SR-IOV PF's vfio-pci user and its
// VFs' users share.
type VFToken [16]byte

// ParseVFToken reads a UUID in its text form, 8-4-4-4-12 hexadecimal digits
// (either case), as vfio-pci's parser takes it.
func ParseVFToken(s string) (VFToken, error) {
	var t VFToken
	if len(s) != 36 {
		return t, fmt.Errorf("%d characters, want 36", len(s))
	}
	var digits []byte
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return t, fmt.Errorf("character %d is %q, want '-'", i+1, s[i])
			}
			continue
		}
		digits = append(digits, s[i])
	}
	if _, err := hex.Decode(t[:], digits); err != nil {
		return t, fmt.Errorf("not hexadecimal: %v", err)
	}
	return t, nil
}

// String is the token's text form, lower case.
func (t VFToken) String() string {
	h := hex.EncodeToString(t[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// ErrVFToken is wrapped when vfio-pci refuses to open a PF or VF for its
// VF token: none given where one is needed, a wrong one, or one given
// where none applies.
var ErrVFToken = errors.New("VF token refused")

// vfTokenForm is what vf-token= accepts, for errors.
const vfTokenForm = "a UUID, 8-4-4-4-12 hex digits, e.g. from uuidgen; the same on the PF's spec and on its VFs'"

// sriovRole is a PCI function's place in SR-IOV as sysfs shows it.
type sriovRole struct {
	pf       bool   // has sriov_totalvfs
	physfn   string // a VF: its PF's address ("" for a PF or a plain function)
	pfDriver string // a VF: the PF's driver
}

func (s Sys) sriovRoleOf(a Address) sriovRole {
	dir := s.pciDev(a)
	var r sriovRole
	if _, err := os.Stat(dir + "/sriov_totalvfs"); err == nil {
		r.pf = true
	}
	if pf := linkBase(dir + "/physfn"); pf != "" {
		r.physfn = pf
		r.pfDriver = linkBase(s.Path("/sys/bus/pci/devices/" + pf + "/driver"))
	}
	return r
}

// vfTokenOption reads vf-token= from a pci: spec's options and checks that
// it applies to the device: nil when not given.
func vfTokenOption(dev string, role sriovRole, opts url.Values, acc Access) (*VFToken, error) {
	vs := opts["vf-token"]
	if len(vs) == 0 {
		return nil, nil
	}
	v := vs[len(vs)-1]
	bad := func(problem string) error {
		return &DeviceError{Device: dev, Op: "open", Err: driver.BadOption("vf-token", v, problem, vfTokenForm)}
	}
	t, err := ParseVFToken(v)
	if err != nil {
		return nil, bad("not a UUID: " + err.Error())
	}
	switch {
	case acc == AccessUIO:
		return nil, bad("the device is on uio_pci_generic; a VF token is vfio-pci's (bind the PF and its VFs to vfio-pci)")
	case role.physfn != "" && role.pfDriver != DriverVFIO:
		drv := role.pfDriver
		if drv == "" {
			drv = "no driver"
		}
		return nil, bad(fmt.Sprintf("%s is a VF of %s, which is on %s, not vfio-pci: only a vfio-pci PF's VFs take a token (drop vf-token=)", dev, role.physfn, drv))
	case role.physfn == "" && !role.pf:
		return nil, bad(dev + " is neither an SR-IOV PF nor a VF: a VF token applies to a PF on vfio-pci and its VFs (drop vf-token=)")
	}
	return &t, nil
}

// vfioDeviceName is the string VFIO_GROUP_GET_DEVICE_FD matches: the
// device name, then " vf_token=UUID" when a token is given.
func vfioDeviceName(name string, tok *VFToken) string {
	if tok == nil {
		return name
	}
	return name + " vf_token=" + tok.String()
}

// vfTokenFeature is the VFIO_DEVICE_FEATURE argument that sets tok: the
// header (argsz, SET | PCI_VF_TOKEN) and the 16 bytes in text order.
func vfTokenFeature(tok VFToken) []byte {
	hs := int(unsafe.Sizeof(vfio.DeviceFeatureHdr{}))
	buf := make([]byte, hs+len(tok))
	h := (*vfio.DeviceFeatureHdr)(unsafe.Pointer(&buf[0]))
	*h = vfio.DeviceFeatureHdr{Argsz: uint32(len(buf)), Flags: vfio.DeviceFeatureSet | vfio.DeviceFeaturePCIVFToken}
	copy(buf[hs:], tok[:])
	return buf
}

// vfioIoctl is the ioctl the VF token's calls go through (tests replace it).
var vfioIoctl = vfio.Ioctl

// SetVFToken sets the VF token of a PF bound to vfio-pci: from then on its
// VFs open only with tok (and, while one is open, the PF too).
func (d *VFIODevice) SetVFToken(tok VFToken) error {
	buf := vfTokenFeature(tok)
	_, err := vfioIoctl(d.fd, vfio.DeviceFeature, unsafe.Pointer(&buf[0]), "VFIO_DEVICE_FEATURE(PCI_VF_TOKEN)")
	runtime.KeepAlive(buf)
	if err != nil {
		fix := ""
		if errors.Is(err, unix.ENOTTY) {
			fix = "vfio-pci takes a VF token only for an SR-IOV PF (Linux 5.7 and later); drop vf-token="
		}
		return &DeviceError{Device: d.Name, Op: "set the VF token", Err: err, Fix: fix}
	}
	return nil
}

// OpenDeviceToken is OpenDevice for an SR-IOV PF on vfio-pci or one of its
// VFs: it passes tok (nil: none) after the device name, and says which
// token vfio-pci wants when it refuses the device for its token.
func (g *Group) OpenDeviceToken(name string, tok *VFToken) (*VFIODevice, error) {
	b := append([]byte(vfioDeviceName(name, tok)), 0)
	fd, err := vfioIoctl(g.fd, vfio.GroupGetDeviceFD, unsafe.Pointer(&b[0]), "VFIO_GROUP_GET_DEVICE_FD")
	runtime.KeepAlive(b)
	if err != nil {
		if e := g.c.sys.vfTokenRefusal(name, tok, err); e != nil {
			return nil, e
		}
		fix := "is the device bound to vfio-pci, and in group " + g.ID + "?"
		if errors.Is(err, unix.EBUSY) {
			fix = "the device is already open (another gopmd program, or a VM using it through VFIO): close that first"
		}
		return nil, &DeviceError{Device: name, Op: "get device from VFIO group " + g.ID, Err: err, Fix: fix}
	}
	return newVFIODevice(name, fd)
}

// bindIOMMUFD binds a cdev fd to an iommufd, with tok when given. A
// kernel that predates VFIO_DEVICE_BIND_FLAG_TOKEN refuses the flag with
// EINVAL and checks no token on this path; the bind is then made again
// without it (a PF's token is set with SetVFToken after the bind either
// way).
func (s Sys) bindIOMMUFD(fd, iommufd int, name string, tok *VFToken) error {
	var err error
	if tok != nil {
		t := *tok
		b := vfio.DeviceBindIOMMUFDTokenArg{Argsz: uint32(unsafe.Sizeof(vfio.DeviceBindIOMMUFDTokenArg{})), Flags: vfio.DeviceBindFlagToken,
			IOMMUFD: int32(iommufd), TokenUUIDPtr: uint64(uintptr(unsafe.Pointer(&t[0])))}
		_, err = vfioIoctl(fd, vfio.DeviceBindIOMMUFD, unsafe.Pointer(&b), "VFIO_DEVICE_BIND_IOMMUFD")
		runtime.KeepAlive(&b)
		runtime.KeepAlive(&t)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINVAL) {
			if e := s.vfTokenRefusal(name, tok, err); e != nil {
				return e
			}
			return &DeviceError{Device: name, Op: "bind to iommufd", Err: err}
		}
	}
	b := vfio.DeviceBindIOMMUFDArg{Argsz: uint32(unsafe.Sizeof(vfio.DeviceBindIOMMUFDArg{})), IOMMUFD: int32(iommufd)}
	_, err = vfioIoctl(fd, vfio.DeviceBindIOMMUFD, unsafe.Pointer(&b), "VFIO_DEVICE_BIND_IOMMUFD")
	runtime.KeepAlive(&b)
	if err != nil {
		if e := s.vfTokenRefusal(name, nil, err); e != nil {
			return e
		}
		return &DeviceError{Device: name, Op: "bind to iommufd", Err: err}
	}
	return nil
}

// vfTokenRefusal turns vfio-pci's refusal of a device for its VF token
// (EACCES: none or a wrong one; EINVAL with a token: one where none
// applies) into an error that names the device, its PF or VFs and
// vf-token=. It returns nil for any other error.
func (s Sys) vfTokenRefusal(name string, tok *VFToken, err error) error {
	a, perr := ParseAddress(name)
	if perr != nil {
		return nil
	}
	role := s.sriovRoleOf(a)
	if role.physfn == "" && !role.pf {
		return nil
	}
	cause := err
	var de *DeviceError
	if errors.As(err, &de) {
		cause = de.Err
	}
	wrap := func(fix string) error {
		return &DeviceError{Device: a.String(), Op: "open", Err: fmt.Errorf("%w: %w", ErrVFToken, cause), Fix: fix}
	}
	switch {
	case errors.Is(err, unix.EACCES) && role.physfn != "" && tok == nil:
		return wrap(fmt.Sprintf("VF %s belongs to PF %s on vfio-pci, which opens it only with the PF's VF token: start the PF with pci:%s?vf-token=UUID and give this VF the same UUID, pci:%s?vf-token=UUID", a, role.physfn, role.physfn, a))
	case errors.Is(err, unix.EACCES) && role.physfn != "":
		return wrap(fmt.Sprintf("vf-token=%s is not the token of this VF's PF %s: give the UUID on the PF's spec (pci:%s?vf-token=UUID); the PF must have been opened with it since it was bound to vfio-pci", tok, role.physfn, role.physfn))
	case errors.Is(err, unix.EACCES) && tok == nil:
		return wrap(fmt.Sprintf("PF %s has VFs open, and vfio-pci then opens the PF only with their VF token: add ?vf-token=UUID with the UUID they were opened with", a))
	case errors.Is(err, unix.EACCES):
		return wrap(fmt.Sprintf("PF %s has VFs open with another VF token than vf-token=%s: give the UUID they were opened with, or close them first", a, tok))
	case errors.Is(err, unix.EINVAL) && tok != nil:
		return wrap(fmt.Sprintf("vfio-pci takes a VF token only for a PF bound to it and for the VFs it created for that PF; %s is not one now (the kernel log says why): drop vf-token= or rebind the PF to vfio-pci and create the VFs again", a))
	}
	return nil
}

package pci

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gopmd/gopmd/internal/devtree"
	"golang.org/x/sys/unix"
)

// Sys is the kernel's view of devices: sysfs, /dev and /proc, found under
// Root ("" or "/" for the running system). Every path this package touches
// goes through a Sys, so tests run against fake trees in testdata.
type Sys struct {
	Root string
	// Plan, when not nil, receives every sysfs write Bind, Unbind and the
	// others would make, and nothing is written (a dry run). The writes
	// are checked as WriteAttr checks them; what the kernel would do in
	// reply (unbinding, probing) does not happen, so a plan stops where a
	// real run would look at the result.
	Plan *[]Write
	// kernel, in tests, plays the kernel's reaction to a sysfs write.
	kernel func(path, value string)
}

// Write is one sysfs write of a plan: Value written to Path.
type Write struct {
	Path  string `json:"path"`
	Value string `json:"value"`
}

// String reads as the shell command that makes the write.
func (w Write) String() string {
	v := strings.TrimSuffix(w.Value, "\n")
	if v == "" {
		return "echo > " + w.Path
	}
	return "echo " + v + " > " + w.Path
}

// Host is the running system.
var Host = Sys{}

// Path returns p (an absolute path such as "/sys/bus/pci") under the root.
func (s Sys) Path(p string) string {
	if s.Root == "" || s.Root == "/" {
		return p
	}
	return filepath.Join(s.Root, p)
}

func (s Sys) pciDev(a Address) string { return s.Path("/sys/bus/pci/devices/" + a.String()) }

// readString reads a one-line sysfs attribute without its newline.
func readString(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func readHex(p string) (uint64, error) {
	s, err := readString(p)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a hex number", p, s)
	}
	return v, nil
}

// linkBase returns the last element of a symlink's target, "" if p is not
// a symlink.
func linkBase(p string) string {
	t, err := os.Readlink(p)
	if err != nil {
		return ""
	}
	return filepath.Base(t)
}

// ErrOutsideSysfs is wrapped when a sysfs write would land outside /sys:
// a symbolic link planted in the path, or a device name that climbs out.
var ErrOutsideSysfs = errors.New("path resolves outside /sys")

// WriteAttr writes value to the sysfs attribute p (a path under s's /sys)
// the way a root process must: the directory is resolved (sysfs's own
// links, such as devices/X and X/driver, are followed) and must lie under
// /sys, and the attribute itself is opened with O_NOFOLLOW, so a link
// planted in its place is an error, never followed. Errors are the bare
// cause (ErrOutsideSysfs, ELOOP, a permission error) with the path.
func (s Sys) WriteAttr(p, value string) error {
	target, err := s.attrPath(p)
	if err != nil {
		return err
	}
	if s.Plan != nil {
		*s.Plan = append(*s.Plan, Write{Path: s.hostPath(p), Value: value})
		return nil
	}
	fd, err := unix.Open(target, unix.O_WRONLY|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			err = fmt.Errorf("%w: the attribute is a symbolic link, which sysfs attributes never are", ErrOutsideSysfs)
		}
		return &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	_, err = f.Write([]byte(value))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openAttr opens a sysfs file for reading and writing (config, resourceN)
// with the checks of WriteAttr: under /sys, no link in its place.
func (s Sys) openAttr(p string, flags int) (*os.File, error) {
	target, err := s.attrPath(p)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open(target, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// hostPath is p as the running system names it (the root taken off), for
// plans and messages.
func (s Sys) hostPath(p string) string {
	if s.Root == "" || s.Root == "/" {
		return p
	}
	if rel, err := filepath.Rel(s.Root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return "/" + rel
	}
	return p
}

// attrPath resolves a sysfs attribute's directory and checks that it lies
// under /sys and that the attribute is no symbolic link.
func (s Sys) attrPath(p string) (string, error) {
	sysRoot, err := filepath.EvalSymlinks(s.Path("/sys"))
	if err != nil {
		return "", &fs.PathError{Op: "write", Path: p, Err: err}
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", &fs.PathError{Op: "write", Path: p, Err: err}
	}
	if rel, err := filepath.Rel(sysRoot, dir); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", &fs.PathError{Op: "write", Path: p, Err: fmt.Errorf("%w (it leads to %s)", ErrOutsideSysfs, dir)}
	}
	target := filepath.Join(dir, filepath.Base(p))
	if fi, err := os.Lstat(target); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", &fs.PathError{Op: "write", Path: p, Err: fmt.Errorf("%w: the attribute is a symbolic link, which sysfs attributes never are", ErrOutsideSysfs)}
	}
	return target, nil
}

// writeAttr writes a sysfs attribute (see WriteAttr) and says in the error
// what failed and how to fix it.
func (s Sys) writeAttr(p, v, what string) error {
	err := s.WriteAttr(p, v)
	switch {
	case err == nil:
		if s.kernel != nil && s.Plan == nil {
			s.kernel(p, v)
		}
		return nil
	case errors.Is(err, ErrOutsideSysfs):
		return fmt.Errorf("%s: refusing to write %q to %s: %w (sysfs was tampered with or the device name is not a sysfs name; check the path)", what, v, p, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: write %q to %s: %w (run as root)", what, v, p, bareErr(err))
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %s does not exist: %w (is the kernel module loaded? e.g. modprobe vfio-pci)", what, p, err)
	default:
		return fmt.Errorf("%s: write %q to %s: %w", what, v, p, err)
	}
}

// BAR is one PCI base address register as sysfs reports it in `resource`.
type BAR struct {
	Index int
	Start uint64 // physical (host) address
	Size  uint64 // 0 when the BAR is not implemented
	Flags uint64 // IORESOURCE_* flags
}

// BAR resource flags from `resource` (include/linux/ioport.h).
const (
	resourceIO       = 0x100
	resourceMem      = 0x200
	resourcePrefetch = 0x2000
	resourceMem64    = 0x100000
)

// IsMem reports whether the BAR is memory space (mmappable).
func (b BAR) IsMem() bool { return b.Flags&resourceMem != 0 }

// IsIO reports whether the BAR is I/O port space.
func (b BAR) IsIO() bool { return b.Flags&resourceIO != 0 }

// Is64 reports whether the BAR is 64-bit memory (IORESOURCE_MEM_64).
func (b BAR) Is64() bool { return b.Flags&resourceMem64 != 0 }

// Prefetchable reports whether the BAR is prefetchable memory.
func (b BAR) Prefetchable() bool { return b.Flags&resourcePrefetch != 0 }

// parseResource parses a PCI device's sysfs `resource` file: one line per
// resource, "start end flags" in hex; the first six are BAR0-5.
func parseResource(text string) ([]BAR, error) {
	var bars []BAR
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if i >= 6 {
			break
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d %q: want start end flags", i+1, line)
		}
		var v [3]uint64
		for k := range f {
			n, err := strconv.ParseUint(strings.TrimPrefix(f[k], "0x"), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d %q: %q is not hex", i+1, line, f[k])
			}
			v[k] = n
		}
		b := BAR{Index: i, Start: v[0], Flags: v[2]}
		if v[1] > v[0] || (v[1] == v[0] && v[0] != 0) {
			b.Size = v[1] - v[0] + 1
		}
		bars = append(bars, b)
	}
	return bars, nil
}

// DeviceError is a failure about one device; it names the device and says
// how to fix the problem.
type DeviceError struct {
	Device string // PCI address, platform node or /dev/uioN
	Op     string
	Err    error
	Fix    string
}

// Error reads "device: op: cause (fix)"; without an Op, "device: cause
// (fix)".
func (e *DeviceError) Error() string {
	s := e.Device
	if e.Op != "" {
		s += ": " + e.Op
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Fix != "" {
		s += " (" + e.Fix + ")"
	}
	return s
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *DeviceError) Unwrap() error { return e.Err }

// Errors matched with errors.Is.
var (
	ErrNoDevice       = errors.New("no such device")
	ErrWrongDriver    = errors.New("device bound to an unexpected driver")
	ErrGroupBusy      = errors.New("IOMMU group holds devices bound to kernel drivers")
	ErrNotViable      = errors.New("IOMMU group not viable")
	ErrNoIOMMU        = errors.New("device has no IOMMU group")
	ErrRegionTooSmall = errors.New("region too small")
	ErrPermission     = fs.ErrPermission
)

// ofNode is the device-tree node of PCI device a (its of_node link), the
// zero Node when it has none or the link leads outside the device tree.
func (s Sys) ofNode(a Address) devtree.Node {
	n, err := devtree.OfNode(s.pciDev(a))
	if err != nil || !n.Exists() {
		return devtree.Node{}
	}
	root, err := filepath.EvalSymlinks(s.Path("/sys/firmware/devicetree/base"))
	if err != nil || !strings.HasPrefix(n.Path(), root+string(filepath.Separator)) {
		return devtree.Node{}
	}
	return n
}

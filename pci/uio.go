package pci

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// UIOMap is one memory map of a UIO device, from
// /sys/class/uio/uioN/maps/mapM/{name,addr,size,offset}.
type UIOMap struct {
	Index  int
	Name   string
	Addr   uint64 // physical (bus) address of the map's page
	Size   uint64
	Offset uint64 // offset of the device memory inside its first page
}

// UIOInfo is what sysfs says about a UIO device.
type UIOInfo struct {
	Dev     string // "/dev/uio0"
	Name    string // the driver-given name ("uio_pdrv_genirq", "imx-fec-uio")
	Version string
	Maps    []UIOMap
	// Parent is the device the UIO device belongs to: a platform node
	// name or a PCI address; ParentBus is "platform" or "pci".
	Parent, ParentBus string
}

// uioName turns "/dev/uio0", "uio0" into "uio0".
func uioName(dev string) (string, error) {
	n := filepath.Base(dev)
	if !strings.HasPrefix(n, "uio") {
		return "", fmt.Errorf("%q is not a UIO device (want /dev/uioN)", dev)
	}
	if _, err := strconv.Atoi(n[3:]); err != nil {
		return "", fmt.Errorf("%q is not a UIO device (want /dev/uioN)", dev)
	}
	return n, nil
}

// UIO reads a UIO device's attributes and memory maps from sysfs. dev is
// "/dev/uioN" or "uioN".
func (s Sys) UIO(dev string) (*UIOInfo, error) {
	n, err := uioName(dev)
	if err != nil {
		return nil, &DeviceError{Device: dev, Op: "uio", Err: err, Fix: "list them with ls /sys/class/uio"}
	}
	base := s.Path("/sys/class/uio/" + n)
	info := &UIOInfo{Dev: "/dev/" + n}
	if info.Name, err = readString(base + "/name"); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &DeviceError{Device: info.Dev, Op: "uio", Err: ErrNoDevice,
				Fix: "no " + base + ": bind a UIO driver to the device (uio_pdrv_genirq with of_id=generic-uio, or uio_pci_generic) and check ls /sys/class/uio"}
		}
		return nil, &DeviceError{Device: info.Dev, Op: "read name", Err: err}
	}
	info.Version, _ = readString(base + "/version")
	ents, _ := filepath.Glob(base + "/maps/map*")
	for _, e := range ents {
		idx, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(e), "map"))
		if err != nil {
			continue
		}
		m := UIOMap{Index: idx}
		m.Name, _ = readString(e + "/name")
		var errs []error
		var e1, e2, e3 error
		m.Addr, e1 = readHex(e + "/addr")
		m.Size, e2 = readHex(e + "/size")
		m.Offset, e3 = readHex(e + "/offset")
		errs = append(errs, e1, e2, e3)
		if err := errors.Join(errs...); err != nil {
			return nil, &DeviceError{Device: info.Dev, Op: fmt.Sprintf("map%d", idx), Err: err, Fix: "the UIO driver exposes a malformed map"}
		}
		info.Maps = append(info.Maps, m)
	}
	sort.Slice(info.Maps, func(i, j int) bool { return info.Maps[i].Index < info.Maps[j].Index })
	if t, err := filepath.EvalSymlinks(base + "/device"); err == nil {
		info.Parent = filepath.Base(t)
		info.ParentBus = linkBase(base + "/device/subsystem")
		if info.ParentBus == "" {
			if _, err := ParseAddress(info.Parent); err == nil {
				info.ParentBus = "pci"
			} else {
				info.ParentBus = "platform"
			}
		}
	}
	return info, nil
}

// UIODevice is an open /dev/uioN with its memory maps mmapped.
type UIODevice struct {
	Info    *UIOInfo
	file    *os.File
	mapped  [][]byte
	Windows []*Window // one per map, in map order
}

// OpenUIO opens /dev/uioN and mmaps every memory map: map M is selected by
// the mmap offset M × page size, and the window starts at the map's offset
// inside that page.
func (s Sys) OpenUIO(dev string) (*UIODevice, error) {
	info, err := s.UIO(dev)
	if err != nil {
		return nil, err
	}
	if len(info.Maps) == 0 {
		return nil, &DeviceError{Device: info.Dev, Op: "open", Err: errors.New("the device has no memory maps"),
			Fix: "its driver exposes no registers; for PCI devices under uio_pci_generic use the pci backend, which maps resourceN"}
	}
	path := s.Path(info.Dev)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_SYNC, 0)
	if err != nil {
		return nil, &DeviceError{Device: info.Dev, Op: "open", Err: bareErr(err), Fix: fixOpen(err)}
	}
	u := &UIODevice{Info: info, file: f}
	ps := uint64(os.Getpagesize())
	for _, m := range info.Maps {
		length := (m.Offset + m.Size + ps - 1) &^ (ps - 1)
		mem, err := unix.Mmap(int(f.Fd()), int64(uint64(m.Index)*ps), int(length), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			u.Close()
			return nil, &DeviceError{Device: info.Dev, Op: fmt.Sprintf("mmap map%d (%#x bytes at %#x)", m.Index, m.Size, m.Addr), Err: err, Fix: fixOpen(err)}
		}
		u.mapped = append(u.mapped, mem)
		u.Windows = append(u.Windows, NewWindow(fmt.Sprintf("%s map%d", info.Dev, m.Index), mem[m.Offset:m.Offset+m.Size]))
	}
	return u, nil
}

// WaitIRQ blocks until the device's interrupt fires and returns the total
// interrupt count (a 4-byte read of /dev/uioN).
func (u *UIODevice) WaitIRQ() (uint32, error) {
	var b [4]byte
	if _, err := u.file.Read(b[:]); err != nil {
		return 0, &DeviceError{Device: u.Info.Dev, Op: "wait for interrupt", Err: err}
	}
	return binary.NativeEndian.Uint32(b[:]), nil
}

// EnableIRQ enables (or disables) the interrupt, for UIO drivers with
// irqcontrol (uio_pdrv_genirq has it; level interrupts must be re-enabled
// after each one).
func (u *UIODevice) EnableIRQ(on bool) error {
	var b [4]byte
	if on {
		binary.NativeEndian.PutUint32(b[:], 1)
	}
	if _, err := u.file.Write(b[:]); err != nil {
		return &DeviceError{Device: u.Info.Dev, Op: "irq control", Err: err, Fix: "the UIO driver may lack irqcontrol"}
	}
	return nil
}

// Close unmaps the windows and closes the device.
func (u *UIODevice) Close() error {
	var errs []error
	for _, m := range u.mapped {
		errs = append(errs, unix.Munmap(m))
	}
	u.mapped, u.Windows = nil, nil
	if u.file != nil {
		errs = append(errs, u.file.Close())
		u.file = nil
	}
	return errors.Join(errs...)
}

func fixOpen(err error) string {
	switch {
	case errors.Is(err, ErrOutsideSysfs):
		return "sysfs was tampered with: check the path"
	case errors.Is(err, fs.ErrPermission):
		return "run as root"
	case errors.Is(err, fs.ErrNotExist):
		return "the device node is missing: is devtmpfs mounted on /dev?"
	case errors.Is(err, unix.EINVAL):
		return "the kernel refused the mapping size or offset"
	}
	return ""
}

// UIODevices lists every UIO device (/sys/class/uio/uioN) in number order
// with its maps and parent. A system without UIO gives an empty list.
func (s Sys) UIODevices() ([]*UIOInfo, error) {
	ents, err := os.ReadDir(s.Path("/sys/class/uio"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("UIO devices: %w", err)
	}
	var out []*UIOInfo
	for _, e := range ents {
		if _, err := uioName(e.Name()); err != nil {
			continue
		}
		info, err := s.UIO(e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	num := func(dev string) int { n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(dev), "uio")); return n }
	sort.Slice(out, func(i, j int) bool { return num(out[i].Dev) < num(out[j].Dev) })
	return out, nil
}

// bareErr drops the operation and path of an *fs.PathError (the
// DeviceError around it already says which file it opened).
func bareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

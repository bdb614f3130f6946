// Package gpio drives a GPIO line through the kernel's GPIO character
// device (/dev/gpiochipN, the v2 ABI), and reads a PHY's reset line and
// its timings from the device tree: what the kernel's PHY layer does with
// reset-gpios (Documentation/devicetree/bindings/net/ethernet-phy.yaml,
// drivers/net/phy/mdio_device.c) and the FEC driver with the MAC node's
// older phy-reset-gpios (fsl,fec.yaml, fec_main.c fec_reset_phy).
//
// A line the kernel (or another process) holds is never taken: the
// request is refused with the holder's name.
package gpio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/gopmd/gopmd/internal/devtree"
	"golang.org/x/sys/unix"
)

// Line is one requested output line.
type Line interface {
	// Set drives the line to its active (true) or inactive level; the
	// active level is low for an active-low line.
	Set(active bool) error
	Close() error
}

// Chip is a GPIO controller whose lines can be requested.
type Chip interface {
	// RequestOutput requests line offset as an output, driven inactive
	// at once, under the consumer name. It refuses a line that is in use.
	RequestOutput(offset uint32, activeLow bool, consumer string) (Line, error)
	Close() error
}

// Opener opens the chip of a GPIO controller's device-tree node.
type Opener func(ctrlNode string) (Chip, error)

// SysDevices is where sysfs lists the GPIO chips (a variable so tests can
// point it elsewhere).
var SysDevices = "/sys/bus/gpio/devices"

// DevDir is where the chips' character devices sit.
var DevDir = "/dev"

// OpenNode opens the character device of the GPIO chip whose device-tree
// node is ctrlNode: the gpiochipN under SysDevices whose of_node is that
// node.
func OpenNode(ctrlNode string) (Chip, error) {
	name, err := chipForNode(ctrlNode)
	if err != nil {
		return nil, err
	}
	return OpenChip(filepath.Join(DevDir, name))
}

// chipForNode is the gpiochipN whose of_node link names ctrlNode (compared
// below each one's devicetree/base, so a tree under a test directory
// matches too).
func chipForNode(ctrlNode string) (string, error) {
	want := devtree.At(ctrlNode).Rel()
	ents, err := os.ReadDir(SysDevices)
	if err != nil {
		return "", fmt.Errorf("GPIO controller %s: list GPIO chips: %w (is the kernel's GPIO character device built in?)", ctrlNode, err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "gpiochip") {
			continue
		}
		of, err := devtree.OfNode(filepath.Join(SysDevices, e.Name()))
		if err != nil || !of.Exists() {
			continue
		}
		if of.Rel() == want {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("GPIO controller %s: no chip under %s has it as its of_node: its driver is not bound (an I2C expander's driver not loaded?)", ctrlNode, SysDevices)
}

// chardev is a chip opened through its character device.
type chardev struct {
	path string
	fd   int
}

// OpenChip opens a GPIO chip's character device.
func OpenChip(path string) (Chip, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &chardev{path: path, fd: fd}, nil
}

func (c *chardev) Close() error { return unix.Close(c.fd) }

func (c *chardev) RequestOutput(offset uint32, activeLow bool, consumer string) (Line, error) {
	var info lineInfo
	info.Offset = offset
	if err := ioctl(c.fd, getLineInfoIoctl, unsafe.Pointer(&info)); err != nil {
		return nil, fmt.Errorf("%s line %d: GPIO_V2_GET_LINEINFO: %w", c.path, offset, err)
	}
	if info.Flags&flagUsed != 0 {
		return nil, &BusyError{Chip: c.path, Offset: offset, Consumer: cstr(info.Consumer[:])}
	}
	var r lineRequest
	r.Offsets[0] = offset
	r.Num_lines = 1
	copy(r.Consumer[:len(r.Consumer)-1], consumer)
	r.Config.Flags = flagOutput
	if activeLow {
		r.Config.Flags |= flagActiveLow
	}
	// Driven inactive from the request on: no glitch into reset before
	// the pulse the caller times.
	r.Config.Num_attrs = 1
	r.Config.Attrs[0].Attr.Id = attrOutputValues
	r.Config.Attrs[0].Attr.Flags = 0
	r.Config.Attrs[0].Mask = 1
	if err := ioctl(c.fd, getLineIoctl, unsafe.Pointer(&r)); err != nil {
		if errors.Is(err, unix.EBUSY) {
			return nil, &BusyError{Chip: c.path, Offset: offset}
		}
		return nil, fmt.Errorf("%s line %d: GPIO_V2_GET_LINE: %w", c.path, offset, err)
	}
	return &chardevLine{path: c.path, offset: offset, fd: int(r.Fd)}, nil
}

type chardevLine struct {
	path   string
	offset uint32
	fd     int
}

func (l *chardevLine) Set(active bool) error {
	v := lineValues{Mask: 1}
	if active {
		v.Bits = 1
	}
	if err := ioctl(l.fd, setLineValuesIoctl, unsafe.Pointer(&v)); err != nil {
		return fmt.Errorf("%s line %d: GPIO_V2_LINE_SET_VALUES: %w", l.path, l.offset, err)
	}
	return nil
}

func (l *chardevLine) Close() error { return unix.Close(l.fd) }

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

func cstr(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// BusyError is a line someone else holds: the kernel (a PHY or MAC
// driver, a regulator, a gpio-hog) or another process.
type BusyError struct {
	Chip     string
	Offset   uint32
	Consumer string // "" when the kernel did not say
}

func (e *BusyError) Error() string {
	who := "someone else"
	if e.Consumer != "" {
		who = fmt.Sprintf("%q", e.Consumer)
	}
	return fmt.Sprintf("%s line %d is held by %s: gopmd does not take a line from its holder", e.Chip, e.Offset, who)
}

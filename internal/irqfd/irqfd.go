// Package irqfd holds the file descriptors interrupts reach user space
// through: an eventfd (VFIO routes an MSI/MSI-X vector to one with
// VFIO_DEVICE_SET_IRQS; the simulated devices signal one) and a UIO device
// file (/dev/uioN: a 4-byte read returns the interrupt count, a 4-byte
// write of 1 re-enables a line the kernel masked when it fired). Both are
// opened non-blocking: a waiter poll(2)s them, and Ack consumes what is
// pending without blocking.
package irqfd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Sizes of the reads and writes the kernel ABIs take.
const (
	// EventfdCount is the size of an eventfd's counter: an 8-byte read
	// returns and clears it, an 8-byte write adds to it (eventfd(2)).
	EventfdCount = 8
	// UIOCount is the size of a UIO read (the interrupt count, a 32-bit
	// integer) and of a UIO write (irqcontrol: 1 enables, 0 disables),
	// drivers/uio/uio.c uio_read/uio_write.
	UIOCount = 4
)

// Eventfd is a non-blocking eventfd.
type Eventfd struct{ fd int }

// NewEventfd makes an eventfd with a zero count, non-blocking and
// close-on-exec.
func NewEventfd() (*Eventfd, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &Eventfd{fd: fd}, nil
}

// FD is the descriptor, readable while the count is non-zero.
func (e *Eventfd) FD() int { return e.fd }

// Signal adds 1 to the count: the descriptor becomes readable. It is safe
// from any goroutine.
func (e *Eventfd) Signal() error {
	var b [EventfdCount]byte
	binary.NativeEndian.PutUint64(b[:], 1)
	if _, err := unix.Write(e.fd, b[:]); err != nil && !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("eventfd signal: %w", err)
	}
	return nil
}

// Ack reads and clears the count; 0 when nothing was pending.
func (e *Eventfd) Ack() (uint64, error) {
	var b [EventfdCount]byte
	for {
		_, err := unix.Read(e.fd, b[:])
		switch {
		case err == nil:
			return binary.NativeEndian.Uint64(b[:]), nil
		case errors.Is(err, unix.EAGAIN):
			return 0, nil
		case errors.Is(err, unix.EINTR):
			continue
		default:
			return 0, fmt.Errorf("eventfd read: %w", err)
		}
	}
}

// Unmask does nothing: an eventfd stands for an edge (a message-signalled
// interrupt) that no controller holds masked.
func (e *Eventfd) Unmask() error { return nil }

// Close closes the descriptor; a second Close returns nil.
func (e *Eventfd) Close() error {
	if e.fd < 0 {
		return nil
	}
	err := unix.Close(e.fd)
	e.fd = -1
	return err
}

// UIO is a UIO device file opened for its interrupt: every open of
// /dev/uioN has its own view of the interrupt count, so a waiter opens its
// own.
type UIO struct {
	path string
	fd   int
	last uint32 // the count at the last Ack
}

// OpenUIO opens path (/dev/uioN) non-blocking for its interrupt.
func OpenUIO(path string) (*UIO, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open for its interrupt", Path: path, Err: err}
	}
	return &UIO{path: path, fd: fd}, nil
}

// FD is the descriptor, readable once the interrupt fired since the last
// read.
func (u *UIO) FD() int { return u.fd }

// Ack reads the interrupt count if it changed and returns by how much
// (0 when nothing was pending).
func (u *UIO) Ack() (uint64, error) {
	var b [UIOCount]byte
	for {
		_, err := unix.Read(u.fd, b[:])
		switch {
		case err == nil:
			c := binary.NativeEndian.Uint32(b[:])
			d := c - u.last // the count wraps at 2^32
			u.last = c
			return uint64(d), nil
		case errors.Is(err, unix.EAGAIN):
			return 0, nil
		case errors.Is(err, unix.EINTR):
			continue
		default:
			return 0, fmt.Errorf("%s: read interrupt count: %w", u.path, err)
		}
	}
}

// Unmask re-enables the line (irqcontrol): uio_pdrv_genirq masks it in
// the kernel each time it fires.
func (u *UIO) Unmask() error {
	var b [UIOCount]byte
	binary.NativeEndian.PutUint32(b[:], 1)
	if _, err := unix.Write(u.fd, b[:]); err != nil {
		return fmt.Errorf("%s: re-enable the interrupt: %w (the UIO driver needs irqcontrol, as uio_pdrv_genirq has)", u.path, err)
	}
	return nil
}

// Close closes the descriptor; a second Close returns nil.
func (u *UIO) Close() error {
	if u.fd < 0 {
		return nil
	}
	err := unix.Close(u.fd)
	u.fd = -1
	return err
}

// Poll waits until one of fds is readable or timeout passes (negative:
// no bound) and reports whether one was. fds is the caller's, reused
// between calls: no allocation.
func Poll(fds []unix.PollFd, timeoutMs int) (bool, error) {
	for i := range fds {
		fds[i].Events, fds[i].Revents = unix.POLLIN, 0
	}
	for {
		n, err := unix.Poll(fds, timeoutMs)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("poll: %w", err)
		}
		return n > 0, nil
	}
}

// Package linkwatch follows one network interface's link state through
// rtnetlink: a NETLINK_ROUTE socket in the RTMGRP_LINK group receives an
// RTM_NEWLINK notice whenever the interface's flags change (carrier lost
// or back, set up or down) and an RTM_DELLINK when it goes. The socket
// is non-blocking: the owner polls FD and calls Read when it is readable.
package linkwatch

import (
	"encoding/binary"
	"syscall"

	"golang.org/x/sys/unix"
)

// Watch is the notice socket for one interface.
type Watch struct {
	fd      int
	ifindex int
	buf     []byte
}

// New subscribes to the link notices; the owner reads the interface's
// state once after it (net.InterfaceByIndex) to start from, and every
// change from then on arrives as a notice.
func New(ifindex int) (*Watch, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: unix.RTMGRP_LINK}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Watch{fd: fd, ifindex: ifindex, buf: make([]byte, 1<<16)}, nil
}

// FD is the socket, readable (POLLIN) when notices wait.
func (w *Watch) FD() int { return w.fd }

// Read reads the notices waiting and calls fn for each about the
// interface, in order: running is IFF_RUNNING (up with a carrier), gone
// that the interface was deleted. A lost batch of notices (ENOBUFS) loses
// nothing that matters: the next notice carries the whole state.
func (w *Watch) Read(fn func(running, gone bool)) {
	for {
		n, _, err := unix.Recvfrom(w.fd, w.buf, unix.MSG_DONTWAIT)
		if err == unix.EINTR || err == unix.ENOBUFS {
			continue
		}
		if err != nil || n < unix.NLMSG_HDRLEN {
			return // EAGAIN: all read
		}
		msgs, err := syscall.ParseNetlinkMessage(w.buf[:n])
		if err != nil {
			continue
		}
		for _, m := range msgs {
			if (m.Header.Type != unix.RTM_NEWLINK && m.Header.Type != unix.RTM_DELLINK) || len(m.Data) < unix.SizeofIfInfomsg {
				continue
			}
			index := int32(binary.NativeEndian.Uint32(m.Data[4:8])) // ifinfomsg.ifi_index
			flags := binary.NativeEndian.Uint32(m.Data[8:12])       // ifinfomsg.ifi_flags
			if int(index) != w.ifindex {
				continue
			}
			if m.Header.Type == unix.RTM_DELLINK {
				fn(false, true)
				continue
			}
			fn(flags&unix.IFF_RUNNING != 0, false)
		}
	}
}

// Close closes the socket; a second Close returns nil.
func (w *Watch) Close() error {
	if w.fd < 0 {
		return nil
	}
	err := unix.Close(w.fd)
	w.fd = -1
	return err
}

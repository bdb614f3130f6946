package xdp

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The XDP attachment of an interface is read and set over rtnetlink
// (RTM_GETLINK and RTM_SETLINK with the nested IFLA_XDP attribute), as
// iproute2's "ip link set dev IF xdp" does: an attachment made this way
// survives the process, which is what lets a later run see a program
// left by a crashed one.

// xdpAttached is an interface's XDP attachment: the program id (0 for
// none) and the mode it runs in (XDP_ATTACHED_SKB, _DRV, _HW, _MULTI).
type xdpAttached struct {
	ProgID uint32
	Mode   uint8
}

const (
	xdpAttachedNone  = 0
	xdpAttachedDrv   = 1
	xdpAttachedSkb   = 2
	xdpAttachedHw    = 3
	xdpAttachedMulti = 4
)

func attachedModeName(m uint8) string {
	switch m {
	case xdpAttachedDrv:
		return "native"
	case xdpAttachedSkb:
		return "generic"
	case xdpAttachedHw:
		return "offloaded"
	case xdpAttachedMulti:
		return "several modes"
	}
	return "none"
}

// nlRequest sends one rtnetlink request and returns the payloads of the
// replies up to the ack (or the kernel's error).
func nlRequest(typ uint16, flags uint16, body []byte) ([][]byte, error) {
	return nlRequestProto(unix.NETLINK_ROUTE, typ, flags, body)
}

// nlRequestProto is nlRequest on a netlink protocol of choice
// (NETLINK_ROUTE, NETLINK_GENERIC).
func nlRequestProto(proto int, typ uint16, flags uint16, body []byte) ([][]byte, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("netlink bind: %w", err)
	}
	msg := make([]byte, unix.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], flags|unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	copy(msg[unix.NLMSG_HDRLEN:], body)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("netlink send: %w", err)
	}
	var out [][]byte
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return nil, fmt.Errorf("netlink receive: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, fmt.Errorf("netlink reply: %w", err)
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return nil, fmt.Errorf("rtnetlink: short error message")
				}
				if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
					return out, unix.Errno(-e)
				}
				return out, nil
			case unix.NLMSG_DONE:
				return out, nil
			default:
				out = append(out, append([]byte(nil), m.Data...))
			}
		}
	}
}

func ifinfomsg(ifindex int) []byte {
	b := make([]byte, unix.SizeofIfInfomsg)
	(*unix.IfInfomsg)(unsafe.Pointer(&b[0])).Index = int32(ifindex)
	return b
}

// attrs splits netlink attributes.
func attrs(b []byte, fn func(typ uint16, val []byte)) {
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		if l < 4 || l > len(b) {
			return
		}
		fn(binary.NativeEndian.Uint16(b[2:])&^unix.NLA_F_NESTED, b[4:l])
		b = b[min(len(b), (l+3)&^3):]
	}
}

func putAttr(b []byte, typ uint16, val []byte) []byte {
	l := 4 + len(val)
	h := make([]byte, 4)
	binary.NativeEndian.PutUint16(h, uint16(l))
	binary.NativeEndian.PutUint16(h[2:], typ)
	b = append(b, h...)
	b = append(b, val...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// queryXDP reads the XDP attachment of the interface.
func queryXDP(ifindex int) (xdpAttached, error) {
	var a xdpAttached
	replies, err := nlRequest(unix.RTM_GETLINK, 0, ifinfomsg(ifindex))
	if err != nil {
		return a, err
	}
	for _, r := range replies {
		if len(r) < unix.SizeofIfInfomsg {
			continue
		}
		attrs(r[unix.SizeofIfInfomsg:], func(typ uint16, val []byte) {
			if typ != unix.IFLA_XDP {
				return
			}
			attrs(val, func(typ uint16, v []byte) {
				switch {
				case typ == unix.IFLA_XDP_ATTACHED && len(v) >= 1:
					a.Mode = v[0]
				case typ == unix.IFLA_XDP_PROG_ID && len(v) >= 4:
					a.ProgID = binary.NativeEndian.Uint32(v)
				}
			})
		})
	}
	return a, nil
}

// setXDP attaches the program fd (or detaches with fd -1) in the mode
// flags say (XDP_FLAGS_SKB_MODE or XDP_FLAGS_DRV_MODE), with
// XDP_FLAGS_UPDATE_IF_NOEXIST or XDP_FLAGS_REPLACE (expected the program
// to replace) as given.
func setXDP(ifindex int, fd int, flags uint32, expected int) error {
	var nested []byte
	v := make([]byte, 4)
	binary.NativeEndian.PutUint32(v, uint32(int32(fd)))
	nested = putAttr(nested, unix.IFLA_XDP_FD, v)
	if flags != 0 {
		f := make([]byte, 4)
		binary.NativeEndian.PutUint32(f, flags)
		nested = putAttr(nested, unix.IFLA_XDP_FLAGS, f)
	}
	if flags&unix.XDP_FLAGS_REPLACE != 0 {
		e := make([]byte, 4)
		binary.NativeEndian.PutUint32(e, uint32(int32(expected)))
		nested = putAttr(nested, unix.IFLA_XDP_EXPECTED_FD, e)
	}
	body := putAttr(ifinfomsg(ifindex), unix.IFLA_XDP|unix.NLA_F_NESTED, nested)
	_, err := nlRequest(unix.RTM_SETLINK, 0, body)
	return err
}

// Package tun holds the kernel ABI of TUN/TAP devices (linux/if_tun.h) and
// of the interface ioctls (linux/if.h, linux/sockios.h) that the tap package
// uses and golang.org/x/sys/unix does not spell out: struct ifreq read as
// ifr_hwaddr, and raw ioctl and writev wrappers that do not allocate. Every
// number used is pinned by a test against the kernel headers' values, so a
// wrong x/sys release or a typo cannot slip through.
package tun

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Device is the TUN/TAP clone device: each open file is one queue of one
// interface once TUNSETIFF has named it.
const Device = "/dev/net/tun"

// The TUNSETIFF request and flags (linux/if_tun.h). TUNSETIFF is
// _IOW('T', 202, int); the flags go in ifr_flags.
const (
	SetIff   = unix.TUNSETIFF
	FlagTAP  = unix.IFF_TAP      // Ethernet frames, not IP packets
	FlagNoPI = unix.IFF_NO_PI    // no 4-byte packet-information prefix on reads and writes
	FlagExcl = unix.IFF_TUN_EXCL // fail with EBUSY if the interface exists already
	FlagMQ   = unix.IFF_MULTI_QUEUE
)

// The interface ioctls (linux/sockios.h), issued on any socket.
const (
	GetFlags  = unix.SIOCGIFFLAGS
	SetFlags  = unix.SIOCSIFFLAGS
	SetMTU    = unix.SIOCSIFMTU
	SetHwaddr = unix.SIOCSIFHWADDR
	GetHwaddr = unix.SIOCGIFHWADDR
	IffUp     = unix.IFF_UP
	// ARPHRDEther is the sa_family of an Ethernet hardware address.
	ARPHRDEther = unix.ARPHRD_ETHER
)

// ifreqSize is sizeof(struct ifreq): 40 bytes on 64-bit targets, 32 on
// 32-bit ones (its union holds struct ifmap, which has two longs).
const ifreqSize = unsafe.Sizeof(unix.Ifreq{})

// IfreqHwaddr is struct ifreq with its union read as ifr_hwaddr, a struct
// sockaddr: the family (ARPHRD_ETHER) and the address in sa_data.
type IfreqHwaddr struct {
	Name   [unix.IFNAMSIZ]byte
	Family uint16
	// Data is sa_data (14 bytes) and the rest of the union after it. One
	// array and no trailing padding field: Go pads a struct that ends in
	// a zero-size field, which on 32-bit targets (where the union is just
	// the sockaddr) would make the struct 34 bytes instead of 32.
	Data [ifreqSize - unix.IFNAMSIZ - 2]byte
}

// NewIfreqHwaddr builds the request that sets or reads interface name's
// Ethernet address. The name must be shorter than IFNAMSIZ.
func NewIfreqHwaddr(name string, mac [6]byte) IfreqHwaddr {
	var r IfreqHwaddr
	copy(r.Name[:unix.IFNAMSIZ-1], name)
	r.Family = ARPHRDEther
	copy(r.Data[:], mac[:])
	return r
}

// Ioctl issues request req on fd with argument r (an ifreq-shaped struct).
func Ioctl(fd int, req uint, r *IfreqHwaddr) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(r)))
	if e != 0 {
		return e
	}
	return nil
}

// MaxIov is the most pieces one Writev call takes (a chained frame's
// segments plus a re-inserted VLAN tag).
const MaxIov = 16

// Iovecs is a fixed array of struct iovec, built on the caller's stack so a
// gathered write allocates nothing.
type Iovecs struct {
	v [MaxIov]unix.Iovec
	n int
}

// Add appends b; it reports false when the array is full. Empty pieces are
// skipped.
func (io *Iovecs) Add(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if io.n == MaxIov {
		return false
	}
	io.v[io.n].Base = &b[0]
	io.v[io.n].SetLen(len(b))
	io.n++
	return true
}

// Writev writes the pieces with one writev(2): on a TAP file, one frame.
// It returns the bytes written. The pieces must stay alive until it
// returns, which they do since the caller holds them.
func Writev(fd int, io *Iovecs) (int, error) {
	if io.n == 0 {
		return 0, nil
	}
	n, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&io.v[0])), uintptr(io.n))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

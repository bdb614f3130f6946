// Package xsk holds the kernel ABI of AF_XDP sockets (linux/if_xdp.h): one
// Go type per kernel struct, the socket option numbers and flag values, and
// thin setsockopt, getsockopt and bind wrappers. Sizes and offsets are
// pinned by tests against the layout of the Linux 6.8 header.
package xsk

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Socket options at level SOL_XDP.
const (
	SolXDP             = 283
	OptMmapOffsets     = 1
	OptRxRing          = 2
	OptTxRing          = 3
	OptUmemReg         = 4
	OptUmemFillRing    = 5
	OptUmemCompRing    = 6
	OptStatistics      = 7
	OptOptions         = 8
	OptionsZeroCopy    = 1 // xdp_options.flags: the socket runs in zero-copy mode
	AFXDP              = 44
	PacketHeadroom     = 256 // XDP_PACKET_HEADROOM: where copy mode puts a frame in its chunk
	RingNeedWakeup     = 1   // XDP_RING_NEED_WAKEUP in a ring's flags word
	BindSharedUmem     = 1 << 0
	BindCopy           = 1 << 1
	BindZeroCopy       = 1 << 2
	BindUseNeedWakeup  = 1 << 3
	PgoffRxRing        = 0
	PgoffTxRing        = 0x80000000
	PgoffFillRing      = 0x100000000
	PgoffCompletionRng = 0x180000000
)

// RingOffset is struct xdp_ring_offset: where a ring's producer, consumer,
// descriptors and flags lie in its mapping.
type RingOffset struct {
	Producer, Consumer, Desc, Flags uint64
}

// MmapOffsets is struct xdp_mmap_offsets.
type MmapOffsets struct {
	Rx, Tx, Fr, Cr RingOffset
}

// UmemReg is struct xdp_umem_reg (with tx_metadata_len, Linux 6.8; older
// kernels read the part they know).
type UmemReg struct {
	Addr          uint64
	Len           uint64
	ChunkSize     uint32
	Headroom      uint32
	Flags         uint32
	TxMetadataLen uint32
}

// Statistics is struct xdp_statistics.
type Statistics struct {
	RxDropped            uint64
	RxInvalidDescs       uint64
	TxInvalidDescs       uint64
	RxRingFull           uint64
	RxFillRingEmptyDescs uint64
	TxRingEmptyDescs     uint64
}

// Desc is struct xdp_desc, one entry of the RX and TX rings.
type Desc struct {
	Addr    uint64
	Len     uint32
	Options uint32
}

// SockaddrXDP is struct sockaddr_xdp.
type SockaddrXDP struct {
	Family       uint16
	Flags        uint16
	Ifindex      uint32
	QueueID      uint32
	SharedUmemFD uint32
}

// Options is struct xdp_options.
type Options struct {
	Flags uint32
}

// SetOpt sets a SOL_XDP option from the bytes of *v.
func SetOpt[T any](fd, opt int, v *T) error {
	_, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), SolXDP, uintptr(opt),
		uintptr(unsafe.Pointer(v)), unsafe.Sizeof(*v), 0)
	if e != 0 {
		return e
	}
	return nil
}

// GetOpt reads a SOL_XDP option into *v and returns the length the kernel
// wrote.
func GetOpt[T any](fd, opt int, v *T) (int, error) {
	n := uint32(unsafe.Sizeof(*v))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), SolXDP, uintptr(opt),
		uintptr(unsafe.Pointer(v)), uintptr(unsafe.Pointer(&n)), 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Bind binds an AF_XDP socket to an interface queue.
func Bind(fd int, sa *SockaddrXDP) error {
	_, _, e := unix.Syscall(unix.SYS_BIND, uintptr(fd), uintptr(unsafe.Pointer(sa)), unsafe.Sizeof(*sa))
	if e != 0 {
		return e
	}
	return nil
}

// Wake is the empty sendto that tells the kernel to process the TX ring
// (and, in copy mode, to send what it holds); it never blocks, and the
// kernel sends at most a bounded batch per call, so it is made without
// the scheduler's system-call bookkeeping (RawSyscall6: about 140
// instructions less per wake-up).
func Wake(fd int) unix.Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	return e
}

// WakeRx is the empty recvfrom that tells the kernel the fill ring has
// buffers again (zero-copy drivers that asked for it with need_wakeup).
//
// It never blocks (MSG_DONTWAIT), and is made as Wake is.
func WakeRx(fd int) unix.Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	return e
}

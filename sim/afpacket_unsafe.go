package sim

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// recvDontWait receives one frame without waiting (recv(2) with
// MSG_DONTWAIT; unix.Recvfrom would allocate the sender's address).
func recvDontWait(fd int, buf []byte) (int, error) {
	n, _, e := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

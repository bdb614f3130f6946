package tun

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The numbers as linux/if_tun.h, linux/if.h, linux/if_arp.h and
// linux/sockios.h define them (the same on amd64, arm64 and arm).
func TestNumbers(t *testing.T) {
	// _IOW('T', 202, int): direction write (1) at bit 30, size 4 at bit 16.
	iow := func(typ, nr, size int) int { return 1<<30 | size<<16 | typ<<8 | nr }
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"TUNSETIFF", SetIff, iow('T', 202, 4)},
		{"TUNSETIFF (hex)", SetIff, 0x400454ca},
		{"IFF_TAP", FlagTAP, 0x0002},
		{"IFF_NO_PI", FlagNoPI, 0x1000},
		{"IFF_TUN_EXCL", FlagExcl, 0x8000},
		{"IFF_MULTI_QUEUE", FlagMQ, 0x0100},
		{"SIOCGIFFLAGS", GetFlags, 0x8913},
		{"SIOCSIFFLAGS", SetFlags, 0x8914},
		{"SIOCSIFMTU", SetMTU, 0x8922},
		{"SIOCSIFHWADDR", SetHwaddr, 0x8924},
		{"SIOCGIFHWADDR", GetHwaddr, 0x8927},
		{"IFF_UP", IffUp, 1},
		{"ARPHRD_ETHER", ARPHRDEther, 1},
		{"IFNAMSIZ", unix.IFNAMSIZ, 16},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

// struct ifreq: a 16-byte name, then a union whose struct sockaddr member
// (ifr_hwaddr) starts with a 2-byte family and 14 bytes of sa_data; the
// union is 24 bytes on 64-bit targets and 16 on 32-bit ones.
func TestIfreqLayout(t *testing.T) {
	var r IfreqHwaddr
	want := uintptr(40)
	if unsafe.Sizeof(uintptr(0)) == 4 {
		want = 32
	}
	if got := unsafe.Sizeof(r); got != want {
		t.Errorf("sizeof(IfreqHwaddr) = %d, want %d", got, want)
	}
	if o := unsafe.Offsetof(r.Family); o != 16 {
		t.Errorf("offset of sa_family = %d, want 16", o)
	}
	if o := unsafe.Offsetof(r.Data); o != 18 {
		t.Errorf("offset of sa_data = %d, want 18", o)
	}
	r = NewIfreqHwaddr("gopmd-a-very-long-name", [6]byte{2, 0, 0, 0, 0, 9})
	if r.Name[15] != 0 || string(r.Name[:15]) != "gopmd-a-very-lo" || r.Family != 1 || r.Data[5] != 9 {
		t.Errorf("request %+v: the name must be cut to 15 bytes and NUL-terminated, family 1, address in sa_data", r)
	}
}

func TestWritev(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	var io Iovecs
	for _, s := range []string{"abc", "", "defg", "h"} {
		if !io.Add([]byte(s)) {
			t.Fatal("Add refused a piece with room left")
		}
	}
	if n, err := Writev(fds[0], &io); n != 8 || err != nil {
		t.Fatalf("Writev = %d, %v; want 8 bytes", n, err)
	}
	buf := make([]byte, 64)
	if n, err := unix.Read(fds[1], buf); err != nil || string(buf[:n]) != "abcdefgh" {
		t.Fatalf("read back %q, %v; want one message abcdefgh", buf[:n], err)
	}
	var full Iovecs
	for i := 0; i < MaxIov; i++ {
		full.Add([]byte{1})
	}
	if full.Add([]byte{1}) {
		t.Fatalf("Add took piece %d of a %d-piece array", MaxIov+1, MaxIov)
	}
	if _, err := Writev(-1, &full); err != unix.EBADF {
		t.Fatalf("Writev on a closed descriptor: %v, want EBADF", err)
	}
}

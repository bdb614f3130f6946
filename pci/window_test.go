package pci

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
)

var _ driver.Regs = (*Window)(nil)

// guardedPage maps one read-write page followed by a PROT_NONE page, so an
// access past the window faults the test instead of passing silently.
func guardedPage(t *testing.T) []byte {
	t.Helper()
	ps := unix.Getpagesize()
	m, err := unix.Mmap(-1, 0, 2*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mprotect(m[ps:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(m) })
	return m[:ps]
}

func TestWindowAccesses(t *testing.T) {
	mem := guardedPage(t)
	w := NewWindow("test BAR0", mem)
	w.Write32(0x10, 0xdeadbeef)
	if got := binary.LittleEndian.Uint32(mem[0x10:]); got != 0xdeadbeef {
		t.Fatalf("Write32 stored %#x in memory", got)
	}
	if got := w.Read32(0x10); got != 0xdeadbeef {
		t.Fatalf("Read32 = %#x", got)
	}
	w.Write64(0x20, 0x0123456789abcdef)
	if got := binary.LittleEndian.Uint64(mem[0x20:]); got != 0x0123456789abcdef {
		t.Fatalf("Write64 stored %#x", got)
	}
	if got := w.Read64(0x20); got != 0x0123456789abcdef {
		t.Fatalf("Read64 = %#x", got)
	}
	last := uint32(len(mem) - 4)
	w.Write32(last, 7)
	if w.Read32(last) != 7 || w.Err() != nil {
		t.Fatalf("last word: %#x, err %v", w.Read32(last), w.Err())
	}
	if w.Size() != len(mem) {
		t.Fatalf("Size = %d", w.Size())
	}
}

func TestWindowRefusesBadOffsets(t *testing.T) {
	size := unix.Getpagesize()
	cases := []struct {
		name string
		do   func(w *Window) uint64
		off  string
		want uint64
	}{
		{"read32 at end", func(w *Window) uint64 { return uint64(w.Read32(uint32(size))) }, "0x1000", 0xffffffff},
		{"read32 straddling end", func(w *Window) uint64 { return uint64(w.Read32(uint32(size - 2))) }, "0xffe", 0xffffffff},
		{"read32 misaligned", func(w *Window) uint64 { return uint64(w.Read32(2)) }, "not aligned", 0xffffffff},
		{"read64 straddling end", func(w *Window) uint64 { return w.Read64(uint32(size - 4)) }, "0xffc", ^uint64(0)},
		{"read64 misaligned", func(w *Window) uint64 { return w.Read64(4) }, "not aligned to 8", ^uint64(0)},
		{"write32 far away", func(w *Window) uint64 { w.Write32(0xfffffffc, 1); return 0 }, "0xfffffffc", 0},
		{"write64 at end", func(w *Window) uint64 { w.Write64(uint32(size), 1); return 0 }, "0x1000", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := guardedPage(t)
			w := NewWindow("0000:00:01.0 BAR0", mem)
			if got := c.do(w); got != c.want {
				t.Errorf("value %#x, want %#x", got, c.want)
			}
			err := w.Err()
			if err == nil {
				t.Fatal("Err() is nil after a bad access")
			}
			if !errors.Is(err, ErrOutOfWindow) {
				t.Errorf("error %v does not match ErrOutOfWindow", err)
			}
			msg := err.Error()
			for _, s := range []string{"0000:00:01.0 BAR0", c.off, "0x1000 bytes", "not performed"} {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not mention %q", msg, s)
				}
			}
			if !bytes.Equal(mem, make([]byte, len(mem))) {
				t.Error("a refused access changed memory")
			}
		})
	}
}

func TestWindowKeepsFirstError(t *testing.T) {
	w := NewWindow("w", make([]byte, 16))
	w.Read32(16)
	w.Read32(32)
	if !strings.Contains(w.Err().Error(), "offset 0x10 ") {
		t.Fatalf("Err = %v, want the first bad access (0x10)", w.Err())
	}
}

func TestWindowBytes(t *testing.T) {
	mem := guardedPage(t)
	for i := range mem[:16] {
		mem[i] = 0xaa
	}
	w := NewWindow("uio0 map0", mem)
	if err := w.WriteBytes(0, []byte{1, 2, 3, 4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 2, 3, 4, 5, 6, 0xaa, 0xaa, 0xaa}
	if !bytes.Equal(mem[:9], want) {
		t.Fatalf("memory % x, want % x (bytes after the copy kept)", mem[:9], want)
	}
	got := make([]byte, 7)
	if err := w.ReadBytes(0, got); err != nil || !bytes.Equal(got, want[:7]) {
		t.Fatalf("ReadBytes % x, %v", got, err)
	}
	for _, c := range []struct {
		off uint32
		n   int
	}{{2, 4}, {uint32(len(mem) - 4), 5}, {0, len(mem) + 1}} {
		if err := w.WriteBytes(c.off, make([]byte, c.n)); err == nil || !strings.Contains(err.Error(), "uio0 map0") {
			t.Errorf("WriteBytes(%#x, %d bytes) = %v, want an error naming the window", c.off, c.n, err)
		}
		if err := w.ReadBytes(c.off, make([]byte, c.n)); err == nil {
			t.Errorf("ReadBytes(%#x, %d bytes) succeeded", c.off, c.n)
		}
	}
}

func TestCopyIO(t *testing.T) {
	dst := make([]byte, 12)
	if n, err := CopyToIO(dst, []byte("abcdefghij")); err != nil || n != 10 || string(dst[:10]) != "abcdefghij" {
		t.Fatalf("CopyToIO: %d %v %q", n, err, dst)
	}
	if _, err := CopyToIO(dst[1:], []byte("ab")); err == nil || !strings.Contains(err.Error(), "aligned") {
		t.Errorf("unaligned destination: %v", err)
	}
	if _, err := CopyToIO(dst[:8], make([]byte, 9)); err == nil || !strings.Contains(err.Error(), "need 12") {
		t.Errorf("short destination: %v", err)
	}
	back := make([]byte, 10)
	if n, err := CopyFromIO(back, dst); err != nil || n != 10 || string(back) != "abcdefghij" {
		t.Fatalf("CopyFromIO: %d %v %q", n, err, back)
	}
	if _, err := CopyFromIO(back, dst[:8]); err == nil {
		t.Error("short source accepted")
	}
}

func TestRequireSize(t *testing.T) {
	w := NewWindow("0000:00:00.1 BAR0", make([]byte, 0x10000))
	if err := RequireSize(w, 0x10000, "SI registers"); err != nil {
		t.Fatal(err)
	}
	err := RequireSize(w, 0x40000, "PF registers")
	if !errors.Is(err, ErrRegionTooSmall) || !strings.Contains(err.Error(), "0000:00:00.1 BAR0") || !strings.Contains(err.Error(), "need 0x40000") {
		t.Errorf("small BAR: %v", err)
	}
	if err := RequireSize(nil, 4, "BAR2"); !errors.Is(err, ErrRegionTooSmall) || !strings.Contains(err.Error(), "BAR2") {
		t.Errorf("absent: %v", err)
	}
}

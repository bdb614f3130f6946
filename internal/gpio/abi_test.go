package gpio

import (
	"testing"
	"unsafe"
)

// Sizes and ioctl numbers as gcc computes them from the kernel's UAPI
// header include/uapi/linux/gpio.h: _IOWR(0xB4, nr, struct).
func TestABI(t *testing.T) {
	iowr := func(nr, size uintptr) uintptr { return 3<<30 | size<<16 | 0xB4<<8 | nr }
	cases := []struct {
		name       string
		size, want uintptr
		ioctl, nr  uintptr
	}{
		{"gpio_v2_line_request", unsafe.Sizeof(lineRequest{}), 592, getLineIoctl, 0x07},
		{"gpio_v2_line_info", unsafe.Sizeof(lineInfo{}), 256, getLineInfoIoctl, 0x05},
		{"gpio_v2_line_values", unsafe.Sizeof(lineValues{}), 16, setLineValuesIoctl, 0x0F},
	}
	for _, c := range cases {
		if c.size != c.want {
			t.Errorf("struct %s: %d bytes, want %d", c.name, c.size, c.want)
		}
		if got := iowr(c.nr, c.want); c.ioctl != got {
			t.Errorf("ioctl on struct %s: %#x, want %#x", c.name, c.ioctl, got)
		}
	}
	var r lineRequest
	if off := unsafe.Offsetof(r.Consumer); off != 256 {
		t.Errorf("gpio_v2_line_request.consumer at %d, want 256", off)
	}
	if off := unsafe.Offsetof(r.Config); off != 288 {
		t.Errorf("gpio_v2_line_request.config at %d, want 288", off)
	}
	if off := unsafe.Offsetof(r.Fd); off != 588 {
		t.Errorf("gpio_v2_line_request.fd at %d, want 588", off)
	}
	var i lineInfo
	if off := unsafe.Offsetof(i.Flags); off != 72 {
		t.Errorf("gpio_v2_line_info.flags at %d, want 72", off)
	}
}

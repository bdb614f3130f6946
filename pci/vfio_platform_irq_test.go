package pci

import (
	"encoding/binary"
	"testing"
)

// TestPlatformUnmaskBuf: re-enabling an automasked vfio-platform line is a
// struct vfio_irq_set of argsz 20 with VFIO_IRQ_SET_DATA_NONE (1) |
// VFIO_IRQ_SET_ACTION_UNMASK (0x10), the line's index, start 0 and count 1:
// vfio_platform_set_irq_unmask refuses any other start or count.
func TestPlatformUnmaskBuf(t *testing.T) {
	b := unmaskBuf(2)
	want := []uint32{20, 0x11, 2, 0, 1}
	if len(b) != 20 {
		t.Fatalf("%d bytes, want 20", len(b))
	}
	for i, w := range want {
		if got := binary.NativeEndian.Uint32(b[4*i:]); got != w {
			t.Errorf("word %d (argsz, flags, index, start, count): %#x, want %#x", i, got, w)
		}
	}
}

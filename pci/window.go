package pci

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Window is a register window over mmapped device memory (a VFIO region, a
// PCI resourceN file, a UIO map or a /dev/mem range). It implements
// driver.Regs.
//
// Every access is one aligned load or store of its width, done by a small
// assembly routine (amd64, arm64, arm): the compiler can neither merge,
// split, reorder nor drop it, and no locked or exclusive read-modify-write
// instruction ever touches the device. An access that would leave the window
// or is not aligned to its width is not performed: reads return all ones, as
// a PCI bus error does, and the first such access is kept for Err.
//
// Ordering against DMA memory is the driver's job: call dma.DoorbellBarrier
// before a doorbell write. A Window is safe for concurrent use as far as the
// device allows; it never unmaps memory (the backend that made it does).
type Window struct {
	base unsafe.Pointer
	size int
	name string
	err  atomic.Pointer[RangeError]
	// io, for a VFIO region mmapped in sparse areas, reaches the holes
	// between them (an MSI-X table) through the device fd.
	io *regionIO
}

// NewWindow wraps mem, a mapping of device memory, as a register window.
// name says what the window is ("0000:01:00.0 BAR0", "/dev/uio0 map0") and
// appears in errors. mem must stay mapped as long as the window is used.
func NewWindow(name string, mem []byte) *Window {
	w := &Window{size: len(mem), name: name}
	if len(mem) > 0 {
		w.base = unsafe.Pointer(&mem[0])
	}
	return w
}

// RangeError is an access outside a register window or not aligned to its
// width. Such an access is never performed.
type RangeError struct {
	Window string // what the window maps
	Off    uint64 // byte offset of the access
	Width  int    // access width in bytes
	Size   int    // window size in bytes
}

// ErrOutOfWindow is matched (errors.Is) by every RangeError.
var ErrOutOfWindow = errors.New("register access outside the window")

// Error names the window, the access and why it was refused.
func (e *RangeError) Error() string {
	why := "outside the window"
	if e.Off%uint64(e.Width) != 0 && e.Off+uint64(e.Width) <= uint64(e.Size) {
		why = fmt.Sprintf("not aligned to %d bytes", e.Width)
	}
	return fmt.Sprintf("register window %s: %d-bit access at offset %#x is %s of %#x bytes; the access was not performed (check the register offset against the region size, e.g. a VF has a smaller BAR than a PF)",
		e.Window, e.Width*8, e.Off, why, e.Size)
}

// Is makes errors.Is(err, ErrOutOfWindow) true.
func (e *RangeError) Is(target error) bool { return target == ErrOutOfWindow }

// Name says what the window maps.
func (w *Window) Name() string { return w.name }

// Size is the window's length in bytes.
func (w *Window) Size() int { return w.size }

// Err reports the first out-of-window or misaligned access, or nil.
func (w *Window) Err() error {
	if e := w.err.Load(); e != nil {
		return e
	}
	return nil
}

// check reports whether an access of width bytes at off is inside the window
// and aligned; if not it records the first such access.
func (w *Window) check(off uint64, width int) bool {
	if off%uint64(width) == 0 && off+uint64(width) <= uint64(w.size) {
		return true
	}
	w.err.CompareAndSwap(nil, &RangeError{Window: w.name, Off: off, Width: width, Size: w.size})
	return false
}

func (w *Window) at(off uint32) unsafe.Pointer { return unsafe.Add(w.base, uintptr(off)) }

// Read32 reads the 32-bit register at off.
func (w *Window) Read32(off uint32) uint32 {
	if !w.check(uint64(off), 4) {
		return ^uint32(0)
	}
	if w.io != nil && !w.io.mapped(uint64(off), 4) {
		var b [4]byte
		if !w.io.read(uint64(off), b[:]) {
			return ^uint32(0)
		}
		return binary.LittleEndian.Uint32(b[:])
	}
	return load32(w.at(off))
}

// Write32 writes the 32-bit register at off.
func (w *Window) Write32(off uint32, v uint32) {
	if !w.check(uint64(off), 4) {
		return
	}
	if w.io != nil && !w.io.mapped(uint64(off), 4) {
		w.io.write(uint64(off), binary.LittleEndian.AppendUint32(nil, v))
		return
	}
	store32(w.at(off), v)
}

// Read64 reads a 64-bit register at off with one 64-bit load (two 32-bit
// loads, low word first, on 32-bit ARM). Use it only where the device allows
// 64-bit accesses (ENETC statistics counters).
func (w *Window) Read64(off uint32) uint64 {
	if !w.check(uint64(off), 8) {
		return ^uint64(0)
	}
	if w.io != nil && !w.io.mapped(uint64(off), 8) {
		var b [8]byte
		if !w.io.read(uint64(off), b[:]) {
			return ^uint64(0)
		}
		return binary.LittleEndian.Uint64(b[:])
	}
	return load64(w.at(off))
}

// Write64 writes a 64-bit register at off with one 64-bit store (two 32-bit
// stores, low word first, on 32-bit ARM), where the device allows it.
func (w *Window) Write64(off uint32, v uint64) {
	if !w.check(uint64(off), 8) {
		return
	}
	if w.io != nil && !w.io.mapped(uint64(off), 8) {
		w.io.write(uint64(off), binary.LittleEndian.AppendUint64(nil, v))
		return
	}
	store64(w.at(off), v)
}

// WriteBytes copies src into the window at off with aligned 32-bit stores,
// as device-type mappings need (an unaligned or byte store can fault on ARM
// Device memory). off must be 4-byte aligned; a last partial word is
// completed with the bytes that follow it in the window (read first, then
// written whole). Nothing is written when the range is outside the window.
func (w *Window) WriteBytes(off uint32, src []byte) error {
	n := uint64(len(src)+3) &^ 3
	if !w.checkRange(uint64(off), n) {
		return w.rangeErr(uint64(off), n)
	}
	if w.io != nil && !w.io.mapped(uint64(off), int(n)) {
		buf := make([]byte, n)
		w.io.read(uint64(off), buf) // keep the bytes past src in the last word
		copy(buf, src)
		if !w.io.write(uint64(off), buf) {
			return w.rangeErr(uint64(off), n)
		}
		return nil
	}
	copyToIO(unsafe.Slice((*byte)(w.at(off)), n), src)
	return nil
}

// ReadBytes fills dst from the window at off with aligned 32-bit loads. off
// must be 4-byte aligned.
func (w *Window) ReadBytes(off uint32, dst []byte) error {
	n := uint64(len(dst)+3) &^ 3
	if !w.checkRange(uint64(off), n) {
		return w.rangeErr(uint64(off), n)
	}
	if w.io != nil && !w.io.mapped(uint64(off), int(n)) {
		buf := make([]byte, n)
		if !w.io.read(uint64(off), buf) {
			return w.rangeErr(uint64(off), n)
		}
		copy(dst, buf)
		return nil
	}
	copyFromIO(dst, unsafe.Slice((*byte)(w.at(off)), n))
	return nil
}

func (w *Window) checkRange(off, n uint64) bool {
	return off%4 == 0 && off+n <= uint64(w.size) && off+n >= off
}

func (w *Window) rangeErr(off, n uint64) error {
	return fmt.Errorf("register window %s: %d-byte copy at offset %#x does not fit %#x bytes with 4-byte alignment; nothing was copied", w.name, n, off, w.size)
}

// CopyToIO copies src to dst, a device-type mapping (uncached DMA memory,
// a UIO or /dev/mem window), using only aligned 32-bit stores. dst must
// start 4-byte aligned and be at least len(src) rounded up to 4 bytes long;
// the bytes of a last partial word beyond len(src) are rewritten with what
// they held. It returns the number of bytes of src copied.
func CopyToIO(dst, src []byte) (int, error) {
	if len(src) == 0 {
		return 0, nil
	}
	if uintptr(unsafe.Pointer(&dst[0]))%4 != 0 {
		return 0, fmt.Errorf("pci: copy to device memory at %p: destination must be 4-byte aligned", &dst[0])
	}
	if len(dst) < (len(src)+3)&^3 {
		return 0, fmt.Errorf("pci: copy of %d bytes to device memory: destination holds %d bytes, need %d (whole words)", len(src), len(dst), (len(src)+3)&^3)
	}
	copyToIO(dst, src)
	return len(src), nil
}

// CopyFromIO copies from src, a device-type mapping, into dst using only
// aligned 32-bit loads. src must start 4-byte aligned and hold len(dst)
// rounded up to 4 bytes.
func CopyFromIO(dst, src []byte) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	if uintptr(unsafe.Pointer(&src[0]))%4 != 0 {
		return 0, fmt.Errorf("pci: copy from device memory at %p: source must be 4-byte aligned", &src[0])
	}
	if len(src) < (len(dst)+3)&^3 {
		return 0, fmt.Errorf("pci: copy of %d bytes from device memory: source holds %d bytes, need %d (whole words)", len(dst), len(src), (len(dst)+3)&^3)
	}
	copyFromIO(dst, src)
	return len(dst), nil
}

// copyToIO: dst is aligned and holds len(src) rounded up to words.
func copyToIO(dst, src []byte) {
	p := unsafe.Pointer(&dst[0])
	i := 0
	for ; i+4 <= len(src); i += 4 {
		v := uint32(src[i]) | uint32(src[i+1])<<8 | uint32(src[i+2])<<16 | uint32(src[i+3])<<24
		store32(unsafe.Add(p, i), v)
	}
	if i < len(src) {
		// Partial last word: keep the bytes past the end of src.
		v := load32(unsafe.Add(p, i))
		for k := 0; i+k < len(src); k++ {
			v = v&^(0xff<<(8*k)) | uint32(src[i+k])<<(8*k)
		}
		store32(unsafe.Add(p, i), v)
	}
}

// copyFromIO: src is aligned and holds len(dst) rounded up to words.
func copyFromIO(dst, src []byte) {
	p := unsafe.Pointer(&src[0])
	for i := 0; i < len(dst); i += 4 {
		v := load32(unsafe.Add(p, i))
		for k := 0; k < 4 && i+k < len(dst); k++ {
			dst[i+k] = byte(v >> (8 * k))
		}
	}
}

// RequireSize checks that a device's register window r is at least min
// bytes long before a driver relies on offsets up to min: an ENETC PF needs
// a 256 KiB BAR0 (a VF has 64 KiB), an i.MX ENET 16 KiB. The error wraps
// ErrRegionTooSmall and names the window.
func RequireSize(r interface{ Size() int }, min int, what string) error {
	if r == nil {
		return fmt.Errorf("%s: %w: the region is absent (not implemented by the device or not mappable)", what, ErrRegionTooSmall)
	}
	if r.Size() >= min {
		return nil
	}
	name := what
	if w, ok := r.(*Window); ok {
		name = w.Name()
	}
	return fmt.Errorf("%s: %w: %#x bytes, need %#x (is this the right device or function? a VF or a different SoC has a smaller window)", name, ErrRegionTooSmall, r.Size(), min)
}

package pci

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
)

// PhysRange is a physical address range, written ADDR+SIZE
// ("0x1c000000+0x4000000") in spec options.
type PhysRange struct {
	Addr, Size uint64
}

// String writes the range as ParsePhysRange reads it: "ADDR+SIZE" in hex.
func (r PhysRange) String() string { return fmt.Sprintf("%#x+%#x", r.Addr, r.Size) }

// ParsePhysRange parses "ADDR+SIZE"; both numbers take Go integer syntax
// (0x for hex) and SIZE may end in K, M or G. A space stands for '+', as
// URL query decoding turns the '+' of a spec option into one.
func ParsePhysRange(s string) (PhysRange, error) {
	a, sz, ok := strings.Cut(strings.Replace(s, " ", "+", 1), "+")
	if !ok {
		return PhysRange{}, fmt.Errorf("physical range %q: want ADDR+SIZE, e.g. 0x1c000000+64M", s)
	}
	addr, err := strconv.ParseUint(a, 0, 64)
	if err != nil {
		return PhysRange{}, fmt.Errorf("physical range %q: address %q is not a number", s, a)
	}
	mult := uint64(1)
	switch {
	case strings.HasSuffix(sz, "K"):
		mult, sz = 1<<10, strings.TrimSuffix(sz, "K")
	case strings.HasSuffix(sz, "M"):
		mult, sz = 1<<20, strings.TrimSuffix(sz, "M")
	case strings.HasSuffix(sz, "G"):
		mult, sz = 1<<30, strings.TrimSuffix(sz, "G")
	}
	size, err := strconv.ParseUint(sz, 0, 64)
	if err != nil || size == 0 {
		return PhysRange{}, fmt.Errorf("physical range %q: size %q is not a positive number", s, sz)
	}
	size *= mult
	ps := uint64(os.Getpagesize())
	if addr%ps != 0 || size%ps != 0 {
		return PhysRange{}, fmt.Errorf("physical range %q: address and size must be multiples of the page size %#x", s, ps)
	}
	return PhysRange{Addr: addr, Size: size}, nil
}

// MapPhys maps a physical range through /dev/mem (O_SYNC: uncached on ARM
// for anything that is not RAM). what names the range in errors. The range
// need not be page aligned; the returned slice starts at addr. release
// unmaps it.
//
// Debian's kernels (CONFIG_STRICT_DEVMEM, CONFIG_IO_STRICT_DEVMEM) refuse
// System RAM and any range a driver has claimed (see /proc/iomem), and
// grant unclaimed device or reserved ranges.
func (s Sys) MapPhys(what string, addr, size uint64) (mem []byte, release func() error, err error) {
	path := s.Path("/dev/mem")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_SYNC, 0)
	if err != nil {
		return nil, nil, &DeviceError{Device: what, Op: "open " + path, Err: bareErr(err), Fix: fixOpen(err)}
	}
	defer f.Close() // the mapping outlives the descriptor
	ps := uint64(os.Getpagesize())
	start := addr &^ (ps - 1)
	length := (addr + size - start + ps - 1) &^ (ps - 1)
	m, err := unix.Mmap(int(f.Fd()), int64(start), int(length), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		fix := ""
		if errors.Is(err, unix.EPERM) || errors.Is(err, fs.ErrPermission) {
			fix = fmt.Sprintf("the kernel refuses %#x+%#x: a driver still holds it (see /proc/iomem; release the device: platform devices by driver_override and unbinding or rmmod of their driver) or it is System RAM (reserve a carve-out with mem= or reserved-memory)", addr, size)
		}
		return nil, nil, &DeviceError{Device: what, Op: fmt.Sprintf("mmap %s at %#x+%#x", path, addr, size), Err: err, Fix: fix}
	}
	off := addr - start
	return m[off : off+size], func() error { return unix.Munmap(m) }, nil
}

// Carveout is a dma.Mapper for a physical carve-out mapped into the process
// (through /dev/mem or a UIO memory map): the bus address of a byte is the
// carve-out's base plus its offset. It also allocates: dma.Alloc with this
// mapper hands out pieces of the carve-out instead of anonymous memory
// (see AllocRegion). Carve-out memory is mapped uncached on ARM, so every
// region from it is coherent without cache maintenance, and slower for
// the CPU to touch.
type Carveout struct {
	Range PhysRange
	mem   []byte

	mu   sync.Mutex
	free []PhysRange // free pieces, offsets relative to the base, sorted
}

// NewCarveout makes a mapper over mem, which maps physical range r.
func NewCarveout(r PhysRange, mem []byte) *Carveout {
	return &Carveout{Range: r, mem: mem, free: []PhysRange{{0, uint64(len(mem))}}}
}

// Name implements dma.Mapper.
func (c *Carveout) Name() string { return "carveout " + c.Range.String() }

// NeedsLocked implements dma.Mapper: carve-outs are not pageable.
func (c *Carveout) NeedsLocked() bool { return false }

// offset returns mem's offset inside the carve-out, or an error.
func (c *Carveout) offset(mem []byte) (uint64, error) {
	if len(mem) == 0 || len(c.mem) == 0 {
		return 0, errors.New("empty memory")
	}
	p := uint64(uintptr(unsafePointer(mem)))
	b := uint64(uintptr(unsafePointer(c.mem)))
	if p < b || p+uint64(len(mem)) > b+uint64(len(c.mem)) {
		return 0, fmt.Errorf("memory at %#x (%d bytes) is not inside carve-out %s: allocate it with dma.Alloc through this mapper", p, len(mem), c.Range)
	}
	return p - b, nil
}

// Map implements dma.Mapper for memory inside the carve-out mapping.
func (c *Carveout) Map(mem []byte, attr dma.Attr) (dma.Mapping, error) {
	off, err := c.offset(mem)
	if err != nil {
		return dma.Mapping{}, fmt.Errorf("region %q: %w", attr.Name, err)
	}
	return dma.Mapping{IOVA: c.Range.Addr + off}, nil
}

// Unmap implements dma.Mapper: nothing to undo.
func (c *Carveout) Unmap([]byte, dma.Mapping) error { return nil }

// AllocRegion carves size bytes (rounded up to a page) out of the carve-out
// and returns them as a region; closing the region gives the piece back.
func (c *Carveout) AllocRegion(size int, o dma.Options) (*dma.Region, error) {
	ps := uint64(dma.PageSize)
	n := (uint64(size) + ps - 1) &^ (ps - 1)
	c.mu.Lock()
	off, ok := uint64(0), false
	for i, f := range c.free {
		if f.Size >= n {
			off, ok = f.Addr, true
			c.free[i] = PhysRange{f.Addr + n, f.Size - n}
			if c.free[i].Size == 0 {
				c.free = append(c.free[:i], c.free[i+1:]...)
			}
			break
		}
	}
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("carve-out %s: no free piece of %d bytes for region %q (give a larger dma-carveout)", c.Range, n, o.Name)
	}
	mem := c.mem[off : off+n : off+n]
	clear(mem)
	return dma.NewRegion(mem, c, o, func([]byte) error { c.give(off, n); return nil })
}

func (c *Carveout) give(off, n uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.free = append(c.free, PhysRange{off, n})
	// Keep sorted and merge neighbours.
	for i := len(c.free) - 1; i > 0 && c.free[i].Addr < c.free[i-1].Addr; i-- {
		c.free[i], c.free[i-1] = c.free[i-1], c.free[i]
	}
	merged := c.free[:1]
	for _, f := range c.free[1:] {
		last := &merged[len(merged)-1]
		if last.Addr+last.Size == f.Addr {
			last.Size += f.Size
		} else {
			merged = append(merged, f)
		}
	}
	c.free = merged
}

//go:build rigown

// A minimal platform backend for the rig, for debugging only (RIG_OPENER=own
// makes run.sh build with -tags rigown; such a run fails its "opened by the
// pci platform backend" checks, since the rig exists to test that): it
// maps the ENET through /dev/uioN (map0) when a uio device is bound to the
// node, else through /dev/mem at the address in the node's name, and gives
// DMA memory from a /dev/mem carve-out (dma-carveout=ADDR+SIZE) or pagemap.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
)

const opener = "rig's own opener (RIG_OPENER=own, debugging only)"

func init() {
	driver.RegisterBackend(driver.Backend{Scheme: "platform", Options: []string{"dma-carveout"}, Open: openPlatform})
}

// window is a register window: one aligned 32-bit access per call.
type window struct{ b []byte }

func (w window) Read32(off uint32) uint32 {
	if int(off)+4 > len(w.b) || off%4 != 0 {
		return 0xFFFFFFFF
	}
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&w.b[off])))
}
func (w window) Write32(off uint32, v uint32) {
	if int(off)+4 <= len(w.b) && off%4 == 0 {
		atomic.StoreUint32((*uint32)(unsafe.Pointer(&w.b[off])), v)
	}
}
func (w window) Read64(off uint32) uint64 {
	return uint64(w.Read32(off)) | uint64(w.Read32(off+4))<<32
}
func (w window) Size() int  { return len(w.b) }
func (w window) Err() error { return nil }

func mmapFile(path string, off int64, size int) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_SYNC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	return syscall.Mmap(fd, off, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

// carveout hands out page-rounded pieces of an uncached /dev/mem mapping.
type carveout struct {
	base uint64
	mem  []byte
	mu   sync.Mutex
	next int
}

func (c *carveout) Name() string      { return fmt.Sprintf("carveout %#x+%#x", c.base, len(c.mem)) }
func (c *carveout) NeedsLocked() bool { return false }
func (c *carveout) Map(mem []byte, a dma.Attr) (dma.Mapping, error) {
	off := uintptr(unsafe.Pointer(&mem[0])) - uintptr(unsafe.Pointer(&c.mem[0]))
	if off >= uintptr(len(c.mem)) {
		return dma.Mapping{}, fmt.Errorf("region %q is not in the carve-out", a.Name)
	}
	return dma.Mapping{IOVA: c.base + uint64(off)}, nil
}
func (c *carveout) Unmap([]byte, dma.Mapping) error { return nil }
func (c *carveout) AllocRegion(size int, o dma.Options) (*dma.Region, error) {
	n := (size + dma.PageSize - 1) &^ (dma.PageSize - 1)
	c.mu.Lock()
	off := c.next
	if off+n > len(c.mem) {
		c.mu.Unlock()
		return nil, fmt.Errorf("carve-out full: %d bytes for %q", n, o.Name)
	}
	c.next += n
	c.mu.Unlock()
	mem := c.mem[off : off+n : off+n]
	clear(mem)
	return dma.NewRegion(mem, c, o, nil)
}

func openPlatform(spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	node := "/sys/bus/platform/devices/" + spec.Name
	of, err := devtree.OfNode(node)
	if err != nil {
		return nil, err
	}
	compat := of.Strings("compatible")
	if len(compat) == 0 {
		return nil, fmt.Errorf("%s: no device-tree node with compatible strings", node)
	}
	d := &driver.Device{Backend: "devmem", Bus: "platform", Compatible: compat, NonCoherent: true}
	var unmaps []func() error
	if u, _ := filepath.Glob(node + "/uio/uio*"); len(u) > 0 {
		dev := "/dev/" + filepath.Base(u[0])
		s, _ := os.ReadFile(u[0] + "/maps/map0/size")
		size, _ := strconv.ParseUint(strings.TrimSpace(string(s)), 0, 32)
		b, err := mmapFile(dev, 0, int(size))
		if err != nil {
			return nil, fmt.Errorf("mmap %s map0: %w", dev, err)
		}
		d.Backend = "uio"
		d.Regions = []driver.Regs{window{b}}
		unmaps = append(unmaps, func() error { return syscall.Munmap(b) })
	} else {
		addr, err := strconv.ParseUint(strings.Split(spec.Name, ".")[0], 16, 64)
		if err != nil {
			return nil, err
		}
		b, err := mmapFile("/dev/mem", int64(addr), 0x4000)
		if err != nil {
			return nil, fmt.Errorf("mmap /dev/mem at %#x: %w", addr, err)
		}
		d.Regions = []driver.Regs{window{b}}
		unmaps = append(unmaps, func() error { return syscall.Munmap(b) })
	}
	if v := spec.Options.Get("dma-carveout"); v != "" {
		a, sz, _ := strings.Cut(strings.Replace(v, " ", "+", 1), "+")
		base, err1 := strconv.ParseUint(a, 0, 64)
		size, err2 := strconv.ParseUint(sz, 0, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("dma-carveout=%q: want ADDR+SIZE", v)
		}
		b, err := mmapFile("/dev/mem", int64(base), int(size))
		if err != nil {
			return nil, fmt.Errorf("mmap carve-out %#x: %w", base, err)
		}
		d.Mapper = &carveout{base: base, mem: b}
		unmaps = append(unmaps, func() error { return syscall.Munmap(b) })
	} else {
		d.Mapper = &dma.Pagemap{}
	}
	d.Release = func() error {
		for _, u := range unmaps {
			u()
		}
		return nil
	}
	return d, nil
}

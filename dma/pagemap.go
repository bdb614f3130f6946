package dma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"
)

// Pagemap is a Mapper for devices without an IOMMU: the bus address of a page
// is its physical address, read from /proc/self/pagemap. It needs root
// (without CAP_SYS_ADMIN the kernel reports every frame number as 0) and
// locked memory (a page that moves changes its address under the device).
// Use it only when the user asked for no-IOMMU operation.
type Pagemap struct {
	// Path is the pagemap file; empty means /proc/self/pagemap.
	Path string
}

// Pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
const (
	pagemapPresent = 1 << 63
	pagemapPFNMask = 1<<55 - 1
)

// ErrNoPhysAddr says the kernel hid physical addresses from this process.
var ErrNoPhysAddr = errors.New("pagemap shows no physical addresses: run as root (CAP_SYS_ADMIN)")

// Name implements Mapper.
func (p *Pagemap) Name() string { return "pagemap" }

// NeedsLocked implements Mapper.
func (p *Pagemap) NeedsLocked() bool { return true }

// Map implements Mapper: it looks up every page's physical address. A region
// that is physically contiguous gets a single IOVA; otherwise the per-page
// addresses are returned (and Attr.Contiguous makes that an error).
func (p *Pagemap) Map(mem []byte, attr Attr) (Mapping, error) {
	path := p.Path
	if path == "" {
		path = "/proc/self/pagemap"
	}
	if uintptr(unsafe.Pointer(&mem[0]))%PageSize != 0 || len(mem)%PageSize != 0 {
		return Mapping{}, fmt.Errorf("pagemap: region %q must be whole pages", attr.Name)
	}
	f, err := os.Open(path)
	if err != nil {
		return Mapping{}, fmt.Errorf("pagemap: %w", err)
	}
	defer f.Close()
	npages := len(mem) / PageSize
	pages := make([]uint64, npages)
	var ent [8]byte
	base := uintptr(unsafe.Pointer(&mem[0]))
	contiguous := true
	for i := range pages {
		va := base + uintptr(i*PageSize)
		if _, err := f.ReadAt(ent[:], int64(va/PageSize)*8); err != nil {
			return Mapping{}, fmt.Errorf("pagemap: read entry of page %#x: %w", va, err)
		}
		e := binary.LittleEndian.Uint64(ent[:])
		if e&pagemapPresent == 0 {
			return Mapping{}, fmt.Errorf("pagemap: page %#x of region %q is not present (lock and touch the memory first)", va, attr.Name)
		}
		pfn := e & pagemapPFNMask
		if pfn == 0 {
			return Mapping{}, ErrNoPhysAddr
		}
		pages[i] = pfn * PageSize
		if i > 0 && pages[i] != pages[i-1]+PageSize {
			contiguous = false
		}
	}
	if contiguous {
		return Mapping{IOVA: pages[0]}, nil
	}
	if attr.Contiguous {
		return Mapping{}, fmt.Errorf("pagemap: region %q (%d bytes): %w; use huge pages or a physical carve-out (dma-carveout=ADDR+SIZE)", attr.Name, len(mem), ErrNotContiguous)
	}
	return Mapping{Pages: pages}, nil
}

// Unmap implements Mapper: nothing to undo.
func (p *Pagemap) Unmap([]byte, Mapping) error { return nil }

// Phys is a Mapper for memory whose bus address is already known: a
// physical carve-out mapped from /dev/mem or a UIO memory map. Map hands out
// Base for the first region and refuses anything larger than Size.
type Phys struct {
	Base, Size uint64
	used       bool
}

// Name implements Mapper.
func (p *Phys) Name() string { return "phys" }

// NeedsLocked implements Mapper: carve-outs are not pageable memory.
func (p *Phys) NeedsLocked() bool { return false }

// Map implements Mapper.
func (p *Phys) Map(mem []byte, attr Attr) (Mapping, error) {
	if p.used {
		return Mapping{}, fmt.Errorf("phys: carve-out %#x+%#x already mapped; map it once and carve regions from it", p.Base, p.Size)
	}
	if uint64(len(mem)) > p.Size {
		return Mapping{}, fmt.Errorf("phys: region %q of %d bytes exceeds carve-out %#x+%#x", attr.Name, len(mem), p.Base, p.Size)
	}
	p.used = true
	return Mapping{IOVA: p.Base}, nil
}

// Unmap implements Mapper.
func (p *Phys) Unmap([]byte, Mapping) error { p.used = false; return nil }

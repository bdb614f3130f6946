package dma

// Allocator is implemented by mappers that own the memory they map, such as
// a physical carve-out mapped from /dev/mem or a UIO memory map: Alloc then
// takes the region from the mapper instead of from anonymous memory, so a
// driver calls Alloc the same way whatever the backend.
type Allocator interface {
	AllocRegion(size int, o Options) (*Region, error)
}

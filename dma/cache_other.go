//go:build !arm64

package dma

// x86-64 DMA is cache-coherent. 32-bit ARM has no user-space cache
// maintenance instructions: non-coherent memory there must be mapped
// uncached, which CacheMaintenance == false tells the drivers.
const cacheMaintenance = false

func cacheClean([]byte)                   {}
func cacheInvalidate([]byte)              {}
func cacheCleanSpans([]byte, []Span)      {}
func cacheInvalidateSpans([]byte, []Span) {}

package dma

import "unsafe"

const cacheMaintenance = true

func cacheCleanRange(p, n uintptr)
func cacheInvalidateRange(p, n uintptr)

// The lines of one range without the DSB, and the DSB SY alone: the
// batched syncs pay one DSB for all their ranges.
func cacheCleanLines(p, n uintptr)
func cacheInvalidateLines(p, n uintptr)
func dsbSY()

func cacheClean(b []byte) {
	if len(b) > 0 {
		cacheCleanRange(uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	}
}

func cacheInvalidate(b []byte) {
	if len(b) > 0 {
		cacheInvalidateRange(uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	}
}

// cacheCleanSpans cleans every line of every span of mem (each inside
// mem), then completes them all with one DSB SY.
func cacheCleanSpans(mem []byte, spans []Span) {
	if len(spans) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	for _, s := range spans {
		cacheCleanLines(base+uintptr(s.Off), uintptr(s.Len))
	}
	dsbSY()
}

// cacheInvalidateSpans cleans and invalidates every line of every span of
// mem (each inside mem), then completes them all with one DSB SY.
func cacheInvalidateSpans(mem []byte, spans []Span) {
	if len(spans) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	for _, s := range spans {
		cacheInvalidateLines(base+uintptr(s.Off), uintptr(s.Len))
	}
	dsbSY()
}

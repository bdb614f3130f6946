package dma

import "unsafe"

const cacheMaintenance = true

func cacheCleanRange(p, n uintptr)
func cacheInvalidateRange(p, n uintptr)

// cacheCleanSpans cleans (DC CVAC) every line of every span of mem that
// lies inside mem, then completes them all with one DSB SY: one call per
// batch, the check of each span and the line loop in assembly.
//
//go:noescape
func cacheCleanSpans(mem []byte, spans []Span)

// cacheInvalidateSpans cleans and invalidates (DC CIVAC) every line of
// every span of mem that lies inside mem, then completes them all with
// one DSB SY.
//
//go:noescape
func cacheInvalidateSpans(mem []byte, spans []Span)

// spanLines is the number of lines the two above maintain for these
// arguments: their walk, counting where they issue DC.
//
//go:noescape
func spanLines(mem []byte, spans []Span) int

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

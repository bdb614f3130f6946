package dma

import "unsafe"

const cacheMaintenance = true

func cacheCleanRange(p, n uintptr)
func cacheInvalidateRange(p, n uintptr)

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

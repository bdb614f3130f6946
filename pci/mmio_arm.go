package pci

import "unsafe"

// 32-bit ARM has no single-copy atomic 64-bit access to Device memory
// without LPAE: two 32-bit accesses, low word first.
func load64(p unsafe.Pointer) uint64 {
	return uint64(load32(p)) | uint64(load32(unsafe.Add(p, 4)))<<32
}

func store64(p unsafe.Pointer, v uint64) {
	store32(p, uint32(v))
	store32(unsafe.Add(p, 4), uint32(v>>32))
}

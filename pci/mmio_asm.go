//go:build amd64 || arm64 || arm

package pci

import "unsafe"

// Implemented in mmio_$GOARCH.s: exactly one aligned access each.
func load32(p unsafe.Pointer) uint32
func store32(p unsafe.Pointer, v uint32)

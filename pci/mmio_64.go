//go:build amd64 || arm64

package pci

import "unsafe"

// Implemented in mmio_$GOARCH.s: one 64-bit access each.
func load64(p unsafe.Pointer) uint64
func store64(p unsafe.Pointer, v uint64)

//go:build !amd64 && !arm64 && !arm

package pci

import (
	"sync/atomic"
	"unsafe"
)

// Other architectures: sync/atomic loads and stores are single aligned
// accesses the compiler keeps; on some of them the store carries a fence.
func load32(p unsafe.Pointer) uint32     { return atomic.LoadUint32((*uint32)(p)) }
func store32(p unsafe.Pointer, v uint32) { atomic.StoreUint32((*uint32)(p), v) }
func load64(p unsafe.Pointer) uint64     { return atomic.LoadUint64((*uint64)(p)) }
func store64(p unsafe.Pointer, v uint64) { atomic.StoreUint64((*uint64)(p), v) }

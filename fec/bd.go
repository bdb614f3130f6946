package fec

import (
	"sync/atomic"
	"unsafe"
)

// Buffer descriptors (hw/fec.md §3). On every ARM i.MX part a descriptor is
// little-endian as the CPU sees it (ECR.DBSWP set on ENET-MAC parts), so the
// driver handles it as 32-bit words in host order (all gopmd targets are
// little-endian):
//
//	word 0: data length [15:0] | status/control sc [31:16]
//	word 1: buffer bus address (32 bits)
//	enhanced (ECR.EN1588) only:
//	word 2: esc   word 3: prot   word 4: bdu   word 5: timestamp   words 6-7: reserved
//
// Word 0 holds both the ownership bit and the length, so one 32-bit load
// sees them consistently and one 32-bit store publishes them together.
const (
	bdLegacySize   = 8  // bytes
	bdEnhancedSize = 32 // bytes

	wSC   = 0 // length | sc<<16
	wAddr = 1
	wESC  = 2
	wProt = 3
	wBDU  = 4
	wTS   = 5
)

// RX sc bits (§3.3), in the upper half of word 0.
const (
	rxE  = 0x8000 // empty: buffer owned by the MAC
	rxW  = 0x2000 // wrap: next BD is the ring base
	rxL  = 0x0800 // last BD of the frame
	rxM  = 0x0100 // accepted only because of promiscuous mode
	rxBC = 0x0080
	rxMC = 0x0040
	rxLG = 0x0020 // longer than MAX_FL
	rxNO = 0x0010 // non-octet-aligned
	rxSH = 0x0008 // short frame
	rxCR = 0x0004 // CRC error
	rxOV = 0x0002 // FIFO overrun
	rxTR = 0x0001 // truncated at FTRL

	rxErrMask = rxLG | rxNO | rxSH | rxCR | rxOV | rxTR
)

// TX sc bits (§3.3).
const (
	txR  = 0x8000 // ready: owned by the MAC until sent
	txW  = 0x2000 // wrap
	txL  = 0x0800 // last BD of the frame
	txTC = 0x0400 // append CRC
)

// Enhanced esc bits (§3.3).
const (
	escRxME   = 1 << 31 // MAC error
	escRxPE   = 1 << 26 // PHY error
	escRxCE   = 1 << 25 // collision
	escRxUC   = 1 << 24
	escRxINT  = 1 << 23
	escRxICE  = 1 << 5 // IP header checksum error
	escRxPCR  = 1 << 4 // protocol checksum error
	escRxVLAN = 1 << 2
	escRxIPV6 = 1 << 1
	escRxFRAG = 1 << 0

	escRxErrMask = escRxME | escRxPE | escRxCE

	escTxINT       = 1 << 30
	escTxTS        = 1 << 29
	escTxPINS      = 1 << 28
	escTxIINS      = 1 << 27
	escTxFTYPEShft = 20 // FTYPE[23:20]: AVB class = TX ring id
	escTxTXE       = 1 << 15
	escTxUE        = 1 << 13
	escTxEE        = 1 << 12
	escTxFE        = 1 << 11
	escTxLCE       = 1 << 10
	escTxOE        = 1 << 9
	escTxTSE       = 1 << 8

	escTxErrMask = escTxTXE | escTxUE | escTxEE | escTxFE | escTxLCE | escTxOE

	bduDone = 1 << 31 // the MAC finished updating this BD
)

// bdRing is a descriptor ring seen as 32-bit words in DMA memory that the
// CPU and the device see identically (uncached or coherent).
type bdRing struct {
	w      []uint32 // all descriptors' words
	stride int      // words per descriptor: 2 (legacy) or 8 (enhanced)
	size   int      // descriptors
	iova   uint64   // bus address of descriptor 0
}

func newBDRing(mem []byte, iova uint64, size, bdSize int) bdRing {
	words := size * bdSize / 4
	return bdRing{
		w:      unsafe.Slice((*uint32)(unsafe.Pointer(&mem[0])), words),
		stride: bdSize / 4,
		size:   size,
		iova:   iova,
	}
}

// status loads word 0 of descriptor i with one 32-bit read: the device
// may write it at any time.
func (r *bdRing) status(i int) uint32 { return atomic.LoadUint32(&r.w[i*r.stride+wSC]) }

// publish stores word 0 of descriptor i with one 32-bit write, after the
// descriptor's other words (the atomic store orders them before it for
// the Go memory model; the caller adds the CPU barrier the device needs).
func (r *bdRing) publish(i int, v uint32) { atomic.StoreUint32(&r.w[i*r.stride+wSC], v) }

// word reads word k of descriptor i.
func (r *bdRing) word(i, k int) uint32 { return atomic.LoadUint32(&r.w[i*r.stride+k]) }

// set writes word k of descriptor i.
func (r *bdRing) set(i, k int, v uint32) { atomic.StoreUint32(&r.w[i*r.stride+k], v) }

// sc splits word 0 into status/control and length.
func sc(w0 uint32) (status, length uint32) { return w0 >> 16, w0 & 0xFFFF }

// w0 joins status/control and length into word 0.
func w0(status, length uint32) uint32 { return status<<16 | length&0xFFFF }

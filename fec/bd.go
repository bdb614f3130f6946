package fec

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/gopmd/gopmd/driver"
)

// Buffer descriptors (docs/hardware-fec.md §3). On every ARM i.MX part a descriptor is
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
	rxbd_E  = 0x8000 // empty: buffer owned by the MAC
	rxbd_W  = 0x2000 // wrap: next BD is the ring base
	rxbd_L  = 0x0800 // last BD of the frame
	rxbd_M  = 0x0100 // accepted only because of promiscuous mode
	rxbd_BC = 0x0080
	rxbd_MC = 0x0040
	rxbd_LG = 0x0020 // longer than MAX_FL
	rxbd_NO = 0x0010 // non-octet-aligned
	rxbd_SH = 0x0008 // short frame
	rxbd_CR = 0x0004 // CRC error
	rxbd_OV = 0x0002 // FIFO overrun
	rxbd_TR = 0x0001 // truncated at FTRL
)

// TX sc bits (§3.3).
const (
	txbd_R   = 0x8000 // ready: owned by the MAC until sent
	txbd_W   = 0x2000 // wrap
	txbd_L   = 0x0800 // last BD of the frame
	txbd_TC  = 0x0400 // append CRC
	txbd_ABC = 0x0200 // append bad CRC
)

// Enhanced esc bits (§3.3).
const (
	rxbd_ME   = 1 << 31 // MAC error
	rxbd_PE   = 1 << 26 // PHY error
	rxbd_CE   = 1 << 25 // collision
	rxbd_UC   = 1 << 24
	rxbd_INT  = 1 << 23
	rxbd_ICE  = 1 << 5 // IP header checksum error
	rxbd_PCR  = 1 << 4 // protocol checksum error
	rxbd_VLAN = 1 << 2
	rxbd_IPV6 = 1 << 1
	rxbd_FRAG = 1 << 0

	rxbd_ESC_ERR_MASK = rxbd_ME | rxbd_PE | rxbd_CE

	txbd_INT         = 1 << 30
	txbd_TS          = 1 << 29
	txbd_PINS        = 1 << 28
	txbd_IINS        = 1 << 27
	txbd_FTYPE_SHIFT = 20 // FTYPE[23:20]: AVB class = TX ring id
	txbd_TXE         = 1 << 15
	txbd_UE          = 1 << 13
	txbd_EE          = 1 << 12
	txbd_FE          = 1 << 11
	txbd_LCE         = 1 << 10
	txbd_OE          = 1 << 9
	txbd_TSE         = 1 << 8

	txbd_ESC_ERR_MASK = txbd_TXE | txbd_UE | txbd_EE | txbd_FE | txbd_LCE | txbd_OE

	bd_BDU = 1 << 31 // the MAC finished updating this BD
)

// bdRing is a descriptor ring seen as 32-bit words in DMA memory that the
// CPU and the device see identically (uncached or coherent).
//
// The hot paths use the typed view of the ring's format instead (enh or
// leg, the other nil): a BD is one struct, its words fields at constant
// offsets, one bounds check per BD. Word 0 (status and length, the
// ownership bit) is loaded and stored atomically while the device may
// write it: the store that hands a BD over is the one that orders the
// BD's other words before it. (Once an atomic load saw a BD handed back,
// rxSingles reads its word 0 again with a plain load on ARM: the device
// writes it no more.) Those other words are plain
// loads and stores: the driver writes them only while it owns the BD (its
// status load saw the device's ownership bit clear) and before the
// ownership store, with dma.WriteBarrier between; the device uses them
// only when the word 0 it loaded has the bit set, and writes them before
// it clears the bit (docs/hardware-fec.md §4.2; the models read them with
// an atomic load after that of word 0). The atomic pair on word 0 is the
// happens-before edge the Go memory model (and the race detector) needs,
// the barrier the one the CPU and the device need.
type bdRing struct {
	w      []uint32 // all descriptors' words
	stride int      // words per descriptor: 2 (legacy) or 8 (enhanced)
	size   int      // descriptors
	iova   uint64   // bus address of descriptor 0
	enh    []bdEnh  // the ring as enhanced BDs (stride 8), or nil
	leg    []bdLeg  // the ring as legacy BDs (stride 2), or nil
}

// bdLeg is a legacy BD (docs/hardware-fec.md §3): word 0 and the buffer address.
type bdLeg struct {
	sc   uint32 // wSC: atomic only
	addr uint32 // wAddr
}

// bdEnh is an enhanced BD (docs/hardware-fec.md §3), the words in order.
type bdEnh struct {
	sc   uint32    // wSC: atomic only
	addr uint32    // wAddr
	esc  uint32    // wESC
	prot uint32    // wProt
	bdu  uint32    // wBDU
	_    [3]uint32 // wTS (the 1588 timestamp, unused in poll mode) and two reserved words
}

// The views' BD sizes are the hardware's: an index other than 0 into a
// one-element array does not compile.
var (
	_ = [1]struct{}{}[unsafe.Sizeof(bdEnh{})-bdEnhancedSize]
	_ = [1]struct{}{}[unsafe.Sizeof(bdLeg{})-bdLegacySize]
)

func newBDRing(mem []byte, iova uint64, size, bdSize int) bdRing {
	words := size * bdSize / 4
	r := bdRing{
		w:      words32(mem, words),
		stride: bdSize / 4,
		size:   size,
		iova:   iova,
	}
	if bdSize == bdEnhancedSize {
		r.enh = bdView[bdEnh](r.w, size)
	} else {
		r.leg = bdView[bdLeg](r.w, size)
	}
	return r
}

// bdView is the ring's words w seen as n BDs of type B (w holds exactly
// n*sizeof(B)/4 words; B is a whole number of words, its alignment theirs).
func bdView[B bdLeg | bdEnh](w []uint32, n int) []B {
	var b B
	if n == 0 || len(w) != n*int(unsafe.Sizeof(b))/4 {
		panic("fec: BD view of " + strconv.Itoa(len(w)) + " words as " + strconv.Itoa(n) + " BDs")
	}
	return unsafe.Slice((*B)(unsafe.Pointer(&w[0])), n)
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

// rxBDBits and txBDBits name the sc bits of RX and TX BDs (§3.3), in the order a dump
// lists them.
var rxBDBits = []struct {
	bit  uint32
	name string
}{{rxbd_E, "E"}, {rxbd_W, "W"}, {rxbd_L, "L"}, {rxbd_M, "M"}, {rxbd_BC, "BC"}, {rxbd_MC, "MC"},
	{rxbd_LG, "LG"}, {rxbd_NO, "NO"}, {rxbd_CR, "CR"}, {rxbd_OV, "OV"}, {rxbd_TR, "TR"}}
var txBDBits = []struct {
	bit  uint32
	name string
}{{txbd_R, "R"}, {txbd_W, "W"}, {txbd_L, "L"}, {txbd_TC, "TC"}, {txbd_ABC, "ABC"}}

// DecodeBD decodes one BD as it lies in ring memory (8 bytes legacy, 32
// enhanced), for a bring-up tool: word 0 holds sc<<16 | length and word 1
// the buffer address, as the CPU sees them with ECR.DBSWP set; enhanced
// BDs add the extended status word and BDU.
func DecodeBD(rx bool, b []byte) driver.BD {
	var d driver.BD
	if len(b) < bdLegacySize {
		d.Note = fmt.Sprintf("%d bytes: an FEC BD has %d or %d", len(b), bdLegacySize, bdEnhancedSize)
		return d
	}
	le := binary.LittleEndian
	st, length := sc(le.Uint32(b[0:]))
	d.Len, d.Addr = int(length), uint64(le.Uint32(b[4*wAddr:]))
	bitsOf := txBDBits
	if rx {
		bitsOf = rxBDBits
	}
	for _, f := range bitsOf {
		if st&f.bit != 0 {
			d.Flags = append(d.Flags, f.name)
		}
	}
	if len(b) >= bdEnhancedSize {
		esc, bdu := le.Uint32(b[4*wESC:]), le.Uint32(b[4*wBDU:])
		if rx && esc&rxbd_INT != 0 {
			d.Flags = append(d.Flags, "INT") // RXF/RXB raised on completion (irq.go)
			esc &^= rxbd_INT
		}
		if esc != 0 {
			d.Flags = append(d.Flags, fmt.Sprintf("ESC=%#x", esc))
		}
		if bdu&bd_BDU != 0 {
			d.Flags = append(d.Flags, "BDU")
		}
	}
	switch {
	case rx && st&rxbd_E != 0:
		d.Note = "empty, owned by the MAC"
	case !rx && st&txbd_R != 0:
		d.Note = "ready, owned by the MAC"
	}
	return d
}

// DecodeBD is the package's DecodeBD, for a tool that holds a driver.Port.
func (p *Port) DecodeBD(rx bool, b []byte) driver.BD { return DecodeBD(rx, b) }

// The port offers a bring-up tool its rings, its PHY and its registers.
var (
	_ driver.Inspector      = (*Port)(nil)
	_ driver.PHYAccess      = (*Port)(nil)
	_ driver.RegisterDumper = (*Port)(nil)
)

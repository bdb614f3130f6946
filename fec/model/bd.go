package model

import "math/bits"

// Buffer descriptor layout (docs/hardware-fec.md §3). Word offsets inside a BD; word 0
// is status<<16 | length in the engine's byte order (see the package doc).
const (
	bdWord0 = 0x00 // status/control (31:16) and data length (15:0)
	bdAddr  = 0x04 // buffer address (32 bits)
	bdESC   = 0x08 // enhanced: extended status/control
	bdProt  = 0x0C // enhanced: RX checksum / header length / protocol
	bdBDU   = 0x10 // enhanced: bit 31 BDU
	bdTS    = 0x14 // enhanced: 1588 timestamp

	legacyBDSize   = 8
	enhancedBDSize = 32
)

// Status/control bits (16-bit field).
const (
	rxbd_E = 0x8000 // RX: empty, owned by the MAC
	txbd_R = 0x8000 // TX: ready, owned by the MAC
	bd_RO1 = 0x4000
	bd_W   = 0x2000
	bd_RO2 = 0x1000
	bd_L   = 0x0800

	rxbd_M  = 0x0100
	rxbd_BC = 0x0080
	rxbd_MC = 0x0040
	rxbd_LG = 0x0020
	rxbd_NO = 0x0010
	rxbd_SH = 0x0008
	rxbd_CR = 0x0004
	rxbd_OV = 0x0002
	rxbd_TR = 0x0001

	txbd_TC  = 0x0400
	txbd_ABC = 0x0200

	rxErrBits = rxbd_LG | rxbd_NO | rxbd_SH | rxbd_CR | rxbd_OV | rxbd_TR
)

// Enhanced esc bits.
const (
	rxbd_ME   = 1 << 31
	rxbd_UC   = 1 << 24
	rxbd_INT  = 1 << 23
	rxbd_ICE  = 1 << 5
	rxbd_PCR  = 1 << 4
	rxbd_VLAN = 1 << 2
	rxbd_IPV6 = 1 << 1
	rxbd_FRAG = 1 << 0

	txbd_INT  = 1 << 30
	txbd_TS   = 1 << 29 // stamp this frame: the counter goes into the last BD's ts word
	txbd_PINS = 1 << 28
	txbd_IINS = 1 << 27
	txbd_TXE  = 1 << 15
	txbd_UE   = 1 << 13
	txbd_FE   = 1 << 11

	txbd_ESC_ERR_MASK = 0xBF00 // TXE, UE, EE, FE, LCE, OE, TSE
	bd_BDU            = 1 << 31
)

// bdFormat is how the engine reads descriptors right now (from ECR).
type bdFormat struct {
	size uint64 // 8 or 32
	enh  bool
	swap bool // words are big-endian in memory (ENET-MAC without DBSWP)
}

func (d *Device) format() bdFormat {
	ecr := d.reg(regECR)
	f := bdFormat{size: legacyBDSize}
	if d.prof.EnhancedBD && ecr&ecr_EN1588 != 0 {
		f.size, f.enh = enhancedBDSize, true
	}
	f.swap = d.prof.DBSWP && ecr&ecr_DBSWP == 0
	return f
}

// load reads the descriptor word at iova; false is a recorded DMA fault.
func (d *Device) load(f bdFormat, iova uint64) (uint32, bool) {
	v, ok := d.iommu.Load32(iova)
	if f.swap {
		v = bits.ReverseBytes32(v)
	}
	return v, ok
}

// store writes the descriptor word at iova; false is a recorded DMA fault.
func (d *Device) store(f bdFormat, iova uint64, v uint32) bool {
	if f.swap {
		v = bits.ReverseBytes32(v)
	}
	return d.iommu.Store32(iova, v)
}

// next is the BD after the one at cur: the ring base after a BD with W.
func next(f bdFormat, cur uint64, sc uint16, base uint32) uint64 {
	if sc&bd_W != 0 {
		return uint64(base)
	}
	return cur + f.size
}

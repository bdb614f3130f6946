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
	bdE   = 0x8000 // RX: empty, owned by the MAC
	bdR   = 0x8000 // TX: ready, owned by the MAC
	bdRO1 = 0x4000
	bdW   = 0x2000
	bdRO2 = 0x1000
	bdL   = 0x0800

	rxM  = 0x0100
	rxBC = 0x0080
	rxMC = 0x0040
	rxLG = 0x0020
	rxNO = 0x0010
	rxSH = 0x0008
	rxCR = 0x0004
	rxOV = 0x0002
	rxTR = 0x0001

	txTC  = 0x0400
	txABC = 0x0200

	rxErrBits = rxLG | rxNO | rxSH | rxCR | rxOV | rxTR
)

// Enhanced esc bits.
const (
	escRxME   = 1 << 31
	escRxUC   = 1 << 24
	escRxINT  = 1 << 23
	escRxICE  = 1 << 5
	escRxPCR  = 1 << 4
	escRxVLAN = 1 << 2
	escRxIPV6 = 1 << 1
	escRxFRAG = 1 << 0

	escTxINT  = 1 << 30
	escTxPINS = 1 << 28
	escTxIINS = 1 << 27
	escTxTXE  = 1 << 15
	escTxFE   = 1 << 11

	escTxErrBits = 0xBF00 // TXE, UE, EE, FE, LCE, OE, TSE
	bduBDU       = 1 << 31
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
	if d.prof.EnhancedBD && ecr&ecrEN1588 != 0 {
		f.size, f.enh = enhancedBDSize, true
	}
	f.swap = d.prof.DBSWP && ecr&ecrDBSWP == 0
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
	if sc&bdW != 0 {
		return uint64(base)
	}
	return cur + f.size
}

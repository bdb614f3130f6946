package enetc

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gopmd/gopmd/driver"
)

// Buffer descriptors (reference §3). Every BD is 16 little-endian bytes,
// but an RX BD on a ring with RBMR.BDS, 32 (rxstamp.go). The
// driver overlays Go structs on the ring memory; gopmd's targets (arm64,
// armv7, amd64) are all little-endian, and New refuses a big-endian host.

// bdSize is the size of one TX or RX BD.
const bdSize = 16

// bdRingAlign is the alignment of every BD ring base (TX, RX, CBDR; §4.1).
const bdRingAlign = 128

// txBD is the TX BD in the normal format written by software (§3.1).
type txBD struct {
	addr    uint64 // IOVA of this fragment
	bufLen  uint16 // bytes in this fragment
	frmLen  uint16 // total frame length, first BD only; 0 in later BDs
	lstatus uint32 // bits 23:0 txstart (unused), bits 31:24 flags
}

// TX BD flag bits, as positioned in lstatus (flags byte = bits 31:24).
const (
	txbdFlagsShift = 24
	txbd_FLAGS_TSE = 1 << 1
	txbd_FLAGS_W   = 1 << 2
	txbd_FLAGS_EX  = 1 << 6
	txbd_FLAGS_F   = 1 << 7

	txbdLstatusF = txbd_FLAGS_F << txbdFlagsShift

	// Extension BD (§3.2): e_flags is byte 14, bits 23:16 of lstatus.
	txbdEFlagsShift           = 16
	txbd_E_FLAGS_TWO_STEP_PTP = 1 << 2 // report the frame's transmit time in the write-back
)

// txMaxBDs is the most BDs one frame may use (§3.1: Linux caps at 15).
const txMaxBDs = 15

// rxBD is an RX BD. Software writes the buffer format (addr, lstatus = 0,
// §3.4); the device overwrites it with the write-back format (§3.5), whose
// first 8 bytes hold the checksum, parse summary and RSS hash in place of
// the address.
type rxBD struct {
	addr    uint64 // buffer format: IOVA; write-back: inet_csum | parse_summary<<16 | rss_hash<<32
	bufLen  uint16 // write-back: bytes written into this buffer
	vlanOpt uint16 // write-back: extracted VLAN TCI
	lstatus uint32 // write-back: flags (15:0), error (23:16), status (31:24)
}

// RX write-back fields within lstatus (§3.5).
const (
	rxbd_LSTATUS_R         = 1 << 30 // ready: the device wrote this BD back
	rxbd_LSTATUS_F         = 1 << 31 // final BD of the frame
	rxbd_LSTATUS_ERR_SHIFT = 16
	rxbd_LSTATUS_ERR_MASK  = 0xFF << rxbd_LSTATUS_ERR_SHIFT
	rxbd_FLAG_TPID_MASK    = 0x3
	rxbd_FLAG_VLAN         = 1 << 9  // VLAN TCI extracted into vlanOpt
	rxbd_FLAG_TSTMP        = 1 << 10 // timestamp present
	rxbd_PARSE_ERROR       = 1 << 15 // parse_summary bit15: parse/checksum error
)

// The overlays must be exactly one BD each.
var _ [bdSize - unsafe.Sizeof(txBD{})]byte
var _ [unsafe.Sizeof(txBD{}) - bdSize]byte
var _ [bdSize - unsafe.Sizeof(rxBD{})]byte
var _ [unsafe.Sizeof(rxBD{}) - bdSize]byte

// hostLittleEndian reports whether the struct overlays match the device's
// byte order.
func hostLittleEndian() bool {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	return b[0] == 1
}

// txRing views mem (16-byte aligned, len a multiple of 16) as TX BDs.
func txRing(mem []byte) []txBD {
	return unsafe.Slice((*txBD)(unsafe.Pointer(unsafe.SliceData(mem))), len(mem)/bdSize)
}

// rxRing views mem (16-byte aligned, len a multiple of 16) as RX BDs.
func rxRing(mem []byte) []rxBD {
	return unsafe.Slice((*rxBD)(unsafe.Pointer(unsafe.SliceData(mem))), len(mem)/bdSize)
}

// loadStatus reads an RX BD's lstatus word with one atomic load: the device
// writes it last, so its ready bit guards the rest of the BD.
func (b *rxBD) loadStatus() uint32 { return atomic.LoadUint32(&b.lstatus) }

// post writes the BD in the buffer format: the address and a zero lstatus,
// so no stale ready bit survives from the last write-back. Plain stores are
// enough: the device does not look at the BD until the RBCIR write that
// follows (after a barrier) hands it over.
func (b *rxBD) post(iova uint64) {
	b.addr = iova
	b.bufLen, b.vlanOpt, b.lstatus = 0, 0, 0
}

// cbd is a control BD (§2.5), 32 bytes, long format.
type cbd struct {
	addr   [2]uint32 // buffer IOVA low, high
	opt    [4]uint32
	index  uint16
	length uint16
	cmd    uint8
	class  uint8
	_      uint8
	status uint8 // bit7 SF (short format); low 4 bits error status
}

var _ [cbdSize - unsafe.Sizeof(cbd{})]byte
var _ [unsafe.Sizeof(cbd{}) - cbdSize]byte

// cbdRing views mem as control BDs.
func cbdRing(mem []byte) []cbd {
	return unsafe.Slice((*cbd)(unsafe.Pointer(unsafe.SliceData(mem))), len(mem)/cbdSize)
}

// ptrAt points at byte off of control BD i (for an atomic status load).
func ptrAt(ring []cbd, i, off int) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(&ring[i]), off)
}

// DecodeBD decodes one BD as it lies in ring memory, for a bring-up tool:
// TX BDs in the software-written format (§3.1), RX BDs in the buffer
// format until the device sets R and in the write-back format (§3.5)
// after, with the stamp of a 32-byte extended RX BD (RBMR.BDS) whose
// TSTMP flag is set.
func DecodeBD(rx bool, b []byte) driver.BD {
	le := binary.LittleEndian
	var d driver.BD
	if len(b) < bdSize {
		d.Note = fmt.Sprintf("%d bytes: an ENETC BD has %d", len(b), bdSize)
		return d
	}
	q, l1, l2, ls := le.Uint64(b[0:]), le.Uint16(b[8:]), le.Uint16(b[10:]), le.Uint32(b[12:])
	if !rx {
		d.Addr, d.Len, d.FrameLen = q, int(l1), int(l2)
		flags := ls >> txbdFlagsShift
		for _, f := range []struct {
			bit  uint32
			name string
		}{{txbd_FLAGS_F, "F"}, {txbd_FLAGS_EX, "EX"}, {txbd_FLAGS_W, "W"}, {txbd_FLAGS_TSE, "TSE"}} {
			if flags&f.bit != 0 {
				d.Flags = append(d.Flags, f.name)
			}
		}
		return d
	}
	if ls&rxbd_LSTATUS_R == 0 {
		d.Addr = q
		d.Note = "posted, waiting for a frame"
		return d
	}
	d.Len = int(l1)
	d.Flags = append(d.Flags, "R")
	if ls&rxbd_LSTATUS_F != 0 {
		d.Flags = append(d.Flags, "F")
	}
	if e := ls & rxbd_LSTATUS_ERR_MASK >> rxbd_LSTATUS_ERR_SHIFT; e != 0 {
		d.Flags = append(d.Flags, fmt.Sprintf("ERR=%#x", e))
	}
	if ls&rxbd_FLAG_VLAN != 0 {
		d.Flags = append(d.Flags, fmt.Sprintf("VLAN=%d", l2))
	}
	d.Note = fmt.Sprintf("written back: rss %#x parse %#x", uint32(q>>32), uint16(q>>16))
	if ls&rxbd_FLAG_TSTMP != 0 && len(b) >= 2*bdSize { // an extended BD (RBMR.BDS) with its stamp
		d.Flags = append(d.Flags, "TSTMP")
		d.Note += fmt.Sprintf(" stamp %#x", le.Uint32(b[bdSize:]))
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

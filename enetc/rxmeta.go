package enetc

import (
	"unsafe"

	"github.com/gopmd/gopmd/pool"
)

// The RX queues keep each frame's write-back undecoded in its header
// (pool.Packet.SetRxRaw): w0 is the BD's first word as the device wrote it
// (inet_csum | parse_summary<<16 | rss_hash<<32), w1 the VLAN TCI field
// with the status's low 16 bits, the flags (VLAN extracted, timestamp),
// above it (§3.5). rxRaw is the per-frame work: a load and two stores,
// where decoding took eleven instructions most consumers never used.
// The decoders below run only when a holder reads the metadata.
var (
	// rxFmtPlain: a queue without RSS, whose hash field means nothing.
	rxFmtPlain = pool.RegisterRxFormat(func(w0 uint64, w1 uint32) pool.RxMeta { return decodeRx(w0, w1, false) })
	// rxFmtRSS: a queue of a port with RSS: the hash is the device's.
	rxFmtRSS = pool.RegisterRxFormat(func(w0 uint64, w1 uint32) pool.RxMeta { return decodeRx(w0, w1, true) })
)

// rxRaw is the write-back of bd, status st (its flags in the low 16 bits),
// as SetRxRaw keeps it.
func rxRaw(st uint32, bd *rxBD) (w0 uint64, w1 uint32) {
	return bd.addr, uint32(bd.vlanOpt) | st<<16
}

// bdHi is the second word of a written-back BD in one load: bufLen |
// vlanOpt<<16 | lstatus<<32, the host little-endian. Shifted right by 16
// it is rxRaw's w1 (the VLAN field and the status's low 16 bits), where
// the two fields took four instructions. Load it only after the BD's
// status (and, where loads may pass each other, a read barrier since).
func bdHi(bd *rxBD) uint64 { return *(*uint64)(unsafe.Pointer(&bd.bufLen)) }

// decodeRx is what a write-back kept by rxRaw says of its frame: the parse
// summary, FlagParseError from its bit 15, the stripped VLAN TCI with
// FlagVLANStripped when the status says one was extracted, and with RSS
// the hash and FlagRSSHash.
func decodeRx(w0 uint64, w1 uint32, rss bool) pool.RxMeta {
	m := pool.RxMeta{Ptype: uint16(w0 >> 16)}
	if rss {
		m.Hash, m.Flags = uint32(w0>>32), pool.FlagRSSHash
	}
	if m.Ptype&rxbd_PARSE_ERROR != 0 {
		m.Flags |= pool.FlagParseError
	}
	if (w1>>16)&rxbd_FLAG_VLAN != 0 {
		m.VLAN, m.Flags = uint16(w1), m.Flags|pool.FlagVLANStripped
	}
	return m
}

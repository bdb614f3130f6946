package pool

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Packet is the header of one buffer: an mbuf-like record that lives in its
// pool's header array for the pool's whole life (nothing is allocated per
// packet). The buffer bytes live in DMA memory; the header says where the
// frame starts in them and how long it is.
//
// A Packet belongs to exactly one of: its pool (cache or ring), a device ring
// (posted for RX or queued for TX), or the application. Free hands it back.
//
// What the device reported of a received frame beyond its length (parse
// summary, stripped VLAN tag, flags, RSS hash: RxMeta, read through
// RxMeta, Ptype, VLAN, Flags and Hash) is kept in the form the receive
// path found cheapest: decoded (FEC, AF_XDP), or as the device's
// write-back words, decoded by the driver's registered decoder when an
// accessor reads them (ENETC). Either way it is valid from the RxBurst
// that returned the frame until the holder frees it or resets it
// (SetRx, SetRxMeta, SetSegment); a fresh allocation reads as the zero
// RxMeta. The words live in the header, never in the ring: a refill that
// reuses the descriptor changes nothing a holder reads.
type Packet struct {
	// meta is reset on every allocation. First in the header (and its
	// zeroed part first in it), it is zeroed at the header's own address,
	// with no address to compute.
	meta

	// Fixed at pool creation.
	buf  []byte // the whole buffer in the CPU's view of the DMA region
	iova uint64 // bus address of buf[0]
	pool *Pool
	idx  uint32 // index in pool.hdrs: the signature check is &pool.hdrs[idx] == p

	// state is the header's state word: stHome while the buffer is in its
	// pool (for split pages: while the unit is), stChained while next is
	// set, and above them the generation, bumped on every return, so a
	// stale duplicate free carries an old value. The pool's owner writes
	// stHome and the generation, with the buffer in hand (home, or being
	// returned by the owner); SetNext, the holder's, writes stChained. Its
	// low byte is zero exactly for a buffer that is out and single: the
	// one test the free fast paths make.
	state uint32

	// Split-page pieces only: stateFree/stateOut, changed with CAS because
	// pieces return from any goroutine.
	pstate atomic.Uint32

	// reach is the pool's reach (see Reach), copied here at creation so a
	// TX queue's check is one load: it fills padding before next.
	reach uint32

	// next is the next segment; always nil while the buffer is in the pool.
	next *Packet
}

// meta is the per-holder part of a header. An allocation rewrites it
// whole (resetMeta): the tail zeroed, then the head, the two fields a fresh
// header has non-zero, as one word (the pool's freshHead).
type meta struct {
	metaTail
	metaHead
}

// metaTail is the part of meta a fresh allocation zeroes. First in the
// header, it is zeroed at the header's own address, with no address to
// compute.
type metaTail struct {
	rxHolder
	len int32 // bytes of data in this segment

	// What the device reported of a received frame beyond its length,
	// in the form rxFmt names (see RxFormat): for RxDecoded the RxMeta
	// values in these fields; for a driver's format two words as its
	// receive path stored them (SetRxRaw: w1 over ptype and vlan, w0 over
	// flags and hash), decoded only when an accessor reads them (RxMeta).
	ptype uint16
	vlan  uint16
	flags Flags
	hash  uint32

	// PktLen is the total frame length over all segments (head only).
	PktLen int
}

// rxHolder is who holds a buffer and where its frame came from: the part
// of the header a receive path sets from its queue alone, 8 bytes at the
// header's start, which SetRxRaw stores as one word (RxTag).
type rxHolder struct {
	owner uint16 // who holds it now, for leak reports

	// Port and Queue say where the frame was received.
	Port, Queue uint16

	// rxFmt names the form in which ptype, vlan, flags and hash keep what
	// the device reported of a received frame (see metaTail).
	rxFmt RxFormat
}

// RxTag is a receive queue's holder, port, queue and RxFormat as the one
// word SetRxRaw stores (MakeRxTag).
type RxTag uint64

// MakeRxTag packs what SetRxRaw stores of a queue's frames besides the
// window and the report: the holder (as SetOwner), port, queue and format.
// A queue makes it once, at set-up.
func MakeRxTag(owner, port, queue uint16, f RxFormat) RxTag {
	var w uint64
	*(*rxHolder)(unsafe.Pointer(&w)) = rxHolder{owner: owner, Port: port, Queue: queue, rxFmt: f}
	return RxTag(w)
}

// The holder is one aligned word at the header's start (the header is
// 8-aligned on 64-bit hosts; 32-bit ones store it as two aligned words).
var (
	_ [8 - unsafe.Sizeof(rxHolder{})]byte
	_ [unsafe.Sizeof(rxHolder{}) - 8]byte
	_ [0 - unsafe.Offsetof(Packet{}.meta)]byte
	_ [0 - unsafe.Offsetof(metaTail{}.rxHolder)]byte
)

// SetRxRaw's two words cover ptype and vlan (w1) and flags and hash (w0),
// aligned for their width: the 12 bytes must be contiguous in that order.
var (
	_ [unsafe.Offsetof(metaTail{}.flags) - unsafe.Offsetof(metaTail{}.ptype) - 4]byte
	_ [unsafe.Offsetof(metaTail{}.ptype) + 4 - unsafe.Offsetof(metaTail{}.flags)]byte
	_ [unsafe.Offsetof(metaTail{}.hash) - unsafe.Offsetof(metaTail{}.flags) - 4]byte
	_ [unsafe.Offsetof(metaTail{}.flags) + 4 - unsafe.Offsetof(metaTail{}.hash)]byte
	_ [0 - unsafe.Offsetof(metaTail{}.ptype)%4]byte
)

// metaHead is the part of meta a fresh allocation sets to non-zero values.
type metaHead struct {
	off int32 // start of data in buf
	// NSegs is the number of segments (head only); 1 for a single buffer.
	NSegs int32
}

// headWord is a metaHead as the one word an allocation stores.
func headWord(h metaHead) uint64 { return *(*uint64)(unsafe.Pointer(&h)) }

// resetMeta gives p a fresh holder's metadata, head being the headWord of
// its metaHead: the tail zeroed and one word stored, two instructions fewer
// than a zeroing of the whole and two field stores.
func (p *Packet) resetMeta(head uint64) {
	p.metaTail = metaTail{}
	*(*uint64)(unsafe.Pointer(&p.metaHead)) = head
}

// Flags describe a received or queued frame.
type Flags uint32

const (
	// FlagRSSHash: Hash holds the device's RSS hash.
	FlagRSSHash Flags = 1 << iota
	// FlagVLANStripped: VLAN holds a tag the device removed.
	FlagVLANStripped
	// FlagL3CsumBad: the device's parser found a bad IPv4 header checksum.
	FlagL3CsumBad
	// FlagL4CsumBad: the device's parser found a bad TCP or UDP checksum.
	FlagL4CsumBad
	// FlagParseError: the device's parser flagged the frame.
	FlagParseError
)

// RxMeta is what a device reported of a received frame beyond its length
// (the head segment's; a later segment's reads as zero).
type RxMeta struct {
	// Ptype is the device's parse summary, as the device reports it.
	Ptype uint16
	// VLAN is the stripped VLAN TCI (FlagVLANStripped set), else 0.
	VLAN uint16
	// Flags describe the frame (see the Flag constants).
	Flags Flags
	// Hash is the RSS hash the device computed (FlagRSSHash set), else 0.
	Hash uint32
}

// RxFormat names the form in which a header keeps its RxMeta: RxDecoded,
// the values themselves, or a driver's undecoded write-back words, with
// the decoder the driver registered for them (RegisterRxFormat).
type RxFormat uint8

// RxDecoded is the format of a fresh header, of SetRx and SetRxMeta: the
// RxMeta values themselves, read with no decoding.
const RxDecoded RxFormat = 0

// RxDecoder turns a format's two words (SetRxRaw's w0 and w1) into the
// RxMeta they stand for. It must be cheap and must not keep or change
// anything: every accessor read calls it.
type RxDecoder func(w0 uint64, w1 uint32) RxMeta

// rxDecoders is the decoder of each registered format, indexed by the tag
// (a uint8: no bounds check); rxFormats counts the tags handed out.
var (
	rxDecoders [256]RxDecoder
	rxFormats  = 1 // RxDecoded
	rxFormatMu sync.Mutex
)

// RegisterRxFormat gives a driver a format for the metadata its receive
// path stores undecoded (SetRxRaw), with dec to decode it on read. Call it
// from a package's initialization, before any header carries the format;
// it panics when dec is nil or the 255 formats are taken.
func RegisterRxFormat(dec RxDecoder) RxFormat {
	if dec == nil {
		panic("pool: RegisterRxFormat: the decoder is nil")
	}
	rxFormatMu.Lock()
	defer rxFormatMu.Unlock()
	if rxFormats == len(rxDecoders) {
		panic("pool: RegisterRxFormat: all 255 formats are registered")
	}
	f := RxFormat(rxFormats)
	rxDecoders[f] = dec
	rxFormats++
	return f
}

// RxMeta is what the device reported of the frame (the zero RxMeta for a
// header no receive path set: fresh from Alloc, or a later segment). It
// is valid from the RxBurst that returned the frame until the holder frees
// it or calls SetRx, SetRxMeta or SetSegment; a driver's format is decoded
// here, on each call, not on the receive path.
func (p *Packet) RxMeta() RxMeta {
	if p.rxFmt == RxDecoded {
		return RxMeta{Ptype: p.ptype, VLAN: p.vlan, Flags: p.flags, Hash: p.hash}
	}
	return rxDecoders[p.rxFmt](*(*uint64)(unsafe.Pointer(&p.flags)), *(*uint32)(unsafe.Pointer(&p.ptype)))
}

// SetRxMeta replaces what RxMeta reports, stored decoded (RxDecoded): for
// a holder that rewrites a frame (strips or adds a VLAN tag, say) or
// builds one that did not come from a device.
func (p *Packet) SetRxMeta(m RxMeta) {
	p.rxFmt, p.ptype, p.vlan, p.flags, p.hash = RxDecoded, m.Ptype, m.VLAN, m.Flags, m.Hash
}

// RxFormat is the form in which the header keeps its RxMeta.
func (p *Packet) RxFormat() RxFormat { return p.rxFmt }

// Ptype is RxMeta().Ptype: the device's parse summary.
func (p *Packet) Ptype() uint16 { return p.RxMeta().Ptype }

// VLAN is RxMeta().VLAN: the stripped VLAN TCI (FlagVLANStripped set).
func (p *Packet) VLAN() uint16 { return p.RxMeta().VLAN }

// Flags is RxMeta().Flags.
func (p *Packet) Flags() Flags { return p.RxMeta().Flags }

// Hash is RxMeta().Hash: the RSS hash (FlagRSSHash set).
func (p *Packet) Hash() uint32 { return p.RxMeta().Hash }

const (
	stateFree uint8 = iota
	stateOut
)

// The state word's flags and generation (see Packet.state).
const (
	stHome    = 1 << 0
	stChained = 1 << 1
	genShift  = 8
	// toHome is what a return adds to the state word of a single buffer
	// out (low byte 0): the flag flips and the generation steps, in one
	// addition. An allocation steps no generation: it clears the low byte,
	// in the bulk allocations with one byte store where an addition to the
	// word is a load, an add and a store on arm64. One step a round trip is
	// enough: every return, by whichever path, leaves a generation no
	// earlier ring entry carries.
	toHome = 1<<genShift + stHome
)

// out reports whether the buffer (the unit, for split pages) is out of the
// pool. Owner only.
func (p *Packet) out() bool { return p.state&stHome == 0 }

// stateFlags is the state word's low byte: the flags, where the free fast
// paths test them and an allocation clears them.
func (p *Packet) stateFlags() *uint8 {
	if cpu.IsBigEndian {
		return (*uint8)(unsafe.Add(unsafe.Pointer(&p.state), 3))
	}
	return (*uint8)(unsafe.Pointer(&p.state))
}

// single reports whether the buffer is out and has no next segment: the
// free fast paths' test. It reads the state word's low byte alone, which
// is one compare with memory where uint8(p.state) is a load and a test.
// stateFlags is spelled out: the call, even inlined, leaves a position
// marker (a NOP) in the fast paths.
func (p *Packet) single() bool {
	if cpu.IsBigEndian {
		return *(*uint8)(unsafe.Add(unsafe.Pointer(&p.state), 3)) == 0
	}
	return *(*uint8)(unsafe.Pointer(&p.state)) == 0
}

// markOut marks a buffer at home (its flags stHome alone: never chained
// there) out and single, its generation kept, clearing the flags in the
// word: its free may follow soon, and the free's word-wide addition would
// wait for a byte store to leave the store buffer (see pop). The bulk
// allocations store the byte. Owner only.
func (p *Packet) markOut() { p.state &^= 0xff }

// entry is the ring entry of unit u whose first header's state word is st:
// the index and the generation's low bits, shifted from their place in the
// state word to theirs in the entry in one shift.
func entry(u, st uint32) uint32 { return u | st<<(idxBits-genShift)&(genMask<<idxBits) }

// sameGen reports whether ring entry e carries the low bits of the
// generation in state word st.
func sameGen(e, st uint32) bool { return (st<<(idxBits-genShift)^e)&(genMask<<idxBits) == 0 }

// unchain ends the chain at p: next and stChained cleared together.
func (p *Packet) unchain() {
	p.next = nil
	p.state &^= stChained
}

// Data is the frame bytes of this segment.
func (p *Packet) Data() []byte { return p.buf[p.off : p.off+p.len] }

// Len is the byte count of this segment.
func (p *Packet) Len() int { return int(p.len) }

// EtherAddrs is the first 12 bytes of the segment's data, an Ethernet
// frame's destination and source addresses, for a forwarder that rewrites
// or swaps them in place; nil when the segment holds fewer. The data
// window always lies inside the buffer (every call that sets it checks
// so), so the segment's length is the one test, and a caller that tested
// Len first pays none here: a forwarding loop pays a compare and its
// stores, where slicing Data would check the window against the buffer
// again.
func (p *Packet) EtherAddrs() *[12]byte {
	if p.len < 12 {
		return nil
	}
	return (*[12]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(p.buf)), p.off))
}

// Headroom is the free space before the data.
func (p *Packet) Headroom() int { return int(p.off) }

// Tailroom is the free space after the data.
func (p *Packet) Tailroom() int { return len(p.buf) - int(p.off) - int(p.len) }

// BufSize is the size of the whole buffer.
func (p *Packet) BufSize() int { return len(p.buf) }

// Buf is the whole buffer, headroom included.
func (p *Packet) Buf() []byte { return p.buf }

// IOVA is the bus address of the first data byte.
func (p *Packet) IOVA() uint64 { return p.iova + uint64(p.off) }

// Reach says which devices can DMA to and from the buffer: its pool's DMA
// domain (dma.DomainID) times two, plus 1 when every buffer of the pool lies
// below 4 GiB in bus addresses; 0 for a header that belongs to no pool. A TX
// queue compares it with ReachLow(its device's domain) once per packet:
// Reach()|1 when its descriptors take 64-bit addresses, Reach() itself when
// they hold 32 bits.
func (p *Packet) Reach() uint32 { return p.reach }

// ReachLow is the Reach of a buffer of DMA domain d below 4 GiB.
func ReachLow(d uint32) uint32 { return d<<1 | 1 }

// BufIOVA is the bus address of the buffer's first byte.
func (p *Packet) BufIOVA() uint64 { return p.iova }

// Offset is the start of the data inside the buffer.
func (p *Packet) Offset() int { return int(p.off) }

// SetData sets the data window to buf[off:off+n]. It reports false, and
// changes nothing, if the window does not fit in the buffer.
func (p *Packet) SetData(off, n int) bool {
	if off < 0 || n < 0 || off+n > len(p.buf) {
		return false
	}
	p.off, p.len = int32(off), int32(n)
	return true
}

// SetRx sets every metadata field of a received one-segment frame at once,
// as a driver's receive path does for a buffer from AllocBulkRaw: the data
// window buf[off:off+n], PktLen n, NSegs 1, the holder (as SetOwner) and the
// values the device reported, stored decoded (RxDecoded). The window must
// fit in the buffer (a driver checks the length the device wrote first):
// SetRx panics, as an index out of range does, if it does not.
func (p *Packet) SetRx(off, n uint16, owner, port, queue, ptype, vlan uint16, flags Flags, hash uint32) {
	if int(off)+int(n) > len(p.buf) {
		panic("pool: Packet.SetRx: the data window does not fit the buffer (check the received length first)")
	}
	p.rxHolder = rxHolder{owner: owner, Port: port, Queue: queue, rxFmt: RxDecoded}
	p.off, p.len, p.flags, p.hash = int32(off), int32(n), flags, hash
	*(*uint32)(unsafe.Pointer(&p.ptype)) = uint32(ptype) | uint32(vlan)<<16 // one store, as SetRxRaw's w1
	p.NSegs, p.PktLen = 1, int(n)
}

// windowFits reports whether the window [off, off+n) fits a buffer of size
// bytes, for any off and n: a sum that wraps does not fit. Where the
// caller's values are known small (a uint16's range, a mask) the compiler
// proves the sum does not wrap and drops that compare.
func windowFits(off, n uint, size int) bool {
	end := off + n
	return end <= uint(size) && end >= off
}

// SetRxRaw is SetRx for a receive path that keeps the device's report as
// it came: tag is the queue's holder, port, queue and format (MakeRxTag),
// and w0 and w1 the format's two words, which its decoder turns into
// RxMeta when an accessor reads them. It is what a receive path calls per
// frame: one store for the tag and two for the report, no decoding. With
// RxDecoded as the tag's format the words are the values themselves:
// w0 flags | hash<<32, w1 ptype | vlan<<16 (SetRx's fields, in one word
// for the holder, port and queue where SetRx stores three). The
// window, buf[off:off+n], must fit the buffer (a driver checks the length
// the device wrote first): SetRxRaw panics if it does not. off and n are
// full-width, as a receive path holds them: narrower ones cost it a
// widening copy each per frame on arm64.
func (p *Packet) SetRxRaw(off, n uint, tag RxTag, w0 uint64, w1 uint32) {
	if !windowFits(off, n, len(p.buf)) {
		panic("pool: Packet.SetRxRaw: the data window does not fit the buffer (check the received length first)")
	}
	*(*RxTag)(unsafe.Pointer(&p.rxHolder)) = tag
	p.off, p.len = int32(off), int32(n)
	*(*uint32)(unsafe.Pointer(&p.ptype)) = w1 // ptype and vlan
	*(*uint64)(unsafe.Pointer(&p.flags)) = w0 // flags and hash
	p.NSegs, p.PktLen = 1, int(n)
}

// SetSegment resets the metadata of a buffer from AllocBulkRaw that becomes
// a later segment of a received frame: data window buf[off:off+n], holder
// owner, every other field as a fresh allocation has it. It reports false,
// and changes nothing, if the window does not fit in the buffer.
func (p *Packet) SetSegment(off, n int, owner uint16) bool {
	if uint(off)+uint(n) > uint(len(p.buf)) || off < 0 || n < 0 {
		return false
	}
	p.meta = meta{metaTail{rxHolder: rxHolder{owner: owner}, len: int32(n)}, metaHead{off: int32(off), NSegs: 1}}
	return true
}

// SetLen sets the data length, keeping the start. False if it does not fit.
func (p *Packet) SetLen(n int) bool { return p.SetData(int(p.off), n) }

// Append grows the data by n bytes at the end and returns them, or nil if
// the tailroom is too small.
func (p *Packet) Append(n int) []byte {
	if n < 0 || n > p.Tailroom() {
		return nil
	}
	p.len += int32(n)
	return p.buf[p.off+p.len-int32(n) : p.off+p.len]
}

// Prepend grows the data by n bytes at the front (into the headroom) and
// returns them, or nil if the headroom is too small.
func (p *Packet) Prepend(n int) []byte {
	if n < 0 || n > int(p.off) {
		return nil
	}
	p.off -= int32(n)
	p.len += int32(n)
	return p.buf[p.off : p.off+int32(n)]
}

// DirtySpan is the part of the buffer the CPU may have written, as offset
// from the buffer's start and length: the data window, widened to the
// headroom start when data was prepended. It is what a free syncs for the
// device on non-coherent memory (so that no dirty cache line is evicted
// over what the device writes next).
func (p *Packet) DirtySpan() (off, n int) {
	lo := min(int(p.off), p.pool.headroom)
	return lo, int(p.off+p.len) - lo
}

// MarkClean records that DirtySpan has been synced for the device and the
// CPU writes no more to the buffer (a TX path, after it cleaned the frame
// and wrote the descriptor): the free that follows the transmission then
// syncs nothing, where it would clean the same cache lines a second time.
// It empties the data window; the buffer's holder calls it last.
func (p *Packet) MarkClean() { p.off, p.len = 0, 0 }

// Next is the next segment of a multi-buffer frame, or nil.
func (p *Packet) Next() *Packet { return p.next }

// SetNext chains q after p (q may be nil to end the chain).
func (p *Packet) SetNext(q *Packet) {
	p.next = q
	if q != nil {
		p.state |= stChained
	} else {
		p.state &^= stChained
	}
}

// Pool is the pool the buffer belongs to.
func (p *Packet) Pool() *Pool { return p.pool }

// SetOwner records who holds the buffer now (an id from Pool.Owner), so a
// leak report can name it. Drivers call it when a buffer enters a ring.
func (p *Packet) SetOwner(id uint16) { p.owner = id }

// Free returns the buffer, and every segment chained after it, to its pool.
// It is safe from any goroutine: buffers go back through the pool's shared
// ring. A forged header (not from any pool) or a buffer already free is
// refused and counted, never put back twice.
func (p *Packet) Free() {
	for p != nil {
		next := p.next
		if next != nil { // a buffer already free has none: nothing is written to it
			p.unchain()
		}
		if p.pool == nil || !p.pool.owns(p) {
			forgedFrees.Add(1)
			return
		}
		p.pool.freeShared(p)
		p = next
	}
}

// forgedFrees counts frees of headers that belong to no pool.
var forgedFrees atomic.Uint64

// ForgedFrees is the number of frees refused because the header belonged to
// no pool (made by the caller, or corrupted).
func ForgedFrees() uint64 { return forgedFrees.Load() }

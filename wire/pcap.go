package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// Capture files are read and written through gopacket's pcapgo: the
// classic pcap format (draft-ietf-opsawg-pcap: a file header, then per
// frame a record header and the captured bytes) and pcapng
// (draft-ietf-opsawg-pcapng: blocks, one per frame and one per capturing
// interface), which Wireshark and tshark save by default. A reader tells
// them apart by the magic number at the start of the file; every record is
// checked before its frame is handed on, so a damaged or cut file ends the
// reading with an error naming the record, never a wrong frame.
const (
	pcapMagicMicros  = 0xa1b2c3d4
	pcapMagicNanos   = 0xa1b23c4d
	pcapngMagic      = 0x0a0d0d0a // a pcapng Section Header Block
	gzipMagic        = 0x1f8b
	pcapFileHdrLen   = 24
	pcapRecHdrLen    = 16
	pcapLinkEthernet = 1 // LINKTYPE_ETHERNET
	// PcapSnaplen is the snapshot length this package writes, and the
	// longest frame record it reads: longer than any frame a port
	// carries, so no frame is ever cut.
	PcapSnaplen = 262144
)

// PcapFormat is a capture file format.
type PcapFormat uint8

const (
	// FormatPcap is the classic libpcap format (nanosecond timestamps
	// when written here).
	FormatPcap PcapFormat = iota + 1
	// FormatPcapng is pcapng.
	FormatPcapng
)

// String is the format's name as pcap-format= takes it.
func (f PcapFormat) String() string {
	switch f {
	case FormatPcap:
		return "pcap"
	case FormatPcapng:
		return "pcapng"
	}
	return fmt.Sprintf("PcapFormat(%d)", uint8(f))
}

// ParsePcapFormat reads a format name: "pcap" or "pcapng".
func ParsePcapFormat(s string) (PcapFormat, error) {
	switch s {
	case "pcap":
		return FormatPcap, nil
	case "pcapng":
		return FormatPcapng, nil
	}
	return 0, fmt.Errorf("capture format %q: use pcap or pcapng", s)
}

// FormatFor is the format a file name asks for: pcapng when it ends in
// .pcapng (or .ntar), classic pcap otherwise.
func FormatFor(path string) PcapFormat {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pcapng", ".ntar":
		return FormatPcapng
	}
	return FormatPcap
}

// PcapError is a capture file this package cannot replay: malformed,
// damaged, or of a kind it does not take. Record is the 1-based number of
// the frame record at fault, 0 for the file header.
type PcapError struct {
	File   string
	Record int
	Reason string
}

// Error names the file, the record (0: the file header) and the reason.
func (e *PcapError) Error() string {
	if e.Record == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s: record %d: %s", e.File, e.Record, e.Reason)
}

// PcapReader reads Ethernet frames from a pcap or pcapng file and checks
// every record: a truncated record, a damaged length, or a frame the
// capture cut at its snapshot length is a *PcapError naming the record.
// It does not allocate per frame.
type PcapReader struct {
	path   string
	f      *os.File
	format PcapFormat
	size   int64 // the file's size; -1 when not known (compressed)
	rec    int

	// Classic pcap.
	pr  *pcapgo.Reader
	off int64 // file offset of the next record header

	// pcapng.
	ng     *pcapgo.NgReader
	blocks *ngBlocks
	empty  bool // a section without an interface: no frames
}

// OpenPcap opens a capture for reading and checks its file header: a
// pcap or pcapng file (told apart by its magic number; a gzip-compressed
// pcap is read too) of Ethernet frames. Anything else is refused with an
// error that says what to do.
func OpenPcap(path string) (*PcapReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (give the path of a readable pcap or pcapng file)", err)
	}
	r := &PcapReader{path: path, f: f, size: -1}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		r.size = fi.Size()
	}
	if err := r.open(bufio.NewReaderSize(f, 1<<16)); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *PcapReader) fail(rec int, format string, a ...any) error {
	return &PcapError{File: r.path, Record: rec, Reason: fmt.Sprintf(format, a...)}
}

// open tells the format by the magic number and reads the file header.
func (r *PcapReader) open(br *bufio.Reader) error {
	h, _ := br.Peek(pcapFileHdrLen)
	if len(h) >= 2 && binary.BigEndian.Uint16(h) == gzipMagic {
		// pcapgo reads a compressed classic pcap; sizes say nothing then.
		r.size = -1
		return r.openPcap(br)
	}
	if len(h) >= 4 && binary.LittleEndian.Uint32(h) == pcapngMagic {
		return r.openPcapng(br)
	}
	if len(h) < pcapFileHdrLen {
		return r.fail(0, "%d bytes, too short for a pcap file header (24 bytes): not a capture, or cut short", len(h))
	}
	var order binary.ByteOrder
	switch m := binary.LittleEndian.Uint32(h); {
	case m == pcapMagicMicros || m == pcapMagicNanos:
		order = binary.LittleEndian
	case binary.BigEndian.Uint32(h) == pcapMagicMicros || binary.BigEndian.Uint32(h) == pcapMagicNanos:
		order = binary.BigEndian
	default:
		return r.fail(0, "magic number %#08x: not a pcap or pcapng file (give a capture file; convert other formats with editcap -F pcapng)", binary.BigEndian.Uint32(h))
	}
	if major, minor := order.Uint16(h[4:]), order.Uint16(h[6:]); major != 2 || minor != 4 {
		return r.fail(0, "pcap format version %d.%d; only 2.4 is known (rewrite it with editcap -F pcap)", major, minor)
	}
	// The link type is the low 16 bits; the upper bits carry the FCS
	// length and flags (in the same word).
	if lt := order.Uint32(h[20:]) & 0xffff; lt != pcapLinkEthernet {
		return r.fail(0, "link type %d, not Ethernet (1): only Ethernet captures can be replayed into a NIC", lt)
	}
	return r.openPcap(br)
}

func (r *PcapReader) openPcap(br *bufio.Reader) error {
	pr, err := pcapgo.NewReader(br)
	if err != nil {
		return r.fail(0, "%v: not a pcap file this reader takes, or damaged", err)
	}
	if lt := pr.LinkType(); lt != layers.LinkTypeEthernet {
		return r.fail(0, "link type %d, not Ethernet (1): only Ethernet captures can be replayed into a NIC", lt)
	}
	// A record longer than the snapshot length is damage; bounding it also
	// bounds the buffer pcapgo keeps for the longest record.
	if s := pr.Snaplen(); s == 0 || s > PcapSnaplen {
		pr.SetSnaplen(PcapSnaplen)
	}
	r.pr, r.format, r.off = pr, FormatPcap, pcapFileHdrLen
	return nil
}

func (r *PcapReader) openPcapng(br *bufio.Reader) error {
	r.format = FormatPcapng
	r.blocks = &ngBlocks{r: br, path: r.path}
	ng, err := pcapgo.NewNgReader(r.blocks, pcapgo.NgReaderOptions{ErrorOnMismatchingLinkType: true})
	switch {
	case err == io.EOF:
		r.empty = true // a section header and nothing else
		return nil
	case err != nil:
		return r.ngFail(0, err)
	}
	if lt := ng.LinkType(); lt != layers.LinkTypeEthernet {
		return r.fail(0, "pcapng interface link type %d, not Ethernet (1): only Ethernet captures can be replayed into a NIC", lt)
	}
	r.ng = ng
	return nil
}

// ngFail turns an error of the pcapng reader into a *PcapError for
// record rec.
func (r *PcapReader) ngFail(rec int, err error) error {
	var pe *PcapError
	switch {
	case errors.As(err, &pe):
		pe.Record = rec
		return pe
	case errors.Is(err, pcapgo.ErrNgLinkTypeMismatch):
		return r.fail(rec, "a frame of an interface whose link type is not Ethernet: only Ethernet captures can be replayed into a NIC")
	case errors.Is(err, pcapgo.ErrNgVersionMismatch):
		return r.fail(rec, "a pcapng section of a version other than 1.0 (rewrite it with editcap -F pcapng)")
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return r.fail(rec, "truncated: the file ends inside a block (the capture was cut short)")
	}
	return r.fail(rec, "%v: the file is damaged", err)
}

// Format is the file's format.
func (r *PcapReader) Format() PcapFormat { return r.format }

// Next returns the next frame and its timestamp. The frame is valid until
// the next call. At the clean end of the file it returns io.EOF; a damaged
// or cut record is a *PcapError and ends the reading.
func (r *PcapReader) Next() ([]byte, time.Time, error) {
	rec := r.rec + 1
	var (
		data []byte
		ci   gopacket.CaptureInfo
		err  error
	)
	switch {
	case r.empty:
		return nil, time.Time{}, io.EOF
	case r.ng != nil:
		data, ci, err = r.ng.ZeroCopyReadPacketData()
		if err == io.EOF {
			return nil, time.Time{}, io.EOF
		}
		if err != nil {
			return nil, time.Time{}, r.ngFail(rec, err)
		}
	default:
		data, ci, err = r.pr.ZeroCopyReadPacketData()
		if err != nil {
			return nil, time.Time{}, r.pcapFail(rec, ci, err)
		}
		r.off += pcapRecHdrLen + int64(ci.CaptureLength)
	}
	switch {
	case ci.CaptureLength == 0:
		return nil, time.Time{}, r.fail(rec, "an empty record (captured length 0): the record header is damaged")
	case ci.Length > ci.CaptureLength:
		return nil, time.Time{}, r.fail(rec, "frame of %d bytes cut to %d by the capture's snapshot length: it cannot be replayed as it was sent (capture again with a snapshot length of 0, e.g. tcpdump -s 0)", ci.Length, ci.CaptureLength)
	}
	r.rec = rec
	return data, ci.Timestamp, nil
}

// pcapFail says what went wrong with classic record rec, whose header
// pcapgo read as ci (zero when it could not read it).
func (r *PcapReader) pcapFail(rec int, ci gopacket.CaptureInfo, err error) error {
	headerRead := !ci.Timestamp.IsZero()
	limit := r.pr.Snaplen()
	switch {
	case !headerRead && err == io.EOF:
		return io.EOF
	case !headerRead && errors.Is(err, io.ErrUnexpectedEOF):
		if r.size >= 0 {
			return r.fail(rec, "truncated: the file ends %d bytes into the 16-byte record header (the capture was cut short)", r.size-r.off)
		}
		return r.fail(rec, "truncated: the file ends inside the 16-byte record header (the capture was cut short)")
	case !headerRead:
		return r.fail(rec, "%v", err)
	case ci.CaptureLength > int(limit):
		return r.fail(rec, "captured length %d is past the file's snapshot length %d: the record header is damaged", ci.CaptureLength, limit)
	case ci.Length < ci.CaptureLength:
		return r.fail(rec, "original length %d is less than the captured length %d: the record header is damaged", ci.Length, ci.CaptureLength)
	case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
		if r.size >= 0 {
			return r.fail(rec, "truncated: the header says %d bytes, the file holds %d (the capture was cut short)", ci.CaptureLength, r.size-r.off-pcapRecHdrLen)
		}
		return r.fail(rec, "truncated: the header says %d bytes, the file ends before them (the capture was cut short)", ci.CaptureLength)
	}
	return r.fail(rec, "%v", err)
}

// Records is the number of records read so far.
func (r *PcapReader) Records() int { return r.rec }

// Path is the file's name.
func (r *PcapReader) Path() string { return r.path }

// Stat describes the open file (its identity stays that of the file
// opened, whatever its name points to since).
func (r *PcapReader) Stat() (os.FileInfo, error) { return r.f.Stat() }

// Close closes the file.
func (r *PcapReader) Close() error { return r.f.Close() }

// ngMaxBlock bounds a pcapng block: a frame of PcapSnaplen bytes with its
// block's fields and generous options.
const ngMaxBlock = PcapSnaplen + 64<<10

// pcapng block types whose framing ngBlocks checks further.
const (
	ngSHB = 0x0a0d0d0a
	ngIDB = 0x00000001
	ngPB  = 0x00000002 // obsolete Packet Block
	ngSPB = 0x00000003
	ngEPB = 0x00000006
	ngBOM = 0x1a2b3c4d
)

// ngBlocks hands a pcapng file to pcapgo's reader one whole block at a
// time, after checking the block's framing: its length against the file,
// the trailing copy of the length, and a packet block's captured length
// against the block. pcapgo then never reads a length it cannot hold (a
// damaged length would have it allocate gigabytes), and a damaged or cut
// file is a *PcapError that says where.
type ngBlocks struct {
	r     io.Reader
	path  string
	buf   []byte // the current block
	pos   int    // bytes of buf handed on
	off   int64  // file offset of the next block
	order binary.ByteOrder
	err   error
	h     [12]byte // a block's header (a field: a local would escape)
}

// Read implements io.Reader for pcapgo.
func (b *ngBlocks) Read(p []byte) (int, error) {
	if b.pos == len(b.buf) {
		if b.err != nil {
			return 0, b.err
		}
		if b.err = b.next(); b.err != nil {
			return 0, b.err
		}
	}
	n := copy(p, b.buf[b.pos:])
	b.pos += n
	return n, nil
}

func (b *ngBlocks) damaged(format string, a ...any) error {
	return &PcapError{File: b.path, Reason: fmt.Sprintf("block at byte %d: ", b.off) + fmt.Sprintf(format, a...)}
}

// next reads and checks the next block into buf.
func (b *ngBlocks) next() error {
	h := &b.h
	n, err := io.ReadFull(b.r, h[:8])
	switch {
	case err == io.EOF:
		return io.EOF
	case err != nil:
		return b.damaged("truncated: the file ends %d bytes into the block header (the capture was cut short)", n)
	}
	typ := binary.LittleEndian.Uint32(h[:4])
	hl := 8
	if typ == ngSHB { // a new section says its byte order
		if n, err := io.ReadFull(b.r, h[8:12]); err != nil {
			return b.damaged("truncated: the file ends %d bytes into the section header (the capture was cut short)", 8+n)
		}
		switch {
		case binary.LittleEndian.Uint32(h[8:]) == ngBOM:
			b.order = binary.LittleEndian
		case binary.BigEndian.Uint32(h[8:]) == ngBOM:
			b.order = binary.BigEndian
		default:
			return b.damaged("section header's byte-order magic %#08x is damaged", binary.BigEndian.Uint32(h[8:]))
		}
		hl = 12
	}
	if b.order == nil {
		return b.damaged("not a pcapng section header: the file is damaged")
	}
	typ = b.order.Uint32(h[:4])
	l := b.order.Uint32(h[4:8])
	if l < uint32(hl)+4 || l%4 != 0 || l > ngMaxBlock {
		return b.damaged("block length %d is not a pcapng block's (a multiple of 4, 12 to %d): the file is damaged", l, ngMaxBlock)
	}
	if cap(b.buf) < int(l) {
		b.buf = make([]byte, l, max(int(l), 4096))
	}
	b.buf, b.pos = b.buf[:l], 0
	copy(b.buf, h[:hl])
	if n, err := io.ReadFull(b.r, b.buf[hl:]); err != nil {
		return b.damaged("truncated: the block says %d bytes, the file holds %d (the capture was cut short)", l, hl+n)
	}
	if t := b.order.Uint32(b.buf[l-4:]); t != l {
		return b.damaged("the block's two lengths differ (%d, %d): the file is damaged", l, t)
	}
	switch typ {
	case ngIDB:
		// pcapgo keeps 8 bits of the 16-bit link type: check it here.
		if l < 20 {
			return b.damaged("an interface block of %d bytes, too short for its fields: the file is damaged", l)
		}
		if lt := b.order.Uint16(b.buf[8:]); lt != pcapLinkEthernet {
			return &PcapError{File: b.path, Reason: fmt.Sprintf("an interface of link type %d, not Ethernet (1): only Ethernet captures can be replayed into a NIC", lt)}
		}
	case ngEPB, ngPB:
		if l < 32 {
			return b.damaged("a packet block of %d bytes, too short for its fields: the file is damaged", l)
		}
		if c := b.order.Uint32(b.buf[20:]); c > l-32 {
			return b.damaged("captured length %d is past the end of its %d-byte block: the file is damaged", c, l)
		}
	case ngSPB:
		if l < 16 {
			return b.damaged("a simple packet block of %d bytes, too short for its fields: the file is damaged", l)
		}
		if o := b.order.Uint32(b.buf[8:]); o > l-16 {
			return b.damaged("frame of %d bytes in a %d-byte simple packet block: cut by the capture, or damaged (capture again with a snapshot length of 0)", o, l)
		}
	}
	b.off += int64(l)
	return nil
}

// PcapWriter writes frames into a capture file: classic pcap with
// nanosecond timestamps, or pcapng. A port's wire (pcap-out) and l2fwd's
// --capture use it.
type PcapWriter struct {
	f      *os.File
	bw     *bufio.Writer
	pw     *pcapgo.Writer   // classic pcap, over bw
	ng     *pcapgo.NgWriter // pcapng (buffers itself)
	format PcapFormat
	frames atomic.Uint64
	errs   atomic.Uint64
	err    error
}

// CreatePcap creates a new capture file in the format its name asks for
// (FormatFor: pcapng for a .pcapng name, classic pcap otherwise). It
// never replaces a file and never follows a symbolic link at path
// (O_EXCL): to replace one on purpose, open it yourself and use
// NewPcapWriter.
func CreatePcap(path string) (*PcapWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pcap file: %w (give the path of a file that does not exist yet)", err)
	}
	return NewPcapWriter(f)
}

// NewPcapWriter writes the file header into f, an open file the writer
// then owns (Close closes it), in the format f's name asks for
// (FormatFor): callers that create the file with their own safety checks
// hand it over here.
func NewPcapWriter(f *os.File) (*PcapWriter, error) {
	return NewPcapWriterFormat(f, FormatFor(f.Name()))
}

// NewPcapWriterFormat is NewPcapWriter in the format given.
func NewPcapWriterFormat(f *os.File, format PcapFormat) (*PcapWriter, error) {
	p := &PcapWriter{f: f, format: format}
	var err error
	switch format {
	case FormatPcap:
		p.bw = bufio.NewWriterSize(f, 1<<16)
		p.pw = pcapgo.NewWriterNanos(p.bw)
		err = p.pw.WriteFileHeader(PcapSnaplen, layers.LinkTypeEthernet)
	case FormatPcapng:
		p.ng, err = pcapgo.NewNgWriterInterface(f, pcapgo.NgInterface{
			Name: "gopmd", LinkType: layers.LinkTypeEthernet, SnapLength: PcapSnaplen, TimestampResolution: 9,
		}, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "gopmd"}})
	default:
		err = fmt.Errorf("unknown capture format %v: use pcap or pcapng", format)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("pcap file %s: %w", f.Name(), err)
	}
	return p, nil
}

// Format is the format the writer writes.
func (p *PcapWriter) Format() PcapFormat { return p.format }

// Transmit implements Wire: the frame is written with the time it leaves.
func (p *PcapWriter) Transmit(frame []byte) { p.Write(time.Now(), frame) }

// Write appends one frame with timestamp ts. It is for one goroutine at a
// time and does not allocate. A write error is kept for Close and counted.
func (p *PcapWriter) Write(ts time.Time, frame []byte) {
	n := min(len(frame), PcapSnaplen)
	ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: n, Length: len(frame)}
	var err error
	if p.ng != nil {
		err = p.ng.WritePacket(ci, frame[:n])
	} else {
		err = p.pw.WritePacket(ci, frame[:n])
	}
	if err != nil {
		p.keep(err)
		return
	}
	p.frames.Add(1)
}

func (p *PcapWriter) keep(err error) {
	if p.err == nil {
		p.err = err
	}
	p.errs.Add(1)
}

// Frames is the number of frames written.
func (p *PcapWriter) Frames() uint64 { return p.frames.Load() }

// Stat describes the open file.
func (p *PcapWriter) Stat() (os.FileInfo, error) { return p.f.Stat() }

// Close flushes and closes the file and reports the first write error.
func (p *PcapWriter) Close() error {
	var err error
	if p.ng != nil {
		err = p.ng.Flush()
	} else {
		err = p.bw.Flush()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if p.err != nil {
		err = p.err
	}
	if err != nil {
		return fmt.Errorf("pcap file %s: %w (%d frames not written)", p.f.Name(), err, p.errs.Load())
	}
	return nil
}

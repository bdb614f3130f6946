package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"
)

// The classic pcap format (draft-ietf-opsawg-pcap, the libpcap file
// format): a 24-byte file header, then per frame a 16-byte record header
// (seconds, sub-second, captured length, original length) and the captured
// bytes. The magic number says the byte order and whether the sub-second
// field counts microseconds or nanoseconds.
const (
	pcapMagicMicros  = 0xa1b2c3d4
	pcapMagicNanos   = 0xa1b23c4d
	pcapngMagic      = 0x0a0d0d0a // a pcapng Section Header Block
	pcapFileHdrLen   = 24
	pcapRecHdrLen    = 16
	pcapLinkEthernet = 1 // LINKTYPE_ETHERNET
	// PcapSnaplen is the snapshot length this package writes: longer than
	// any frame a port carries, so no frame is ever cut.
	PcapSnaplen = 262144
)

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

// PcapReader reads Ethernet frames from a classic pcap file and checks
// every record: a truncated record, a damaged length, or a frame the
// capture cut at its snapshot length is a *PcapError naming the record.
type PcapReader struct {
	path    string
	f       *os.File
	r       *bufio.Reader
	order   binary.ByteOrder
	nanos   bool
	snaplen uint32
	rec     int
	buf     []byte
	hdr     [pcapRecHdrLen]byte
}

// OpenPcap opens a capture for reading and checks its file header: pcapng,
// a link type other than Ethernet, or anything that is not a pcap file is
// refused with an error that says what to do.
func OpenPcap(path string) (*PcapReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (give the path of a readable pcap file)", err)
	}
	r := &PcapReader{path: path, f: f, r: bufio.NewReaderSize(f, 1<<16)}
	if err := r.readFileHeader(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *PcapReader) fail(rec int, format string, a ...any) error {
	return &PcapError{File: r.path, Record: rec, Reason: fmt.Sprintf(format, a...)}
}

func (r *PcapReader) readFileHeader() error {
	var h [pcapFileHdrLen]byte
	if n, err := io.ReadFull(r.r, h[:]); err != nil {
		return r.fail(0, "%d bytes, too short for a pcap file header (24 bytes): not a capture, or cut short", n)
	}
	switch {
	case binary.LittleEndian.Uint32(h[:]) == pcapngMagic:
		return r.fail(0, "a pcapng file, which l2fwd does not replay: convert it with editcap -F pcap IN OUT")
	case binary.LittleEndian.Uint32(h[:]) == pcapMagicMicros:
		r.order = binary.LittleEndian
	case binary.BigEndian.Uint32(h[:]) == pcapMagicMicros:
		r.order = binary.BigEndian
	case binary.LittleEndian.Uint32(h[:]) == pcapMagicNanos:
		r.order, r.nanos = binary.LittleEndian, true
	case binary.BigEndian.Uint32(h[:]) == pcapMagicNanos:
		r.order, r.nanos = binary.BigEndian, true
	default:
		return r.fail(0, "magic number %#08x is not a pcap file's (give a pcap file; convert other formats with editcap -F pcap)", binary.BigEndian.Uint32(h[:]))
	}
	if major := r.order.Uint16(h[4:]); major != 2 {
		return r.fail(0, "pcap format version %d.%d; only 2.x is known", major, r.order.Uint16(h[6:]))
	}
	r.snaplen = r.order.Uint32(h[16:])
	// The link type is the low 16 bits; the upper bits carry the FCS
	// length and flags (in the same word).
	if lt := r.order.Uint32(h[20:]) & 0xffff; lt != pcapLinkEthernet {
		return r.fail(0, "link type %d, not Ethernet (1): only Ethernet captures can be replayed into a NIC", lt)
	}
	return nil
}

// Next returns the next frame and its timestamp. The frame is valid until
// the next call. At the clean end of the file it returns io.EOF; a damaged
// or cut record is a *PcapError and ends the reading.
func (r *PcapReader) Next() ([]byte, time.Time, error) {
	rec := r.rec + 1
	n, err := io.ReadFull(r.r, r.hdr[:])
	switch {
	case err == io.EOF:
		return nil, time.Time{}, io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, time.Time{}, r.fail(rec, "truncated: the file ends %d bytes into the 16-byte record header (the capture was cut short)", n)
	case err != nil:
		return nil, time.Time{}, r.fail(rec, "%v", err)
	}
	sec, sub := r.order.Uint32(r.hdr[0:]), r.order.Uint32(r.hdr[4:])
	incl, orig := r.order.Uint32(r.hdr[8:]), r.order.Uint32(r.hdr[12:])
	limit := uint32(PcapSnaplen)
	if r.snaplen != 0 && r.snaplen < limit {
		limit = r.snaplen
	}
	switch {
	case incl > limit:
		return nil, time.Time{}, r.fail(rec, "captured length %d is past the file's snapshot length %d: the record header is damaged", incl, limit)
	case incl == 0:
		return nil, time.Time{}, r.fail(rec, "an empty record (captured length 0): the record header is damaged")
	case orig < incl:
		return nil, time.Time{}, r.fail(rec, "original length %d is less than the captured length %d: the record header is damaged", orig, incl)
	}
	if cap(r.buf) < int(incl) {
		r.buf = make([]byte, incl, max(int(incl), 2048))
	}
	b := r.buf[:incl]
	if n, err := io.ReadFull(r.r, b); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			return nil, time.Time{}, r.fail(rec, "truncated: the header says %d bytes, the file holds %d (the capture was cut short)", incl, n)
		}
		return nil, time.Time{}, r.fail(rec, "%v", err)
	}
	if orig > incl {
		return nil, time.Time{}, r.fail(rec, "frame of %d bytes cut to %d by the capture's snapshot length: it cannot be replayed as it was sent (capture again with a snapshot length of 0, e.g. tcpdump -s 0)", orig, incl)
	}
	r.rec = rec
	ns := int64(sub)
	if !r.nanos {
		ns *= 1000
	}
	return b, time.Unix(int64(sec), ns), nil
}

// Records is the number of records read so far.
func (r *PcapReader) Records() int { return r.rec }

// Path is the file's name.
func (r *PcapReader) Path() string { return r.path }

// Close closes the file.
func (r *PcapReader) Close() error { return r.f.Close() }

// PcapWriter writes frames into a classic pcap file with nanosecond
// timestamps. A port's wire (pcap-out) and l2fwd's --capture use it.
type PcapWriter struct {
	f      *os.File
	bw     *bufio.Writer
	hdr    [pcapRecHdrLen]byte
	frames atomic.Uint64
	errs   atomic.Uint64
	err    error
}

// CreatePcap creates a new pcap file with nanosecond timestamps. It never
// replaces a file and never follows a symbolic link at path (O_EXCL): to
// replace one on purpose, open it yourself and use NewPcapWriter.
func CreatePcap(path string) (*PcapWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pcap file: %w (give the path of a file that does not exist yet)", err)
	}
	return NewPcapWriter(f)
}

// NewPcapWriter writes the file header into f, an open file the writer
// then owns (Close closes it): callers that create the file with their own
// safety checks hand it over here.
func NewPcapWriter(f *os.File) (*PcapWriter, error) {
	bw := bufio.NewWriterSize(f, 1<<16)
	var h [pcapFileHdrLen]byte
	binary.LittleEndian.PutUint32(h[0:], pcapMagicNanos)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], PcapSnaplen)
	binary.LittleEndian.PutUint32(h[20:], pcapLinkEthernet)
	if _, err := bw.Write(h[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("pcap file %s: %w", f.Name(), err)
	}
	return &PcapWriter{f: f, bw: bw}, nil
}

// Transmit implements Wire: the frame is written with the time it leaves.
func (p *PcapWriter) Transmit(frame []byte) { p.Write(time.Now(), frame) }

// Write appends one frame with timestamp ts. It is for one goroutine at a
// time and does not allocate. A write error is kept for Close and counted.
func (p *PcapWriter) Write(ts time.Time, frame []byte) {
	n := min(len(frame), PcapSnaplen)
	h := p.hdr[:]
	binary.LittleEndian.PutUint32(h[0:], uint32(ts.Unix()))
	binary.LittleEndian.PutUint32(h[4:], uint32(ts.Nanosecond()))
	binary.LittleEndian.PutUint32(h[8:], uint32(n))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(frame)))
	if _, err := p.bw.Write(h); err != nil {
		p.keep(err)
		return
	}
	if _, err := p.bw.Write(frame[:n]); err != nil {
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

// Close flushes and closes the file and reports the first write error.
func (p *PcapWriter) Close() error {
	err := p.bw.Flush()
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

package sim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/gopmd/gopmd/internal/safefile"
)

// pcapSnaplen is the snapshot length written into pcap file headers.
const pcapSnaplen = 65535

// PcapSource replays a pcap or pcapng file into a port's receive side (a
// wire.Source). By default it is lossless: frames are offered only while
// the port has buffers posted, as fast as it posts them. At file speed it
// offers each frame when its capture timestamp comes due, and the port
// drops what it has no buffer for, as a real wire would.
type PcapSource struct {
	f         *os.File
	read      func() ([]byte, gopacket.CaptureInfo, error)
	fileSpeed bool

	// Owner state (the goroutine that calls Next).
	pending []byte // a frame read and not yet due (file speed)
	due     time.Duration
	first   time.Time
	start   time.Time

	frames, truncated atomic.Uint64
	done              atomic.Bool
	err               atomic.Pointer[error]
}

// OpenPcapSource opens a capture file for replay. fileSpeed replays at the
// capture's own timing instead of as fast as the port takes frames.
func OpenPcapSource(path string, fileSpeed bool) (*PcapSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pcap-in: %w (give the path of a readable pcap or pcapng file)", err)
	}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, err := br.Peek(4)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("pcap-in %s: too short to be a capture file (%v)", path, err)
	}
	s := &PcapSource{f: f, fileSpeed: fileSpeed}
	var lt layers.LinkType
	if magic[0] == 0x0a && magic[1] == 0x0d && magic[2] == 0x0d && magic[3] == 0x0a {
		r, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("pcap-in %s: not a readable pcapng file: %w", path, err)
		}
		s.read, lt = r.ZeroCopyReadPacketData, r.LinkType()
	} else {
		r, err := pcapgo.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("pcap-in %s: not a pcap file: %w (convert it with editcap -F pcap)", path, err)
		}
		s.read, lt = r.ZeroCopyReadPacketData, r.LinkType()
	}
	if lt != layers.LinkTypeEthernet {
		f.Close()
		return nil, fmt.Errorf("pcap-in %s: link type %v; only Ethernet captures can be replayed into a NIC", path, lt)
	}
	return s, nil
}

// Next implements wire.Source.
func (s *PcapSource) Next(dst []byte) (int, bool) {
	if s.pending == nil {
		if s.done.Load() {
			return 0, false
		}
		data, ci, err := s.read()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				s.err.Store(&err)
			}
			s.done.Store(true)
			return 0, false
		}
		s.pending = data
		if s.fileSpeed {
			if s.first.IsZero() {
				s.first, s.start = ci.Timestamp, time.Now()
			}
			s.due = ci.Timestamp.Sub(s.first)
		}
	}
	if s.fileSpeed && time.Since(s.start) < s.due {
		return 0, false
	}
	n := copy(dst, s.pending)
	if n < len(s.pending) {
		s.truncated.Add(1)
	}
	s.pending = nil
	s.frames.Add(1)
	return n, true
}

// Lossless implements wire.Source.
func (s *PcapSource) Lossless() bool { return !s.fileSpeed }

// Done reports whether the whole file has been replayed.
func (s *PcapSource) Done() bool { return s.done.Load() }

// Frames is the number of frames replayed so far; Truncated the number cut
// to the port's buffer size.
func (s *PcapSource) Frames() uint64 { return s.frames.Load() }

// Truncated is the number of frames longer than the buffer the port offered.
func (s *PcapSource) Truncated() uint64 { return s.truncated.Load() }

// Err is the read error that ended the replay early, if any.
func (s *PcapSource) Err() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Close closes the file.
func (s *PcapSource) Close() error { return s.f.Close() }

// PcapWriter is a Wire that writes every frame a port transmits into a
// pcap file, stamped with the time of transmission.
type PcapWriter struct {
	f      *os.File
	bw     *bufio.Writer
	w      *pcapgo.Writer
	frames atomic.Uint64
	errs   atomic.Uint64
	err    error
}

// CreatePcap creates a new pcap file with nanosecond timestamps. An
// existing file or a symbolic link at path is an error (see
// safefile.Create); NewPcapWriter writes into a file the caller opened.
func CreatePcap(path string) (*PcapWriter, error) {
	f, err := safefile.Create(path, safefile.Options{})
	if err != nil {
		return nil, err
	}
	return NewPcapWriter(f)
}

// NewPcapWriter writes a pcap file header with nanosecond timestamps into f
// and returns a writer that owns f (Close closes it).
func NewPcapWriter(f *os.File) (*PcapWriter, error) {
	bw := bufio.NewWriterSize(f, 1<<16)
	w := pcapgo.NewWriterNanos(bw)
	if err := w.WriteFileHeader(pcapSnaplen, layers.LinkTypeEthernet); err != nil {
		f.Close()
		return nil, fmt.Errorf("pcap file %s: %w", f.Name(), err)
	}
	return &PcapWriter{f: f, bw: bw, w: w}, nil
}

// Transmit implements wire.Wire.
func (p *PcapWriter) Transmit(frame []byte) { p.Write(time.Now(), frame) }

// Write appends one frame with timestamp ts. It is for one goroutine at a
// time. A write error is kept for Close and counted.
func (p *PcapWriter) Write(ts time.Time, frame []byte) {
	n := len(frame)
	if n > pcapSnaplen {
		n = pcapSnaplen
	}
	err := p.w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: n, Length: len(frame)}, frame[:n])
	if err != nil {
		if p.err == nil {
			p.err = err
		}
		p.errs.Add(1)
		return
	}
	p.frames.Add(1)
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

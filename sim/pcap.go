package sim

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/wire"
)

// PcapSource replays a capture file (pcap or pcapng) into a port's receive side (a
// wire.Source). By default it is lossless: frames are offered only while
// the port has buffers posted, as fast as it posts them. At file speed it
// offers each frame when its capture timestamp comes due, and the port
// drops what it has no buffer for, as a real wire would.
//
// It stands for the sending MAC: a frame captured before its MAC padded it
// (a 42-byte ARP request taken on the sending host) is padded to the
// 60-byte minimum. A damaged record (truncated, a bad length, a frame the
// capture cut at its snapshot length) ends the replay with an error naming
// the file and record; a frame longer than the port's receive buffer is
// kept out of the port and counted in TooBig, never cut.
type PcapSource struct {
	r         *wire.PcapReader
	fileSpeed bool

	// Owner state (the goroutine that calls Next).
	pending []byte // a frame read and not yet due (file speed)
	due     time.Duration
	first   time.Time
	start   time.Time

	frames, padded, tooBig atomic.Uint64
	done                   atomic.Bool
	held                   atomic.Bool // set by PortView.Hold: no more frames
	err                    atomic.Pointer[error]
	waker                  // woken by Release (PortView)
}

// OpenPcapSource opens a capture file for replay. fileSpeed replays at the
// capture's own timing instead of as fast as the port takes frames.
func OpenPcapSource(path string, fileSpeed bool) (*PcapSource, error) {
	r, err := wire.OpenPcap(path)
	if err != nil {
		return nil, fmt.Errorf("pcap-in: %w", err)
	}
	return &PcapSource{r: r, fileSpeed: fileSpeed}, nil
}

// Next implements wire.Source.
func (s *PcapSource) Next(dst []byte) (int, bool) {
	if s.held.Load() {
		return 0, false
	}
	for {
		if s.pending == nil {
			if s.done.Load() {
				return 0, false
			}
			data, ts, err := s.r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					s.err.Store(&err)
				}
				s.done.Store(true)
				return 0, false
			}
			s.pending = data
			if s.fileSpeed {
				if s.first.IsZero() {
					s.first, s.start = ts, time.Now()
				}
				s.due = ts.Sub(s.first)
			}
		}
		if s.fileSpeed && time.Since(s.start) < s.due {
			return 0, false
		}
		f := s.pending
		s.pending = nil
		if len(f) > len(dst) || len(dst) < wire.MinFrame {
			// Longer than the port's receive buffer: cutting it would
			// hand the port a frame nobody sent.
			s.tooBig.Add(1)
			continue
		}
		n := copy(dst, f)
		if n < wire.MinFrame {
			n = wire.Pad(dst, n)
			s.padded.Add(1)
		}
		s.frames.Add(1)
		return n, true
	}
}

// Lossless implements wire.Source.
func (s *PcapSource) Lossless() bool { return !s.fileSpeed }

// Due implements wire.Waker: at file speed, when the frame read next is
// due; nothing as fast as the port takes frames (the receive room it
// waits for comes with the driver's doorbells) or once the file is done.
func (s *PcapSource) Due() (time.Time, bool) {
	if !s.fileSpeed || s.held.Load() || s.pending == nil {
		return time.Time{}, false
	}
	return s.start.Add(s.due), true
}

// Done reports whether the replay is over: the whole file was read, or a
// damaged record stopped it (Err says which).
func (s *PcapSource) Done() bool { return s.done.Load() }

// Frames is the number of frames handed to the port so far.
func (s *PcapSource) Frames() uint64 { return s.frames.Load() }

// Padded is the part of Frames that was shorter than the Ethernet minimum
// in the file and was padded to 60 bytes, as the sending MAC would.
func (s *PcapSource) Padded() uint64 { return s.padded.Load() }

// TooBig is the number of frames longer than the buffer the port offered:
// read from the file but not handed to the port.
func (s *PcapSource) TooBig() uint64 { return s.tooBig.Load() }

// Err is the error that ended the replay early, if any: a *wire.PcapError
// naming the file and record.
func (s *PcapSource) Err() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Close closes the file.
func (s *PcapSource) Close() error { return s.r.Close() }

package sim

import (
	"encoding/binary"
	"sync/atomic"
)

// sinkWindow is how many sequence numbers behind the newest one a sink still
// tells a late frame from a duplicate (per flow).
const sinkWindow = 256

// SinkStats are a sink's counters.
type SinkStats struct {
	// Frames and Bytes is everything the port transmitted into the sink.
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
	// Other counts frames without a generator stamp.
	Other uint64 `json:"other"`
	// Lost counts sequence numbers never seen (below the newest one seen
	// per flow: a frame lost after the last one that arrived is invisible
	// here; compare with the generator's count).
	Lost uint64 `json:"lost"`
	// Duplicates counts stamps seen twice; Reordered counts frames that
	// arrived after a later one of the same flow.
	Duplicates uint64 `json:"duplicates"`
	Reordered  uint64 `json:"reordered"`
	// TooLate counts frames older than the sink's window (256 per flow),
	// which it can no longer tell from duplicates.
	TooLate uint64 `json:"too_late"`
}

// Sink is a Wire that counts what a port transmits and checks the
// generator's stamps: loss, duplication and reordering per flow. It never
// allocates per frame (only the first frame of a new stream allocates that
// stream's table).
type Sink struct {
	// Owner state: the goroutine that calls Transmit.
	streams    map[uint16]*sinkStream
	lastID     uint16
	lastStream *sinkStream

	frames, bytes, other, gaps, late, dups, reordered, tooLate atomic.Uint64
}

type sinkStream struct{ flows []sinkFlow }

type sinkFlow struct {
	newest uint64 // highest sequence number seen + 1 (0: none yet)
	seen   [sinkWindow / 64]uint64
}

// NewSink makes a sink.
func NewSink() *Sink { return &Sink{streams: map[uint16]*sinkStream{}} }

// Transmit implements wire.Wire.
func (s *Sink) Transmit(frame []byte) {
	s.frames.Add(1)
	s.bytes.Add(uint64(len(frame)))
	if len(frame) < stampOffset+stampLen || frame[12] != 0x08 || frame[13] != 0x00 ||
		frame[14] != 0x45 || frame[23] != 17 ||
		binary.BigEndian.Uint32(frame[stampOffset:]) != stampMagic {
		s.other.Add(1)
		return
	}
	st := frame[stampOffset:]
	id := binary.BigEndian.Uint16(st[4:])
	nflows := int(binary.BigEndian.Uint16(st[6:]))
	flow := int(binary.BigEndian.Uint16(st[8:]))
	seq := binary.BigEndian.Uint64(st[10:])
	str := s.lastStream
	if str == nil || id != s.lastID {
		str = s.streams[id]
		if str == nil {
			str = &sinkStream{flows: make([]sinkFlow, nflows)}
			s.streams[id] = str
		}
		s.lastID, s.lastStream = id, str
	}
	if flow >= len(str.flows) {
		s.other.Add(1)
		return
	}
	s.see(&str.flows[flow], seq)
}

func (s *Sink) see(f *sinkFlow, seq uint64) {
	bit := func(q uint64) (*uint64, uint64) { return &f.seen[(q/64)%(sinkWindow/64)], 1 << (q % 64) }
	switch {
	case seq >= f.newest:
		// Newer than anything seen: the numbers skipped are missing for now.
		if gap := seq - f.newest; gap > 0 {
			s.gaps.Add(gap)
		}
		// Forget the window slots the new range reuses.
		if seq-f.newest >= sinkWindow {
			f.seen = [sinkWindow / 64]uint64{}
		} else {
			for q := f.newest; q < seq; q++ {
				w, b := bit(q)
				*w &^= b
			}
		}
		w, b := bit(seq)
		*w |= b
		f.newest = seq + 1
	case f.newest-seq > sinkWindow:
		s.tooLate.Add(1)
	default:
		w, b := bit(seq)
		if *w&b != 0 {
			s.dups.Add(1)
			return
		}
		*w |= b
		s.late.Add(1)
		s.reordered.Add(1)
	}
}

// Stats returns the counters (safe from any goroutine).
func (s *Sink) Stats() SinkStats {
	st := SinkStats{Frames: s.frames.Load(), Bytes: s.bytes.Load(), Other: s.other.Load(),
		Duplicates: s.dups.Load(), Reordered: s.reordered.Load(), TooLate: s.tooLate.Load()}
	g, l := s.gaps.Load(), s.late.Load()
	if g > l {
		st.Lost = g - l
	}
	return st
}

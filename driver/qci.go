package driver

import (
	"errors"
	"fmt"
	"time"
)

// StreamFilter is implemented by ports that filter and police received
// streams (IEEE 802.1Qci per-stream filtering and policing), set up as
// Linux's tc flower offload with the gate and police actions sets it up:
//
//	tc filter add dev eth0 ingress chain 1 protocol 802.1Q flower skip_sw \
//	    dst_mac 00:01:02:03:04:05 vlan_id 12 \
//	    action gate base-time 0 sched-entry open 200000 -1 -1 \
//	    sched-entry close 100000 -1 -1 \
//	    action police rate 10mbit burst 10000 mtu 1000
//
// A stream is the frames of one destination MAC and VLAN (802.1CB's null
// stream identification); each passes its maximum SDU, then its gate,
// then its flow meter, and one that fails any is dropped and counted in
// the stream's counters (StreamStats). Frames of no stream pass. Use
// StreamFilterOf. The calls are set-up calls, for the port's control
// goroutine; filtering costs the receive path nothing in software.
type StreamFilter interface {
	// StreamCaps is what the port's tables hold.
	StreamCaps() StreamCaps
	// SetStream adds stream s, or replaces the stream of the same
	// Handle; an option the hardware cannot take is an error naming it,
	// and nothing changes.
	SetStream(s Stream) error
	// DeleteStream removes the stream of handle h.
	DeleteStream(h int) error
	// StreamStats reads the counters of the stream of handle h.
	StreamStats(h int) (StreamStats, error)
}

// ErrNoStreamFilter is wrapped when a port has no per-stream filtering.
var ErrNoStreamFilter = errors.New("no per-stream filtering")

// StreamFilterOf returns p's stream filter, or an error wrapping
// ErrNoStreamFilter naming the port and its driver.
func StreamFilterOf(p Port) (StreamFilter, error) {
	f, ok := p.(StreamFilter)
	if !ok {
		return nil, fmt.Errorf("%s: %w: the %s driver offers no 802.1Qci stream filters", p.Info().Name, ErrNoStreamFilter, p.Info().Driver)
	}
	return f, nil
}

// StreamCaps is what a port's per-stream filtering offers: how many
// streams (handles 0 to Streams-1), the longest stream gate list, and
// whether streams may have a flow meter. Streams is 0 when the port has
// none.
type StreamCaps struct {
	Streams        int
	MaxGateEntries int
	Meters         bool
}

// VLAN matches of a Stream.
const (
	// VLANAny: tagged or not, any VLAN (no vlan_id in the flower match).
	VLANAny = -1
	// VLANUntagged: untagged frames only (flower's vlan_id 0).
	VLANUntagged = 0
)

// Stream is one filtered stream.
type Stream struct {
	// Handle names the stream (tc's chain index): 0 to StreamCaps.Streams-1.
	Handle int
	// DMAC is the destination MAC the stream's frames carry (dst_mac).
	DMAC [6]byte
	// VID is the VLAN ID its frames carry (vlan_id 1-4095), VLANAny or
	// VLANUntagged.
	VID int
	// Gate is the stream's gate (action gate). Required: a stream's frames
	// pass only while it is open.
	Gate StreamGate
	// MaxSDU drops frames longer than it, in bytes from the destination
	// MAC to the end of the payload, FCS excluded (police mtu); 0: no
	// limit.
	MaxSDU int
	// Meter polices the stream (police rate/burst); nil: none.
	Meter *Meter
}

// StreamGate is a stream gate control list as tc's gate action gives it:
// entries of open or closed and an interval, run each cycle from the
// first cycle start at or after BaseTime (a base time already past starts
// at the next cycle boundary, BaseTime + N*Cycle()). Before that the gate
// is open.
type StreamGate struct {
	BaseTime  Time
	CycleTime time.Duration // 0: the sum of the intervals
	Entries   []StreamGateEntry
}

// StreamGateEntry is one "sched-entry open|close <interval>".
type StreamGateEntry struct {
	Open     bool
	Interval time.Duration
}

// Cycle is the cycle time in effect: CycleTime, or the sum of the
// intervals when it is 0 (see cycleOf).
func (g StreamGate) Cycle() time.Duration { return cycleOf(g.CycleTime, g.Entries) }

func (e StreamGateEntry) interval() time.Duration { return e.Interval }

// Meter is a flow meter (MEF 10.3's bandwidth profile): a committed
// rate and burst, and an excess rate and burst. A frame that finds fewer
// committed tokens than its bytes is red and dropped.
type Meter struct {
	// CIRBytes is the committed rate in bytes per second (police rate),
	// CBSBytes the committed burst in bytes (police burst).
	CIRBytes, CBSBytes int64
	// EIRBytes and EBSBytes are the excess rate and burst; a driver that
	// does not meter excess traffic refuses them non-zero.
	EIRBytes, EBSBytes int64
}

// StreamStats is a stream's counters as the hardware keeps them
// (802.1Qci's stream filter counters).
type StreamStats struct {
	// Matching frames reached the stream's filter; Passing left it.
	Matching, Passing uint64
	// SDUDrops were longer than MaxSDU, GateDrops met a closed gate,
	// MeterDrops were red.
	SDUDrops, GateDrops, MeterDrops uint64
}

// Check reports what is wrong with s for a port with caps c, naming the
// field.
func (s Stream) Check(c StreamCaps) error {
	if c.Streams == 0 {
		return errors.New("stream: the port has no stream filters")
	}
	if s.Handle < 0 || s.Handle >= c.Streams {
		return fmt.Errorf("stream %d: handles are 0-%d", s.Handle, c.Streams-1)
	}
	if s.DMAC == ([6]byte{}) {
		return fmt.Errorf("stream %d: no dst_mac: a stream is identified by its destination MAC", s.Handle)
	}
	if s.VID < VLANAny || s.VID > 4095 {
		return fmt.Errorf("stream %d: vlan_id %d: give 1-4095, 0 for untagged frames or -1 for any", s.Handle, s.VID)
	}
	if s.MaxSDU < 0 || s.MaxSDU > 0xFFFF {
		return fmt.Errorf("stream %d: max SDU %d: give 0 (none) to 65535 bytes", s.Handle, s.MaxSDU)
	}
	g := s.Gate
	if len(g.Entries) == 0 {
		return fmt.Errorf("stream %d: no gate sched-entry: a stream needs a gate (one open entry lets every frame through)", s.Handle)
	}
	if len(g.Entries) > c.MaxGateEntries {
		return fmt.Errorf("stream %d: gate: %d entries; the hardware takes at most %d", s.Handle, len(g.Entries), c.MaxGateEntries)
	}
	for i, e := range g.Entries {
		if e.Interval <= 0 || e.Interval > maxStreamInterval {
			return fmt.Errorf("stream %d: gate entry %d: interval %d ns: give 1 to %d ns", s.Handle, i, int64(e.Interval), int64(maxStreamInterval))
		}
	}
	sum := cycleOf(0, g.Entries)
	if g.CycleTime < 0 || g.CycleTime != 0 && g.CycleTime < sum {
		return fmt.Errorf("stream %d: gate cycle-time %d ns is shorter than the entries' %d ns: lengthen it or give 0 (the sum)", s.Handle, int64(g.CycleTime), int64(sum))
	}
	if g.Cycle() > maxStreamInterval {
		return fmt.Errorf("stream %d: gate cycle time %d ns; the hardware takes at most %d ns", s.Handle, int64(g.Cycle()), int64(maxStreamInterval))
	}
	if g.BaseTime < 0 {
		return fmt.Errorf("stream %d: gate base-time %v is before the clock's epoch", s.Handle, g.BaseTime)
	}
	if m := s.Meter; m != nil {
		if !c.Meters {
			return fmt.Errorf("stream %d: the port has no flow meters", s.Handle)
		}
		if m.CIRBytes <= 0 || m.CBSBytes <= 0 {
			return fmt.Errorf("stream %d: meter: rate %d B/s, burst %d B: give both above 0", s.Handle, m.CIRBytes, m.CBSBytes)
		}
		if m.EIRBytes < 0 || m.EBSBytes < 0 {
			return fmt.Errorf("stream %d: meter: negative excess rate or burst", s.Handle)
		}
	}
	return nil
}

// maxStreamInterval is the longest gate interval and cycle: 32-bit ns.
const maxStreamInterval = time.Duration(1<<32 - 1)

// CycleStart is when the gate, loaded at time now, starts its first
// cycle: BaseTime if that is not past, else the first BaseTime + N*Cycle()
// after now.
func (g StreamGate) CycleStart(now Time) Time {
	return GateList{BaseTime: g.BaseTime, CycleTime: g.Cycle()}.CycleStart(now)
}

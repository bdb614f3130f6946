package driver

import (
	"fmt"
	"sync/atomic"
)

// Cause is why a frame was dropped or counted as an error.
type Cause uint8

const (
	// CauseNoBuffer: the device had no posted buffer (counted by the device).
	CauseNoBuffer Cause = iota
	// CauseCRC: frame check sequence error.
	CauseCRC
	// CauseOversize: longer than the maximum frame length.
	CauseOversize
	// CauseFrame: other MAC receive errors (alignment, truncation, overrun).
	CauseFrame
	// CauseBadDescriptor: the device wrote back a descriptor that failed a
	// check (length past the buffer, missing ready bit, bad index); the
	// frame is dropped and its buffers recycled.
	CauseBadDescriptor
	// CauseDMAFault: the device reported a DMA error.
	CauseDMAFault
	// CauseLinkDown: refused for TX because the link is down (queued frames
	// could not leave).
	CauseLinkDown
	// CauseTooBig: refused for TX: more segments or bytes than the device takes.
	CauseTooBig
	// CauseNoMem: a pool had no buffer for a refill (device ring runs short).
	CauseNoMem
	// CauseUnreachable: refused for TX: the buffer lies where the device
	// cannot reach it (memory mapped for another device's DMA domain, or
	// above what the device's descriptors can address).
	CauseUnreachable
	// CauseUndersize: shorter than the minimum frame, discarded by the MAC
	// (its undersize counter: ENETC RUND, FEC RMON_R_UNDERSIZE).
	CauseUndersize
	// CauseMACDiscard: discarded by the MAC or port before any ring, as
	// its drop counter says (ENETC RDRP, FEC RMON_R_DROP): receive disabled
	// (before Start, after Stop, while the link is down), FIFO overflow.
	CauseMACDiscard
	// CauseFiltered: not addressed to the port (unicast for another
	// station, a multicast group not joined), discarded by the MAC address
	// filter and counted by it (ENETC UFDMF and MFDMF; the FEC has no
	// filter counter, and its filter misses count as CauseMACDiscard).
	CauseFiltered
	// CauseStopped: received by the device and written into an RX ring,
	// but still there, unread, when Stop disabled the port: Stop recycles
	// its buffers and counts the frame here, once however many buffers it
	// spans. A frame the device wrote with an error bit counts under that
	// error's cause instead (as RxBurst would have counted it), and a frame
	// the device had begun but not finished writing counts here too. Only
	// a port stopped under traffic counts any: poll the queues empty
	// before Stop to receive them instead. On TX: a frame TxBurst took
	// that was still queued, unsent, when Stop disabled the port (Stop
	// waits Config.StopTimeout for the ring to drain first).
	CauseStopped
	// NumCauses is the number of causes: the length of a Drops array.
	NumCauses
)

var causeNames = [NumCauses]string{"no_buffer", "crc", "oversize", "frame", "bad_descriptor", "dma_fault", "link_down", "too_big", "no_mem", "unreachable", "undersize", "mac_discard", "filtered", "stopped"}

// String is the cause's name as counters print it ("no_buffer", "crc", ...).
func (c Cause) String() string {
	if c < NumCauses {
		return causeNames[c]
	}
	return fmt.Sprintf("cause(%d)", c)
}

// QueueStats are one queue's counters, or a sum of them.
type QueueStats struct {
	// Packets and Bytes: on RX the frames received (returned by RxBurst);
	// on TX the frames the device sent, counted once it is done with them
	// (at a reclaim: TxBurst's when the ring runs low, Reclaim, Stop), so a
	// frame TxBurst took is either sent or in Drops by one cause once the
	// port is stopped.
	Packets uint64
	// Bytes counts the frames' bytes from the destination MAC to the end
	// of the payload (padding included), without the FCS, preamble or
	// gap: as Linux's rtnl_link_stats64 rx_bytes and tx_bytes count them
	// for an IEEE 802.3 device (ip -s link, ethtool -S). A 64-byte frame
	// on the wire counts 60.
	Bytes uint64
	// Drops counts frames lost or refused, by cause.
	Drops [NumCauses]uint64
}

// TotalDrops is the sum over causes.
func (s QueueStats) TotalDrops() uint64 {
	var t uint64
	for _, d := range s.Drops {
		t += d
	}
	return t
}

// Add accumulates o into s.
func (s *QueueStats) Add(o QueueStats) {
	s.Packets += o.Packets
	s.Bytes += o.Bytes
	for i := range s.Drops {
		s.Drops[i] += o.Drops[i]
	}
}

// PortStats are a port's counters: per queue, their sums, and the device's
// own counters by the reference manual's names.
type PortStats struct {
	Rx, Tx             QueueStats
	RxQueues, TxQueues []QueueStats
	// HW holds device counters (MAC and SI statistics), read when Stats is
	// called; empty where the device has none.
	HW map[string]uint64
}

// Counters is the live form of QueueStats: written by the queue's goroutine
// once per burst, read by anyone.
type Counters struct {
	packets, bytes atomic.Uint64
	drops          [NumCauses]atomic.Uint64
}

// Add counts n frames of b bytes. Call it once per burst.
func (c *Counters) Add(n, b uint64) {
	if n != 0 {
		c.packets.Add(n)
		c.bytes.Add(b)
	}
}

// Drop counts n frames lost for cause.
func (c *Counters) Drop(cause Cause, n uint64) {
	if n != 0 && cause < NumCauses {
		c.drops[cause].Add(n)
	}
}

// Snapshot reads the counters.
func (c *Counters) Snapshot() QueueStats {
	var s QueueStats
	s.Packets = c.packets.Load()
	s.Bytes = c.bytes.Load()
	for i := range s.Drops {
		s.Drops[i] = c.drops[i].Load()
	}
	return s
}

// Package wire is the ground every simulated port and every frame tool
// stands on: the boundary between a NIC port's MAC and whatever it is
// connected to (Wire, Port, Source), the Ethernet minimum a sending MAC pads
// to, a lock-free frame ring, and capture files (pcap and pcapng, through
// gopacket's pcapgo). It imports nothing of gopmd: the device models
// (enetc/model, fec/model), the simulator (sim) and the commands (l2fwd's
// --capture) use it side by side.
package wire

import "time"

// MinFrame is the shortest Ethernet frame on a wire without its 4-byte FCS
// (64 bytes with it, IEEE 802.3 clause 3.2.8): a sending MAC pads a shorter
// frame with zeros to this length before it leaves.
const MinFrame = 60

// Pad pads the n-byte frame at the start of buf with zeros to MinFrame, as a
// sending MAC does, and returns its new length. buf must hold MinFrame
// bytes when n is shorter; a frame of MinFrame bytes or more is left as it
// is.
func Pad(buf []byte, n int) int {
	if n >= MinFrame {
		return n
	}
	clear(buf[n:MinFrame])
	return MinFrame
}

// Wire carries the frames a model port transmits.
type Wire interface {
	// Transmit is called by the model's TX engine once per frame, with the
	// frame as it leaves the MAC (padded to the 60-byte minimum, without
	// FCS). frame is valid only during the call: copy what you keep.
	Transmit(frame []byte)
}

// Port is a model port's receive side, as the world sees it.
type Port interface {
	// Receive offers one frame arriving from the wire (without FCS). The
	// model DMAs it into a posted buffer, or counts a drop when none is
	// posted, as silicon does. It reports whether the frame was accepted.
	// frame is only read during the call. A cable between two synchronous
	// models calls it on the sending model's goroutine (the one whose
	// doorbell write ran the TX ring): whoever drives the models keeps
	// the two on one goroutine unless the receiving model is safe for it.
	Receive(frame []byte) bool
	// RxRoom reports how many frames the port could take now without
	// dropping (posted RX buffers, roughly): lossless sources (a pcap
	// replay) offer frames only while it is positive.
	RxRoom() int
}

// Source produces frames for a port's receive side; the model's engine (or
// Pump in synchronous mode) pulls from it. A source stands for the sending
// MAC at the far end of the wire: every frame it gives is at least MinFrame
// bytes long.
type Source interface {
	// Next writes the next frame into dst and returns its length, or
	// ok=false when there is nothing to send now. A frame longer than dst
	// is not cut: the source keeps it out of the port and counts it.
	Next(dst []byte) (n int, ok bool)
	// Lossless reports whether the source must never lose a frame for lack
	// of receive buffers: then frames are only pulled while RxRoom > 0.
	Lossless() bool
}

// Waker is a Source that tells the engine pulling it when to look again,
// so an engine whose sources have nothing sleeps instead of polling them:
// frames that come from another goroutine (a socket reader, a cable) wake
// it, frames that come by a clock (a rate, a capture's timestamps) fall
// due at a time it can sleep until.
type Waker interface {
	Source
	// SetWake gives the source the function that wakes the engine pulling
	// it, before the first Next. The source calls it, from any goroutine,
	// whenever a frame becomes available that an earlier Next could not
	// return; wake never blocks and may be called when nobody sleeps.
	SetWake(wake func())
	// Due is asked after Next returned ok=false, on the goroutine that
	// calls Next: the time the source's own clock makes its next frame
	// due. ok=false: no clock; only a wake brings more (or nothing, the
	// source has ended).
	Due() (at time.Time, ok bool)
}

// Discard is a Wire that drops everything (and counts it).
type Discard struct{ Frames, Bytes uint64 }

// Transmit implements Wire.
func (d *Discard) Transmit(frame []byte) { d.Frames++; d.Bytes += uint64(len(frame)) }

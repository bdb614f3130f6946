// Package wire is the boundary between a simulated NIC port (a device model's
// MAC) and whatever it is connected to: another model port (a cable), a
// traffic generator and sink, a pcap file, or a real Linux interface. Models
// import only this package; package sim builds the things on the other side.
package wire

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
// Pump in synchronous mode) pulls from it.
type Source interface {
	// Next writes the next frame into dst and returns its length, or
	// ok=false when there is nothing to send now. A frame longer than dst is
	// truncated by the source and counted by it.
	Next(dst []byte) (n int, ok bool)
	// Lossless reports whether the source must never lose a frame for lack
	// of receive buffers: then frames are only pulled while RxRoom > 0.
	Lossless() bool
}

// Discard is a Wire that drops everything (and counts it).
type Discard struct{ Frames, Bytes uint64 }

// Transmit implements Wire.
func (d *Discard) Transmit(frame []byte) { d.Frames++; d.Bytes += uint64(len(frame)) }

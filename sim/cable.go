package sim

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/wire"
)

// Cable sizes: a frame ring per direction holds CableSlots frames of up to
// CableSlotSize bytes (a 9600-byte jumbo frame fits).
const (
	CableSlots    = 256
	CableSlotSize = 10240
)

// CableStats are the counters of one direction of a cable.
type CableStats struct {
	// Frames and Bytes were carried to the peer (offered to its receive side).
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
	// Delivered is the part of Frames the peer's receive side has taken
	// (the rest still waits in the cable's ring).
	Delivered uint64 `json:"delivered"`
	// Padded counts frames shorter than the Ethernet minimum when they
	// were sent, padded to 60 bytes as the sending MAC does.
	Padded uint64 `json:"padded"`
	// Unplugged counts frames sent while the peer port was not open.
	Unplugged uint64 `json:"unplugged"`
	// LinkDown counts frames sent while the peer port's PHY had no link:
	// a cable carries nothing then, whatever the sender's MAC believes.
	LinkDown uint64 `json:"link_down"`
	// Full counts frames lost because the in-memory ring was full (the
	// receiving model's engine fell behind); TooBig frames longer than
	// CableSlotSize; TooLong frames longer than the receiving port's
	// buffer.
	Full    uint64 `json:"full"`
	TooBig  uint64 `json:"too_big"`
	TooLong uint64 `json:"too_long"`
}

// cableDir is one direction of a cable: the Wire of the sending port and,
// when either side runs an engine, a Source of the receiving port.
type cableDir struct {
	direct    wire.Port // both sides synchronous: deliver at once
	ring      *wire.FrameRing
	farUp     func() bool // the receiving port's PHY link; nil: always up
	plugged   atomic.Bool
	linkDown  atomic.Uint64
	frames    atomic.Uint64
	bytes     atomic.Uint64
	delivered atomic.Uint64
	padded    atomic.Uint64
	unplug    atomic.Uint64
	// short is where a frame below the minimum is padded; the sending
	// port's goroutine is the only one that transmits into this direction.
	short [wire.MinFrame]byte
	waker // the receiving model's engine, woken by each frame put in ring
}

// Transmit implements wire.Wire. A frame below the Ethernet minimum (a
// model told not to pad, or fault injection) is padded as a sending MAC
// would pad it.
func (d *cableDir) Transmit(frame []byte) {
	if !d.plugged.Load() {
		d.unplug.Add(1)
		return
	}
	if d.farUp != nil && !d.farUp() {
		d.linkDown.Add(1)
		return
	}
	if len(frame) < wire.MinFrame {
		n := copy(d.short[:], frame)
		frame = d.short[:wire.Pad(d.short[:], n)]
		d.padded.Add(1)
	}
	if d.direct != nil {
		d.frames.Add(1)
		d.bytes.Add(uint64(len(frame)))
		d.delivered.Add(1)
		d.direct.Receive(frame) // a drop for lack of buffers is the receiver's to count
		return
	}
	if d.ring.Put(frame) {
		d.frames.Add(1)
		d.bytes.Add(uint64(len(frame)))
		d.wake()
	}
}

// Next implements wire.Source for the receiving port.
func (d *cableDir) Next(dst []byte) (int, bool) {
	n, ok := d.ring.Get(dst)
	if ok {
		d.delivered.Add(1)
	}
	return n, ok
}

// Lossless implements wire.Source: a cable does not wait for buffers; the
// receiving MAC drops (and counts) what it has no buffer for.
func (d *cableDir) Lossless() bool { return false }

// Due implements wire.Waker: frames come when the far port sends them.
func (d *cableDir) Due() (time.Time, bool) { return noClock() }

func (d *cableDir) stats() CableStats {
	s := CableStats{Frames: d.frames.Load(), Bytes: d.bytes.Load(), Delivered: d.delivered.Load(),
		Padded: d.padded.Load(), Unplugged: d.unplug.Load(), LinkDown: d.linkDown.Load()}
	if d.ring != nil {
		s.Full, s.TooBig, s.TooLong = d.ring.Full.Load(), d.ring.TooBig.Load(), d.ring.TooLong.Load()
	}
	return s
}

// Cable is two model ports back to back. Open both ports; the second one
// to open completes it. Between two synchronous models a frame goes
// straight from the sender's TX to the receiver's Receive, on the sender's
// goroutine (drive both models from one goroutine); when either side runs
// an engine it crosses a lock-free wire.FrameRing that the receiver pulls.
type Cable struct {
	a, b   string
	ab, ba *cableDir
}

// Ends names the two ports ("enetc0", "enetc1").
func (c *Cable) Ends() (a, b string) { return c.a, c.b }

// Stats returns the counters of the direction a→b and b→a.
func (c *Cable) Stats() (ab, ba CableStats) { return c.ab.stats(), c.ba.stats() }

// newCableDir builds the direction from one endpoint to another.
func newCableDir(from, to *Endpoint) *cableDir {
	d := &cableDir{farUp: to.LinkUp}
	if from.Engine || to.Engine {
		d.ring = wire.NewFrameRing(CableSlots, CableSlotSize)
		to.AddSource(d)
	} else {
		d.direct = to.Port
	}
	d.plugged.Store(true)
	return d
}

// endpoint registry: every attached endpoint by name, and cables waiting for
// their second port.
type regEntry struct {
	ep    *Endpoint
	gen   *Generator
	sink  *Sink
	afp   *AFPacket
	pcap  *PcapSource
	cable *Cable
	// txClaimed: the port's spec chose where it transmits (sink,
	// afpacket, pcap-out), so it cannot be the far end of another's cable.
	txClaimed bool
}

var (
	regMu   sync.Mutex
	reg     = map[string]*regEntry{}
	pending = map[string]string{} // far end name -> near end name waiting for it
)

// cableTo connects e (just attached, wanting peer) to peer, or leaves it
// waiting when peer is not open yet. Called with regMu held.
func cableTo(e *regEntry, peer string) error {
	name := e.ep.Name
	if peer == name {
		return fmt.Errorf("peer=sim:%s: a port cannot be cabled to itself; name another port", peer)
	}
	if w, ok := pending[name]; ok && w != peer {
		return fmt.Errorf("peer=sim:%s: %s is already waiting to be cabled to %s; drop one of the peer= options", peer, name, w)
	}
	if other, ok := reg[peer]; ok {
		if other.cable != nil {
			a, b := other.cable.Ends()
			return fmt.Errorf("peer=sim:%s: %s is already cabled (%s<->%s); close it first or pick another port", peer, peer, a, b)
		}
		if other.txClaimed {
			return fmt.Errorf("peer=sim:%s: %s transmits elsewhere (sink, afpacket or pcap-out in its spec); open it without those to cable it", peer, peer)
		}
		connect(other, e)
		delete(pending, name)
		return nil
	}
	if w, ok := pending[peer]; ok && w != name {
		return fmt.Errorf("peer=sim:%s: %s is already waiting for %s; drop one of the peer= options", peer, w, peer)
	}
	pending[peer] = name
	e.ep.SetWire(&unpluggedWire{})
	return nil
}

// unpluggedWire is the TX wire of a cabled port whose peer is not open yet.
type unpluggedWire struct{ frames atomic.Uint64 }

func (u *unpluggedWire) Transmit([]byte) { u.frames.Add(1) }

// connect completes a cable between two registered endpoints. regMu held.
func connect(a, b *regEntry) {
	c := &Cable{a: a.ep.Name, b: b.ep.Name}
	c.ab = newCableDir(a.ep, b.ep)
	c.ba = newCableDir(b.ep, a.ep)
	a.ep.SetWire(c.ab)
	b.ep.SetWire(c.ba)
	a.cable, b.cable = c, c
}

// CableOf returns the cable a port is part of, or nil.
func CableOf(name string) *Cable {
	regMu.Lock()
	defer regMu.Unlock()
	if e, ok := reg[trimScheme(name)]; ok {
		return e.cable
	}
	return nil
}

// unplug detaches a closing endpoint from its cable: the peer's
// transmissions are then counted as unplugged. regMu held.
func unplug(e *regEntry) {
	for k, v := range pending {
		if v == e.ep.Name {
			delete(pending, k)
		}
	}
	c := e.cable
	if c == nil {
		return
	}
	c.ab.plugged.Store(false)
	c.ba.plugged.Store(false)
	far := c.a
	if far == e.ep.Name {
		far = c.b
	}
	if o, ok := reg[far]; ok {
		o.cable = nil
		// The survivor waits for the closing port to come back.
		pending[e.ep.Name] = far
	}
	e.cable = nil
}

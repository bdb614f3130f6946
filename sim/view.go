package sim

import (
	"strconv"

	"github.com/gopmd/gopmd/driver"
)

// PortView is what the simulator put around an open simulated port, as an
// application that drives the port (l2fwd) needs to see it: the sources
// that feed its receive side, where its transmissions go, and how the
// model must be driven. It stays valid after the port closes (its counters
// are then final).
type PortView struct {
	name  string
	e     *regEntry
	cable *Cable // kept once seen: closing the port unplugs it from the entry
}

// Loss is one count of frames lost around a port, by cause.
type Loss struct {
	Cause string
	N     uint64
}

// ViewOf returns the view of the open simulated port a spec (or bare name)
// names, or nil when it is not one.
func ViewOf(spec string) *PortView {
	regMu.Lock()
	defer regMu.Unlock()
	name := trimScheme(spec)
	if e, ok := reg[name]; ok {
		return &PortView{name: name, e: e, cable: e.cable}
	}
	return nil
}

// Name is the device name ("enetc0").
func (v *PortView) Name() string { return v.name }

// Pump is the function that pulls the port's sources into its receive ring
// when its model runs synchronously (nothing else pulls them: call it
// before each poll), or nil when the model runs its own engine.
func (v *PortView) Pump() func() int {
	if v.e.ep.Engine {
		return nil
	}
	return v.e.ep.Pump
}

// Engine reports whether the model runs a DMA-engine goroutine, which needs
// CPU time of its own.
func (v *PortView) Engine() bool { return v.e.ep.Engine }

// DriveWith names the port that must be driven on the same goroutine as
// this one, or "": two synchronous models joined by a cable hand frames to
// each other on the sender's goroutine.
func (v *PortView) DriveWith() string {
	regMu.Lock()
	defer regMu.Unlock()
	if v.cable == nil {
		v.cable = v.e.cable
	}
	c := v.cable
	if c == nil || c.ab.direct == nil {
		return ""
	}
	if c.a == v.name {
		return c.b
	}
	return c.a
}

// cableDirs returns the directions of the port's cable into and out of it
// (nil without a cable).
func (v *PortView) cableDirs() (in, out *cableDir) {
	regMu.Lock()
	if v.cable == nil {
		v.cable = v.e.cable
	}
	c := v.cable
	regMu.Unlock()
	if c == nil {
		return nil, nil
	}
	if c.a == v.name {
		return c.ba, c.ab
	}
	return c.ab, c.ba
}

// Produced is the number of frames the port's sources handed to its
// receive side: generated, replayed, taken from AF_PACKET or carried in by
// a cable. Each was then received or dropped by the port, by cause.
func (v *PortView) Produced() uint64 {
	var n uint64
	if g := v.e.gen; g != nil {
		n += g.Stats().Frames
	}
	if p := v.e.pcap; p != nil {
		n += p.Frames()
	}
	if a := v.e.afp; a != nil {
		n += a.delivered.Load()
	}
	if in, _ := v.cableDirs(); in != nil {
		n += in.delivered.Load()
	}
	return n
}

// Carried is the number of frames the port's transmit wires have taken
// (sink, cable, AF_PACKET): it grows while frames still leave the port.
func (v *PortView) Carried() uint64 {
	var n uint64
	if k := v.e.sink; k != nil {
		n += k.Stats().Frames
	}
	if a := v.e.afp; a != nil {
		n += a.txFrames.Load() + a.txErrors.Load() + a.txLinkDown.Load()
	}
	if _, out := v.cableDirs(); out != nil {
		n += out.frames.Load() + out.unplug.Load() + out.linkDown.Load()
	}
	if f := v.e.ep.LinkDownDrops; f != nil {
		n += f()
	}
	return n
}

// Done reports whether every source of the port that ends (a generator
// with a count, a pcap replay) has ended; Waiting whether one of them
// waits for receive buffers to go on (a lossless source not done), so a
// port that never posts buffers would keep it waiting for ever.
func (v *PortView) Done() (done, waiting bool) {
	done = true
	if g := v.e.gen; g != nil && g.count != 0 && !g.Done() {
		done = false
		waiting = waiting || g.Lossless()
	}
	if p := v.e.pcap; p != nil && !p.Done() {
		done = false
		waiting = waiting || p.Lossless()
	}
	return done, waiting
}

// Hold stops every source of the port (generator, pcap replay, AF_PACKET)
// from handing it more frames, so what is in flight can drain before the
// port stops. Frames a cable carries in are not held: they were sent by
// the port at its other end. Frames AF_PACKET had queued are counted as
// lost (afpacket:held).
func (v *PortView) Hold() {
	if g := v.e.gen; g != nil {
		g.held.Store(true)
	}
	if p := v.e.pcap; p != nil {
		p.held.Store(true)
	}
	if a := v.e.afp; a != nil {
		a.held.Store(true)
	}
}

// Release undoes Hold: the sources hand frames to the port again. An
// application that holds them from set-up to the end of its start keeps
// frames from reaching a port before its MAC receives.
func (v *PortView) Release() {
	if g := v.e.gen; g != nil {
		g.held.Store(false)
		g.wake()
	}
	if p := v.e.pcap; p != nil {
		p.held.Store(false)
		p.wake()
	}
	if a := v.e.afp; a != nil {
		a.held.Store(false)
		a.wake()
	}
}

// Losses are the frames lost around the port, by cause: frames its sources
// could not hand it (too big for its buffers), frames its MAC sent while
// its PHY had no link (phy:link_down, lost between MAC and wire), and
// frames lost on the wires it transmits into (its cable's ring, an
// unplugged cable, AF_PACKET, whose interface may have no carrier).
func (v *PortView) Losses() []Loss {
	var l []Loss
	if f := v.e.ep.LinkDownDrops; f != nil {
		l = append(l, Loss{"phy:link_down", f()})
	}
	if g := v.e.gen; g != nil {
		l = append(l, Loss{"gen:too_big", g.tooBig.Load()})
	}
	if p := v.e.pcap; p != nil {
		l = append(l, Loss{"pcap-in:too_big", p.TooBig()})
	}
	if a := v.e.afp; a != nil {
		x := a.Stats()
		l = append(l, Loss{"afpacket:kernel", x.KernelDrops}, Loss{"afpacket:if_dropped", x.IfDropped}, Loss{"afpacket:queue_full", x.RxDropped},
			Loss{"afpacket:too_big", x.RxTooBig}, Loss{"afpacket:held", x.Held}, Loss{"afpacket:send_error", x.TxErrors},
			Loss{"afpacket:link_down", x.TxLinkDown})
	}
	if in, out := v.cableDirs(); out != nil {
		o := out.stats()
		l = append(l, Loss{"cable:full", o.Full}, Loss{"cable:too_big", o.TooBig}, Loss{"cable:unplugged", o.Unplugged},
			Loss{"cable:link_down", o.LinkDown},
			Loss{"cable:too_long", in.stats().TooLong})
	}
	return l
}

// Err is what stopped a source early (a damaged pcap record), or nil.
func (v *PortView) Err() error {
	if p := v.e.pcap; p != nil {
		return p.Err()
	}
	return nil
}

// Generator is the port's frame generator, nil when its spec asked for none.
func (v *PortView) Generator() *Generator { return v.e.gen }

// Sink is the port's counting sink, nil when its spec asked for none.
func (v *PortView) Sink() *Sink { return v.e.sink }

// AFPacket is the port's AF_PACKET wire, nil when its spec asked for none.
func (v *PortView) AFPacket() *AFPacket { return v.e.afp }

// PcapIn is the port's pcap replay, nil when its spec asked for none.
func (v *PortView) PcapIn() *PcapSource { return v.e.pcap }

// CableOut counts the frames the port sent down its cable, nil when it has
// none.
func (v *PortView) CableOut() *CableStats {
	if _, out := v.cableDirs(); out != nil {
		s := out.stats()
		return &s
	}
	return nil
}

// InputEnds tells whether the frames a port receives come to an end by
// themselves: a sim port fed only by pcap-in, a generator with gen-count, a
// cable or nothing. finite reports whether the port has such an input of
// its own (pcap-in, gen-count); endless says why its input never ends, ""
// when it does. Spec errors are left to Open.
func InputEnds(spec driver.Spec) (finite bool, endless string) {
	if spec.Scheme != "sim" {
		return false, "a real device receives for as long as its link is up"
	}
	o := spec.Options
	if o.Has("afpacket") {
		return false, "afpacket= receives from Linux for as long as the interface lives"
	}
	finite = o.Has("pcap-in")
	if _, on, err := genConfig(spec); err == nil && on {
		if n, err := strconv.ParseUint(o.Get("gen-count"), 10, 64); err != nil || n == 0 {
			return finite, "its generator has no gen-count"
		}
		finite = true
	}
	return finite, ""
}

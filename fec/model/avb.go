package model

import "sync"

// AVB shaping (docs/hardware-fec.md §2.10): on parts with three rings, TX
// rings 1 and 2 are AVB classes; with DMAnCFG.DMA_CLASS_EN set, class n
// gets IDLE_SLOPE/(IDLE_SLOPE+512) of the link (NXP's MCUXpresso SDK,
// fsl_enet.h). While either class is on, the model gives every frame the
// MAC hands to the wire the model time it leaves: not before it was sent,
// nor before the wire is free, nor, on a shaped ring, before the credit
// its class spent on its previous frame is back: a frame of b bits on the
// wire (FCS, preamble and gap included) makes the next wait
// b*(s+512)/s bit times. Positive credit is not modelled (no burst).
// Frames still reach the peer when sent; Departures is the wire's view.

// Departure is one frame as the wire saw it leave.
type Departure struct {
	Ring  int
	Len   int   // frame bytes, FCS excluded
	Start int64 // model time of the first bit of the preamble, ns
	End   int64 // model time of the last bit of the FCS, ns
}

const (
	dmacfg_CLASS_EN   = 1 << 16
	dmacfg_IDLE_SLOPE = 0xFFFF

	maxDepartures = 4096
	wireOverhead  = 4 + 8 + 12 // FCS, preamble and SFD, gap
)

// avbSched is the shaper's state.
type avbSched struct {
	mu       sync.Mutex
	wireFree int64
	next     [3]int64
	log      []Departure
}

// avbSlope is ring n's IDLE_SLOPE while its class is on, else 0.
func (d *Device) avbSlope(n int) int64 {
	off := uint32(regDMA1CFG)
	switch n {
	case 1:
	case 2:
		off = regDMA2CFG
	default:
		return 0
	}
	if v := d.reg(off); v&dmacfg_CLASS_EN != 0 {
		return int64(v & dmacfg_IDLE_SLOPE)
	}
	return 0
}

// avbOn reports whether a class is shaped (three-ring parts only).
func (d *Device) avbOn() bool {
	return d.prof.MultiQueue && (d.reg(regDMA1CFG)|d.reg(regDMA2CFG))&dmacfg_CLASS_EN != 0
}

// avbDepart times one frame of ring n.
func (d *Device) avbDepart(n, length int) {
	s := &d.avb
	speed := int64(d.phy.speed.Load())
	if speed <= 0 {
		speed = 100
	}
	bits := int64(length+wireOverhead) * 8
	now := d.ptp.tl.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := max(now, s.wireFree)
	slope := d.avbSlope(n)
	if slope != 0 {
		t = max(t, s.next[n])
		s.next[n] = t + bits*1000*(slope+512)/(slope*speed)
	}
	s.wireFree = t + bits*1000/speed
	if len(s.log) >= maxDepartures {
		s.log = s.log[:copy(s.log, s.log[len(s.log)/2:])]
	}
	s.log = append(s.log, Departure{Ring: n, Len: length, Start: t, End: t + int64(length+4+8)*8*1000/speed})
}

// Departures returns the frames timed since the last call (oldest first)
// and forgets them; empty while no AVB class is on.
func (d *Device) Departures() []Departure {
	s := &d.avb
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.log
	s.log = nil
	return l
}

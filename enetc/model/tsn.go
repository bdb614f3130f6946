package model

import (
	"encoding/binary"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gopmd/gopmd/wire"
)

// Scheduled traffic (docs/hardware-enetc.md §13): the port's time gating
// (802.1Qbv) and credit-based shapers (802.1Qav) as Linux's enetc_qos.c
// programs them. A TX ring's traffic class is its TBMR priority field
// (bits 2:0, Linux enetc_set_bdr_prio). Time gating is on while PTGCR.TGE
// is set and a gate control list has been loaded through the control BD
// ring (class 5, command 0: the gate list's base time, cycle time,
// extension and entries in a DMA buffer, Linux enetc_setup_taprio). A
// class's shaper is on while PTCCBSR0(tc).CBSE is set; its bandwidth is
// PTCCBSR0(tc)[6:0] percent of the port's rate, the speed PMR.PSPEED
// gives (Linux enetc_setup_tc_cbs, enetc_sched_speed_set).
//
// Departure times: while gating or a shaper is on, the model gives every
// frame it sends the time the wire sees it leave, in the chip's 1588
// timer's time: the earliest time, not before the timer's time when the
// frame was sent, the end of the ring's previous frame and the end of
// every frame already given that slot, at which
//   - the frame's class has credit: after a shaped frame of b wire bits,
//     the class's next frame waits b/idleslope (the credit a frame spends
//     at the send slope, won back at the idle slope); credit built up
//     while a frame waits is not modelled, so a class never bursts above
//     its idle slope;
//   - the frame's class's gate is open from the first bit of its preamble
//     to the last bit of its FCS (802.1Q's rule, §13.2: a frame that does
//     not fit the rest of the window waits for the next one).
//
// A frame that fits no window of its class (longer than every window) is
// not sent: it counts as a TX error (TERR) and is recorded once. Frames
// still reach the peer when they are sent, in the order the rings are
// worked; Departures is the wire's view of when each left.
const (
	regPTCCBSR0 = 0x11110 // PTCCBSR0(tc) at +8*tc, tc = 0..7
	regPTCCBSR1 = 0x11114 // PTCCBSR1(tc) at +8*tc
	regPTGCR    = 0x11A00
	regPTGCAPR  = 0x11A08

	ptgcr_TGE        = 1 << 31
	ptccbsr0_CBSE    = 1 << 31
	ptccbsr0_BW_MASK = 0x7F
	tbmr_PRIO_MASK   = 0x7
	sipcapr0_QBV     = 1 << 4

	// CBDClassPortGCL is the control BD class of the port's gate list.
	CBDClassPortGCL = 5

	// GateListMax is the PTGCAPR value the model reports: the longest
	// gate list it takes (the model's choice; the reference excerpts give
	// no LS1028A value).
	GateListMax = 64

	// TrafficClasses is how many traffic classes a port has.
	TrafficClasses = 8

	// maxDepartures bounds the departure log: a test reads it, a long run
	// overwrites.
	maxDepartures = 1 << 16
	// maxReservations bounds the wire slots the scheduler remembers.
	maxReservations = 4096

	// wireOverhead is what a frame adds on the wire besides its bytes:
	// FCS 4, preamble and SFD 8, inter-frame gap 12.
	wireOverhead = 4 + 8 + 12
)

// Departure is one frame as the wire saw it leave.
type Departure struct {
	Ring, TC int
	Len      int   // frame bytes, FCS excluded (a fragment's data bytes)
	Start    int64 // timer time of the first bit of the preamble, ns
	End      int64 // timer time of the last bit of the FCS (or mCRC), ns
	// MPacket: sent by the MAC merge sublayer as mPackets (preempt.go),
	// this one a fragment; Final: the frame's last (or whole) part.
	MPacket  bool
	Fragment int
	Final    bool
}

// gateList is a loaded gate control list.
type gateList struct {
	atc       uint8 // gate states before the list's first cycle
	base      int64
	cycle     int64
	ext       int64
	start     int64 // the first cycle's start, fixed when loaded
	gates     []uint8
	intervals []int64
	sum       int64
}

// tsnSched is the port's scheduler state, under mu.
type tsnSched struct {
	mu        sync.Mutex
	ringFree  [MaxRings]int64
	cbsNext   [TrafficClasses]int64
	res       []slot // wire slots given, sorted by start
	log       []Departure
	dropped   uint64
	noTimer   bool
	reportedL uint8 // classes whose too-long frames were recorded
}

type slot struct{ start, end int64 }

// tsnState is what the Device holds for scheduled traffic.
type tsnState struct {
	on   atomic.Bool // gating or a shaper may be on: txPass consults sched
	gcl  atomic.Pointer[gateList]
	sch  tsnSched
	gcls atomic.Uint64 // gate lists loaded
}

// tsnUpdate recomputes whether the scheduler must see frames, after a
// write to PTGCR or PTCCBSR0.
func (d *Device) tsnUpdate() {
	if !d.pf {
		return
	}
	on := d.get(regPTGCR)&ptgcr_TGE != 0 && d.tsn.gcl.Load() != nil || d.mergeOn()
	for tc := 0; tc < TrafficClasses; tc++ {
		if d.get(regPTCCBSR0+8*uint32(tc))&ptccbsr0_CBSE != 0 {
			on = true
		}
	}
	d.tsn.on.Store(on)
}

// tsnReset forgets the gate list and the schedule (FLR, power-on).
func (d *Device) tsnReset() {
	d.tsn.gcl.Store(nil)
	d.tsn.on.Store(false)
	s := &d.tsn.sch
	s.mu.Lock()
	s.ringFree, s.cbsNext, s.res, s.reportedL = [MaxRings]int64{}, [TrafficClasses]int64{}, nil, 0
	s.mu.Unlock()
}

// portSpeed is the speed PMR.PSPEED tells the port, in Mb/s: the rate
// the shapers' percentages are of (Linux enetc_sched_speed_set: 0 is
// 10 Mb/s, bit 8 100, bit 9 1000, bit 10 2500).
func (d *Device) portSpeed() int64 {
	switch ps := d.get(regPMR) >> 8 & 0xF; {
	case ps&4 != 0:
		return 2500
	case ps&2 != 0:
		return 1000
	case ps&1 != 0:
		return 100
	}
	return 10
}

// tsnSched is the scheduler txPass hands frames to, or nil when no gate
// list or shaper is on.
func (d *Device) tsnSched() *tsnSched {
	if !d.tsn.on.Load() {
		return nil
	}
	return &d.tsn.sch
}

// gclEntrySize is one gate control list entry (Linux struct gce): le32
// interval in ns, one byte of gate states, three reserved.
const (
	gclHeader    = 16 // le32 base time low, high, cycle time, extension
	gclEntrySize = 8
)

// loadGateList runs the "port gate list set" control command.
func (d *Device) loadGateList(c []byte, addr uint64, length int) uint8 {
	if c[cbdCmd] != 0 {
		return CBDErrClass
	}
	n := int(binary.LittleEndian.Uint16(c[20:22])) // acl_len
	if n == 0 || n > GateListMax {
		return CBDErrLength
	}
	if length != gclHeader+gclEntrySize*n {
		return CBDErrLength
	}
	b := d.iommu.Slice(addr, length, false)
	if b == nil {
		d.st.dmaFaults.Add(1)
		return CBDErrDMA
	}
	g := &gateList{
		atc:       c[8],
		base:      int64(binary.LittleEndian.Uint64(b[0:8])),
		cycle:     int64(binary.LittleEndian.Uint32(b[8:12])),
		ext:       int64(binary.LittleEndian.Uint32(b[12:16])),
		gates:     make([]uint8, n),
		intervals: make([]int64, n),
	}
	for i := 0; i < n; i++ {
		e := b[gclHeader+gclEntrySize*i:]
		g.intervals[i] = int64(binary.LittleEndian.Uint32(e[0:4]))
		g.gates[i] = e[4]
		if g.intervals[i] == 0 {
			return CBDErrArgument
		}
		g.sum += g.intervals[i]
	}
	if g.cycle == 0 {
		return CBDErrArgument
	}
	g.start = g.base
	if t := d.chip.Timer(); t != nil {
		if now := int64(t.Time()); g.base < now {
			g.start = g.base + ((now-g.base)/g.cycle+1)*g.cycle
		}
	}
	d.tsn.gcl.Store(g)
	d.tsn.gcls.Add(1)
	d.tsnUpdate()
	return CBDErrNone
}

// gatesAt is the gate states in force from t and until when.
func (g *gateList) gatesAt(t int64) (mask uint8, until int64) {
	if t < g.start {
		return g.atc, g.start
	}
	phase := (t - g.base) % g.cycle
	cs := t - phase
	var at int64
	for i, iv := range g.intervals {
		if phase < at+iv {
			end := cs + at + iv
			if at+iv >= g.cycle {
				end = cs + g.cycle // an entry past the cycle is cut at its end
			}
			return g.gates[i], end
		}
		at += iv
		if at >= g.cycle {
			break
		}
	}
	return g.gates[len(g.gates)-1], cs + g.cycle // the last states hold to the cycle's end
}

// fit is the earliest time from t on at which class tc's gate stays open
// for dur, and false if no window is ever that long.
func (g *gateList) fit(tc int, t, dur int64) (int64, bool) {
	bit := uint8(1) << uint(tc)
	run := int64(-1)
	// Two cycles past the first one that could hold the frame cover every
	// window; an always-open gate makes one run that grows each cycle.
	limit := 2 * (len(g.intervals) + 2) * int((dur/g.cycle)+2)
	for i := 0; i < limit; i++ {
		mask, until := g.gatesAt(t)
		if mask&bit != 0 {
			if run < 0 {
				run = t
			}
			if until-run >= dur {
				return run, true
			}
		} else {
			run = -1
		}
		t = until
	}
	return 0, false
}

// frag is one mPacket of a preempted frame: data bytes [off, off+n) on
// the wire from start to end (preamble to mCRC or FCS).
type frag struct {
	start, end int64
	off, n     int
}

// transmit schedules one frame of ring n and puts it on w: whole, or as
// mPackets when its class is preemptable now and w carries them (MAC
// merge, preempt.go). It returns when the frame's first bit of preamble
// left (its Departure.Start; -1 when the chip has no timer to schedule
// by). False: it fits no window of its gate and is not sent.
func (s *tsnSched) transmit(d *Device, w wire.Wire, n int, frame []byte) (int64, bool) {
	tc := int(d.get(regTBMR+uint32(n)*RingStride) & tbmr_PRIO_MASK)
	mw, merge := w.(wire.MergeWire)
	pre := merge && d.preemptable(tc)
	frags, ok := s.depart(d, n, tc, len(frame), pre)
	if !ok {
		return 0, false
	}
	at := frags[0].start
	if frags[0].end == 0 {
		at = -1 // no timer: unscheduled (depart)
	}
	if !pre {
		w.Transmit(frame)
		return at, true
	}
	m := &d.merge
	m.mu.Lock()
	fc := m.txFrame
	m.txFrame = (fc + 1) % 4
	m.mu.Unlock()
	for i, f := range frags {
		p := wire.MPacket{SMD: wire.SMDS[fc], Data: frame[f.off : f.off+f.n], Final: i == len(frags)-1}
		if i > 0 {
			p.SMD, p.Frag = wire.SMDC[fc], wire.FragCount[(i-1)%4]
			m.cnt[mmFragTx].Add(1)
		}
		mw.TransmitMPacket(p)
	}
	return at, true
}

// depart schedules one frame of ring n and class tc and records its
// departure; pre lets it be cut into fragments around the wire's other
// slots, which it returns. False means it fits no window and is not sent.
func (s *tsnSched) depart(d *Device, n, tc, length int, pre bool) ([]frag, bool) {
	tm := d.chip.Timer()
	s.mu.Lock()
	defer s.mu.Unlock()
	if tm == nil {
		if !s.noTimer {
			s.noTimer = true
			d.recordErr("TX: scheduled traffic is on but the chip has no 1588 timer: frames leave unscheduled")
		}
		return []frag{{off: 0, n: length}}, true
	}
	now := int64(tm.Time())
	speed := int64(d.speedMbps())
	if speed <= 0 {
		speed = 1000
	}
	wireBits := int64(length+wireOverhead) * 8
	fitDur := int64(length+4+8) * 8 * 1000 / speed // preamble to FCS, ns
	busy := wireBits * 1000 / speed                // and the gap after
	t := max(now, s.ringFree[n])
	cbs := d.get(regPTCCBSR0 + 8*uint32(tc))
	shaped := cbs&ptccbsr0_CBSE != 0 && cbs&ptccbsr0_BW_MASK != 0
	if shaped {
		t = max(t, s.cbsNext[tc])
	}
	g := d.tsn.gcl.Load()
	gated := g != nil && d.get(regPTGCR)&ptgcr_TGE != 0
	if pre && length+4 >= d.minFragment()+4+64 {
		frags, ok := s.placeFragments(d, g, gated, tc, t, length, 8000/speed)
		if ok {
			last := frags[len(frags)-1]
			end := last.end + 12*8000/speed
			for i, f := range frags {
				s.reserve(now, slot{f.start, f.end + 12*8000/speed})
				s.record(Departure{Ring: n, TC: tc, Len: f.n, Start: f.start, End: f.end, MPacket: true, Fragment: i, Final: f == last})
			}
			s.ringFree[n] = end
			if shaped {
				rate := d.portSpeed() * 1_000_000 * int64(cbs&ptccbsr0_BW_MASK) / 100
				s.cbsNext[tc] = frags[0].start + (end-frags[0].start)*speed*1_000_000/rate
			}
			return frags, true
		}
	}
	for {
		if gated {
			var ok bool
			if t, ok = g.fit(tc, t, fitDur); !ok {
				s.dropped++
				if s.reportedL&(1<<uint(tc)) == 0 {
					s.reportedL |= 1 << uint(tc)
					d.recordErr("TX ring %d: a %d-byte frame of traffic class %d fits no window of its gate (%d ns on the wire): not sent", n, length, tc, fitDur)
				}
				return nil, false
			}
		}
		moved := false
		for _, r := range s.res {
			if r.start < t+busy && t < r.end {
				t, moved = r.end, true
			}
		}
		if !moved {
			break
		}
	}
	s.reserve(now, slot{t, t + busy})
	s.ringFree[n] = t + busy
	if shaped {
		// R*pct/100 bits per second: b bits win their credit back in
		// b*1e9*100/(R*pct) ns.
		rate := d.portSpeed() * 1_000_000 * int64(cbs&ptccbsr0_BW_MASK) / 100
		s.cbsNext[tc] = t + wireBits*1_000_000_000/rate
	}
	s.record(Departure{Ring: n, TC: tc, Len: length, Start: t, End: t + fitDur, Final: true})
	return []frag{{start: t, end: t + fitDur, n: length}}, true
}

// record logs one departure.
func (s *tsnSched) record(dp Departure) {
	if len(s.log) >= maxDepartures {
		s.log = s.log[:copy(s.log, s.log[len(s.log)/2:])]
	}
	s.log = append(s.log, dp)
}

// placeFragments fits a preemptable frame of length bytes into the wire's
// gaps from t on (and its gate's windows when gated), bt ns per byte:
// each fragment takes 8 bytes of preamble and SMD, its data and 4 of mCRC
// or FCS, then the 12-byte gap. A fragment but the last carries at least
// minFragment data bytes; the last at least 60. False: no window ever
// holds it.
func (s *tsnSched) placeFragments(d *Device, g *gateList, gated bool, tc int, t int64, length int, bt int64) ([]frag, bool) {
	minFrag := d.minFragment()
	var out []frag
	busy := append([]slot(nil), s.res...) // the wire's slots and this frame's fragments so far
	pos := 0
	for iter := 0; iter < 1<<16; iter++ {
		we := int64(1<<63 - 1)
		if gated {
			ws, e, ok := g.window(tc, t)
			if !ok {
				return nil, false
			}
			t, we = max(t, ws), e
		}
		moved := false
		for _, r := range busy {
			if r.start <= t && t < r.end {
				t, moved = r.end, true
			}
		}
		if moved {
			continue
		}
		ge := we
		for _, r := range busy {
			if r.start > t && r.start < ge {
				ge = r.start
			}
		}
		rem := length - pos
		room := (ge - t) / bt // whole bytes before the gap closes
		if room >= int64(8+rem+4+12) || ge == 1<<63-1 {
			return append(out, frag{start: t, end: t + int64(8+rem+4)*bt, off: pos, n: rem}), true
		}
		take := min(int(room)-(8+4+12), rem-60)
		if take >= minFrag {
			f := frag{start: t, end: t + int64(8+take+4)*bt, off: pos, n: take}
			out = append(out, f)
			busy = append(busy, slot{f.start, f.end + 12*bt})
			pos += take
			t = f.end + 12*bt
			continue
		}
		t = ge
	}
	return nil, false
}

// window is the open run of class tc's gate that holds t or comes next:
// [start, end), a run still open two cycles on ending there.
func (g *gateList) window(tc int, t int64) (start, end int64, ok bool) {
	bit := uint8(1) << uint(tc)
	for i := 0; i < 4*(len(g.intervals)+2); i++ {
		mask, until := g.gatesAt(t)
		if mask&bit != 0 {
			start, end = t, until
			for j := 0; j < 2*(len(g.intervals)+1); j++ {
				m2, u2 := g.gatesAt(end)
				if m2&bit == 0 {
					break
				}
				end = u2
			}
			return start, end, true
		}
		t = until
	}
	return 0, 0, false
}

// reserve remembers a wire slot, forgetting those over by now.
func (s *tsnSched) reserve(now int64, r slot) {
	k := 0
	for _, x := range s.res {
		if x.end > now {
			s.res[k] = x
			k++
		}
	}
	s.res = s.res[:k]
	if len(s.res) >= maxReservations {
		s.res = s.res[:copy(s.res, s.res[1:])]
	}
	i := sort.Search(len(s.res), func(i int) bool { return s.res[i].start > r.start })
	s.res = append(s.res, slot{})
	copy(s.res[i+1:], s.res[i:])
	s.res[i] = r
}

// Departures returns the frames the scheduler timed since the last call
// (oldest first) and forgets them. Empty while no gate list or shaper is
// on.
func (d *Device) Departures() []Departure {
	s := &d.tsn.sch
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.log
	s.log = nil
	return l
}

// GateListsLoaded is how many gate lists the control ring has loaded.
func (d *Device) GateListsLoaded() uint64 { return d.tsn.gcls.Load() }

// GateDrops is how many frames fitted no window of their gate.
func (d *Device) GateDrops() uint64 {
	s := &d.tsn.sch
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

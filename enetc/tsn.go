package enetc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
)

// Scheduled traffic (§13): traffic classes, 802.1Qbv time gating and
// 802.1Qav credit-based shapers, programmed as Linux's enetc_qos.c does
// for tc mqprio, taprio and cbs. A TX ring's traffic class is the priority
// field of its TBMR; the port's gate list is loaded through the control BD
// ring; the shapers are the port's PTCCBSR0/1 pair per class.

// Registers and fields of §13 (Linux enetc_hw.h), absolute BAR0 offsets.
const (
	regPTGCR   = portBase + 0x1A00 // port time gating control
	regPTGCAPR = portBase + 0x1A08 // port time gating capability

	ptgcr_TGE             = 1 << 31
	ptgcapr_MAX_GCL_LEN   = 0xFFFF
	ptccbsr0_CBSE         = 1 << 31
	ptccbsr0_BW_MASK      = 0x7F
	tbmr_PRIO_MASK        = 0x7
	cbdClassPortGCL       = 5
	gclHeader             = 16 // base time low, high, cycle time, extension (le32 each)
	gclEntrySize          = 8  // interval (le32), gate states, 3 reserved
	gclAllOpen            = 0xFF
	tsnTrafficClasses     = 8
	tsnMaxInterval        = time.Duration(math.MaxUint32) // le32 ns fields
	enetcClockHz          = 400_000_000                   // the clock PTCCBSR1's hiCredit counts in
	vlanEthHeaderAndFCS   = 18 + 4
	cbdDataAlign          = 64
	tsnGateBufMaxEntries  = 1024
	tsnGateBufSizeDefault = gclHeader + gclEntrySize*64
)

// PMR.PSPEED: the port's speed, which the shapers' percentages are of
// (Linux enetc_sched_speed_set, from its link-up handler).
const (
	pmr_PSPEED_MASK  = 0xF << 8
	pmr_PSPEED_100M  = 1 << 8
	pmr_PSPEED_1000M = 1 << 9
	pmr_PSPEED_2500M = 1 << 10
)

// followPSPEED writes the link's speed into PMR.PSPEED as it comes up
// (PF, ctl held). 10 Mb/s and unknown speeds are 0, as in Linux.
func (p *Port) followPSPEED(l driver.Link) {
	if !l.Up {
		return
	}
	var ps uint32
	switch l.SpeedMbps {
	case 100:
		ps = pmr_PSPEED_100M
	case 1000:
		ps = pmr_PSPEED_1000M
	case 2500:
		ps = pmr_PSPEED_2500M
	}
	if v := p.regs.Read32(regPMR); v&pmr_PSPEED_MASK != ps {
		p.regs.Write32(regPMR, v&^pmr_PSPEED_MASK|ps)
	}
}

// PTCCBSR0(tc), PTCCBSR1(tc): the credit-based shaper of traffic class tc.
func regPTCCBSR0(tc int) uint32 { return portBase + 0x1110 + 8*uint32(tc) }
func regPTCCBSR1(tc int) uint32 { return portBase + 0x1114 + 8*uint32(tc) }

// tsnConfig is the port's scheduling set-up, under ctl.
type tsnConfig struct {
	tcMap     driver.TCMap
	ringTC    []uint8 // traffic class of each TX ring (TBMR priority)
	gating    bool
	gates     driver.GateList
	gateStart driver.Time
	buf       *dma.Region // the gate list command's data buffer
	// cbs is each class's shaper as SetCBS wrote it (PTCCBSR0, PTCCBSR1),
	// and preempt the MAC merge set-up SetPreemption wrote (preemptOn:
	// one was written): what a function reset clears and restoreLocked
	// writes again.
	cbs       [tsnTrafficClasses][2]uint32
	preempt   driver.PreemptConfig
	preemptOn bool
	// pending is the gate list a function reset cleared while Start has
	// not loaded it again (restoreLocked); nil when none is.
	pending *driver.GateList
}

var _ driver.TSN = (*Port)(nil)

// ringPrio is the TBMR priority field of TX ring i.
func (p *Port) ringPrio(i int) uint32 {
	if i < len(p.tsn.ringTC) {
		return uint32(p.tsn.ringTC[i])
	}
	return 0
}

// TSNCaps implements driver.TSN.
func (p *Port) TSNCaps() driver.TSNCaps {
	p.lock()
	defer p.unlock()
	if p.closed || !p.pf {
		return driver.TSNCaps{}
	}
	c := driver.TSNCaps{TrafficClasses: tsnTrafficClasses, MaxInterval: tsnMaxInterval, CBS: true}
	if p.regs.Read32(regSIPCAPR0)&sipcapr0_QBV != 0 {
		c.MaxGateEntries = int(p.regs.Read32(regPTGCAPR) & ptgcapr_MAX_GCL_LEN)
	}
	if top, next, ok := p.cbsClasses(); ok {
		c.CBSClasses = []int{top, next}
	}
	return c
}

// tsnCheck is the common refusal: a closed port or a VF.
func (p *Port) tsnCheck(what string) error {
	if p.closed {
		return p.errClosed()
	}
	if !p.pf {
		return fmt.Errorf("%s: scheduled traffic is a port function; a VF has none (configure it on the PF)", what)
	}
	return nil
}

// SetTCMap implements driver.TSN: each TX ring's TBMR priority becomes the
// traffic class its queue range gives it (Linux enetc_set_bdr_prio).
func (p *Port) SetTCMap(m driver.TCMap) error {
	p.lock()
	defer p.unlock()
	if err := p.tsnCheck("traffic class map"); err != nil {
		return err
	}
	if err := m.Check(len(p.tx), tsnTrafficClasses); err != nil {
		return err
	}
	for tc := range tsnTrafficClasses {
		if p.regs.Read32(regPTCCBSR0(tc))&ptccbsr0_CBSE != 0 {
			return fmt.Errorf("traffic class map: traffic class %d has a shaper, which follows the map: take the shapers off first (cbs idleslope 0)", tc)
		}
	}
	m.Queues = append([]driver.QueueRange(nil), m.Queues...)
	rings := make([]uint8, len(p.tx))
	for i := range rings {
		rings[i] = uint8(m.ClassOfQueue(i))
	}
	p.tsn.tcMap, p.tsn.ringTC = m, rings
	if p.started {
		for _, q := range p.tx {
			off := txRingReg(q.idx, regTBMR)
			p.regs.Write32(off, p.regs.Read32(off)&^tbmr_PRIO_MASK|p.ringPrio(q.idx))
		}
	}
	return nil
}

// SetGateList implements driver.TSN as Linux's taprio offload does: PTGCR.TGE
// on, then the list (base time, cycle time, extension, entries) through
// the control BD ring; the zero list clears TGE. The list is checked
// against PTGCAPR's length and the 32-bit interval fields first.
func (p *Port) SetGateList(g driver.GateList) error {
	p.lock()
	defer p.unlock()
	if err := p.tsnCheck("gate list"); err != nil {
		return err
	}
	p.tsn.pending = nil // a list a function reset cleared is replaced
	r := p.regs
	if len(g.Entries) == 0 {
		r.Write32(regPTGCR, r.Read32(regPTGCR)&^ptgcr_TGE)
		p.tsn.gating, p.tsn.gates = false, driver.GateList{}
		return nil
	}
	return p.loadGateListLocked(g)
}

// loadGateListLocked checks g, loads it and turns gating on (SetGateList,
// and the reload after a function reset). Caller holds ctl.
func (p *Port) loadGateListLocked(g driver.GateList) error {
	r := p.regs
	if r.Read32(regSIPCAPR0)&sipcapr0_QBV == 0 {
		return errors.New("gate list: this port has no time gating (SIPCAPR0.QBV clear)")
	}
	maxLen := int(r.Read32(regPTGCAPR) & ptgcapr_MAX_GCL_LEN)
	if err := g.Check(min(maxLen, tsnGateBufMaxEntries), tsnMaxInterval); err != nil {
		return fmt.Errorf("%w (PTGCAPR: %d entries)", err, maxLen)
	}
	if g.BaseTime < 0 {
		return fmt.Errorf("gate list: base-time %v is before the clock's epoch", g.BaseTime)
	}
	clk, err := p.clockLocked()
	if err != nil {
		return fmt.Errorf("gate list: base times are the chip's 1588 timer's: %w", err)
	}
	now, err := clk.Now()
	if err != nil {
		return fmt.Errorf("gate list: reading the clock: %w", err)
	}
	size := gclHeader + gclEntrySize*len(g.Entries)
	if p.tsn.buf == nil || p.tsn.buf.Len() < size {
		if p.tsn.buf != nil {
			_ = p.tsn.buf.Close()
			p.tsn.buf = nil
		}
		buf, err := dma.Alloc(p.dev.Mapper, max(size, tsnGateBufSizeDefault), dma.Options{Attr: dma.Attr{Contiguous: true, Name: p.name + " gate list"}})
		if err != nil {
			return fmt.Errorf("gate list buffer (%d bytes): %w", size, err)
		}
		if buf.IOVA()%cbdDataAlign != 0 {
			_ = buf.Close()
			return fmt.Errorf("gate list buffer IOVA %#x is not %d-byte aligned", buf.IOVA(), cbdDataAlign)
		}
		p.tsn.buf = buf
	}
	b := p.tsn.buf.Bytes()[:size]
	cycle := g.Cycle()
	binary.LittleEndian.PutUint64(b[0:8], uint64(g.BaseTime))
	binary.LittleEndian.PutUint32(b[8:12], uint32(cycle))
	binary.LittleEndian.PutUint32(b[12:16], uint32(g.CycleTimeExtension))
	for i, e := range g.Entries {
		en := b[gclHeader+gclEntrySize*i : gclHeader+gclEntrySize*(i+1)]
		binary.LittleEndian.PutUint32(en[0:4], uint32(e.Interval))
		en[4], en[5], en[6], en[7] = e.Gates, 0, 0, 0
	}
	if err := p.cbdrEnable(); err != nil {
		return err
	}
	iova := p.tsn.buf.IOVA()
	c := cbd{length: uint16(size), cmd: 0, class: cbdClassPortGCL}
	c.addr[0], c.addr[1] = uint32(iova), uint32(iova>>32)
	c.opt[0] = gclAllOpen             // gate states before the list starts
	c.opt[3] = uint32(len(g.Entries)) // the list's length
	tge := r.Read32(regPTGCR)
	r.Write32(regPTGCR, tge|ptgcr_TGE)
	if err := p.cbdrRun(c, fmt.Sprintf("load a %d-entry gate list", len(g.Entries))); err != nil {
		r.Write32(regPTGCR, tge&^ptgcr_TGE)
		p.tsn.gating = false
		return err
	}
	g.Entries = append([]driver.GateEntry(nil), g.Entries...)
	p.tsn.gating, p.tsn.gates, p.tsn.gateStart = true, g, g.CycleStart(now)
	return nil
}

// clockLocked is Clock without the closed check's lock.
func (p *Port) clockLocked() (driver.Clock, error) {
	c, ok := driver.ChipClock(p.dev.Chip)
	if !ok {
		return nil, fmt.Errorf("%w: the chip's 1588 timer is not open; open it first (driver.OpenClock(\"pci:0000:00:00.4\"), or sim:enetc-timerN with this port's chip=)", driver.ErrNoClock)
	}
	return c, nil
}

// cbsClasses are the two classes Linux's enetc_setup_tc_cbs shapes: with
// N classes in the map, the classes of priorities N-1 (top) and N-2
// (next).
func (p *Port) cbsClasses() (top, next int, ok bool) {
	m := p.tsn.tcMap
	if m.NumTC < 2 {
		return 0, 0, false
	}
	top, next = int(m.PrioTC[m.NumTC-1]), int(m.PrioTC[m.NumTC-2])
	return top, next, top != next
}

// SetCBS implements driver.TSN as Linux's cbs offload does: PTCCBSR0(tc)
// takes the idle slope as a whole percentage of the port's rate with
// CBSE, PTCCBSR1(tc) the hiCredit Linux derives from the largest frames
// that may interfere. The ENETC shapes the highest two traffic classes of
// the map; the higher one is turned on first and off last.
func (p *Port) SetCBS(tc int, idleSlopeKbps int64) error {
	p.lock()
	defer p.unlock()
	if err := p.tsnCheck("cbs"); err != nil {
		return err
	}
	top, next, ok := p.cbsClasses()
	if !ok {
		return errors.New("cbs: set a traffic class map with num_tc N of 2 or more first, priorities N-1 and N-2 in two classes: the ENETC shapes those two")
	}
	if tc != top && tc != next {
		return fmt.Errorf("cbs: traffic class %d: the ENETC shapes only the classes of the map's top two priorities (%d and %d)", tc, top, next)
	}
	r := p.regs
	enabled := func(c int) bool { return r.Read32(regPTCCBSR0(c))&ptccbsr0_CBSE != 0 }
	if idleSlopeKbps == 0 {
		if tc == top && enabled(next) {
			return fmt.Errorf("cbs: take the shaper of class %d off before that of class %d", next, top)
		}
		r.Write32(regPTCCBSR1(tc), 0)
		r.Write32(regPTCCBSR0(tc), 0)
		p.tsn.cbs[tc] = [2]uint32{}
		return nil
	}
	if idleSlopeKbps < 0 {
		return fmt.Errorf("cbs: idle slope %d kbit/s is negative", idleSlopeKbps)
	}
	l := p.Link()
	if !l.Up || l.SpeedMbps <= 0 {
		return errors.New("cbs: the link is down: the shaper's share is of the link speed; set it once the link is up")
	}
	speed := int64(l.SpeedMbps)
	bw := idleSlopeKbps / (speed * 10) // kbit/s over (Mb/s * 1000 / 100): percent
	if bw < 1 {
		return fmt.Errorf("cbs: idle slope %d kbit/s is under 1%% of the %d Mb/s link; the ENETC shapes in whole percent (at least %d kbit/s)", idleSlopeKbps, speed, speed*10)
	}
	sum := bw
	if tc == next {
		if !enabled(top) {
			return fmt.Errorf("cbs: give class %d its shaper before class %d", top, next)
		}
		sum += int64(r.Read32(regPTCCBSR0(top)) & ptccbsr0_BW_MASK)
	}
	if sum >= 100 {
		return fmt.Errorf("cbs: the shapers would take %d%% of the link; together they must stay under 100%%", sum)
	}
	// hiCredit (Linux enetc_setup_tc_cbs): the bits of the largest frame
	// that may hold the class up, times its share, in ENETC clock cycles
	// per bit time.
	m0 := uint64(p.cfg.MTU+vlanEthHeaderAndFCS) * 8
	mis := m0
	if tc == next {
		ma := uint64(r.Read32(regPTCMSDUR(top))) * 8
		ra := uint64(r.Read32(regPTCCBSR0(top))&ptccbsr0_BW_MASK) * uint64(speed) * 10000
		r0 := uint64(speed) * 1_000_000
		mis = m0 + ma + ra*m0/(r0-ra)
	}
	hiBits := mis * uint64(bw) / 100
	hi := enetcClockHz * 100 * hiBits / (uint64(speed) * 1_000_000)
	r.Write32(regPTCCBSR1(tc), uint32(hi))
	r.Write32(regPTCCBSR0(tc), uint32(bw)|ptccbsr0_CBSE)
	p.tsn.cbs[tc] = [2]uint32{uint32(bw) | ptccbsr0_CBSE, uint32(hi)}
	return nil
}

// TSNState implements driver.TSN.
func (p *Port) TSNState() (driver.TSNState, error) {
	p.lock()
	defer p.unlock()
	if err := p.tsnCheck("state"); err != nil {
		return driver.TSNState{}, err
	}
	r := p.regs
	st := driver.TSNState{TCMap: p.tsn.tcMap}
	st.TCMap.Queues = append([]driver.QueueRange(nil), p.tsn.tcMap.Queues...)
	if r.Read32(regPTGCR)&ptgcr_TGE != 0 && p.tsn.gating {
		st.Gating, st.Gates, st.GateStart = true, p.tsn.gates, p.tsn.gateStart
		st.Gates.Entries = append([]driver.GateEntry(nil), p.tsn.gates.Entries...)
	}
	speed := int64(p.Link().SpeedMbps)
	for tc := range tsnTrafficClasses {
		v := r.Read32(regPTCCBSR0(tc))
		if v&ptccbsr0_CBSE == 0 {
			continue
		}
		pct := int(v & ptccbsr0_BW_MASK)
		st.CBS = append(st.CBS, driver.CBSState{TC: tc, Percent: pct, IdleSlopeKbps: int64(pct) * speed * 10})
	}
	return st, nil
}

// tsnOff turns gating and the shapers off and frees the gate list buffer
// (Close, with the device still reachable).
func (p *Port) tsnOff() error {
	if !p.pf {
		return nil
	}
	r := p.regs
	r.Write32(regPTGCR, r.Read32(regPTGCR)&^ptgcr_TGE)
	for tc := range tsnTrafficClasses {
		if r.Read32(regPTCCBSR0(tc)) != 0 {
			r.Write32(regPTCCBSR1(tc), 0)
			r.Write32(regPTCCBSR0(tc), 0)
		}
	}
	p.tsn.gating, p.tsn.cbs, p.tsn.pending = false, [tsnTrafficClasses][2]uint32{}, nil
	p.preemptOff()
	qerr := p.qciOff()
	if p.tsn.buf == nil {
		return qerr
	}
	err := p.tsn.buf.Close()
	p.tsn.buf = nil
	if err != nil {
		return errors.Join(qerr, errors.New("gate list buffer"), err)
	}
	return qerr
}

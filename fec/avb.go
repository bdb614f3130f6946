package fec

import (
	"errors"
	"fmt"

	"github.com/gopmd/gopmd/driver"
)

// The credit-based shaper of the AVB rings (docs/hardware-fec.md §2.10):
// on parts with three rings (qAVB) TX rings 1 and 2 are AVB classes, each
// shaped by DMAnCFG.IDLE_SLOPE with DMA_CLASS_EN set. The share of the
// link a class gets is IDLE_SLOPE/(IDLE_SLOPE+512); the field takes 1, 2,
// 4, ... 128 and then the multiples of 128 up to 1536, and the two classes
// together may take at most three quarters of the link (NXP's MCUXpresso
// SDK, fsl_enet.h). Linux gives both 0x200, half each; ring 0 is best
// effort. The traffic class of a frame is its ring (the enhanced TxBD's
// FTYPE), so the class map is fixed: queue n is class n.

// idleSlopes are the values DMAnCFG.IDLE_SLOPE takes, in increasing order.
var idleSlopes = []uint16{1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 640, 768, 896, 1024, 1152, 1280, 1408, 1536}

// avbShareMax is the most the two AVB classes may take together: 3/4.
const avbShareNum, avbShareDen = 3, 4

var _ driver.TSN = (*Port)(nil)

// idleSlope is ring n's DMAnCFG.IDLE_SLOPE (n = 1, 2): as set, or Linux's
// 0x200.
func (p *Port) idleSlope(n int) uint32 {
	if s := p.avbSlope[n]; s != 0 {
		return uint32(s)
	}
	return dmacfg_IDLE_SLOPE_HALF
}

// avbCheck refuses the shaper where the part has no AVB rings.
func (p *Port) avbCheck(what string) error {
	if p.closed {
		return p.errClosed()
	}
	if !p.prof.has(qAVB) {
		return fmt.Errorf("%s: %s has no AVB rings and no credit-based shaper (only the i.MX6SX, i.MX7D, i.MX8M, i.MX8QM, i.MX93 and S32V234 ENETs do)", what, p.prof.compatible)
	}
	return nil
}

// TSNCaps implements driver.TSN: three classes (the rings) on AVB parts,
// shapers on classes 1 and 2 when the port has those rings, no gating.
func (p *Port) TSNCaps() driver.TSNCaps {
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed || !p.prof.has(qAVB) {
		return driver.TSNCaps{}
	}
	c := driver.TSNCaps{TrafficClasses: len(p.tx), CBS: len(p.tx) > 1}
	for tc := 1; tc < len(p.tx); tc++ {
		c.CBSClasses = append(c.CBSClasses, tc)
	}
	return c
}

// fixedTCMap is the FEC's map: queue n is class n, and Linux's PCP to
// ring pick {0,0,1,1,1,2,2,2} for priorities 0-7.
func (p *Port) fixedTCMap() driver.TCMap {
	m := driver.TCMap{NumTC: len(p.tx)}
	pick := [8]uint8{0, 0, 1, 1, 1, 2, 2, 2}
	for prio := range m.PrioTC {
		m.PrioTC[prio] = min(pick[prio%8], uint8(len(p.tx)-1))
	}
	for q := range p.tx {
		m.Queues = append(m.Queues, driver.QueueRange{Count: 1, Offset: q})
	}
	return m
}

// SetTCMap implements driver.TSN: the FEC's classes are its rings, so
// only a map that puts queue n in class n is taken (any priority map);
// the zero map is that too.
func (p *Port) SetTCMap(m driver.TCMap) error {
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if err := p.avbCheck("traffic class map"); err != nil {
		return err
	}
	if m.NumTC == 0 {
		p.tcMap = driver.TCMap{}
		return nil
	}
	if err := m.Check(len(p.tx), len(p.tx)); err != nil {
		return err
	}
	for tc, r := range m.Queues {
		if r.Count != 1 || r.Offset != tc {
			return fmt.Errorf("traffic class map: class %d queues %d@%d: a FEC's class is its TX ring (FTYPE): give queues 1@0 1@1 1@2", tc, r.Count, r.Offset)
		}
	}
	m.Queues = append([]driver.QueueRange(nil), m.Queues...)
	p.tcMap = m
	return nil
}

// SetGateList implements driver.TSN: the FEC has no time gating; the zero
// list (gating off) is accepted.
func (p *Port) SetGateList(g driver.GateList) error {
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return p.errClosed()
	}
	if len(g.Entries) == 0 {
		return nil
	}
	return fmt.Errorf("gate list: %w: the FEC/ENET has no time-aware gates (802.1Qbv); the ENETC has", errors.ErrUnsupported)
}

// SetCBS implements driver.TSN: class tc (1 or 2, an AVB ring) gets the
// IDLE_SLOPE whose share of the link is nearest the idle slope asked,
// never more than it; 0 gives the class Linux's half back.
func (p *Port) SetCBS(tc int, idleSlopeKbps int64) error {
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if err := p.avbCheck("cbs"); err != nil {
		return err
	}
	if tc < 1 || tc >= len(p.tx) {
		return fmt.Errorf("cbs: traffic class %d: the AVB classes are TX rings 1 to %d of this port's %d (ring 0 is best effort)", tc, len(p.tx)-1, len(p.tx))
	}
	if idleSlopeKbps < 0 {
		return fmt.Errorf("cbs: idle slope %d kbit/s is negative", idleSlopeKbps)
	}
	var slope uint16
	if idleSlopeKbps != 0 {
		l := p.Link()
		if !l.Up || l.SpeedMbps <= 0 {
			return errors.New("cbs: the link is down: the shaper's share is of the link speed; set it once the link is up")
		}
		rate := int64(l.SpeedMbps) * 1000
		if idleSlopeKbps >= rate {
			return fmt.Errorf("cbs: idle slope %d kbit/s is the whole %d Mb/s link or more", idleSlopeKbps, l.SpeedMbps)
		}
		// share s/(s+512) <= kbps/rate  <=>  s*rate <= 512*kbps + s*kbps.
		for _, s := range idleSlopes {
			if int64(s)*(rate-idleSlopeKbps) <= 512*idleSlopeKbps {
				slope = s
			}
		}
		if slope == 0 {
			return fmt.Errorf("cbs: idle slope %d kbit/s is under the smallest share the ENET sets (1/513 of %d Mb/s, %d kbit/s)", idleSlopeKbps, l.SpeedMbps, (rate+512)/513)
		}
	}
	other := 3 - tc
	os := uint32(0)
	if other < len(p.tx) {
		os = p.idleSlope(other)
	}
	s := uint32(slope)
	if slope == 0 {
		s = dmacfg_IDLE_SLOPE_HALF
	}
	// s/(s+512) + o/(o+512) <= 3/4, in integers.
	if other < len(p.tx) && idleSlopeKbps != 0 &&
		avbShareDen*(s*(os+512)+os*(s+512)) > avbShareNum*(s+512)*(os+512) {
		return fmt.Errorf("cbs: class %d at IDLE_SLOPE %d (%.1f%%) and class %d at %d (%.1f%%) would take more than 75%% of the link, the most the two AVB classes may have", tc, s, share(s), other, os, share(os))
	}
	p.avbSlope[tc] = slope
	if p.started {
		p.regs.Write32(regDMAnCFG(tc), dmacfg_DMA_CLASS_EN|p.idleSlope(tc))
	}
	return nil
}

// share is IDLE_SLOPE s's share of the link in percent.
func share(s uint32) float64 { return 100 * float64(s) / float64(s+512) }

// regDMAnCFG is DMA1CFG or DMA2CFG.
func regDMAnCFG(n int) uint32 {
	if n == 2 {
		return regDMA2CFG
	}
	return regDMA1CFG
}

// TSNState implements driver.TSN: the fixed map and the shapers as
// DMAnCFG holds them.
func (p *Port) TSNState() (driver.TSNState, error) {
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if err := p.avbCheck("state"); err != nil {
		return driver.TSNState{}, err
	}
	st := driver.TSNState{TCMap: p.fixedTCMap()}
	if p.tcMap.NumTC != 0 {
		st.TCMap.PrioTC = p.tcMap.PrioTC
	}
	speed := int64(p.Link().SpeedMbps)
	for tc := 1; tc < len(p.tx); tc++ {
		v := p.regs.Read32(regDMAnCFG(tc))
		if v&dmacfg_DMA_CLASS_EN == 0 {
			continue
		}
		s := int64(v & 0xFFFF)
		st.CBS = append(st.CBS, driver.CBSState{TC: tc, Percent: int(100 * s / (s + 512)), IdleSlopeKbps: speed * 1000 * s / (s + 512)})
	}
	return st, nil
}

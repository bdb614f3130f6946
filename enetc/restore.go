package enetc

import (
	"errors"
	"fmt"
	"net"
	"sort"

	"github.com/gopmd/gopmd/driver"
)

// A function reset (resetFunction, after a stuck TX ring) puts every
// register and table of the function back at its power-on value.
// resetFunction programs again what New programs (port, MAC and its
// filters, parser, interface, SI, RSS) and, from what the driver kept of
// it, what was set since: the shapers, the MAC merge set-up and the MACs
// the PF set for its VFs. The gate list and the streams need the clock
// and the control BD ring, which may fail: the reset leaves them pending
// and Start loads them (restoreLocked) before it starts, failing, with
// each one named, while one does not load. State readers report what the
// device holds meanwhile: no gating, no such stream's counters. A list
// loaded again starts at its next cycle boundary after now, in phase with
// the one set (its base time is past); until then its gates stand open,
// as before any list.
// SetGateList, SetStream and DeleteStream replace or drop what is pending.
// Pause follows the link as it comes up at Start; the traffic class map is
// in each ring's TBMR, which Start writes; the 1588 timer is a function of
// its own, which this reset does not touch.

// saveBeforeReset keeps what the reset zeroes and the driver has only in
// the device: each stream's counters. A stream whose counters cannot be
// read is returned as an error (its counts start again from 0). Caller
// holds ctl.
func (p *Port) saveBeforeReset() error {
	var errs []error
	for _, h := range sortedHandles(p.qci.streams) {
		st, err := p.streamCountersLocked(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("stream %d's counters, read before the reset, are lost: %w", h, err))
			continue
		}
		if p.qci.base == nil {
			p.qci.base = map[int]driver.StreamStats{}
		}
		b := p.qci.base[h]
		b.Matching += st.Matching
		b.SDUDrops += st.SDUDrops
		b.GateDrops += st.GateDrops
		b.MeterDrops += st.MeterDrops
		p.qci.base[h] = b
	}
	return errors.Join(errs...)
}

// afterReset records what the reset cleared: the gate list and the
// streams become pending, and the shapers, the MAC merge set-up and the
// VFs' MACs are written again. Caller holds ctl; the port is configured
// again (configurePort) and stopped.
func (p *Port) afterReset() {
	if !p.pf {
		return
	}
	if p.tsn.gating {
		g := p.tsn.gates
		p.tsn.pending = &g
		p.tsn.gating = false
	}
	for h, s := range p.qci.streams {
		if p.qci.pending == nil {
			p.qci.pending = map[int]driver.Stream{}
		}
		p.qci.pending[h] = s
	}
	p.qci.streams = nil
	r := p.regs
	for tc, v := range p.tsn.cbs {
		if v[0] != 0 {
			r.Write32(regPTCCBSR1(tc), v[1])
			r.Write32(regPTCCBSR0(tc), v[0])
		}
	}
	if p.tsn.preemptOn {
		p.writePreemption(p.tsn.preempt)
	}
	for n, mac := range p.vfMAC {
		if mac != nil {
			r.Write32(regPSIPMAR0(n+1), macLo(mac))
			r.Write32(regPSIPMAR1(n+1), macHi(mac))
		}
	}
}

// restoreLocked loads the gate list and the streams a function reset
// left pending (see the top of this file) and reports, together with
// noted, each one that does not load: it stays pending. Caller holds ctl;
// the port is stopped.
func (p *Port) restoreLocked(noted error) error {
	errs := []error{noted}
	if g := p.tsn.pending; g != nil {
		if err := p.loadGateListLocked(*g); err != nil {
			errs = append(errs, fmt.Errorf("gate list: %w", err))
		} else {
			p.tsn.pending = nil
		}
	}
	for _, h := range sortedHandles(p.qci.pending) {
		if err := p.writeStreamLocked(p.qci.pending[h]); err != nil {
			errs = append(errs, fmt.Errorf("stream %d: %w", h, err))
			continue
		}
		delete(p.qci.pending, h)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("after the function reset that recovered a stuck TX ring, what it cleared could not all be set again, and the port stays stopped: %w; Start again to retry, or replace or drop it (SetGateList, SetStream, DeleteStream)", err)
	}
	return nil
}

// sortedHandles are the keys of m in order.
func sortedHandles(m map[int]driver.Stream) []int {
	hs := make([]int, 0, len(m))
	for h := range m {
		hs = append(hs, h)
	}
	sort.Ints(hs)
	return hs
}

// keepVFMAC records the MAC the PF set for VF n (PSIPMAR0/1(n+1)), which
// a function reset of the PF clears and afterReset writes again.
func (p *Port) keepVFMAC(n int, mac net.HardwareAddr) {
	p.vfMAC[n] = append(net.HardwareAddr(nil), mac...)
}

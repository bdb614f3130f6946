package enetc

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
)

// Stats implements driver.Port. Queue counters are the driver's; frames the
// device dropped for lack of a posted buffer (RBDCR(n)) are added to each RX
// queue as CauseNoBuffer. HW holds the SI counters and, on a PF, the eMAC
// counters under the reference's names (SIRFRM, RFRM, ...), RBDCR(n),
// the link state (link_up, link_speed_mbps) and the driver's own event
// counts (drv_*).
func (p *Port) Stats() driver.PortStats {
	p.lock()
	defer p.unlock()
	s := driver.PortStats{HW: map[string]uint64{}}
	for _, q := range p.rx {
		qs := q.ctr.Snapshot()
		dcr := uint64(p.regs.Read32(rxRingReg(q.idx, RBDCR)))
		qs.Drops[driver.CauseNoBuffer] += dcr
		s.HW[fmt.Sprintf("RBDCR(%d)", q.idx)] = dcr
		s.HW[fmt.Sprintf("drv_rx%d_bad_bd", q.idx)] = q.badBDs.Load()
		s.HW[fmt.Sprintf("drv_rx%d_skipped_bd", q.idx)] = q.skipped.Load()
		s.RxQueues = append(s.RxQueues, qs)
		s.Rx.Add(qs)
	}
	for _, q := range p.tx {
		qs := q.ctr.Snapshot()
		s.HW[fmt.Sprintf("drv_tx%d_doorbells", q.idx)] = q.doorbells.Load()
		s.HW[fmt.Sprintf("drv_tx%d_bad_ci", q.idx)] = q.badCI.Load()
		s.TxQueues = append(s.TxQueues, qs)
		s.Tx.Add(qs)
	}
	for _, c := range siCounters {
		s.HW[c.name] = p.regs.Read64(c.off)
	}
	if p.pf {
		for _, c := range macCounters {
			s.HW[c.name] = uint64(p.regs.Read32(c.off)) // Linux and DPDK read the low 32 bits
		}
	}
	l := p.link
	if l.Up {
		s.HW["link_up"] = 1
	} else {
		s.HW["link_up"] = 0
	}
	s.HW["link_speed_mbps"] = uint64(l.SpeedMbps)
	return s
}

// RegValue is one register and the value read from it.
type RegValue struct {
	RegDesc
	Value uint32
}

// DumpRegs reads every register of RegisterMap for the port's rings (a VF
// only its SI block), for the bring-up tool. It runs under the control lock,
// so never concurrently with MDIO.
func (p *Port) DumpRegs() []RegValue {
	p.lock()
	defer p.unlock()
	var out []RegValue
	for _, d := range RegisterMap(len(p.tx), len(p.rx)) {
		if d.PFOnly() && !p.pf {
			continue
		}
		if d.Block == "mdio" {
			continue // reading MDIO_DATA may have side effects; use MDIORead
		}
		out = append(out, RegValue{d, p.regs.Read32(d.Offset)})
	}
	return out
}

// RingState is the index state of one BD ring: the device's registers and
// the driver's own indices.
type RingState struct {
	Kind  string // "tx" or "rx"
	Index int
	Size  int
	// HWProducer and HWConsumer are TBPIR/TBCIR or RBPIR/RBCIR.
	HWProducer, HWConsumer uint32
	// NextToUse and NextToClean are the driver's indices (TX: next BD to
	// fill / to reclaim; RX: next BD to post / to read).
	NextToUse, NextToClean uint32
	Enabled                bool
}

// Rings reports every ring's indices. The driver's indices are read without
// synchronisation: call it while the queues are idle for exact values.
func (p *Port) Rings() []RingState {
	p.lock()
	defer p.unlock()
	var out []RingState
	for _, q := range p.tx {
		out = append(out, RingState{Kind: "tx", Index: q.idx, Size: len(q.bds),
			HWProducer: p.regs.Read32(txRingReg(q.idx, TBPIR)), HWConsumer: p.regs.Read32(txRingReg(q.idx, TBCIR)),
			NextToUse: q.ntu, NextToClean: q.ntc, Enabled: p.regs.Read32(txRingReg(q.idx, TBMR))&TBMR_EN != 0})
	}
	for _, q := range p.rx {
		out = append(out, RingState{Kind: "rx", Index: q.idx, Size: len(q.bds),
			HWProducer: p.regs.Read32(rxRingReg(q.idx, RBPIR)), HWConsumer: p.regs.Read32(rxRingReg(q.idx, RBCIR)),
			NextToUse: q.ntu, NextToClean: q.ntc, Enabled: p.regs.Read32(rxRingReg(q.idx, RBMR))&RBMR_EN != 0})
	}
	return out
}

// TxDoorbells is the number of TBPIR writes TX queue i made so far.
func (p *Port) TxDoorbells(i int) uint64 {
	if i < 0 || i >= len(p.tx) {
		return 0
	}
	return p.tx[i].doorbells.Load()
}

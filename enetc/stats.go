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
// counts (drv_*). A closed port returns the counters Close read last.
func (p *Port) Stats() driver.PortStats {
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.final
	}
	return p.statsLocked()
}

// statsLocked reads the counters. Caller holds the control lock.
func (p *Port) statsLocked() driver.PortStats {
	s := driver.PortStats{HW: map[string]uint64{}}
	for _, q := range p.rx {
		qs := q.ctr.Snapshot()
		dcr := uint64(p.regs.Read32(rxRingReg(q.idx, regRBDCR)))
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
		s.HW[fmt.Sprintf("drv_tx%d_mdio_waits", q.idx)] = q.mdioWaits.Load()
		s.HW[fmt.Sprintf("drv_tx%d_mdio_wait_ns", q.idx)] = q.mdioWaitNs.Load()
		s.HW[fmt.Sprintf("drv_tx%d_mdio_wait_max_ns", q.idx)] = q.mdioWaitMaxNs.Load()
		s.HW[fmt.Sprintf("drv_tx%d_mdio_wait_timeouts", q.idx)] = q.mdioWaitTimeouts.Load()
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
	if p.closed {
		return nil
	}
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

// Rings reports every ring's indices (driver.RingState). The driver's
// indices are read without synchronisation: call it while the queues are
// idle for exact values.
func (p *Port) Rings() []driver.RingState {
	p.lock()
	defer p.unlock()
	if p.closed {
		return nil
	}
	var out []driver.RingState
	for _, q := range p.tx {
		out = append(out, driver.RingState{Kind: "tx", Queue: q.idx, Size: len(q.bds), IOVA: q.iova, BDSize: bdSize,
			NextToUse: int(q.ntu), NextToClean: int(q.ntc), Owned: int((q.ntu - q.ntc) & q.mask),
			Doorbells:      q.doorbells.Load(),
			Enabled:        p.regs.Read32(txRingReg(q.idx, regTBMR))&tbmr_EN != 0,
			DeviceProducer: int(p.regs.Read32(txRingReg(q.idx, regTBPIR))),
			DeviceConsumer: int(p.regs.Read32(txRingReg(q.idx, regTBCIR)))})
	}
	for _, q := range p.rx {
		out = append(out, driver.RingState{Kind: "rx", Queue: q.idx, Size: len(q.bds), IOVA: q.iova, BDSize: bdSize,
			NextToUse: int(q.ntu), NextToClean: int(q.ntc), Owned: int((q.ntu - q.ntc) & q.mask),
			Enabled:        p.regs.Read32(rxRingReg(q.idx, regRBMR))&rbmr_EN != 0,
			DeviceProducer: int(p.regs.Read32(rxRingReg(q.idx, regRBPIR))),
			DeviceConsumer: int(p.regs.Read32(rxRingReg(q.idx, regRBCIR)))})
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

package enetc

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// counterPoll is how often a started PF's counters are read and
// accumulated (besides every Stats call). The eMAC counters are 64-bit
// registers, read in one access (as Linux does since its 2025 change,
// enetc_port_rd64, §2.8); the 32-bit ones (RBDCR, UFDMF, MFDMF) count
// frames, at most 3.7 million a second at 2.5 Gb/s, so none can wrap twice
// between two reads.
const counterPoll = 2 * time.Second

// acc32 accumulates a wrapping 32-bit device counter into a 64-bit total.
// The device's counters start at 0 after a function reset (vfio-pci resets
// the function when the device is opened; the model starts at 0), so last
// starts at 0 and the totals count from the reset.
type acc32 struct {
	last  uint32
	total uint64
}

func (a *acc32) add(v uint32) uint64 {
	a.total += uint64(v - a.last) // modulo 2^32: one wrap between reads is exact
	a.last = v
	return a.total
}

// acc64 keeps a 64-bit device counter's total across function resets,
// which zero the register.
type acc64 struct {
	last  uint64
	total uint64
}

func (a *acc64) add(v uint64) uint64 {
	a.total += v - a.last
	a.last = v
	return a.total
}

// readCounter64 reads a 64-bit counter register: one 64-bit load on a
// 64-bit CPU; on a 32-bit one (where a 64-bit read is two loads, and a
// carry between them tears it) high word, low word, high word again until
// the high word holds still, as Linux's enetc_rd_reg64 does without
// 64-bit loads.
func (p *Port) readCounter64(off uint32) uint64 {
	if strconv.IntSize == 64 {
		return p.regs.Read64(off)
	}
	hi := p.regs.Read32(off + 4)
	for range 3 {
		lo := p.regs.Read32(off)
		hi2 := p.regs.Read32(off + 4)
		if hi2 == hi {
			return uint64(hi)<<32 | uint64(lo)
		}
		hi = hi2
	}
	return uint64(hi) << 32 // still moving after three tries: the low word is not to be trusted
}

// accumulateLocked reads every device counter the driver keeps a total of
// (RBDCR of each RX ring; on a PF the 64-bit eMAC counters, UFDMF and
// MFDMF) and adds what each moved since the last read. Caller holds ctl.
func (p *Port) accumulateLocked() {
	if len(p.dcrAcc) != len(p.rx) {
		p.dcrAcc = make([]acc32, len(p.rx))
	}
	for i, q := range p.rx {
		p.dcrAcc[i].add(p.regs.Read32(rxRingReg(q.idx, regRBDCR)))
	}
	if !p.pf {
		return
	}
	if len(p.macAcc) != len(macCounters) {
		p.macAcc = make([]acc64, len(macCounters))
	}
	for i, c := range macCounters {
		p.macAcc[i].add(p.readCounter64(c.off)) // 64-bit registers (§2.8)
	}
	p.ufdmf.add(p.regs.Read32(regUFDMF))
	p.mfdmf.add(p.regs.Read32(regMFDMF))
}

// countersResetLocked follows a function reset, which zeroes the device's
// counters: the totals keep what was counted before it (the caller
// accumulated just before the reset). Caller holds ctl.
func (p *Port) countersResetLocked() {
	for i := range p.dcrAcc {
		p.dcrAcc[i].last = 0
	}
	for i := range p.macAcc {
		p.macAcc[i].last = 0
	}
	p.ufdmf.last, p.mfdmf.last = 0, 0
}

// sharedNames maps the names shared by every driver (driver.HWStatNames)
// to the eMAC counters; rx_no_buffer is the sum of RBDCR(n).
var sharedNames = []struct{ shared, ref string }{
	{"rx_octets", "REOCT"}, {"rx_packets", "RPKT"}, {"rx_frames_ok", "RFRM"},
	{"rx_broadcast", "RBCA"}, {"rx_multicast", "RMCA"}, {"rx_crc_errors", "RFCS"},
	{"rx_undersize", "RUND"}, {"rx_oversize", "ROVR"}, {"rx_fragment", "RFRG"},
	{"rx_jabber", "RJBR"}, {"rx_pause", "RXPF"}, {"rx_dropped", "RDRP"},
	{"tx_octets", "TEOCT"}, {"tx_packets", "TPKT"}, {"tx_frames_ok", "TFRM"},
	{"tx_broadcast", "TBCA"}, {"tx_multicast", "TMCA"}, {"tx_undersize", "TUND"},
	{"tx_pause", "TXPF"}, {"tx_errors", "TERR"},
}

// Stats implements driver.Port. Queue counters are the driver's; frames the
// device dropped for lack of a posted buffer (RBDCR(n)) are added to each RX
// queue as CauseNoBuffer. On a PF, frames the MAC or the port discarded
// before any ring are added to Rx (not to a queue: no ring saw them) by
// cause: CauseUndersize (RUND), CauseMACDiscard (RDRP: receive disabled,
// link down, FIFO full) and CauseFiltered (UFDMF + MFDMF, the MAC address
// filter). HW holds the SI counters and, on a PF, the eMAC counters under
// the reference's names (SIRFRM, RFRM, ...), RBDCR(n), UFDMF, MFDMF, the
// link state (link_up, link_speed_mbps) and the driver's own event counts
// (drv_*). The eMAC counters are read as the 64-bit registers they are;
// every 32-bit device counter is accumulated into a 64-bit total (here and
// every counterPoll while started), so none wraps. A closed port
// returns the counters Close read last.
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
	p.accumulateLocked()
	s := driver.PortStats{HW: map[string]uint64{}}
	for i, q := range p.rx {
		qs := q.ctr.Snapshot()
		dcr := p.dcrAcc[i].total
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
		for i, c := range macCounters {
			s.HW[c.name] = p.macAcc[i].total
		}
		s.HW["UFDMF"], s.HW["MFDMF"] = p.ufdmf.total, p.mfdmf.total
		s.Rx.Drops[driver.CauseUndersize] += s.HW["RUND"]
		s.Rx.Drops[driver.CauseMACDiscard] += s.HW["RDRP"]
		s.Rx.Drops[driver.CauseFiltered] += p.ufdmf.total + p.mfdmf.total
		p.txErrorsLocked(&s.Tx, s.HW["TERR"])
		for _, m := range sharedNames {
			s.HW[m.shared] = s.HW[m.ref]
		}
		var dcr uint64
		for i := range p.rx {
			dcr += p.dcrAcc[i].total
		}
		s.HW["rx_no_buffer"] = dcr
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

// txErrorsLocked moves the frames the MAC failed to send (terr: TERR, its
// transmit error count, a TX DMA fault among them) from tx.Packets, which
// counts the frames whose BDs the device consumed, to tx.Drops[CauseFrame]:
// a ring's consumer index passes a frame whether the MAC sent it or not,
// so only TERR tells them apart, for the port, not a ring (the queues'
// counters keep what their rings consumed; Bytes keeps the failed
// frames' bytes, whose lengths TERR does not give). An error is moved once the
// driver counted as many frames consumed since the last look (the device
// counts a failed frame before its consumer index passes it), so Packets
// never goes down. On a PF whose VFs transmit, TERR counts their errors
// too. Caller holds ctl.
func (p *Port) txErrorsLocked(tx *driver.QueueStats, terr uint64) {
	grew := tx.Packets - p.txConsumed // frames consumed since the last look
	p.txConsumed = tx.Packets
	p.txErrTaken = min(terr, p.txErrTaken+grew)
	tx.Packets -= p.txErrTaken
	tx.Drops[driver.CauseFrame] += p.txErrTaken
}

// Registers implements driver.RegisterDumper: every register of
// RegisterMap for the port's rings (a VF only its SI block), less the MDIO
// block, read once. It runs under the control lock, so never concurrently
// with MDIO.
func (p *Port) Registers() []driver.RegValue {
	p.lock()
	defer p.unlock()
	if p.closed {
		return nil
	}
	var out []driver.RegValue
	for _, d := range RegisterMap(len(p.tx), len(p.rx)) {
		if pfOnly(d) && !p.pf {
			continue
		}
		if d.Block == "mdio" {
			continue // reading MDIO_DATA may have side effects; use MDIORead
		}
		out = append(out, driver.RegValue{RegDesc: d, Value: p.regs.Read32(d.Offset)})
	}
	return out
}

// Rings reports every ring's indices (driver.RingState). The driver's
// indices are read without synchronisation: call it while the queues are
// idle for exact values.
func (p *Port) Rings() []driver.RingState { return p.rings(false) }

// LiveRings implements driver.LiveInspector: Rings without the driver's
// indices, safe while the queues are polled.
func (p *Port) LiveRings() []driver.RingState { return p.rings(true) }

// rings reports every ring, with the driver's indices unless live, and
// each ring's mode, producer-index and consumer-index registers.
func (p *Port) rings(live bool) []driver.RingState {
	p.lock()
	defer p.unlock()
	if p.closed {
		return nil
	}
	m := rawRegisterMap(p.dev)
	var out []driver.RingState
	for _, q := range p.tx {
		r := driver.RingState{Kind: "tx", Queue: q.idx, Size: len(q.bds), IOVA: q.iova, BDSize: bdSize,
			NextToUse: -1, NextToClean: -1, Owned: -1, Doorbells: q.doorbells.Load(),
			Regs: driver.ReadRegs(p.regs, m, txRingReg(q.idx, regTBMR), txRingReg(q.idx, regTBPIR), txRingReg(q.idx, regTBCIR))}
		if !live { // the queue's goroutine owns its indices
			r.NextToUse, r.NextToClean, r.Owned = int(q.ntu), int(q.ntc), int((q.ntu-q.ntc)&q.mask)
		}
		out = append(out, r)
	}
	for _, q := range p.rx {
		r := driver.RingState{Kind: "rx", Queue: q.idx, Size: len(q.bufs), IOVA: q.iova, BDSize: bdSize << q.shift,
			NextToUse: -1, NextToClean: -1, Owned: -1,
			Regs: driver.ReadRegs(p.regs, m, rxRingReg(q.idx, regRBMR), rxRingReg(q.idx, regRBPIR), rxRingReg(q.idx, regRBCIR))}
		if !live {
			r.NextToUse, r.NextToClean, r.Owned = int(q.ntu), int(q.ntc), int((q.ntu-q.ntc)&q.mask)
		}
		out = append(out, r)
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

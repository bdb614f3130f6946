package fec

import (
	"fmt"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// counterPoll is how often a started port's MIB counters are read and
// accumulated (besides every Stats call): RMON_R_OCTETS wraps every 34 s
// at 1 Gb/s, so no counter can wrap twice between two reads.
const counterPoll = 4 * time.Second

// Stats sums the queue counters and reads the MIB counters into HW by
// their reference names. The MIB registers are treated as wrapping 32-bit
// counters and accumulated as deltas into 64-bit totals (here, every
// counterPoll while started, and around every MAC reset). Frames the MAC
// discarded before a ring are added to Rx by cause (not to a queue: no
// ring saw them): CauseNoBuffer (IEEE_R_DROP), CauseUndersize
// (RMON_R_UNDERSIZE), CauseMACDiscard (RMON_R_DROP: receive disabled,
// link down, address filter) and CauseDMAFault (a receive DMA bus error,
// EIR.EBERR: busErrorLocked). A closed port returns the counters Close
// read last.
func (p *Port) Stats() driver.PortStats {
	p.statsMu.Lock()
	defer p.statsMu.Unlock()
	if p.shut.Load() {
		return p.final
	}
	return p.statsLocked()
}

// busErrorLocked counts a DMA bus error (EIR.EBERR) found set, and clears
// it. A receive DMA that faults costs its frame and leaves no trace in the
// ring or the MIB counters, only EBERR (docs/hardware-fec.md §2.1): each
// time the bit is found set counts one frame, under CauseDMAFault on Rx.
// Reclaim clears the bit itself when it takes back a TX frame the MAC
// marked (TXE|FE, a transmit DMA fault, counted there as a frame error),
// so such a fault counts once (legacy BDs carry no TXE: there it counts
// here). The bit is read by Stats, by the counter
// poll (every counterPoll), at each link poll and before each MAC reset:
// faults closer together than that count once. Caller holds statsMu.
func (p *Port) busErrorLocked() {
	if p.regs.Read32(regEIR)&eir_EBERR != 0 {
		p.regs.Write32(regEIR, eir_EBERR) // W1C: only this bit
		p.busErrs++
	}
}

// accumulateLocked adds what every MIB counter moved since the last
// read to its total. Caller holds statsMu.
func (p *Port) accumulateLocked() {
	for i, n := range mibNames {
		if n == "" {
			continue
		}
		v := p.regs.Read32(regMIB + uint32(4*i))
		p.mibSum[i] += uint64(v - p.mibLast[i]) // wraps correctly in 32 bits
		p.mibLast[i] = v
	}
}

// mibRebaseLocked takes the counters' present values as the base of the
// next deltas, after a reset that may have zeroed them. Caller holds
// statsMu.
func (p *Port) mibRebaseLocked() {
	for i, n := range mibNames {
		if n != "" {
			p.mibLast[i] = p.regs.Read32(regMIB + uint32(4*i))
		}
	}
}

// sharedNames maps the names shared by every driver (driver.HWStatNames)
// to the MIB counters.
var sharedNames = []struct{ shared, ref string }{
	{"rx_octets", "RMON_R_OCTETS"}, {"rx_packets", "RMON_R_PACKETS"}, {"rx_frames_ok", "IEEE_R_FRAME_OK"},
	{"rx_broadcast", "RMON_R_BC_PKT"}, {"rx_multicast", "RMON_R_MC_PKT"}, {"rx_crc_errors", "IEEE_R_CRC"},
	{"rx_undersize", "RMON_R_UNDERSIZE"}, {"rx_oversize", "RMON_R_OVERSIZE"}, {"rx_fragment", "RMON_R_FRAG"},
	{"rx_jabber", "RMON_R_JAB"}, {"rx_pause", "IEEE_R_FDXFC"}, {"rx_dropped", "RMON_R_DROP"},
	{"rx_no_buffer", "IEEE_R_DROP"},
	{"tx_octets", "RMON_T_OCTETS"}, {"tx_packets", "RMON_T_PACKETS"}, {"tx_frames_ok", "IEEE_T_FRAME_OK"},
	{"tx_broadcast", "RMON_T_BC_PKT"}, {"tx_multicast", "RMON_T_MC_PKT"}, {"tx_undersize", "RMON_T_UNDERSIZE"},
	{"tx_pause", "IEEE_T_FDXFC"}, {"tx_errors", "IEEE_T_MACERR"},
}

// statsLocked reads the counters. Caller holds statsMu.
func (p *Port) statsLocked() driver.PortStats {
	var s driver.PortStats
	for _, q := range p.rx {
		qs := q.Stats()
		s.RxQueues = append(s.RxQueues, qs)
		s.Rx.Add(qs)
	}
	for _, q := range p.tx {
		qs := q.Stats()
		s.TxQueues = append(s.TxQueues, qs)
		s.Tx.Add(qs)
	}
	p.accumulateLocked()
	p.busErrorLocked()
	s.HW = make(map[string]uint64, len(mibNames))
	for i, n := range mibNames {
		if n != "" {
			s.HW[n] = p.mibSum[i]
		}
	}
	// Frames the MAC dropped for want of an empty BD: the device's own
	// count, so it stands for no_buffer.
	s.Rx.Drops[driver.CauseNoBuffer] += s.HW["IEEE_R_DROP"]
	s.Rx.Drops[driver.CauseUndersize] += s.HW["RMON_R_UNDERSIZE"]
	s.Rx.Drops[driver.CauseMACDiscard] += s.HW["RMON_R_DROP"]
	s.Rx.Drops[driver.CauseDMAFault] += p.busErrs
	s.HW["drv_rx_bus_errors"] = p.busErrs
	for _, q := range p.tx {
		s.HW[fmt.Sprintf("drv_tx%d_doorbells", q.idx)] = q.doorbells.Load()
		s.HW[fmt.Sprintf("drv_tx%d_rekicks", q.idx)] = q.rekicks.Load() // ERR006358 TDAR re-writes
	}
	for _, m := range sharedNames {
		s.HW[m.shared] = s.HW[m.ref]
	}
	return s
}

// Registers implements driver.RegisterDumper: every register of
// RegisterMap that is not a MIB counter (reading those has no side effect,
// but they are Stats' business), read once. Reading EIR does not clear it.
func (p *Port) Registers() []driver.RegValue {
	if p.shut.Load() {
		return nil
	}
	var out []driver.RegValue
	for _, d := range RegisterMap() {
		if d.Offset >= regMIB && d.Offset < regMIBEnd {
			continue
		}
		if int(d.Offset)+4 > p.regs.Size() {
			continue
		}
		out = append(out, driver.RegValue{RegDesc: d, Value: p.regs.Read32(d.Offset)})
	}
	return out
}

// Rings reports every ring's indices (driver.RingState). The indices are
// the queues' own and exact only while their goroutines are quiet.
func (p *Port) Rings() []driver.RingState { return p.rings(false) }

// LiveRings implements driver.LiveInspector: Rings without the driver's
// indices, safe while the queues are polled.
func (p *Port) LiveRings() []driver.RingState { return p.rings(true) }

// rings reports every ring, with the driver's indices unless live, and
// each ring's descriptor-active register (RDARn, TDARn).
func (p *Port) rings(live bool) []driver.RingState {
	if p.shut.Load() {
		return nil
	}
	m := rawRegisterMap(p.dev)
	var out []driver.RingState
	for _, q := range p.rx {
		r := driver.RingState{Kind: "rx", Queue: q.idx, Size: q.ring.size, IOVA: q.ring.iova,
			BDSize: q.ring.stride * 4, NextToUse: -1, NextToClean: -1, Owned: -1,
			Doorbells: q.doorbells.Load(), Regs: driver.ReadRegs(p.regs, m, q.rdar)}
		if !live { // the queue's goroutine owns its indices
			r.NextToUse, r.NextToClean, r.Owned = q.ntu, q.ntc, q.posted
		}
		out = append(out, r)
	}
	for _, q := range p.tx {
		r := driver.RingState{Kind: "tx", Queue: q.idx, Size: q.ring.size, IOVA: q.ring.iova,
			BDSize: q.ring.stride * 4, NextToUse: -1, NextToClean: -1, Owned: -1,
			Doorbells: q.doorbells.Load(), Regs: driver.ReadRegs(p.regs, m, q.tdar)}
		if !live {
			r.NextToUse, r.NextToClean, r.Owned = q.ntu, q.ntc, q.inFlight
		}
		out = append(out, r)
	}
	return out
}

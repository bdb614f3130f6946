package model

import (
	"sync"
	"sync/atomic"

	"github.com/gopmd/gopmd/wire"
)

// Frame preemption (docs/hardware-enetc.md §13.4): the MAC merge sublayer
// as Linux's enetc_ethtool.c drives it. MMCSR holds the settings (ME merge
// enable, VDIS verify disable, VT verify time in ms, RAFS the partner's
// additional fragment size) and the state (LPS supported, LPE enabled, LPA
// active, VSTS the verify state); PFPMR.PMACE turns the pMAC on, the
// receive side that reassembles; PTCFPR(tc).FPE makes class tc
// preemptable; MMFAECR, MMFSECR, MMFAOCR, MMFCRXR, MMFCTXR and MMHCR count.
//
// Verification: with ME set and VDIS clear the model sends a verify
// mPacket on its wire (if the wire carries mPackets, wire.MergeWire); a
// partner whose pMAC is on answers with a respond mPacket and the state
// is "succeeded"; with no answer it is "failed" once three verify times
// have passed on the chip timer. Merging is active (LPA) with ME set, the
// link up and verification succeeded or disabled.
//
// Preemption: while merging is active and the wire carries mPackets, a
// frame of a preemptable class leaves as mPackets: the scheduler (tsn.go)
// fits it into the gaps that frames already given the wire leave, in
// fragments of at least 64*(1+RAFS) bytes (mCRC included) with at least
// 64 bytes (FCS included) for the last, so an express frame passes
// between two fragments. An express frame scheduled after a preemptable
// one waits for its end: the model splits a frame only around what was on
// the wire's schedule before it. The receiving pMAC reassembles: SMD-S
// starts a frame, SMD-C continues it with the next fragment count, the
// final fragment delivers it; a continuation out of sequence is an
// assembly error (MMFAECR), an mPacket reaching a port whose pMAC is off
// an SMD error (MMFSECR), and each is dropped counted.
const (
	regPTCFPR  = 0x11910 // PTCFPR(tc) at +4*tc
	regMMFAECR = 0x11F08
	regMMFSECR = 0x11F0C
	regMMFAOCR = 0x11F10
	regMMFCRXR = 0x11F14
	regMMFCTXR = 0x11F18
	regMMHCR   = 0x11F1C

	ptcfpr_FPE     = 1 << 31
	pfpmr_PMACE    = 1 << 1
	mmcsr_LPS      = 1 << 0
	mmcsr_LPE      = 1 << 1
	mmcsr_LPA      = 1 << 2
	mmcsr_RAFS     = 3 << 8
	mmcsr_ME       = 1 << 16
	mmcsr_VDIS     = 1 << 17
	mmcsr_VSTS_SH  = 18
	mmcsr_VSTS     = 7 << mmcsr_VSTS_SH
	mmcsr_VT_SH    = 23
	mmcsr_VT       = 0x7F << mmcsr_VT_SH
	mmcsr_SETTINGS = mmcsr_RAFS | mmcsr_ME | mmcsr_VDIS | mmcsr_VT
	sipcapr0_QBU   = 1 << 3

	// VSTS values (Linux enetc_get_mm_state's mapping).
	vstsDisabled  = 0
	vstsInitial   = 1
	vstsVerifying = 2
	vstsSucceeded = 3
	vstsFailed    = 4

	verifyLimit = 3 // verify attempts before "failed" (802.3br's verifyLimit)
)

// MAC merge counters, in register order.
const (
	mmAssErr = iota
	mmSMDErr
	mmAssOK
	mmFragRx
	mmFragTx
	mmHold
	mmCounters
)

// mergeState is the MAC merge sublayer's state.
type mergeState struct {
	mu       sync.Mutex
	vsts     uint32
	vStart   int64 // timer time verification started, ns
	txFrame  uint8 // frame count of the next preemptable frame, mod 4
	rxActive bool
	rxFrame  uint8
	rxFrag   uint8
	rxBuf    []byte
	cnt      [mmCounters]atomic.Uint64
}

// timerNow is the chip timer's time, or 0 without a timer.
func (d *Device) timerNow() int64 {
	if t := d.chip.Timer(); t != nil {
		return int64(t.Time())
	}
	return 0
}

// mmcsrWrite takes the settings of an MMCSR write and starts verification
// when merging turns on with it.
func (d *Device) mmcsrWrite(v uint32) {
	m := &d.merge
	m.mu.Lock()
	old := d.get(regMMCSR)
	v &= mmcsr_SETTINGS
	start := false
	switch {
	case v&mmcsr_ME == 0:
		m.vsts = vstsInitial
	case v&mmcsr_VDIS != 0:
		m.vsts = vstsDisabled
	case old&mmcsr_ME == 0 || old&mmcsr_VDIS != 0 || m.vsts == vstsFailed:
		m.vsts, m.vStart, start = vstsVerifying, d.timerNow(), true
	}
	d.set(regMMCSR, v)
	d.mmStatusLocked()
	m.mu.Unlock()
	d.tsnUpdate()
	if start {
		if mw, ok := d.out.Load().w.(wire.MergeWire); ok {
			mw.TransmitMPacket(wire.MPacket{SMD: wire.SMDV, Data: make([]byte, 60), Final: true})
		}
	}
}

// mmStatusLocked writes MMCSR's state bits from the settings and the
// verify state (merge.mu held).
func (d *Device) mmStatusLocked() {
	m := &d.merge
	v := d.get(regMMCSR) & mmcsr_SETTINGS
	if m.vsts == vstsVerifying && d.get(regMMCSR)&mmcsr_VT != 0 {
		vt := int64(v&mmcsr_VT>>mmcsr_VT_SH) * 1_000_000
		if d.timerNow()-m.vStart >= verifyLimit*vt {
			m.vsts = vstsFailed
		}
	}
	v |= mmcsr_LPS | m.vsts<<mmcsr_VSTS_SH
	if v&mmcsr_ME != 0 {
		v |= mmcsr_LPE
		if d.carrier() && (m.vsts == vstsDisabled || m.vsts == vstsSucceeded) {
			v |= mmcsr_LPA
		}
	}
	d.set(regMMCSR, v)
}

// mmcsrRead is MMCSR with the verify state brought up to date.
func (d *Device) mmcsrRead() uint32 {
	m := &d.merge
	m.mu.Lock()
	defer m.mu.Unlock()
	d.mmStatusLocked()
	return d.get(regMMCSR)
}

// mergeActive reports whether preemptable frames may be preempted now.
func (d *Device) mergeActive() bool {
	return d.mmcsrRead()&mmcsr_LPA != 0
}

// preemptable reports whether class tc's frames are preemptable now.
func (d *Device) preemptable(tc int) bool {
	return d.get(regPTCFPR+4*uint32(tc))&ptcfpr_FPE != 0 && d.mergeActive()
}

// mergeOn reports whether preemption may change a frame's schedule: merge
// enabled and some class preemptable.
func (d *Device) mergeOn() bool {
	if d.get(regMMCSR)&mmcsr_ME == 0 {
		return false
	}
	for tc := 0; tc < TrafficClasses; tc++ {
		if d.get(regPTCFPR+4*uint32(tc))&ptcfpr_FPE != 0 {
			return true
		}
	}
	return false
}

// minFragment is the smallest non-final fragment's data bytes the
// partner takes: 64*(1+RAFS) with the 4-byte mCRC.
func (d *Device) minFragment() int {
	return 64*(1+int(d.get(regMMCSR)&mmcsr_RAFS>>8)) - 4
}

// ReceiveMPacket takes one mPacket from the wire: it implements
// wire.MergePort.
func (d *Device) ReceiveMPacket(p wire.MPacket) {
	m := &d.merge
	switch p.SMD {
	case wire.SMDV:
		if d.pf && d.get(regPFPMR)&pfpmr_PMACE != 0 {
			if mw, ok := d.out.Load().w.(wire.MergeWire); ok {
				mw.TransmitMPacket(wire.MPacket{SMD: wire.SMDR, Data: make([]byte, 60), Final: true})
			}
		}
		return
	case wire.SMDR:
		m.mu.Lock()
		if m.vsts == vstsVerifying {
			m.vsts = vstsSucceeded
			d.mmStatusLocked()
		}
		m.mu.Unlock()
		d.tsnUpdate()
		return
	}
	if !d.pf || d.get(regPFPMR)&pfpmr_PMACE == 0 {
		m.cnt[mmSMDErr].Add(1) // a preemptable mPacket, and no pMAC to take it
		return
	}
	var deliver []byte
	m.mu.Lock()
	if k := index4(wire.SMDS, p.SMD); k >= 0 {
		if m.rxActive {
			m.cnt[mmAssErr].Add(1) // the frame before never ended
		}
		m.rxActive, m.rxFrame, m.rxFrag = true, uint8(k), 0
		m.rxBuf = append(m.rxBuf[:0], p.Data...)
	} else if k := index4(wire.SMDC, p.SMD); k >= 0 {
		if !m.rxActive || uint8(k) != m.rxFrame || p.Frag != wire.FragCount[m.rxFrag] {
			m.cnt[mmAssErr].Add(1)
			m.rxActive = false
			m.mu.Unlock()
			return
		}
		m.cnt[mmFragRx].Add(1)
		m.rxFrag = (m.rxFrag + 1) % 4
		m.rxBuf = append(m.rxBuf, p.Data...)
	} else {
		m.cnt[mmSMDErr].Add(1)
		m.mu.Unlock()
		return
	}
	if p.Final {
		if m.rxFrag != 0 || index4(wire.SMDC, p.SMD) >= 0 {
			m.cnt[mmAssOK].Add(1)
		}
		m.rxActive = false
		deliver = append([]byte(nil), m.rxBuf...)
	}
	m.mu.Unlock()
	if deliver != nil {
		d.Receive(deliver)
	}
}

func index4(a [4]byte, b byte) int {
	for i, v := range a {
		if v == b {
			return i
		}
	}
	return -1
}

// mergeCounter reads MAC merge counter register off.
func (d *Device) mergeCounter(off uint32) uint32 {
	return uint32(d.merge.cnt[(off-regMMFAECR)/4].Load())
}

// mergeReset puts the sublayer back to its power-on state.
func (d *Device) mergeReset() {
	m := &d.merge
	m.mu.Lock()
	m.vsts, m.rxActive, m.txFrame = vstsInitial, false, 0
	if d.pf { // port registers: a VF's window has none
		d.set(regMMCSR, mmcsr_LPS|vstsInitial<<mmcsr_VSTS_SH)
	}
	m.mu.Unlock()
}

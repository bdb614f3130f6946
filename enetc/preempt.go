package enetc

import (
	"errors"
	"fmt"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// Frame preemption (§13.4): the MAC merge sublayer as Linux's
// enetc_ethtool.c sets it up for ethtool --set-mm and mqprio's fp: MMCSR's
// merge enable, verify disable, verify time (ms) and the partner's
// additional fragment size; PFPMR.PMACE for the pMAC; PTCFPR(tc).FPE for
// each preemptable class. The verify handshake runs in hardware.
const (
	regMMCSR   = portBase + 0x1F00
	regMMFAECR = portBase + 0x1F08 // MMFSECR, MMFAOCR, MMFCRXR, MMFCTXR, MMHCR follow, 4 apart

	pfpmr_PMACE   = 1 << 1
	ptcfpr_FPE    = 1 << 31
	mmcsr_LPS     = 1 << 0
	mmcsr_LPE     = 1 << 1
	mmcsr_LPA     = 1 << 2
	mmcsr_RAFS_SH = 8
	mmcsr_RAFS    = 3 << mmcsr_RAFS_SH
	mmcsr_ME      = 1 << 16
	mmcsr_VDIS    = 1 << 17
	mmcsr_VSTS_SH = 18
	mmcsr_VT_SH   = 23
	mmcsr_VT      = 0x7F << mmcsr_VT_SH
)

// PTCFPR(tc): traffic class tc's frame preemption register.
func regPTCFPR(tc int) uint32 { return portBase + 0x1910 + 4*uint32(tc) }

var _ driver.Preemption = (*Port)(nil)

// verifyStatus names MMCSR.VSTS as Linux's enetc_get_mm_state does.
var verifyStatus = [...]string{driver.VerifyDisabled, driver.VerifyInitial, driver.VerifyVerifying, driver.VerifySucceeded, driver.VerifyFailed}

// SetPreemption implements driver.Preemption: the preemptable classes
// first, then the pMAC, then MMCSR (merge enable starts verification).
// Linux's limits: verify time 1-128 ms in whole ms, additional fragment
// size 0-3.
func (p *Port) SetPreemption(c driver.PreemptConfig) error {
	p.lock()
	defer p.unlock()
	if err := p.tsnCheck("preemption"); err != nil {
		return err
	}
	if p.regs.Read32(regSIPCAPR0)&sipcapr0_QBU == 0 {
		return errors.New("preemption: this port has no MAC merge sublayer (SIPCAPR0.QBU clear)")
	}
	vt := c.VerifyTime
	if vt == 0 {
		vt = 10 * time.Millisecond // ethtool's default
	}
	if vt < time.Millisecond || vt > 128*time.Millisecond || vt%time.Millisecond != 0 {
		return fmt.Errorf("preemption: verify-time %v: give whole milliseconds from 1 to 128 (MMCSR.VT)", vt)
	}
	if c.AddFragSize < 0 || c.AddFragSize > 3 {
		return fmt.Errorf("preemption: additional fragment size %d: give 0 to 3 (fragments of at least 64, 128, 192 or 256 bytes; MMCSR.RAFS)", c.AddFragSize)
	}
	c.VerifyTime = vt
	p.writePreemption(c)
	p.tsn.preempt, p.tsn.preemptOn = c, true
	return nil
}

// writePreemption programs c, checked (its VerifyTime given), into the
// classes, the pMAC and MMCSR (SetPreemption, and again after a function
// reset). Caller holds ctl.
func (p *Port) writePreemption(c driver.PreemptConfig) {
	r := p.regs
	for tc := range tsnTrafficClasses {
		v := r.Read32(regPTCFPR(tc)) &^ ptcfpr_FPE
		if c.PreemptableTCs&(1<<tc) != 0 {
			v |= ptcfpr_FPE
		}
		r.Write32(regPTCFPR(tc), v)
	}
	pf := r.Read32(regPFPMR) &^ pfpmr_PMACE
	if c.Enabled {
		pf |= pfpmr_PMACE
	}
	r.Write32(regPFPMR, pf)
	v := r.Read32(regMMCSR) &^ (mmcsr_ME | mmcsr_VDIS | mmcsr_VT | mmcsr_RAFS)
	if c.Enabled {
		v |= mmcsr_ME
	}
	if !c.Verify {
		v |= mmcsr_VDIS
	}
	v |= uint32(c.VerifyTime/time.Millisecond) << mmcsr_VT_SH
	v |= uint32(c.AddFragSize) << mmcsr_RAFS_SH
	r.Write32(regMMCSR, v)
}

// PreemptState implements driver.Preemption.
func (p *Port) PreemptState() (driver.PreemptState, error) {
	p.lock()
	defer p.unlock()
	if err := p.tsnCheck("preemption"); err != nil {
		return driver.PreemptState{}, err
	}
	r := p.regs
	v := r.Read32(regMMCSR)
	s := driver.PreemptState{
		Supported:    v&mmcsr_LPS != 0,
		Enabled:      v&mmcsr_LPE != 0,
		Active:       v&mmcsr_LPA != 0,
		VerifyStatus: driver.VerifyUnknown,
		VerifyTime:   time.Duration(v&mmcsr_VT>>mmcsr_VT_SH) * time.Millisecond,
		AddFragSize:  int(v & mmcsr_RAFS >> mmcsr_RAFS_SH),
	}
	if vs := v >> mmcsr_VSTS_SH & 7; int(vs) < len(verifyStatus) {
		s.VerifyStatus = verifyStatus[vs]
	}
	for tc := range tsnTrafficClasses {
		if r.Read32(regPTCFPR(tc))&ptcfpr_FPE != 0 {
			s.PreemptableTCs |= 1 << tc
		}
	}
	c := func(i uint32) uint64 { return uint64(r.Read32(regMMFAECR + 4*i)) }
	s.AssemblyErrors, s.SMDErrors, s.AssemblyOK = c(0), c(1), c(2)
	s.FragmentsRx, s.FragmentsTx, s.Holds = c(3), c(4), c(5)
	return s, nil
}

// preemptOff turns the MAC merge sublayer off (Close).
func (p *Port) preemptOff() {
	p.tsn.preemptOn = false
	r := p.regs
	if r.Read32(regMMCSR)&mmcsr_ME == 0 && r.Read32(regPFPMR)&pfpmr_PMACE == 0 {
		return
	}
	r.Write32(regMMCSR, r.Read32(regMMCSR)&^mmcsr_ME)
	r.Write32(regPFPMR, r.Read32(regPFPMR)&^pfpmr_PMACE)
	for tc := range tsnTrafficClasses {
		r.Write32(regPTCFPR(tc), r.Read32(regPTCFPR(tc))&^ptcfpr_FPE)
	}
}

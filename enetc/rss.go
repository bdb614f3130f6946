package enetc

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/dma"
)

// RSS spreads received frames over the RX rings by a Toeplitz hash (§2.1,
// §2.3, §2.5): the 40-byte key goes into PRSSK (PF), the indirection table
// (one ring number per bucket) is set through the control BD ring, then
// SIRBGCR gets the ring count and SIMR.RSSE turns it on.

// rssKey is the 40-byte Toeplitz key: the widely published default key of
// the Microsoft RSS specification, so hashes can be checked by hand.
var rssKey = [40]byte{
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb3, 0x8f, 0xa1, 0xf8, 0x74, 0xfa,
}

// cbdrTimeout bounds the wait for one control BD (the reference: ~1 ms on
// silicon; more here for a model running on a loaded machine).
const cbdrTimeout = 100 * time.Millisecond

// setupRSS programs key, table and enable. Called from New.
func (p *Port) setupRSS() error {
	r := p.regs
	if r.Read32(regSIPCAPR0)&sipcapr0_RSS == 0 {
		return fmt.Errorf("%d RX queues need RSS, which this SI does not offer (SIPCAPR0.RSS clear): use one RX queue", p.cfg.RxQueues)
	}
	entries := 32 << (r.Read32(regSIRSSCAPR) & 0xF)
	if entries > rssTableMax {
		return fmt.Errorf("SIRSSCAPR reports %d RSS buckets; at most %d supported", entries, rssTableMax)
	}
	if p.pf {
		for i := 0; i < prssk_WORDS; i++ {
			k := rssKey[4*i:]
			r.Write32(regPRSSK(i), uint32(k[0])|uint32(k[1])<<8|uint32(k[2])<<16|uint32(k[3])<<24)
		}
	}
	if err := p.cbdrEnable(); err != nil {
		return err
	}
	tbl := p.ringMem.Bytes()[p.rssOff : p.rssOff+entries]
	for i := range tbl {
		tbl[i] = byte(i % p.cfg.RxQueues) // bucket i goes to ring i mod N
	}
	c := cbd{index: 0, length: uint16(entries), cmd: cbdCmdSet, class: cbdClassRSS}
	iova := p.ringMem.IOVAAt(p.rssOff)
	c.addr[0], c.addr[1] = uint32(iova), uint32(iova>>32)
	if err := p.cbdrRun(c, "set RSS indirection table"); err != nil {
		return err
	}
	r.Write32(regSIRBGCR, uint32(p.cfg.RxQueues))
	r.Write32(regSIMR, r.Read32(regSIMR)|simr_RSSE)
	p.rssOn, p.rssEntries = true, entries
	return nil
}

// zeroPortMemories writes zeros into every entry of the port's RFS memory
// and its whole RSS memory (PF, at open), as Linux's enetc_psi_create does
// at every PF probe: uninitialised entries raise ECC errors, and a port
// bound to vfio-pci from boot never had the kernel do it (§2.5). The
// memories are shared by the port's SIs, so this runs before any of them
// uses RSS.
func (p *Port) zeroPortMemories() error {
	r := p.regs
	if err := p.cbdrEnable(); err != nil {
		return err
	}
	buf := p.ringMem.Bytes()[p.rssOff : p.rssOff+rssTableMax]
	clear(buf)
	iova := p.ringMem.IOVAAt(p.rssOff) // 128-byte aligned, as an RFS entry needs (64)
	rfs := (int(r.Read32(regPRFSCAPR)&0xF) + 1) * 16
	for i := 0; i < rfs; i++ {
		c := cbd{index: uint16(i), length: rfsEntrySize, cmd: 0, class: cbdClassRFS}
		c.addr[0], c.addr[1] = uint32(iova), uint32(iova>>32)
		if err := p.cbdrRun(c, fmt.Sprintf("zero RFS entry %d of %d (PRFSCAPR)", i, rfs)); err != nil {
			return err
		}
	}
	rss := 32 << (r.Read32(regPRSSCAPR) & 0xF)
	if rss > rssTableMax {
		return fmt.Errorf("PRSSCAPR reports %d RSS entries for the port; gopmd zeroes at most %d", rss, rssTableMax)
	}
	c := cbd{index: 0, length: uint16(rss), cmd: cbdCmdSet, class: cbdClassRSS}
	c.addr[0], c.addr[1] = uint32(iova), uint32(iova>>32)
	return p.cbdrRun(c, fmt.Sprintf("zero the port's %d-entry RSS memory (PRSSCAPR)", rss))
}

// RSSTable returns the indirection table as programmed (bucket -> RX ring).
func (p *Port) RSSTable() []byte {
	p.lock()
	defer p.unlock()
	if !p.rssOn || p.closed {
		return nil
	}
	return append([]byte(nil), p.ringMem.Bytes()[p.rssOff:p.rssOff+p.rssEntries]...)
}

// cbdrEnable sets up the control BD ring (§2.5): SICAR2, base, length,
// PIR = CIR = 0, enable.
func (p *Port) cbdrEnable() error {
	r := p.regs
	iova := p.ringMem.IOVAAt(p.cbdrOff)
	if iova%bdRingAlign != 0 {
		return fmt.Errorf("control BD ring IOVA %#x is not %d-byte aligned", iova, bdRingAlign)
	}
	r.Write32(regSICBDRMR, 0)
	r.Write32(regSICAR2, sicar2_VALUE)
	r.Write32(regSICBDRBAR0, uint32(iova))
	r.Write32(regSICBDRBAR1, uint32(iova>>32))
	r.Write32(regSICBDRLENR, cbdrLen)
	r.Write32(regSICBDRPIR, 0)
	r.Write32(regSICBDRCIR, 0)
	r.Write32(regSICBDRMR, sicbdrmr_EN)
	p.cbdrPI = 0
	return nil
}

// cbdrRun copies one command into the ring, bumps PIR and polls CIR until
// the device consumed it, then checks its error status.
func (p *Port) cbdrRun(c cbd, what string) error {
	r := p.regs
	ring := cbdRing(p.ringMem.Bytes()[p.cbdrOff : p.cbdrOff+cbdrLen*cbdSize])
	i := p.cbdrPI
	ring[i] = c
	next := (i + 1) % cbdrLen // the control ring wraps at its length
	dma.DoorbellBarrier()     // the command visible before PIR hands it over
	r.Write32(regSICBDRPIR, next)
	deadline := time.Now().Add(cbdrTimeout)
	for {
		ci := r.Read32(regSICBDRCIR)
		if ci == next {
			break
		}
		if ci >= cbdrLen {
			return fmt.Errorf("%s: SICBDRCIR %d lies outside the %d-entry control ring", what, ci, cbdrLen)
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%s: the control BD ring did not consume the command within %v (SICBDRCIR %d, PIR %d)", what, cbdrTimeout, ci, next)
		}
		time.Sleep(10 * time.Microsecond)
	}
	p.cbdrPI = next
	dma.ReadBarrier() // the index before the status the device wrote back
	st := atomic.LoadUint32((*uint32)(ptrAt(ring, int(i), 28)))
	if e := (st >> 24) & cbdStatusErrMask; e != 0 {
		return fmt.Errorf("%s: the device reported error status %#x for control BD class %d cmd %d", what, e, c.class, c.cmd)
	}
	return nil
}

package enetc

import (
	"fmt"
	"net"

	"github.com/gopmd/gopmd/driver"
)

// Multicast filtering (driver.MulticastFilter) through the SI's 64-bucket
// multicast MAC hash filter, PSIMMHFR0/1(0): bucket h (0..63) is bit h%32
// of PSIMMHFR0 (h < 32) or PSIMMHFR1. On revision-1 silicon the unicast and
// multicast "0" registers are swapped (the Linux driver's ENETC_ERR_UCMCSWP
// erratum, enetc_hw.h ENETC_PSIMMHFR0(n, err)): the multicast low word then
// lives at 0x1D00, where the reference puts PSIUMHFR0.

var _ driver.MulticastFilter = (*Port)(nil)

// macHashBucket is the ENETC MAC hash filter's bucket for addr, as the
// Linux driver computes it (drivers/net/ethernet/freescale/enetc,
// enetc_mac_addr_hash_idx): the address read as a 48-bit little-endian
// number (byte 0 lowest) is cut into eight 6-bit pieces, and bit i of the
// bucket is the parity of bit i of all eight.
func macHashBucket(addr []byte) uint {
	var v uint64
	for i := 5; i >= 0; i-- {
		v = v<<8 | uint64(addr[i])
	}
	var h uint64
	for k := 0; k < 8; k++ {
		h ^= v >> (6 * k) & 0x3F
	}
	return uint(h)
}

// mcHashRegs are the offsets of the multicast hash filter's low and high
// words for SI 0 on this device's revision.
func (p *Port) mcHashRegs() (lo, hi uint32) {
	if p.dev.Revision == 1 {
		return regPSIUMHFR0, regPSIMMHFR1 // ERR UCMCSWP: the "0" registers swapped
	}
	return regPSIMMHFR0, regPSIMMHFR1
}

// writeMulticast programs the multicast hash filter from the groups joined
// and PSIPMR's multicast-promiscuous bit from promiscuous and
// all-multicast. Caller holds ctl (or is New).
func (p *Port) writeMulticast() {
	var h uint64
	for g := range p.mcGroups {
		h |= 1 << macHashBucket(g[:])
	}
	lo, hi := p.mcHashRegs()
	p.regs.Write32(lo, uint32(h))
	p.regs.Write32(hi, uint32(h>>32))
	p.writePromisc()
}

func (p *Port) mcCheck(op string, mac net.HardwareAddr) error {
	if !p.pf {
		return fmt.Errorf("%s: %w", op, ErrNotPF)
	}
	return driver.CheckMulticast(op, mac)
}

// AddMulticast implements driver.MulticastFilter (PF only).
func (p *Port) AddMulticast(mac net.HardwareAddr) error {
	if err := p.mcCheck("add multicast group", mac); err != nil {
		return err
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	if p.mcGroups == nil {
		p.mcGroups = map[[6]byte]struct{}{}
	}
	p.mcGroups[[6]byte(mac)] = struct{}{}
	p.writeMulticast()
	return nil
}

// RemoveMulticast implements driver.MulticastFilter (PF only).
func (p *Port) RemoveMulticast(mac net.HardwareAddr) error {
	if err := p.mcCheck("remove multicast group", mac); err != nil {
		return err
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	if _, ok := p.mcGroups[[6]byte(mac)]; !ok {
		return fmt.Errorf("remove multicast group: %s was not added", mac)
	}
	delete(p.mcGroups, [6]byte(mac))
	p.writeMulticast()
	return nil
}

// SetAllMulticast implements driver.MulticastFilter (PF only: PSIPMR's
// multicast-promiscuous bit for SI 0).
func (p *Port) SetAllMulticast(on bool) error {
	if !p.pf {
		return fmt.Errorf("set all-multicast: %w", ErrNotPF)
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	p.allMulti = on
	p.writePromisc()
	return nil
}

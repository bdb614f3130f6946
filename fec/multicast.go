package fec

import (
	"fmt"
	"hash/crc32"
	"net"

	"github.com/gopmd/gopmd/driver"
)

// Multicast filtering (driver.MulticastFilter) through the MAC's
// 64-bucket group hash filter, GAUR (buckets 32-63) and GALR (0-31).
// All-multicast sets every bucket, as the Linux driver does for
// IFF_ALLMULTI.

var _ driver.MulticastFilter = (*Port)(nil)

// groupBucket is the group hash filter's bucket for addr: the top six bits
// of the CRC-32 of the six address bytes, taken LSB first with the register
// preset to all ones and not inverted at the end (the Linux driver's
// ether_crc_le(6, addr) >> 26, fec_main.c set_multicast_list).
func groupBucket(addr []byte) uint {
	return uint(^crc32.ChecksumIEEE(addr[:6]) >> 26)
}

// writeMulticast programs GAUR/GALR from all-multicast and the groups
// joined. Caller holds ctl (or is New).
func (p *Port) writeMulticast() {
	h := ^uint64(0)
	if !p.allMulti {
		h = 0
		for g := range p.mcGroups {
			h |= 1 << groupBucket(g[:])
		}
	}
	p.regs.Write32(regGAUR, uint32(h>>32))
	p.regs.Write32(regGALR, uint32(h))
}

// AddMulticast implements driver.MulticastFilter.
func (p *Port) AddMulticast(mac net.HardwareAddr) error {
	if err := driver.CheckMulticast("add multicast group", mac); err != nil {
		return err
	}
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return p.errClosed()
	}
	if p.mcGroups == nil {
		p.mcGroups = map[[6]byte]struct{}{}
	}
	p.mcGroups[[6]byte(mac)] = struct{}{}
	p.writeMulticast()
	return p.regs.Err()
}

// RemoveMulticast implements driver.MulticastFilter.
func (p *Port) RemoveMulticast(mac net.HardwareAddr) error {
	if err := driver.CheckMulticast("remove multicast group", mac); err != nil {
		return err
	}
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return p.errClosed()
	}
	if _, ok := p.mcGroups[[6]byte(mac)]; !ok {
		return fmt.Errorf("remove multicast group: %s was not added", mac)
	}
	delete(p.mcGroups, [6]byte(mac))
	p.writeMulticast()
	return p.regs.Err()
}

// SetAllMulticast implements driver.MulticastFilter.
func (p *Port) SetAllMulticast(on bool) error {
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return p.errClosed()
	}
	p.allMulti = on
	p.writeMulticast()
	return p.regs.Err()
}

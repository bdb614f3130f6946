package enetc

import (
	"github.com/gopmd/gopmd/driver"
)

// The port parser's IPv4 header checksum check (docs/hardware-enetc.md
// §2.3, §8.2). A set bit of PAR_PORT_CFG turns one check off, but the
// public sources disagree on which bit is which: DPDK (enetc_hw.h
// L3_CKSUM = bit 0, L4_CKSUM = bit 1) and FreeBSD (enetc_hw.h
// ENETC_PAR_PORT_L4CD = bit 0, ENETC_PAR_PORT_L3CD = bit 1); Linux does
// not touch the register. gopmd leaves it as it is unless ipv4-check= is
// given, and then takes the bit from par-bits=, which must be given with
// it: no default guesses for the user.

const (
	parBit0 = 1 << 0
	parBit1 = 1 << 1
)

// parseParserOptions reads ipv4-check= and par-bits=.
func (p *Port) parseParserOptions() error {
	o := p.dev.Spec.Options
	if o == nil || (!o.Has("ipv4-check") && !o.Has("par-bits")) {
		return nil
	}
	const bitsAccepted = "dpdk (bit 0 turns the IPv4 header check off, as DPDK's enetc_hw.h names it) or freebsd (bit 1, as FreeBSD's enetc_hw.h names it); check on the board which one silences a frame with a bad IPv4 header checksum"
	if !o.Has("ipv4-check") {
		return driver.BadOption("par-bits", o.Get("par-bits"), "says which PAR_PORT_CFG bit is the IPv4 check, with no ipv4-check= to program", "par-bits= together with ipv4-check=on or off")
	}
	v := o.Get("ipv4-check")
	if v != "on" && v != "off" {
		return driver.BadOption("ipv4-check", v, "not on or off", "on (a bad IPv4 header checksum sets the parse-error flag) or off")
	}
	if !p.pf {
		return driver.BadOption("ipv4-check", v, "the parser is the port's; a VF has none of its own", "no ipv4-check= on a VF; give it to the PF")
	}
	if !o.Has("par-bits") {
		return driver.BadOption("ipv4-check", v, "needs par-bits=: DPDK and FreeBSD disagree on which PAR_PORT_CFG bit turns the IPv4 header check off, and gopmd does not guess", "ipv4-check= together with par-bits=dpdk or par-bits=freebsd")
	}
	switch b := o.Get("par-bits"); b {
	case "dpdk":
		p.parL3Bit = parBit0
	case "freebsd":
		p.parL3Bit = parBit1
	default:
		return driver.BadOption("par-bits", b, "not a bit assignment gopmd knows", bitsAccepted)
	}
	p.ipv4Check = v
	return nil
}

// writeParser programs the IPv4 check bit (PF, at configurePort); the
// other bit is left as it is.
func (p *Port) writeParser() {
	if p.ipv4Check == "" {
		return
	}
	v := p.regs.Read32(regPAR_PORT) &^ p.parL3Bit
	if p.ipv4Check == "off" {
		v |= p.parL3Bit
	}
	p.regs.Write32(regPAR_PORT, v)
}

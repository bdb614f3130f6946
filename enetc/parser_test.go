package enetc_test

import (
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestIPv4CheckOption: ipv4-check= programs the PAR_PORT_CFG bit par-bits=
// names; against the model (DPDK's assignment) a frame with a bad IPv4
// header checksum arrives flagged as a parse error with the check on and
// unflagged with it off; with FreeBSD's assignment given the model keeps
// checking, as a board of the other assignment would show.
func TestIPv4CheckOption(t *testing.T) {
	bad := udp4(t, 128, 9)
	bad[14+10] ^= 0x40 // IPv4 header checksum
	for _, c := range []struct {
		opts    string
		reg     uint32
		flagged bool
	}{
		{"ipv4-check=on&par-bits=dpdk", 0, true},
		{"ipv4-check=off&par-bits=dpdk", 1, false},
		{"ipv4-check=off&par-bits=freebsd", 2, true},
	} {
		t.Run(c.opts, func(t *testing.T) {
			s := openSim(t, c.opts, pcsCfg)
			if got := s.model.Read32(0x13050) & 3; got != c.reg {
				t.Fatalf("PAR_PORT_CFG = %#x, want %#x", got, c.reg)
			}
			if !s.model.Port().Receive(bad) {
				t.Fatal("the model refused the frame")
			}
			got := s.rxAll(0, 1, 100)
			if len(got) != 1 {
				t.Fatalf("received %d frames, want 1", len(got))
			}
			if f := got[0].Flags()&pool.FlagParseError != 0; f != c.flagged {
				t.Errorf("parse-error flag %v, want %v", f, c.flagged)
			}
			got[0].Free()
			s.close(false)
		})
	}
}

// TestIPv4CheckRefused: ipv4-check= without par-bits= (the sources
// disagree; gopmd does not guess), par-bits= alone, bad values and a VF
// are refused by name.
func TestIPv4CheckRefused(t *testing.T) {
	for _, c := range []struct{ opts, want string }{
		{"ipv4-check=off", "DPDK and FreeBSD disagree"},
		{"par-bits=dpdk", "no ipv4-check="},
		{"ipv4-check=maybe&par-bits=dpdk", `ipv4-check="maybe"`},
		{"ipv4-check=on&par-bits=linux", `par-bits="linux"`},
		{"vf=1&ipv4-check=on&par-bits=dpdk", "VF"},
	} {
		_, err := driver.OpenConfig("sim:enetc97?link-poll=0&chip="+testChip(t)+"&"+c.opts, pcsCfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.opts, err, c.want)
		}
	}
}

package fec

import (
	"testing"

	"github.com/gopmd/gopmd/pool"
)

// An enhanced RX BD's ICE and PCR bits (docs/hardware-fec.md §3) become the
// frame's FlagL3CsumBad and FlagL4CsumBad, and no other esc bit sets a flag.
func TestEscFlags(t *testing.T) {
	for _, c := range []struct {
		esc  uint32
		want pool.Flags
	}{
		{0, 0},
		{rxbd_ICE, pool.FlagL3CsumBad},
		{rxbd_PCR, pool.FlagL4CsumBad},
		{rxbd_ICE | rxbd_PCR, pool.FlagL3CsumBad | pool.FlagL4CsumBad},
		{^uint32(rxbd_ICE | rxbd_PCR), 0},
		{^uint32(0), pool.FlagL3CsumBad | pool.FlagL4CsumBad},
	} {
		if got := escFlags(c.esc); got != c.want {
			t.Errorf("esc %#08x: flags %#x, want %#x", c.esc, got, c.want)
		}
	}
}

package fec_test

import (
	"bytes"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestRxChecksumFlags: a frame whose IPv4 header checksum or UDP checksum
// is wrong arrives (the driver discards nothing for it) with
// FlagL3CsumBad or FlagL4CsumBad, from the enhanced BD's esc word, in
// RxBurst's one-BD loop; good frames carry neither. A legacy BD has no esc
// word: the same frames arrive with no flag.
func TestRxChecksumFlags(t *testing.T) {
	t.Parallel()
	const both = pool.FlagL3CsumBad | pool.FlagL4CsumBad
	for _, c := range []struct {
		opts  string
		flags [4]pool.Flags // good, bad IP header, bad UDP, both bad
	}{
		{"soc=imx8mp&bd=enhanced", [4]pool.Flags{0, pool.FlagL3CsumBad, pool.FlagL4CsumBad, both}},
		{"soc=imx6ul&bd=legacy", [4]pool.Flags{}},
	} {
		p, m := openSim(t, c.opts+"&rx-ring=16&link-poll=0")
		var sent [][]byte
		for i := 0; i < 4; i++ {
			f := udpFrame(t, 128, -1, i)
			if i&1 != 0 {
				f[14+10] ^= 0xFF // the IPv4 header checksum
			}
			if i&2 != 0 {
				f[14+20+6] ^= 0x5A // the UDP checksum (not made 0: 0 means none)
			}
			if !m.Port().Receive(f) {
				t.Fatalf("%s: model refused frame %d: %v", c.opts, i, m.LastModelError())
			}
			sent = append(sent, f)
		}
		pkts := make([]*driver.Packet, 8)
		n := p.RxQueue(0).RxBurst(pkts)
		if n != len(sent) {
			t.Fatalf("%s: RxBurst got %d frames, want %d (stats %+v)", c.opts, n, len(sent), p.Stats().Rx)
		}
		for i := 0; i < n; i++ {
			if !bytes.Equal(pkts[i].Data(), sent[i]) {
				t.Fatalf("%s: frame %d differs from the one sent", c.opts, i)
			}
			if got := pkts[i].Flags() & both; got != c.flags[i] {
				t.Errorf("%s: frame %d: checksum flags %#x, want %#x", c.opts, i, got, c.flags[i])
			}
			pkts[i].Free()
		}
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

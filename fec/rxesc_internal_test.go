package fec

import (
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestRxEscErrorEndsRun: an enhanced BD whose status is a good one-BD
// frame's but whose esc word has an error bit (MAC, PHY or collision) is
// dropped and counted as a frame error, not delivered; the good frames
// around it arrive, one with a bad checksum flagged, in the same burst.
func TestRxEscErrorEndsRun(t *testing.T) {
	t.Parallel()
	for _, bad := range []uint32{rxbd_ME, rxbd_PE, rxbd_CE, rxbd_PE | rxbd_PCR} {
		p, _ := openInternal(t, "soc=imx8mp&bd=enhanced&rx-ring=8&link-poll=0")
		q := p.rx[0]
		// Play the device: three frames of 64 bytes, the second with the
		// esc error, the third with a bad IPv4 header checksum (ICE).
		for i, esc := range []uint32{0, bad, rxbd_ICE} {
			q.ring.set(i, wESC, esc)
			q.ring.publish(i, w0(rxbd_L, 64))
		}
		before := q.stats.Snapshot().Drops[driver.CauseFrame]
		pkts := make([]*pool.Packet, 8)
		n := q.RxBurst(pkts)
		if n != 2 {
			t.Fatalf("esc %#x: %d frames delivered, want 2", bad, n)
		}
		if d := q.stats.Snapshot().Drops[driver.CauseFrame] - before; d != 1 {
			t.Fatalf("esc %#x: %d frame errors counted, want 1", bad, d)
		}
		if f0, f1 := pkts[0].RxMeta().Flags, pkts[1].RxMeta().Flags; f0 != 0 || f1 != pool.FlagL3CsumBad {
			t.Fatalf("esc %#x: flags %#x and %#x, want 0 and %#x", bad, f0, f1, pool.FlagL3CsumBad)
		}
		pool.FreeBulk(pkts[:n])
	}
}

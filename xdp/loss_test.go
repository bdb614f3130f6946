package xdp

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"golang.org/x/sys/unix"
)

// linkStats are an interface's own counters, as ip -s -j reports them.
type linkStats struct {
	RxPackets, RxDropped, TxPackets, TxDropped uint64
}

func readLinkStats(t *testing.T, ns, dev string) linkStats {
	t.Helper()
	args := []string{"-s", "-j", "link", "show", "dev", dev}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	out, err := exec.Command("ip", args...).Output()
	if err != nil {
		t.Fatalf("ip %v: %v", args, err)
	}
	var l []struct {
		Stats64 struct {
			Rx struct{ Packets, Dropped uint64 }
			Tx struct{ Packets, Dropped uint64 }
		}
	}
	if err := json.Unmarshal(out, &l); err != nil || len(l) != 1 {
		t.Fatalf("ip %v: %v: %s", args, err, out)
	}
	s := l[0].Stats64
	return linkStats{s.Rx.Packets, s.Rx.Dropped, s.Tx.Packets, s.Tx.Dropped}
}

func (a linkStats) sub(b linkStats) linkStats {
	return linkStats{a.RxPackets - b.RxPackets, a.RxDropped - b.RxDropped, a.TxPackets - b.TxPackets, a.TxDropped - b.TxDropped}
}

// A port that does not poll while the peer floods it runs its fill ring
// dry: the kernel drops the frames it has no buffer for and counts them
// (rx_dropped, rx_fill_ring_empty_descs), and the port reports them as
// no_buffer drops. Every frame the peer sent is then received or counted
// by cause, to the frame: the veth's own counters say how many frames it
// delivered to the port's interface and how many it dropped itself.
func TestAccountingUnderLoss(t *testing.T) {
	for _, mode := range []string{"generic", "native"} {
		t.Run(mode, func(t *testing.T) {
			v := newPair(t, false)
			p := openPort(t, "xdp:"+v.host+"?mode="+mode+"&pool-size=64&rx-ring=32&tx-ring=32")
			fd := v.packetSocket()
			peer0 := readLinkStats(t, v.ns, v.peer)
			host0 := readLinkStats(t, "", v.host)
			const n = 2000
			for i := 0; i < n; i++ {
				if err := unix.Send(fd, frame(v.hostMAC, v.peerMAC, i), 0); err != nil {
					t.Fatalf("send frame %d: %v", i, err)
				}
			}
			// The peer's counters settle once the kernel has dealt with
			// every frame: sent, or dropped at the veth.
			var peer, host linkStats
			for deadline := time.Now().Add(20 * time.Second); ; {
				peer = readLinkStats(t, v.ns, v.peer).sub(peer0)
				host = readLinkStats(t, "", v.host).sub(host0)
				if peer.TxPackets+peer.TxDropped >= n || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if peer.TxPackets+peer.TxDropped != n {
				t.Fatalf("the peer accounts for %d of the %d frames it was given: %+v", peer.TxPackets+peer.TxDropped, n, peer)
			}
			// Take what the RX ring holds, then what the kernel queued
			// meanwhile, until the counters stop moving.
			c := &collector{q: p.RxQueue(0)}
			var s driver.PortStats
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
				for c.poll() > 0 {
				}
				s = p.Stats()
				if s.Rx.Packets+s.Rx.Drops[driver.CauseNoBuffer] >= host.RxPackets {
					break
				}
				time.Sleep(10 * time.Millisecond)
				host = readLinkStats(t, "", v.host).sub(host0)
			}
			got, lost := s.Rx.Packets, s.Rx.Drops[driver.CauseNoBuffer]
			detail := fmt.Sprintf("peer %+v, host %+v; port received %d (%d test frames), no_buffer %d; kernel %v",
				peer, host, got, len(c.got), lost, xdpHW(s))
			t.Log(detail)
			if got+lost != host.RxPackets {
				t.Errorf("the interface took %d frames, the port received %d and counted %d as no_buffer (%d unaccounted): %s",
					host.RxPackets, got, lost, int64(host.RxPackets)-int64(got+lost), detail)
			}
			if uint64(len(c.got)) != got || len(c.other) != 0 {
				t.Errorf("received %d frames, %d of them the peer's test frames and %d others", got, len(c.got), len(c.other))
			}
			if s.HW["xdp_rx_dropped"]+s.HW["xdp_rx_ring_full"] != lost || lost == 0 {
				t.Errorf("no_buffer %d, kernel rx_dropped %d + rx_ring_full %d: the starved fill ring lost no frame, or they do not match",
					lost, s.HW["xdp_rx_dropped"], s.HW["xdp_rx_ring_full"])
			}
			if s.HW["xdp_rx_fill_ring_empty_descs"] == 0 {
				t.Errorf("the kernel counted no empty fill ring (xdp_rx_fill_ring_empty_descs 0) though it dropped %d frames", lost)
			}
		})
	}
}

func xdpHW(s driver.PortStats) map[string]uint64 {
	m := map[string]uint64{}
	for k, v := range s.HW {
		if len(k) > 4 && k[:4] == "xdp_" {
			m[k] = v
		}
	}
	return m
}

package xdp

import (
	"bytes"
	"testing"
	"time"

	"github.com/gopmd/gopmd/pool"
	"golang.org/x/sys/unix"
)

// need-wakeup=0 binds without XDP_USE_NEED_WAKEUP and wakes the kernel
// on every TX burst; busy-poll=N sets the socket's busy-poll options and
// makes the recvfrom that drives the driver on every RxBurst that finds
// the ring empty. Frames cross both ways with either. (In copy mode the
// kernel keeps the TX ring's flag set from the bind on, with need_wakeup
// or without, so need-wakeup=0 changes what is seen only on a zero-copy
// driver.)
func TestNeedWakeupAndBusyPoll(t *testing.T) {
	for _, c := range []struct {
		opts string
		busy int
	}{{"", 0}, {"&need-wakeup=0", 0}, {"&need-wakeup=1&busy-poll=20", 20}, {"&need-wakeup=0&busy-poll=50", 50}} {
		t.Run(c.opts, func(t *testing.T) {
			v := newPair(t, false)
			p := openPort(t, "xdp:"+v.host+"?mode=generic"+c.opts)
			q := p.(*port).queues[0]
			fd := v.packetSocket()
			for _, o := range []struct {
				opt, want int
				name      string
			}{{unix.SO_BUSY_POLL, c.busy, "SO_BUSY_POLL"}, {unix.SO_PREFER_BUSY_POLL, min(c.busy, 1), "SO_PREFER_BUSY_POLL"}} {
				got, err := unix.GetsockoptInt(q.fd, unix.SOL_SOCKET, o.opt)
				if err != nil || got != o.want {
					t.Errorf("%s %d (%v), want %d", o.name, got, err, o.want)
				}
			}
			// Empty polls: a wake-up each when busy polling, none
			// otherwise (the generic path never asks for one on RX).
			rq := p.RxQueue(0)
			var burst [8]*pool.Packet
			before := p.Stats().HW["xdp_rx_wakeups"]
			for i := 0; i < 10; i++ {
				if k := rq.RxBurst(burst[:]); k != 0 {
					t.Fatalf("idle queue received %d frames", k)
				}
			}
			if w := p.Stats().HW["xdp_rx_wakeups"] - before; (c.busy > 0) != (w == 10) || (c.busy == 0 && w != 0) {
				t.Errorf("10 empty polls made %d recvfrom wake-ups (busy-poll=%d)", w, c.busy)
			}
			tx := p.TxQueue(0)
			own := p.RxQueue(0).Pool()
			const n = 100
			var out [][]byte
			txw := p.Stats().HW["xdp_tx_wakeups"]
			for i := 0; i < n; i++ {
				pk := own.Alloc()
				if pk == nil {
					t.Fatalf("pool empty at frame %d", i)
				}
				f := frame(v.peerMAC, v.hostMAC, i)
				copy(pk.Append(len(f)), f)
				out = append(out, f)
				for tx.TxBurst([]*pool.Packet{pk}) == 0 {
					tx.Reclaim()
				}
			}
			for deadline := time.Now().Add(20 * time.Second); tx.Pending() > 0 && time.Now().Before(deadline); {
				tx.Reclaim()
			}
			got := recvFrames(t, fd, n)
			if len(got) != n {
				t.Fatalf("peer received %d of %d frames", len(got), n)
			}
			for i := range out {
				if !bytes.Equal(got[i], out[i]) {
					t.Fatalf("frame %d differs", i)
				}
			}
			if w := p.Stats().HW["xdp_tx_wakeups"] - txw; w < n {
				t.Errorf("%d frames sent one per burst with %d sendto wake-ups, want one per burst at least", n, w)
			}
			col := &collector{q: p.RxQueue(0)}
			for i := 0; i < n; i++ {
				if err := unix.Send(fd, frame(v.hostMAC, v.peerMAC, 500+i), 0); err != nil {
					t.Fatal(err)
				}
				if i%16 == 15 {
					col.until(i + 1)
				}
			}
			col.until(n)
			if len(col.got) != n {
				t.Fatalf("port received %d of %d frames", len(col.got), n)
			}
		})
	}
}

package xdp

import (
	"os/signal"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"golang.org/x/sys/unix"
)

// BenchmarkForward forwards b.N 60-byte frames from one xdp: port to
// another over a shared UMEM (umem=, as l2fwd runs in scripts/race-afxdp),
// in native XDP mode on two veth pairs: the peer of the first sends a
// burst of 32 through an AF_PACKET socket (its softirq has run the XDP
// program and filled the RX ring when the write returns), the port
// receives it with RxBurst and the second port sends it with TxBurst (one
// wake-up sendto; the kernel drops the frames at the far peer). The RX
// ring is never polled empty but when the kernel had not yet delivered a
// frame (empty-polls/pkt says how often), so the figure is the driver's
// work per forwarded frame, full bursts, reclaim included: what
// scripts/bench-instr counts as xdp-fwd. The sender's system calls are
// kernel work and column other, outside the figure.
func BenchmarkForward(b *testing.B) {
	ignoreChildren()
	in := newPairQueues(b, false, 1)
	out := newPairQueues(b, false, 1)
	pin := openPort(b, "xdp:"+in.host+"?mode=native&umem=bench"+in.host)
	pout := openPort(b, "xdp:"+out.host+"?mode=native&umem=bench"+in.host)
	fd := in.packetSocket()
	f := frame(in.hostMAC, in.peerMAC, 0)[:60]
	rx, tx := pin.RxQueue(0), pout.TxQueue(0)
	// One goroutine drives both queues, as l2fwd's worker does, and
	// declares it as l2fwd does.
	if err := tx.(driver.DirectRecycler).RecycleDirect(rx); err != nil {
		b.Fatal(err)
	}
	var burst [32]*pool.Packet
	var empty, refused int
	forward := func(n int) {
		for done := 0; done < n; {
			k := min(len(burst), n-done)
			for i := 0; i < k; i++ {
				if _, err := unix.Write(fd, f); err != nil {
					b.Fatalf("sending on %s: %v", in.peer, err)
				}
			}
			// A bound on a lost frame, never reached in a run that works.
			var deadline time.Time
			for got := 0; got < k; {
				m := rx.RxBurst(burst[got:k])
				if m == 0 {
					empty++
					if deadline.IsZero() {
						deadline = time.Now().Add(10 * time.Second)
					} else if time.Now().After(deadline) {
						b.Fatalf("%d of %d frames of a burst came in 10 s; in %+v", got, k, pin.Stats())
					}
				}
				got += m
			}
			sent := tx.TxBurst(burst[:k])
			if sent < k {
				pool.FreeBulk(burst[sent:k])
				refused += k - sent
			}
			done += k
		}
	}
	// Warm-up: the rings, the pools' caches and the reclaim cycle in the
	// state a running forwarder keeps them in.
	forward(8192)
	empty, refused = 0, 0
	tx0 := pout.Stats().Tx.Packets
	b.ResetTimer()
	forward(b.N)
	b.StopTimer()
	b.ReportMetric(float64(pout.Stats().Tx.Packets-tx0)/float64(b.N), "fwd/pkt")
	b.ReportMetric(float64(empty)/float64(b.N), "empty-polls/pkt")
	b.ReportMetric(float64(refused)/float64(b.N), "refused/pkt")
}

// BenchmarkEmptyPoll polls an idle RX queue b.N times, and checks its
// port's TX queue for frames to reclaim, as l2fwd's loop does between
// bursts: the cost of one empty poll (scripts/bench-instr's
// xdp-empty-poll).
func BenchmarkEmptyPoll(b *testing.B) {
	ignoreChildren()
	v := newPairQueues(b, false, 1)
	p := openPort(b, "xdp:"+v.host+"?mode=native")
	rx, tx := p.RxQueue(0), p.TxQueue(0)
	var burst [32]*pool.Packet
	got := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got += rx.RxBurst(burst[:])
		if tx.Pending() > 0 {
			tx.Reclaim()
		}
	}
	b.StopTimer()
	pool.FreeBulk(burst[:min(got, len(burst))])
	b.ReportMetric(float64(got)/float64(b.N), "frames/poll")
}

// childrenIgnored is set once SIGCHLD is ignored.
var childrenIgnored atomic.Bool

// ignoreChildren has the kernel reap the benchmarks' ip commands without
// a SIGCHLD: callgrind (scripts/bench-instr) aborts on the signals a Go
// program takes while its children exit. A child's exit status is lost
// then (Wait says ECHILD), so ipCmd takes ECHILD for success: each step
// of the set-up is checked by the next (an interface that was not made is
// not found).
func ignoreChildren() {
	signal.Ignore(syscall.SIGCHLD)
	childrenIgnored.Store(true)
}

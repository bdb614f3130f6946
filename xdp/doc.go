// Package xdp is gopmd's AF_XDP port kind: the spec xdp:IFNAME opens, with
// driver.Open, a port on a network interface the kernel keeps, through the
// same driver.Port API as the ports gopmd drives itself.
//
// A steering program, assembled in Go with cilium/ebpf's asm package and
// attached over rtnetlink, redirects each frame into the AF_XDP socket
// bound at its RX queue (an XSKMAP), and passes it to the kernel's stack
// when the queue has no socket or the frame is one the pass= option leaves
// to the kernel (arp, nd, host). Each socket's UMEM is a dma.Region carved
// into pools: received frames are pool buffers the application frees back,
// the fill ring is refilled from the pool in bulk, TX completions return
// buffers to their pools, and frames from outside the UMEM are copied into
// it on TX (counted as tx_copies). TX queues implement
// driver.DirectRecycler: over a shared UMEM (umem=), a worker that drives
// an RX queue and the TX queue its frames leave by has the reclaim return
// their buffers straight into the RX pool's cache, which holds the whole
// pool. The kernel's XDP_STATISTICS are the port's counters. RX
// queues implement driver.RxInterrupter with poll(2) on the socket (it is
// readable while its RX ring holds a frame), so adaptive workers sleep on
// xdp: ports as on the others. OnLinkChange reports the interface's
// carrier and up/down changes, which an rtnetlink watch follows.
//
// Spec options: the generic queues=, rx-ring=, tx-ring= (powers of two),
// pool-size=, buf-size= and port-id=; mode=native|generic|auto (how the
// program runs), zero-copy=on|off|auto, frame-size=2048|4096, pass= (a
// list of arp, nd, host, or none), force=1 (replace another program),
// queue=F (the port's queues are the interface's F to F+N-1);
// need-wakeup=1|0 (bind with XDP_USE_NEED_WAKEUP, the default; off, every
// TX burst makes the wake-up syscall) and busy-poll=USECS (SO_BUSY_POLL
// with SO_PREFER_BUSY_POLL and a budget of one burst; RxBurst on an empty
// ring makes the recvfrom that runs the driver); umem=NAME (the ports of
// this process with the same NAME share one UMEM, so a frame one received
// is sent by another without a copy; a queue that cannot join, for another
// frame size, need-wakeup= or zero-copy mode, gets its own UMEM and Info
// says why) and umem-ports=N (how many ports like it the first port to
// open the shared UMEM sizes it for, default 2);
// promisc=, mtu= and unsafe-noiommu= do not apply. docs/design.md, "AF_XDP
// ports", has the design.
//
// Tests need root and a kernel with AF_XDP; they run on veth pairs in
// network namespaces and skip, saying why, elsewhere.
package xdp

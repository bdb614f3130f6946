// Package tap is gopmd's exception path to the kernel: a Linux TAP
// interface twinned with a port, so that an appliance forwarding on its data
// ports stays reachable on them (ARP for its own address, SSH, DHCP,
// routing protocols), as XDP_PASS or DPDK's TAP and virtio-user exception
// paths allow.
//
// One frame's trip up and one down:
//
//  1. The application receives a burst (RxQueue.RxBurst) and calls
//     Twin.Up on it.
//  2. Up runs the Classifier on every frame: frames for the host (its MAC,
//     its addresses, chosen EtherTypes, VLANs and IP protocols) are written
//     to the TAP and freed; broadcasts, and IPv6 neighbour discovery and
//     MLD queries to group addresses, are copied up and kept. The
//     application forwards what Up leaves at the front of the burst.
//
// The default rules (DefaultRules) are what IPv4 and IPv6 to the host
// need: unicast to the port's MAC goes up; broadcasts (ARP requests,
// DHCP) are copied up; ICMPv6 neighbour discovery (types 133 to 137) and
// MLD queries (130) sent to a group address are copied up, among them the
// neighbour solicitations for the host's addresses, which go to their
// solicited-node groups (33:33:ff:xx:xx:xx); other multicast is
// forwarded only. Rules.Broadcast, Rules.ND and Rules.Multicast change
// those verdicts; the other rules send more up.
//  3. The kernel answers out of the TAP (same MAC as the port, so its ARP
//     replies name the port).
//  4. Twin.Down reads what the kernel sent, at most a burst per call,
//     straight into buffers of the twin's own pool (mapped for the port's
//     DMA domain), and hands them to the port's TxQueue in one TxBurst.
//  5. The driver's reclaim returns those buffers to the twin's pool.
//
// The TUN API moves one frame per read(2) or write(2); both directions are
// bulk at the API (a burst per call) and never block: the file is
// non-blocking and Down stops at the first empty read. Nothing is lost
// without a count: Stats counts frames up and down, copies, and every drop
// by Cause. Frames the kernel could not queue towards Down (the TAP's
// transmit queue full while the loop is busy) are counted by the kernel in
// the TAP's own tx_dropped (ip -s link show).
//
// Up may be called from several goroutines at once (one per RX queue of the
// port); Down from one goroutine at a time, the one that owns the TX queue
// it sends on. Neither allocates, locks or converts an interface per frame.
package tap

package driver

// DirectRecycler is an optional interface of a TxQueue (the enetc, fec and
// xdp drivers implement it): the TX queue's reclaim returns the buffers of one RX
// queue's pool straight into that pool's owner cache (pool.FreeBulkDirect,
// the kernel page_pool's allow_direct) instead of through the pool's shared
// ring, which saves a CAS, the ring stores and the refill's pop per buffer.
//
// RecycleDirect(rx) declares that one goroutine drives both queues: it
// calls this queue's TxBurst and Reclaim and rx's RxBurst, and it is the
// only goroutine that allocates from or recycles into rx.Pool() (a
// forwarder's worker serving a pair of queues). Buffers of any other pool
// still go through their pools' rings. RecycleDirect(nil) takes the
// declaration back. Call it while the port is stopped or from the goroutine
// that drives the queue.
//
// The declaration is checked cheaply on every reclaim: rx's burst flag is
// read once, and a reclaim that finds another goroutine inside rx's
// RxBurst panics with *ConcurrentUse before it frees anything. Stop and
// Close never free directly (they run on the control goroutine).
type DirectRecycler interface {
	RecycleDirect(rx RxQueue) error
}

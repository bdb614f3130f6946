package main

import (
	"runtime"
	"sync/atomic"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/tap"
	"github.com/gopmd/gopmd/wire"
)

// maxBurst is the largest --burst: the size of each worker's packet array.
const maxBurst = 256

// The Ethernet header as pass mode reads it: the EtherType at byte 12 and
// the three kinds it counts (IEEE 802.3 §3.2.6; IANA's EtherType registry).
const (
	etherHdrLen   = 14
	etherTypeOff  = 12
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86DD
	etherTypeARP  = 0x0806
)

// mode is what a lane does with the frames it receives (xdp-bench's modes).
type mode uint8

const (
	modeFwd  mode = iota // MAC update, out of the paired port
	modeDrop             // recycle into the RX pool at once
	modeTx               // swap MACs, back out of the same port
	modePass             // hand to the application, which frees it
)

var modeNames = [...]string{"fwd", "drop", "tx", "pass"}

func (m mode) String() string { return modeNames[m] }

// linePad is a cache line (64 bytes on x86-64 and the Cortex-A cores
// l2fwd runs on) of padding. A lane and a worker begin and end with one,
// so the fields a worker writes every burst never share a line with
// another worker's, wherever the allocator places the structures
// (TestLanesAndWorkersShareNoCacheLine checks their addresses).
type linePad [64]byte

// lane is one RX queue and the TX queue its frames go to. Exactly one
// worker goroutine polls a lane, so it owns the RX queue (and its pool's
// alloc side) and the TX queue: nothing here is locked.
type lane struct {
	_ linePad

	rxPort, rxQueue, txPort int
	rx                      driver.RxQueue
	tx                      driver.TxQueue // nil in drop and pass modes
	pool                    *pool.Pool     // rx.Pool(): drop mode recycles here
	mode                    mode
	macUpdate               bool
	macs                    [12]byte // fwd mode: destination then source, written into every frame
	capture                 *wire.FrameRing
	capBuf                  []byte // captureSlotSize+1 bytes: a chained frame is joined here
	// bounce is set when the TX port cannot reach the RX pool's memory (the
	// two devices are in different DMA domains): each frame is then copied
	// into a buffer of this pool, mapped for the TX device, and the RX
	// buffer recycled at once. The worker owns it.
	bounce *pool.Pool
	// pump, for a simulated device in synchronous mode, pulls its sources
	// (generator, pcap, cable) into the RX ring before each poll: the
	// device has no engine of its own. Set on queue 0's lane only.
	pump func() int
	// hooked is pump != nil || down != nil, set once the lanes are set
	// up: an idle poll tests the two with one load.
	hooked bool

	// unpublished is set by a burst that received frames (or a reclaim
	// that freed some) and cleared by the next empty poll, which publishes
	// the RX pool's owner counters: a pool publishes by itself only every
	// so many bursts, so a lane that goes idle would leave a scrape up to
	// that many behind.
	unpublished bool
	// owed is set whenever the lane may have work for an empty poll: a
	// burst received (frames went to TX, the pool's counters moved) or
	// the TAP twin sent on a TX queue. An empty poll that finds it set
	// reclaims and publishes (idle), and clears it once TX holds nothing
	// more; empty polls in between read nothing else. Only this lane's
	// worker sends on its TX queue, so nothing else makes TX pending.
	owed bool

	// Written by the worker once per burst, read by the stats printer.
	handled, handledBytes atomic.Uint64 // sent to TX (fwd, tx) or consumed (drop, pass)
	txRefused             atomic.Uint64 // TX took fewer than offered: freed and counted
	bounceShort           atomic.Uint64 // no bounce buffer (or too long for one): dropped
	ipv4, ipv6, arp       atomic.Uint64 // pass mode: what the application saw

	// --tap: up is the RX port's twin (its frames for the host go up
	// before the mode sees the burst); down, on the one lane that owns
	// the port's TX queue 0 (downTx), is the twin whose kernel frames
	// this lane sends.
	up      *tap.Twin
	down    *tap.Twin
	downTx  driver.TxQueue
	tapTick uint32

	_ linePad
}

// worker polls its lanes until stop is set.
type worker struct {
	_     linePad
	lanes []*lane
	burst int
	// waiter, with --rx-mode adaptive, sleeps the worker on its lanes' RX
	// interrupts after idle empty rounds of polls (adaptive.go).
	waiter *driver.RxWaiter
	idle   int
	// Written by the worker, read by the stats: sleeps on the interrupt,
	// arms that failed (a port stopping), and the worker thread's CPU time
	// (getrusage RUSAGE_THREAD) when it ended.
	sleeps, armFailed atomic.Uint64
	cpu               atomic.Int64 // nanoseconds

	_ linePad
}

// run is the forwarding loop: no allocation, no lock, no defer.
func (w *worker) run(stop *atomic.Bool, done chan<- struct{}) {
	runtime.LockOSThread()
	var pkts [maxBurst]*driver.Packet
	burst := pkts[:w.burst]
	empty := 0
	for !stop.Load() {
		got := 0
		for _, l := range w.lanes {
			got += l.poll(burst)
		}
		if w.waiter == nil {
			continue
		}
		if got > 0 {
			empty = 0
			continue
		}
		if empty++; empty >= w.idle {
			empty = 0
			w.sleep(burst)
		}
	}
	w.cpu.Store(threadCPU())
	runtime.UnlockOSThread()
	done <- struct{}{}
}

// poll receives one burst, disposes of it by the lane's mode and returns
// how many frames it received. The common path is this one function: a
// call would cost each burst its argument moves, a frame and reloads of
// what lives across it, so only the work off that path (the TAP twin's,
// bounce copies, capture, a refused tail, pass mode) is out of line.
func (l *lane) poll(pkts []*driver.Packet) int {
	if l.hooked {
		if l.pump != nil {
			l.pump()
		}
		if l.down != nil {
			l.tapPoll()
		}
	}
	n := l.rx.RxBurst(pkts)
	if n == 0 {
		if l.owed {
			l.idle()
		}
		return 0
	}
	l.unpublished, l.owed = true, true
	b := pkts[:n]
	if l.up != nil {
		if b = b[:l.up.Up(b)]; len(b) == 0 {
			return n
		}
	}
	var bytes uint64
	switch l.mode {
	case modeFwd:
		if l.macUpdate {
			// The addresses go into every frame whose first segment
			// holds them, which is all but a runt's: the first loop
			// runs while they do, so its one branch besides its end is
			// that length compare (which proves EtherAddrs' own), and a
			// frame pays it, two stores and its bytes counted. From the
			// first runt on, the rest go one by one through putMACs,
			// which leaves a runt alone.
			i := 0
			for ; i < len(b) && b[i].Len() >= 12; i++ {
				bytes += uint64(b[i].PktLen)
				*b[i].EtherAddrs() = l.macs
			}
			for ; i < len(b); i++ {
				bytes += putMACs(b[i], &l.macs)
			}
		} else {
			bytes = frameBytes(b)
		}
	case modeTx:
		for _, p := range b {
			bytes += uint64(p.PktLen)
			swapMACs(p)
		}
	case modeDrop:
		bytes = frameBytes(b)
		// The worker owns the RX queue, hence its pool's cache.
		l.pool.RecycleBulk(b)
		l.handled.Add(uint64(len(b)))
		l.handledBytes.Add(bytes)
		return n
	default: // modePass
		l.pass(b)
		return n
	}

	// fwd and tx: the burst goes to the lane's TX queue. What the queue
	// does not take (its ring is full, or the port is stopping) is freed
	// and counted, never retried: a forwarder that waits for a full ring
	// loses more than it saves. An ENETC MDIO register access does not
	// refuse: the TX burst waits it out (internal/gate).
	if l.bounce != nil || l.capture != nil {
		var k int
		k, bytes = l.copyBeforeTx(b, bytes)
		b = b[:k]
	}
	sent := l.tx.TxBurst(b)
	if sent < len(b) {
		l.refuse(b, sent, bytes)
		return n
	}
	l.handled.Add(uint64(sent))
	l.handledBytes.Add(bytes)
	return n
}

// idle is an empty poll's work while the lane owes some: take back what
// TX has finished (a frame counts as sent once reclaimed, and TxBurst
// reclaims only when slots run low, so a lane's last frames would wait for
// the next burst), then publish the pool's counters. The worker owns both.
// The lane owes nothing more once TX holds no frame.
func (l *lane) idle() {
	pending := false
	if l.tx != nil && l.tx.Pending() > 0 {
		if l.tx.Reclaim() > 0 {
			l.unpublished = true
		}
		pending = l.tx.Pending() > 0
	}
	if l.unpublished && l.pool != nil {
		l.unpublished = false
		l.pool.Publish()
	}
	l.owed = pending
}

// putMACs writes macs, the destination then the source address, into the
// first 12 bytes of p's frame, and leaves a frame whose first segment is
// shorter alone (a chained frame's addresses are in its first segment,
// the one given). It returns the frame's bytes, all segments, for the
// caller to count.
func putMACs(p *driver.Packet, macs *[12]byte) uint64 {
	if p.Len() >= 12 {
		*p.EtherAddrs() = *macs
	}
	return uint64(p.PktLen)
}

// swapMACs swaps the destination and source addresses of p's frame, and
// leaves a frame whose first segment is shorter than 12 bytes alone.
func swapMACs(p *driver.Packet) {
	if h := p.EtherAddrs(); h != nil {
		d, s := [6]byte(h[0:6]), [6]byte(h[6:12])
		*(*[6]byte)(h[0:6]), *(*[6]byte)(h[6:12]) = s, d
	}
}

// frameBytes is the bytes of b's frames, all segments.
func frameBytes(b []*driver.Packet) uint64 {
	var n uint64
	for _, p := range b {
		n += uint64(p.PktLen)
	}
	return n
}

// copyBeforeTx is the work before TX owns a burst's frames: the copies into
// bounce buffers, then the capture's. It returns how many frames to send
// (b's first k) and their bytes.
func (l *lane) copyBeforeTx(b []*driver.Packet, bytes uint64) (k int, _ uint64) {
	if l.bounce != nil {
		b = l.copyOver(b)
		bytes = frameBytes(b) // without the frames that found no bounce buffer
	}
	if l.capture != nil {
		// Copies are taken before TX owns the buffers; a full ring drops
		// the copy (counted by the ring), never stalls the loop.
		for _, p := range b {
			if p.Next() == nil {
				l.capture.Put(p.Data())
				continue
			}
			// A chained frame is joined first; one longer than a slot
			// is offered whole-length so the ring counts it as too big.
			n := 0
			for s := p; s != nil && n < len(l.capBuf); s = s.Next() {
				n += copy(l.capBuf[n:], s.Data())
			}
			l.capture.Put(l.capBuf[:n])
		}
	}
	return len(b), bytes
}

// pass is pass mode's work on a burst: the frames go to the
// application, which here counts their EtherTypes, then frees them.
func (l *lane) pass(b []*driver.Packet) {
	var bytes, v4, v6, arp uint64
	for _, p := range b {
		bytes += uint64(p.PktLen)
		d := p.Data()
		if len(d) >= etherHdrLen {
			switch uint16(d[etherTypeOff])<<8 | uint16(d[etherTypeOff+1]) {
			case etherTypeIPv4:
				v4++
			case etherTypeIPv6:
				v6++
			case etherTypeARP:
				arp++
			}
		}
	}
	pool.FreeBulk(b)
	l.handled.Add(uint64(len(b)))
	l.handledBytes.Add(bytes)
	l.ipv4.Add(v4)
	l.ipv6.Add(v6)
	l.arp.Add(arp)
}

// refuse counts a burst of which TX took only the first sent frames
// (bytes is the whole burst's): those as handled, the rest as refused,
// which it frees.
func (l *lane) refuse(b []*driver.Packet, sent int, bytes uint64) {
	bytes -= frameBytes(b[sent:])
	pool.FreeBulk(b[sent:])
	l.txRefused.Add(uint64(len(b) - sent))
	l.handled.Add(uint64(sent))
	l.handledBytes.Add(bytes)
}

// copyOver replaces every frame of b by a copy in a bounce buffer the TX
// device can reach, recycling the originals; frames without a bounce buffer
// are dropped and counted. It returns the frames to send (a prefix of b).
func (l *lane) copyOver(b []*driver.Packet) []*driver.Packet {
	k := 0
	for _, p := range b {
		q := l.bounce.Alloc()
		if q != nil && q.SetLen(p.PktLen) {
			off := 0
			dst := q.Data()
			for s := p; s != nil; s = s.Next() {
				off += copy(dst[off:], s.Data())
			}
			q.PktLen, q.NSegs = off, 1
			q.SetLen(off)
			b[k] = q
			k++
		} else {
			if q != nil {
				l.bounce.Recycle(q)
			}
			l.bounceShort.Add(1)
		}
		// The worker owns the RX queue, hence its pool's cache.
		l.pool.Recycle(p)
	}
	return b[:k]
}

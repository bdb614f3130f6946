package xdp

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/internal/rxirq"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/xdp/internal/xsk"
	"golang.org/x/sys/unix"
)

// batch is how many buffers one refill or reclaim step moves.
const batch = 64

// slotShift is log2 of the UMEM span one slot table entry stands for: the
// smallest frame size, 2048 bytes, whatever the port's frame size, so the
// bursts find an address's slot with a constant shift. A frame's buffer
// is in the slot of its first 2048 bytes, where the kernel's RX
// descriptors point (the frame's start plus the XDP headroom); a TX frame
// is in the slot of its descriptor's address, which its completion
// returns.
const slotShift = 11

// queue is one AF_XDP socket: its UMEM (a dma.Region whose bus addresses
// are UMEM offsets), two pools carved from it (the RX pool, whose buffers
// the fill ring receives into, owned by the RX goroutine; the TX pool, for
// copies of frames from outside the UMEM, owned by the TX goroutine), and
// its four rings.
type queue struct {
	p   *port
	idx int // the port's queue number
	kq  int // the interface queue the socket is bound to
	fd  int

	region         *dma.Region
	rxPool, txPool *pool.Pool
	rxOwner        uint16 // buffers posted in the fill ring
	appOwner       uint16 // received frames the caller holds
	txOwner        uint16
	nframes        uint64 // frames in the UMEM
	frameMask      uint64

	fill, comp, rx, tx *ring
	// rxSlot holds the buffer posted in the fill ring for each UMEM frame,
	// txSlot the one queued on TX: what a descriptor's address names is
	// looked up here, never trusted as a pointer.
	rxSlot, txSlot []*pool.Packet

	rxFlag, txFlag gate.Flag
	rxc, txc       driver.Counters
	pending        atomic.Int64 // TX frames queued and not completed
	rxTag          pool.RxTag   // the received frames' holder, port, queue and format
	// umem is the address of the UMEM's first byte and umemLen its length:
	// a buffer in that range is a UMEM frame, and its offset from umem its
	// UMEM address (TxBurst).
	umem, umemLen uintptr
	nd            int         // frames copyIn copied, waiting in done for flushCopies
	maxLen        uint        // the longest frame TX takes: a frame's room after the headroom
	irq           rxirq.Queue // the socket as the RX interrupt (irq.go)
	// wakeTx: every TX burst and reclaim with frames waiting makes the
	// sendto, whatever the ring's flag (need-wakeup=0, busy-poll=);
	// wakeRx: every RxBurst that finds the ring empty makes the recvfrom
	// (busy-poll=), which runs the driver's NAPI in the caller's context.
	wakeTx, wakeRx bool
	// rxWakes and txWakes count the wake-up syscalls (recvfrom, sendto);
	// copies the frames TX copied into the UMEM.
	rxWakes, txWakes, copies atomic.Uint64
	// group is the shared UMEM the socket is bound to (nil: its own);
	// shareFirst and shareFrames the frames of it the queue's pools take.
	group                   *umemGroup
	shareFirst, shareFrames uint64

	// direct is the RX pool whose buffers reclaim returns straight into
	// its cache, and directRx the burst flag of that pool's RX queue
	// (RecycleDirect: the TX goroutine drives that queue too); nil: none.
	direct   *pool.Pool
	directRx *gate.Flag

	scratch [batch]*pool.Packet // refill (RX goroutine)
	done    [batch]*pool.Packet // copies (TX goroutine)
}

type rxQueue queue
type txQueue queue

// newQueue opens the port's queue i: its socket on its own UMEM, or on
// the shared UMEM p.opt.umem when share is set (an *errNoShare says why it
// could not join, and the port opens the queue again without).
func (p *port) newQueue(i int, share bool) (_ *queue, err error) {
	cfg := p.cfg
	fs := p.opt.frameSize
	kq := p.opt.first + i
	q := &queue{p: p, idx: i, kq: kq, fd: -1, frameMask: uint64(fs - 1),
		wakeTx: !p.opt.needWakeup || p.opt.busyPoll > 0, wakeRx: p.opt.busyPoll > 0}
	defer func() {
		if err != nil {
			_ = q.close(cfg.StopTimeout)
		}
	}()
	rxCount := cfg.PoolSize
	txCount := cfg.TxRingSize + batch
	q.nframes = uint64(rxCount + txCount)
	first := 0            // the queue's first frame in the UMEM
	var shared *umemGroup // the group to bind into (nil: register our own UMEM)
	if share {
		umems.Lock()
		defer umems.Unlock()
		g, at, err := joinUmem(p.opt.umem, fs, p.opt.needWakeup, q.nframes, q.nframes*uint64(p.cfg.RxQueues), p.opt.umemPorts)
		if err != nil {
			return nil, err
		}
		q.group, q.shareFirst, q.shareFrames = g, at, q.nframes
		q.region, q.nframes, first = g.region, g.nframes, int(at)
		if len(g.live) > 0 {
			shared = g
		}
	} else {
		name := fmt.Sprintf("%s umem %d", p.nd.name, kq)
		q.region, err = dma.Alloc(umemMapper{}, int(q.nframes)*fs, dma.Options{Attr: dma.Attr{Name: name}, Hugepages: dma.HugeNever})
		if err != nil {
			return nil, err
		}
	}
	// The RX pool's cache holds every buffer of it: the fill ring takes
	// buffers as the kernel frees its slots, not as reclaim returns them
	// (RecycleDirect), so the two drift apart by hundreds of buffers, and
	// a cache of the default size overflowed into the pool's shared ring
	// (an atomic push per buffer) and the refill popped them back.
	q.rxPool, err = pool.New(q.region, pool.Config{Name: fmt.Sprintf("rx %d", i), Port: p.spec, Count: rxCount, BufSize: fs, Headroom: xsk.PacketHeadroom, Offset: first * fs, CacheSize: rxCount})
	if err != nil {
		return nil, err
	}
	q.txPool, err = pool.New(q.region, pool.Config{Name: fmt.Sprintf("tx %d", i), Port: p.spec, Count: txCount, BufSize: fs, Headroom: xsk.PacketHeadroom, Offset: (first + rxCount) * fs})
	if err != nil {
		return nil, err
	}
	q.rxOwner = q.rxPool.Holder(pool.Holder{Role: fmt.Sprintf("fill ring %d", i)})
	q.appOwner = q.rxPool.Holder(pool.Holder{Role: fmt.Sprintf("rx queue %d caller", i)})
	q.txOwner = q.txPool.Holder(pool.Holder{Role: fmt.Sprintf("tx ring %d", i)})
	q.rxTag = pool.MakeRxTag(q.appOwner, p.cfg.PortID, uint16(i), pool.RxDecoded)
	mem := q.region.Bytes()
	q.umem, q.umemLen = uintptr(unsafePointer(mem)), uintptr(len(mem))
	q.maxLen = uint(fs - xsk.PacketHeadroom)
	q.rxSlot = make([]*pool.Packet, len(q.region.Bytes())>>slotShift)
	q.txSlot = make([]*pool.Packet, len(q.region.Bytes())>>slotShift)

	q.fd, err = unix.Socket(xsk.AFXDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("queue %d: AF_XDP socket: %w (the kernel needs CONFIG_XDP_SOCKETS)", kq, err)
	}
	if shared == nil {
		reg := xsk.UmemReg{Addr: uint64(uintptr(unsafePointer(mem))), Len: uint64(len(mem)), ChunkSize: uint32(fs)}
		if err := xsk.SetOpt(q.fd, xsk.OptUmemReg, &reg); err != nil {
			return nil, fmt.Errorf("queue %d: registering the UMEM of %d frames of %d bytes: %w", kq, q.nframes, fs, err)
		}
	}
	fillN, compN := uint32(cfg.RxRingSize), uint32(cfg.TxRingSize)
	for _, o := range []struct {
		opt  int
		n    uint32
		name string
	}{{xsk.OptUmemFillRing, fillN, "fill"}, {xsk.OptUmemCompRing, compN, "completion"}, {xsk.OptRxRing, uint32(cfg.RxRingSize), "RX"}, {xsk.OptTxRing, uint32(cfg.TxRingSize), "TX"}} {
		n := o.n
		if err := xsk.SetOpt(q.fd, o.opt, &n); err != nil {
			return nil, fmt.Errorf("queue %d: sizing the %s ring to %d: %w", kq, o.name, n, err)
		}
	}
	var off xsk.MmapOffsets
	if _, err := xsk.GetOpt(q.fd, xsk.OptMmapOffsets, &off); err != nil {
		return nil, fmt.Errorf("queue %d: reading the ring offsets: %w", kq, err)
	}
	if q.fill, err = mapRing(q.fd, off.Fr, xsk.PgoffFillRing, fillN, false, "fill"); err != nil {
		return nil, err
	}
	if q.comp, err = mapRing(q.fd, off.Cr, xsk.PgoffCompletionRng, compN, false, "completion"); err != nil {
		return nil, err
	}
	if q.rx, err = mapRing(q.fd, off.Rx, xsk.PgoffRxRing, uint32(cfg.RxRingSize), true, "RX"); err != nil {
		return nil, err
	}
	if q.tx, err = mapRing(q.fd, off.Tx, xsk.PgoffTxRing, uint32(cfg.TxRingSize), true, "TX"); err != nil {
		return nil, err
	}
	if p.opt.busyPoll > 0 {
		for _, o := range []struct {
			opt  int
			v    int
			name string
		}{{unix.SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL"}, {unix.SO_BUSY_POLL, p.opt.busyPoll, "SO_BUSY_POLL"}, {unix.SO_BUSY_POLL_BUDGET, busyPollBudget, "SO_BUSY_POLL_BUDGET"}} {
			if err := unix.SetsockoptInt(q.fd, unix.SOL_SOCKET, o.opt, o.v); err != nil {
				return nil, fmt.Errorf("queue %d: busy-poll=%d: setting %s to %d: %w (busy polling needs Linux 5.11 and CAP_NET_ADMIN; leave busy-poll out)", kq, p.opt.busyPoll, o.name, o.v, err)
			}
		}
	}
	wakeFlag := uint16(0)
	if p.opt.needWakeup {
		wakeFlag = xsk.BindUseNeedWakeup
	}
	bind := func(flags uint16) error {
		sa := xsk.SockaddrXDP{Family: xsk.AFXDP, Flags: flags | wakeFlag, Ifindex: uint32(p.nd.index), QueueID: uint32(kq)}
		return bindWait(q.fd, &sa, p.nd.name, kq)
	}
	switch {
	case shared != nil:
		// The socket takes the UMEM's mode and wake-up flag from the
		// socket that registered it, and names no flags of its own.
		sa := xsk.SockaddrXDP{Family: xsk.AFXDP, Flags: xsk.BindSharedUmem, Ifindex: uint32(p.nd.index), QueueID: uint32(kq), SharedUmemFD: uint32(shared.live[0].fd)}
		if err := bindWait(q.fd, &sa, p.nd.name, kq); err != nil {
			mode := "copy"
			if shared.zc {
				mode = "zero-copy"
			}
			return nil, &errNoShare{fmt.Sprintf("binding queue %d into shared UMEM %s (%s mode): %v (the kernel shares a UMEM across interfaces from Linux 5.10, and only in the mode of its first socket)", kq, shared.name, mode, err)}
		}
		if zc := shared.zc; zc && p.opt.zeroCopy == "off" || !zc && p.opt.zeroCopy == "on" {
			return nil, &errNoShare{fmt.Sprintf("shared UMEM %s runs in the mode of its first socket (zero-copy %t), and this port asks for zero-copy=%s", shared.name, zc, p.opt.zeroCopy)}
		}
		p.zc = shared.zc
	case p.opt.zeroCopy == "on":
		if err := bind(xsk.BindZeroCopy); err != nil {
			return nil, fmt.Errorf("queue %d: binding in zero-copy mode: %w (the kernel driver of %s does not offer AF_XDP zero-copy here; zero-copy=auto falls back to copy mode)", kq, err, p.nd.name)
		}
		p.zc = true
	case p.opt.zeroCopy == "auto" && p.mode == "native":
		if err := bind(xsk.BindZeroCopy); err == nil {
			p.zc = true
			break
		}
		fallthrough
	default:
		if err := bind(xsk.BindCopy); err != nil {
			return nil, fmt.Errorf("queue %d: binding the AF_XDP socket: %w", kq, err)
		}
	}
	if q.group != nil {
		if len(q.group.live) == 0 {
			q.group.zc = p.zc
		}
		q.group.live = append(q.group.live, q)
	}
	return q, nil
}

// bindBusyWait bounds how long a bind waits out EBUSY: the kernel lets go
// of a closed socket's hold on its queue in deferred work, so a port
// opened right after another on the same queue closed (a forwarder
// restarted) finds the queue busy for a moment.
const bindBusyWait = time.Second

// bindWait binds, retrying while the queue is busy, up to bindBusyWait;
// a queue still busy then is bound to another socket, and the error says
// so.
func bindWait(fd int, sa *xsk.SockaddrXDP, ifname string, kq int) error {
	deadline := time.Now().Add(bindBusyWait)
	for {
		err := xsk.Bind(fd, sa)
		if err != unix.EBUSY {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: queue %d of %s is bound to another AF_XDP socket (another port or program runs on it: nicctl info xdp:%s names a gopmd one)", err, kq, ifname, ifname)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wakeRxNow makes the empty recvfrom (the fill ring has buffers; a
// busy-polling socket runs the driver's NAPI). RX goroutine.
func (q *queue) wakeRxNow() {
	xsk.WakeRx(q.fd)
	q.rxWakes.Add(1)
}

// wakeTxNow makes the empty sendto that has the kernel send the TX ring.
// TX goroutine.
func (q *queue) wakeTxNow() {
	xsk.Wake(q.fd)
	q.txWakes.Add(1)
}

// refill moves RX pool buffers into the fill ring in bulk, as many as it
// has room for. RX goroutine (or the control goroutine while stopped).
func (q *queue) refill() {
	f := q.fill
	room := f.room(batch)
	posted := false
	for room > 0 {
		n := q.rxPool.AllocBulkRaw(q.scratch[:min(room, batch)], q.rxOwner)
		if n == 0 {
			break
		}
		// The buffers go into the ring in at most two runs, the second
		// where it wraps. A buffer of the RX pool lies in the UMEM, so
		// its frame number is one of the slot table's.
		prod, slots := f.cached, q.rxSlot
		for done := 0; done < n; {
			run := f.addrRun(prod, uint32(n-done))
			for i, pk := range q.scratch[done : done+len(run)] {
				a := pk.BufIOVA()
				slots[a>>slotShift] = pk
				run[i] = a
			}
			done += len(run)
			prod += uint32(len(run))
		}
		f.cached = prod
		room -= uint32(n)
		posted = true
	}
	if posted {
		f.publish()
		if f.needWakeup() {
			q.wakeRxNow()
		}
	}
}

// RxBurst takes received frames off the RX ring, then refills the fill
// ring. Every descriptor is checked: an address outside the UMEM, naming a
// frame with no buffer posted, or a length past its frame is dropped as
// bad_descriptor. The kernel's producer index is read only when the
// frames last seen are all taken: an empty ring costs the gate, that load
// and the need_wakeup flag, and nothing else.
func (r *rxQueue) RxBurst(pkts []*pool.Packet) int {
	q := (*queue)(r)
	w, shared := q.rxFlag.Enter(&q.p.g)
	if shared {
		q.concurrent("rx", "RxBurst")
	}
	if w&gate.Closed != 0 {
		q.rxFlag.Leave()
		return 0
	}
	// The ring's avail, with the empty ring's test first: the frames last
	// seen all taken, and the producer index where it was.
	// (Compares rather than differences tested against 0: one instruction
	// fewer each.)
	rx := q.rx
	var n uint32
	if c := rx.cached; rx.seen == c {
		p := atomic.LoadUint32(rx.prod)
		if p == c {
			if q.wakeRx || q.fill.needWakeup() {
				q.wakeRxNow()
			}
			q.rxFlag.Leave()
			return 0
		}
		n = rx.saw(p - c)
	} else {
		n = rx.seen - rx.cached
	}
	got := q.receive(pkts, n)
	q.rxFlag.Leave()
	return got
}

// receive takes up to len(pkts) of the n frames the RX ring holds (n no
// more than the ring's size), counts them and refills the fill ring. RX
// goroutine, inside the gate.
func (q *queue) receive(pkts []*pool.Packet, n uint32) int {
	rx := q.rx
	n = min(n, uint32(len(pkts)))
	got, bytes := 0, uint64(0)
	// The descriptors in at most two runs, the second where the ring
	// wraps; takeRx stops at a descriptor it refuses, which refuse drops.
	for c, left := rx.cached, n; left > 0; {
		run := rx.descRun(c, left)
		k, b := q.takeRx(run, pkts[got:])
		got += k
		bytes += b
		if k < len(run) {
			q.refuse(run[k])
			k++
		}
		c += uint32(k)
		left -= uint32(k)
	}
	rx.cached += n
	rx.release()
	q.refill()
	q.rxc.Add(uint64(got), bytes)
	q.rxc.Drop(driver.CauseBadDescriptor, uint64(n)-uint64(got))
	return got
}

// takeRx takes the frames of a run of RX descriptors into out (which has
// room for every one of them), up to the first descriptor it refuses: an
// address outside the UMEM, naming a frame with no buffer posted, or a
// length of 0 or past the frame's end. It returns how many it took and
// their bytes.
func (q *queue) takeRx(descs []xsk.Desc, out []*pool.Packet) (int, uint64) {
	out = out[:len(descs)]
	// Every value the loop keeps fits in a register: the frame's offset
	// and length checked with one compare, the frame stored at its
	// descriptor's index, and no call: the refused descriptor is the
	// caller's.
	tag, slots, fmask := q.rxTag, q.rxSlot, q.frameMask
	bytes := uint64(0)
	for i := range descs {
		addr, ln := descs[i].Addr, descs[i].Len
		idx := addr >> slotShift
		// A length of 0 wraps ln-1 past any frame: refused with the ones
		// that run past the frame's end.
		off := addr & fmask
		if idx >= uint64(len(slots)) || off+uint64(ln-1) > fmask {
			return i, bytes
		}
		pk := slots[idx]
		if pk == nil {
			return i, bytes
		}
		slots[idx] = nil
		pk.SetRxRaw(uint(off), uint(ln), tag, 0, 0)
		out[i] = pk
		bytes += uint64(ln)
	}
	return len(descs), bytes
}

// refuse drops a descriptor takeRx refused: the buffer posted for its
// frame, if any, goes back to the RX pool (a descriptor for a frame with
// none posted names nothing the port handed out). Out of line, as
// Recycle inlined in the loop made the compiler keep the loop's values on
// the stack.
//
//go:noinline
func (q *queue) refuse(d xsk.Desc) {
	if idx := d.Addr >> slotShift; idx < uint64(len(q.rxSlot)) {
		if pk := q.rxSlot[idx]; pk != nil {
			q.rxSlot[idx] = nil
			q.rxPool.Recycle(pk)
		}
	}
}

// concurrent reports a second goroutine in a burst of the same queue
// (dir rx or tx, call the burst it entered).
//
//go:noinline
func (q *queue) concurrent(dir, call string) {
	panic(&driver.ConcurrentUse{Port: q.p.spec, Queue: fmt.Sprintf("%s %d", dir, q.idx), Call: call})
}

func (r *rxQueue) Pool() *pool.Pool { return r.rxPool }

func (r *rxQueue) Stats() driver.QueueStats { return r.rxc.Snapshot() }

// drainRx counts the frames left in the RX ring (stopped) and recycles
// their buffers. Control goroutine, with the gate closed.
func (q *queue) drainRx() {
	rx := q.rx
	n := rx.ready()
	for i := uint32(0); i < n; i++ {
		d := rx.desc(rx.cached + i)
		if idx := d.Addr >> slotShift; idx < uint64(len(q.rxSlot)) && q.rxSlot[idx] != nil {
			q.rxSlot[idx].Free()
			q.rxSlot[idx] = nil
		}
	}
	rx.cached += n
	rx.seen = rx.cached // nothing left in the view, whatever the kernel's index did
	rx.release()
	q.rxc.Drop(driver.CauseStopped, uint64(n))
}

// TxBurst queues frames on the TX ring: a frame in this socket's UMEM
// (its own, or the shared UMEM it is bound to, where another port received
// it) as it is, any other copied into a TX pool buffer (its own buffer is
// freed at once) and counted in tx_copies. One sendto wakes the kernel per burst, and only when it asks
// (need_wakeup). A chained frame, or one longer than a frame's room, is
// taken, freed and counted as too_big.
func (t *txQueue) TxBurst(pkts []*pool.Packet) int {
	q := (*queue)(t)
	w, shared := q.txFlag.Enter(&q.p.g)
	if shared {
		q.concurrent("tx", "TxBurst")
	}
	if w&gate.Closed != 0 {
		q.txFlag.Leave()
		return 0
	}
	tx := q.tx
	// The completion ring must hold every frame in flight: room is what
	// both the TX ring and the frames not yet reclaimed leave. The
	// kernel's consumer index is read only when the view of it leaves
	// less room than the burst needs.
	want := uint32(min(len(pkts), int(tx.size)))
	room := min(tx.room(want), tx.size-uint32(q.pending.Load()))
	if room < want {
		q.reclaim(true)
		room = min(tx.room(want), tx.size-uint32(q.pending.Load()))
	}
	n := min(int(room), len(pkts))
	prod := tx.cached
	taken, bytes, tooBig := 0, uint64(0), uint64(0)
	// Runs of frames that need nothing but a descriptor go through
	// txRun's loop; a frame it stops at is handled here, one at a time.
	for taken < n {
		run := tx.descRun(prod, uint32(n-taken))
		k, b := q.txRun(run, pkts[taken:n])
		prod += uint32(k)
		taken += k
		bytes += b
		if k == len(run) {
			continue // up to the ring's end, or done
		}
		pk := pkts[taken]
		if pk.Next() != nil || uint(pk.Len()-1) >= q.maxLen {
			pk.Free()
			tooBig++
			taken++
			continue
		}
		// Not in the UMEM: a copy.
		c := q.copyIn(pk)
		if c == nil {
			break // no copy buffer: the caller keeps the rest
		}
		a, l := q.umemAddr(c), uint32(c.Len())
		q.txSlot[a>>slotShift] = c
		*tx.desc(prod) = xsk.Desc{Addr: a, Len: l}
		prod++
		taken++
		bytes += uint64(l)
	}
	if q.nd > 0 {
		q.flushCopies()
	}
	if sent := prod - tx.cached; sent > 0 {
		tx.cached = prod
		q.pending.Add(int64(sent))
		tx.publish()
		q.txc.Add(uint64(sent), bytes)
	}
	q.txc.Drop(driver.CauseTooBig, tooBig)
	if tx.needWakeup() || (q.wakeTx && tx.pending() > 0) {
		q.wakeTxNow()
	}
	q.txFlag.Leave()
	return taken
}

// txRun writes a descriptor into descs for each frame of pkts, from the
// first, up to len(descs), as long as the frame is a single buffer in the
// UMEM whose length fits a frame (the frame it stops at is TxBurst's to
// handle), and returns how many it wrote and their bytes.
//
// A frame is in the UMEM when its buffer lies in the region's bytes: its
// UMEM address is then its buffer's offset there plus its data's, with no
// look-up of its pool (the region's IOVA is the offset, so it is the
// address the pool gave the buffer), and its frame number is one of the
// slot table's.
func (q *queue) txRun(descs []xsk.Desc, pkts []*pool.Packet) (int, uint64) {
	n := min(len(descs), len(pkts))
	descs, pkts = descs[:n], pkts[:n]
	umem, umemLen, maxLen, slots := q.umem, q.umemLen, q.maxLen, q.txSlot // as in refill
	bytes := uint64(0)
	for i := range descs {
		pk := pkts[i]
		at := uintptr(unsafe.Pointer(unsafe.SliceData(pk.Buf()))) - umem
		l := uint(pk.Len())
		if pk.Next() != nil || l-1 >= maxLen || at >= umemLen {
			return i, bytes
		}
		a := uint64(at) + uint64(pk.Headroom())
		slots[a>>slotShift] = pk
		descs[i] = xsk.Desc{Addr: a, Len: uint32(l)}
		bytes += uint64(l)
	}
	return n, bytes
}

// umemAddr is the UMEM address of the data of pk, a buffer in the UMEM.
func (q *queue) umemAddr(pk *pool.Packet) uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(pk.Buf()))) - q.umem + uintptr(pk.Headroom()))
}

// copyIn copies pk, a frame outside the UMEM, into a TX pool buffer and
// returns the copy, or nil when the TX pool has none; pk is freed with the
// burst's other copied frames (flushCopies). Out of line: TxBurst's loop
// keeps its values in registers for the frames that need no copy.
//
//go:noinline
func (q *queue) copyIn(pk *pool.Packet) *pool.Packet {
	c := q.txPool.Alloc()
	if c == nil {
		return nil
	}
	c.SetOwner(q.txOwner)
	copy(c.Append(pk.Len()), pk.Data())
	if q.nd == len(q.done) {
		q.flushCopies()
	}
	q.done[q.nd] = pk
	q.nd++
	return c
}

// flushCopies frees the frames copyIn copied and counts them.
func (q *queue) flushCopies() {
	pool.FreeBulk(q.done[:q.nd])
	q.copies.Add(uint64(q.nd))
	q.nd = 0
}

// Reclaim returns the buffers of sent frames to their pools, and wakes
// the kernel when frames wait in the TX ring and it asks for a wake-up.
func (t *txQueue) Reclaim() int {
	q := (*queue)(t)
	w, shared := q.txFlag.Enter(&q.p.g)
	if shared {
		q.concurrent("tx", "Reclaim")
	}
	if w&gate.Closed != 0 {
		q.txFlag.Leave()
		return 0
	}
	n := q.reclaim(true)
	q.txFlag.Leave()
	return n
}

// RecycleDirect implements driver.DirectRecycler: rx must be an RX queue
// of an xdp: port (nil takes the declaration back). Reclaim then returns
// the buffers of rx's pool (frames rx received in a UMEM shared with this
// queue's, umem=) straight into that pool's cache.
func (t *txQueue) RecycleDirect(rx driver.RxQueue) error {
	q := (*queue)(t)
	if rx == nil {
		q.direct, q.directRx = nil, nil
		return nil
	}
	r, ok := rx.(*rxQueue)
	if !ok {
		return fmt.Errorf("TX queue %d: RecycleDirect takes an RX queue of an xdp: port, not %T; without it reclaim frees through the pools' shared rings", q.idx, rx)
	}
	q.direct, q.directRx = r.rxPool, &r.rxFlag
	return nil
}

// reclaim is Reclaim inside the gate, with inBurst set (or, with it
// clear, on the control goroutine while stopped: then no buffer goes
// straight into the RecycleDirect pool's cache, which that goroutine does
// not own).
func (q *queue) reclaim(inBurst bool) int {
	own := q.txPool
	direct := q.direct
	if !inBurst {
		direct = nil
	} else if direct != nil && q.directRx.Active() {
		// Another goroutine is inside the RX queue whose pool we were
		// told we own: the declaration is false; free nothing.
		q.txFlag.Leave()
		q.concurrent("tx", "Reclaim (RecycleDirect: the paired RX queue is in use by another goroutine)")
	}
	c := q.comp
	total := uint32(0)
	bad := uint64(0)
	slots := q.txSlot // as in refill
	for {
		n := min(c.avail(), batch)
		if n == 0 {
			break
		}
		// The buffers go to a batch on the stack (no write barrier per
		// frame, as a store into the queue's own array would take); the
		// completions come in at most two runs, the second where the ring
		// wraps.
		var done [batch]*pool.Packet
		k := 0
		for i, left := c.cached, n; left > 0; {
			run := c.addrRun(i, left)
			for _, a := range run {
				idx := a >> slotShift
				if idx >= uint64(len(slots)) || slots[idx] == nil {
					bad++
					continue
				}
				done[k] = slots[idx]
				slots[idx] = nil
				k++
			}
			i += uint32(len(run))
			left -= uint32(len(run))
		}
		c.cached += n
		c.release()
		if k > 0 {
			// A batch is the received frames of the shared UMEM (the
			// RecycleDirect pool's) or this queue's copies, rarely both:
			// the first frame picks the pool whose cache takes the run,
			// the others go through their pools' rings.
			p := own
			if direct != nil && done[0].Pool() == direct {
				p = direct
			}
			p.FreeBulkDirect(done[:k])
		}
		total += uint32(k)
	}
	if total > 0 {
		q.pending.Add(-int64(total))
	}
	q.txc.Drop(driver.CauseBadDescriptor, bad)
	if q.tx.pending() > 0 && (q.wakeTx || q.tx.needWakeup()) {
		q.wakeTxNow()
	}
	return int(total)
}

// Pending is the number of frames queued and not yet completed.
func (t *txQueue) Pending() int { return int(t.pending.Load()) }

func (t *txQueue) Stats() driver.QueueStats { return t.txc.Snapshot() }

// close closes the socket (the kernel lets go of the UMEM and the rings),
// takes every posted buffer back, closes the pools and unmaps the UMEM.
func (q *queue) close(timeout time.Duration) error {
	if q.fd >= 0 {
		_ = unix.Close(q.fd)
		q.fd = -1
	}
	for _, r := range []*ring{q.fill, q.comp, q.rx, q.tx} {
		r.unmap()
	}
	for _, s := range [][]*pool.Packet{q.rxSlot, q.txSlot} {
		for i, pk := range s {
			if pk != nil {
				pk.Free()
				s[i] = nil
			}
		}
	}
	if q.group != nil {
		umems.Lock()
		defer umems.Unlock()
		err := q.group.leave(q, timeout)
		q.group, q.region = nil, nil
		return err
	}
	var err error
	for _, pl := range []*pool.Pool{q.rxPool, q.txPool} {
		if pl != nil {
			if e := pl.Close(timeout); e != nil && err == nil {
				err = fmt.Errorf("queue %d: %w", q.idx, e)
			}
		}
	}
	if err == nil && q.region != nil {
		err = q.region.Close()
		q.region = nil
	}
	return err
}

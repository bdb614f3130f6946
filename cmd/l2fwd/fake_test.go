package main

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// fakePort is a driver.Port reduced to queues over real pools: RX hands out
// preloaded frames in pool buffers, TX records and frees what it takes. It
// lets l2fwd's own logic be tested without a device model.
type fakePort struct {
	name   string
	mac    net.HardwareAddr
	rxq    []*fakeRx
	txq    []*fakeTx
	region *dma.Region
	closed atomic.Bool
}

type fakeRx struct {
	mu     sync.Mutex
	inbox  [][]byte
	repeat []byte // when set, every RxBurst fills the whole burst with it
	split  int    // when set, a longer frame arrives as two chained segments
	pool   *pool.Pool
	port   uint16
	queue  uint16
	ctr    driver.Counters
	// pauseUntil (Unix ns) keeps RxBurst empty until then, as a worker the
	// scheduler keeps off its CPU sees nothing.
	pauseUntil atomic.Int64
}

// fakeRing is the ring size a fake port reports.
const fakeRing = 512

type fakeTx struct {
	mu      sync.Mutex
	out     [][]byte
	room    int  // frames TxBurst takes in all (-1: unlimited); the ring is then full
	keep    bool // hold the buffers instead of freeing them (a leak)
	discard bool // free without recording (allocation tests)
	held    []*driver.Packet
	ctr     driver.Counters
}

// newFakePort makes a fake port whose buffers are mapped through m: ports
// given the same m are in one DMA domain (as devices in one VFIO container).
func newFakePort(name string, id uint16, queues int, mac net.HardwareAddr, m dma.Mapper) *fakePort {
	const bufs = 512
	r, err := dma.NewRegion(make([]byte, queues*bufs*2048), m, dma.Options{Attr: dma.Attr{Name: name}}, nil)
	if err != nil {
		panic(err)
	}
	p := &fakePort{name: name, mac: mac, region: r}
	for q := 0; q < queues; q++ {
		pl, err := pool.New(r, pool.Config{Name: fmt.Sprintf("%s-rx%d", name, q), Count: bufs, Offset: q * bufs * 2048})
		if err != nil {
			panic(err)
		}
		p.rxq = append(p.rxq, &fakeRx{pool: pl, port: id, queue: uint16(q)})
		p.txq = append(p.txq, &fakeTx{room: -1})
	}
	return p
}

func (r *fakeRx) RxBurst(pkts []*driver.Packet) int {
	if u := r.pauseUntil.Load(); u != 0 && time.Now().UnixNano() < u {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n, bytes := 0, 0
	for n < len(pkts) && (len(r.inbox) > 0 || r.repeat != nil) {
		p := r.pool.Alloc()
		if p == nil {
			break
		}
		f := r.repeat
		if f == nil {
			f = r.inbox[0]
		}
		p.PktLen, p.NSegs, p.Port, p.Queue = len(f), 1, r.port, r.queue
		if r.split > 0 && len(f) > r.split {
			q := r.pool.Alloc()
			if q == nil {
				r.pool.Recycle(p)
				break
			}
			q.SetLen(len(f) - r.split)
			copy(q.Data(), f[r.split:])
			p.SetNext(q)
			p.NSegs = 2
			f = f[:r.split]
		}
		if r.repeat == nil {
			r.inbox = r.inbox[1:]
		}
		p.SetLen(len(f))
		copy(p.Data(), f)
		pkts[n] = p
		n++
		bytes += p.PktLen
	}
	r.ctr.Add(uint64(n), uint64(bytes))
	return n
}
func (r *fakeRx) Pool() *pool.Pool         { return r.pool }
func (r *fakeRx) Stats() driver.QueueStats { return r.ctr.Snapshot() }

func (t *fakeTx) TxBurst(pkts []*driver.Packet) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(pkts)
	if t.room >= 0 && n > t.room {
		n = t.room
	}
	if t.room >= 0 {
		t.room -= n
	}
	bytes := 0
	for _, p := range pkts[:n] {
		if t.discard {
			bytes += p.Len()
			p.Free()
			continue
		}
		var whole []byte
		for s := p; s != nil; s = s.Next() {
			whole = append(whole, s.Data()...)
		}
		t.out = append(t.out, whole)
		bytes += p.PktLen
		if t.keep {
			t.held = append(t.held, p)
		} else {
			p.Free()
		}
	}
	t.ctr.Add(uint64(n), uint64(bytes))
	return n
}
func (t *fakeTx) Reclaim() int { return 0 }

// Pending implements driver.TxQueue: a fake whose room ran out reports a
// full ring.
func (t *fakeTx) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.room == 0 {
		return fakeRing
	}
	return 0
}

func (t *fakeTx) Stats() driver.QueueStats { return t.ctr.Snapshot() }

func (t *fakeTx) frames() [][]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([][]byte(nil), t.out...)
}

func (p *fakePort) Info() driver.PortInfo {
	return driver.PortInfo{Name: p.name, Driver: "fake", Backend: "test", MAC: p.mac,
		RxQueues: len(p.rxq), TxQueues: len(p.txq), RxRingSize: fakeRing, TxRingSize: fakeRing}
}
func (p *fakePort) Start() error { return nil }
func (p *fakePort) Stop() error  { return nil }
func (p *fakePort) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	var first error
	for _, r := range p.rxq {
		if err := r.pool.Close(50 * time.Millisecond); err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		_ = p.region.Close()
	}
	return first
}
func (p *fakePort) OnLinkChange(func(driver.LinkEvent)) func() { return func() {} } // its link never changes
func (p *fakePort) Link() driver.Link {
	return driver.Link{Up: true, SpeedMbps: 1000, FullDuplex: true}
}
func (p *fakePort) Stats() driver.PortStats {
	var s driver.PortStats
	for _, r := range p.rxq {
		q := r.Stats()
		s.RxQueues = append(s.RxQueues, q)
		s.Rx.Add(q)
	}
	for _, t := range p.txq {
		q := t.Stats()
		s.TxQueues = append(s.TxQueues, q)
		s.Tx.Add(q)
	}
	return s
}
func (p *fakePort) SetPromiscuous(bool) error       { return nil }
func (p *fakePort) SetMTU(int) error                { return nil }
func (p *fakePort) MAC() net.HardwareAddr           { return p.mac }
func (p *fakePort) SetMAC(m net.HardwareAddr) error { p.mac = m; return nil }
func (p *fakePort) RxQueue(i int) driver.RxQueue    { return p.rxq[i] }
func (p *fakePort) TxQueue(i int) driver.TxQueue    { return p.txq[i] }

// txFrames is everything the port's TX queues took.
func (p *fakePort) txFrames() [][]byte {
	var all [][]byte
	for _, t := range p.txq {
		all = append(all, t.frames()...)
	}
	return all
}

func (p *fakePort) load(q int, frames [][]byte) {
	r := p.rxq[q]
	r.mu.Lock()
	r.inbox = append(r.inbox, frames...)
	r.mu.Unlock()
}

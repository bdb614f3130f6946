package xdp

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/pool"
)

// A shared UMEM is one UMEM the sockets of several ports register once
// and bind to with XDP_SHARED_UMEM (Linux 5.10 on for sockets on other
// interfaces or queues, each with its own fill and completion rings): a
// frame one port received lies in the UMEM of the others, so their TX
// sends it as it is, with no copy. Ports of one process opened with the
// same umem=NAME share it; the first sizes it for umem-ports=N ports like
// itself (default 2).

// umemGroup is one shared UMEM: the region, the frames its members took
// (first fit on extents), the sockets bound to it, and the pools of
// members that closed while the others may still hold their buffers.
type umemGroup struct {
	name       string
	region     *dma.Region
	frameSize  int
	needWakeup bool
	nframes    uint64
	free       []extent // frames nobody holds, in order
	live       []*queue // sockets bound to the UMEM; live[0] registered it or is any still open
	retired    []retiredPool
	zc         bool // the UMEM's mode, its first socket's: every later socket binds in it
}

// extent is a run of UMEM frames.
type extent struct{ first, n uint64 }

var umems struct {
	sync.Mutex
	m map[string]*umemGroup
}

// errNoShare says why a socket could not join a shared UMEM; the port then
// gives the queue a UMEM of its own.
type errNoShare struct{ why string }

func (e *errNoShare) Error() string { return e.why }

// joinUmem takes n frames of the shared UMEM name for one socket,
// creating it (sized for ports ports of nper frames each) if no port holds
// it. The caller holds umems.
func joinUmem(name string, fs int, needWakeup bool, n, nper uint64, ports int) (*umemGroup, uint64, error) {
	if umems.m == nil {
		umems.m = map[string]*umemGroup{}
	}
	g := umems.m[name]
	if g == nil {
		total := nper * uint64(ports)
		r, err := dma.Alloc(umemMapper{}, int(total)*fs, dma.Options{Attr: dma.Attr{Name: "shared umem " + name}, Hugepages: dma.HugeNever})
		if err != nil {
			return nil, 0, err
		}
		g = &umemGroup{name: name, region: r, frameSize: fs, needWakeup: needWakeup, nframes: total, free: []extent{{0, total}}}
		umems.m[name] = g
	}
	switch {
	case g.frameSize != fs:
		return nil, 0, &errNoShare{fmt.Sprintf("shared UMEM %s has frames of %d bytes, this port %d (frame-size= must match)", name, g.frameSize, fs)}
	case g.needWakeup != needWakeup:
		return nil, 0, &errNoShare{fmt.Sprintf("shared UMEM %s binds with need-wakeup=%t, this port %t (a socket on a shared UMEM takes its first socket's flags)", name, g.needWakeup, needWakeup)}
	}
	for i, e := range g.free {
		if e.n >= n {
			g.free[i] = extent{e.first + n, e.n - n}
			if g.free[i].n == 0 {
				g.free = append(g.free[:i], g.free[i+1:]...)
			}
			return g, e.first, nil
		}
	}
	return nil, 0, &errNoShare{fmt.Sprintf("shared UMEM %s has no %d free frames left (it holds %d; umem-ports= on the port that opens it first sizes it)", name, n, g.nframes)}
}

// give returns frames to the group. The caller holds umems.
func (g *umemGroup) give(first, n uint64) {
	i := 0
	for i < len(g.free) && g.free[i].first < first {
		i++
	}
	g.free = append(g.free, extent{})
	copy(g.free[i+1:], g.free[i:])
	g.free[i] = extent{first, n}
	// Merge neighbours.
	out := g.free[:0]
	for _, e := range g.free {
		if k := len(out); k > 0 && out[k-1].first+out[k-1].n == e.first {
			out[k-1].n += e.n
			continue
		}
		out = append(out, e)
	}
	g.free = out
}

// leave takes q's socket off the group's list and keeps its pools until
// the last socket leaves (another port's TX ring may hold their buffers);
// then the group closes them all and unmaps the region. The caller holds
// umems. It returns what the last close found.
// retiredPool is a pool of a queue that left its group, closed when the
// last queue leaves, with the port and queue it served.
type retiredPool struct {
	pool  *pool.Pool
	spec  string
	queue int
}

func (g *umemGroup) leave(q *queue, timeout time.Duration) error {
	for i, x := range g.live {
		if x == q {
			g.live = append(g.live[:i], g.live[i+1:]...)
			break
		}
	}
	for _, pl := range []*pool.Pool{q.rxPool, q.txPool} {
		if pl != nil {
			g.retired = append(g.retired, retiredPool{pl, q.p.spec, q.idx})
		}
	}
	if q.shareFrames > 0 {
		g.give(q.shareFirst, q.shareFrames)
	}
	if len(g.live) > 0 {
		return nil
	}
	var errs []error
	for _, r := range g.retired {
		if err := r.pool.Close(timeout); err != nil {
			// The last port out closes every port's pools: an error names
			// the port a pool served when that is another.
			if r.spec != q.p.spec {
				err = fmt.Errorf("%s queue %d: %w", r.spec, r.queue, err)
			} else {
				err = fmt.Errorf("queue %d: %w", r.queue, err)
			}
			errs = append(errs, err)
		}
	}
	g.retired = nil
	if len(errs) == 0 {
		errs = append(errs, g.region.Close())
	}
	delete(umems.m, g.name)
	return errors.Join(errs...)
}

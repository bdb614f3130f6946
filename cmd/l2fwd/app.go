package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/safefile"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/tap"
	"github.com/gopmd/gopmd/wire"
)

// openPort opens one port; tests replace it.
var openPort = driver.OpenConfig

// running, when set, is told of each run once its workers are made (tests
// watch a run's workers through it).
var running func(a *app)

// capture ring sizes: per lane, frames up to a standard MTU are copied whole.
const (
	captureSlots    = 4096
	captureSlotSize = 2048
)

// app is one l2fwd run.
type app struct {
	o           *options
	ports       []driver.Port
	specs       []string
	lanes       []*lane
	cap         *capture
	stdout      io.Writer
	table       io.Writer // the stats table: stdout, or stderr with --json
	start       time.Time
	end         time.Time
	metricsAddr string // where --metrics listens, once it does
	nWorkers    int    // set by workers()
	ws          []*worker
	processCPU  int64  // ns of CPU the process used while the workers ran
	workerWhy   string // why that many
	portsMu     sync.Mutex
	bounces     []*bounceMem
	macs        []string
	// around is each port's surroundings (simport.go), kept from set-up
	// on: they outlive the port's closing.
	around   []surround
	twins    []*tap.Twin // --tap: port i's TAP twin
	tapNames []string    // their names, kept for the summary
	// tableRows counts the stats table's rows since its column header.
	tableRows int
}

// pairOf is the port a port forwards to: 0<->1, 2<->3, an odd last port to
// itself; in tx mode every port to itself.
func pairOf(i, n int, m mode) int {
	if m == modeTx {
		return i
	}
	if i^1 < n {
		return i ^ 1
	}
	return i
}

// forward opens the ports, runs the workers and shuts down in order.
//
// Every start-up failure returns 2, and the deferred cleanup then releases
// what was set up: the metrics server if it runs, then the ports, their
// pools and the capture (closeAll).
func forward(ctx context.Context, o *options, stdout, stderr io.Writer) (code int) {
	a := &app{o: o, stdout: stdout, table: stdout}
	if o.json {
		a.table = stderr
	}
	defer quietSimDMA(o.specs)()
	var stopMetrics func()
	defer func() {
		if code != 2 {
			return
		}
		if stopMetrics != nil {
			stopMetrics()
		}
		a.closeAll()
	}()
	if err := a.open(); err != nil {
		fmt.Fprintf(stderr, "l2fwd: %s\n", oneLine(err.Error()))
		return 2
	}
	if err := a.setup(); err != nil {
		fmt.Fprintf(stderr, "l2fwd: %s\n", oneLine(err.Error()))
		return 2
	}
	a.warnMACUpdating(stderr)
	if o.metrics != "" {
		var err error
		stopMetrics, err = serveMetrics(o.metrics, a)
		if err != nil {
			fmt.Fprintf(stderr, "l2fwd: --metrics %s: %s (pick a free port)\n", o.metrics, oneLine(err.Error()))
			return 2
		}
		// The port actually bound (--metrics 127.0.0.1:0 picks one).
		fmt.Fprintf(stderr, "l2fwd: metrics on http://%s/metrics, the ports' registers on http://%s/regs\n", a.metricsAddr, a.metricsAddr)
	}
	for i, p := range a.ports {
		if err := p.Start(); err != nil {
			fmt.Fprintf(stderr, "l2fwd: start port %d (%s): %s\n", i, a.specs[i], oneLine(err.Error()))
			return 2
		}
	}
	// From here on every change of a port's link is logged as it is seen
	// (the drivers' link watchers, link-poll=), until the ports stop.
	stopLinkLog := logLinkChanges(a.ports, a.specs, stderr)
	// Every port receives now: the inputs held since set-up may flow.
	for _, s := range a.around {
		s.release()
	}
	if a.cap != nil {
		a.cap.start()
	}

	if err := a.checkAdaptive(); err != nil {
		fmt.Fprintf(stderr, "l2fwd: %s\n", oneLine(err.Error()))
		return 2
	}
	workers := a.workers()
	if err := a.adaptive(workers); err != nil {
		fmt.Fprintf(stderr, "l2fwd: %s\n", oneLine(err.Error()))
		return 2
	}
	a.ws = workers
	stopTelemetry, ok := serveTelemetry(o, a, stderr)
	if !ok {
		return 2
	}
	defer stopTelemetry()
	if running != nil {
		running(a)
	}
	cpu0 := processCPU()
	// A worker locked to its thread never gives its P back: keep one more
	// for everything else (AF_PACKET readers, device engines, the capture
	// writer, metrics, this goroutine), or those would only run when the
	// scheduler preempts a worker, every 10 ms.
	if need := len(workers) + 1; runtime.GOMAXPROCS(0) < need {
		runtime.GOMAXPROCS(need)
	}
	var stop atomic.Bool
	done := make(chan struct{}, len(workers))
	a.start = time.Now()
	for _, w := range workers {
		go w.run(&stop, done)
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	a.printTableHeader()
	var tick <-chan time.Time
	if o.statsInterval > 0 {
		t := time.NewTicker(o.statsInterval)
		defer t.Stop()
		tick = t.C
	}
	var doneTick <-chan time.Time
	var ud untilDone
	var stalled error
	if o.untilDone {
		t := time.NewTicker(untilDoneCheck)
		defer t.Stop()
		doneTick = t.C
	}
	prev, prevT := a.snapshot(), time.Now()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case now := <-tick:
			cur := a.snapshot()
			a.printTable(prev, cur, now.Sub(prevT))
			prev, prevT = cur, now
		case now := <-doneTick:
			var finished bool
			if finished, stalled = ud.check(a, now); finished {
				break loop
			}
		}
	}

	// Shutdown: hold the inputs and let what is in flight through, stop
	// polling RX, then let every port drain its TX and take its buffers
	// back, then close: pools last, when all buffers are home.
	a.drain()
	stop.Store(true)
	for range workers {
		<-done
	}
	a.end = time.Now()
	a.processCPU = processCPU() - cpu0
	stopLinkLog()
	var runErrs []error
	if stalled != nil {
		runErrs = append(runErrs, stalled)
	}
	for i, p := range a.ports {
		if err := p.Stop(); err != nil {
			runErrs = append(runErrs, fmt.Errorf("stop port %d (%s): %w", i, a.specs[i], err))
		}
	}
	final := a.snapshot()
	for i, s := range a.around {
		if err := s.err(); err != nil {
			n, _ := s.produced()
			runErrs = append(runErrs, fmt.Errorf("port %d (%s): pcap-in stopped after %d frames: %w (the file is damaged; check it with capinfos or rewrite it with editcap)", i, a.specs[i], n, err))
		}
	}
	if a.cap != nil {
		if err := a.cap.close(); err != nil {
			runErrs = append(runErrs, fmt.Errorf("--capture: %w", err))
		}
	}
	if stopMetrics != nil {
		stopMetrics()
	}
	bleaks, berrs := a.closeBounces()
	tleaks, terrs := a.closeTwins()
	leaks, closeErrs := a.closePorts()
	leaks = append(leaks, bleaks...)
	leaks = append(leaks, tleaks...)
	runErrs = append(runErrs, berrs...)
	runErrs = append(runErrs, terrs...)
	runErrs = append(runErrs, closeErrs...)
	s := a.summary(final, leaks, runErrs)
	if o.json {
		a.printJSON(s)
	} else {
		a.printSummary(s)
	}
	for _, e := range runErrs {
		fmt.Fprintf(stderr, "l2fwd: %s\n", oneLine(e.Error()))
	}
	for _, l := range leaks {
		fmt.Fprintf(stderr, "l2fwd: leak: %s\n", oneLine(l))
	}
	for _, u := range s.Accounting.Unbalanced {
		fmt.Fprintf(stderr, "l2fwd: accounting: %s\n", u)
	}
	if len(leaks) > 0 || len(runErrs) > 0 || !s.Accounting.OK {
		return 1
	}
	return 0
}

// open opens every port; on error the ones already open stay in a.ports
// for closeAll.
func (a *app) open() error {
	for i, s := range a.o.specs {
		cfg := driver.Config{
			RxQueues: a.o.queues, TxQueues: a.o.queues,
			RxRingSize: a.o.ringSize, TxRingSize: a.o.ringSize,
			UnsafeNoIOMMU: a.o.unsafeNoIOMMU, PortID: uint16(i),
		}
		p, err := openPort(s, cfg)
		if err != nil {
			return fmt.Errorf("port %d: %w", i, err)
		}
		a.ports = append(a.ports, p)
		a.specs = append(a.specs, s)
	}
	return nil
}

// setup builds the lanes and the capture.
func (a *app) setup() error {
	n := len(a.ports)
	if a.o.capture != "" {
		if err := outputClash(a.o.capture); err != nil {
			return fmt.Errorf("--capture: %w", err)
		}
		f, err := safefile.Create(a.o.capture, safefile.Options{Overwrite: a.o.force, OverwriteHint: "--force"})
		if err != nil {
			return fmt.Errorf("--capture: %w", err)
		}
		w, err := wire.NewPcapWriter(f)
		if err != nil {
			return fmt.Errorf("--capture: %w", err)
		}
		a.cap = &capture{w: w}
	}
	a.around = surroundingsOf(a.specs)
	for _, s := range a.around {
		s.hold() // until every port has started (see forward)
	}
	for i, p := range a.ports {
		info := p.Info()
		a.macs = append(a.macs, p.MAC().String())
		dst := pairOf(i, n, a.o.mode)
		for q := 0; q < info.RxQueues; q++ {
			l := &lane{rxPort: i, rxQueue: q, txPort: -1, rx: p.RxQueue(q), mode: a.o.mode, macUpdate: a.o.macUpdating}
			l.pool = l.rx.Pool()
			if q == 0 {
				l.pump = a.around[i].pump()
			}
			if a.o.mode == modeFwd || a.o.mode == modeTx {
				di := a.ports[dst].Info()
				if q >= di.TxQueues {
					return fmt.Errorf("port %d (%s) has %d RX queues but its TX partner port %d has %d TX queues: give both the same queues= option or use --queues", i, a.specs[i], info.RxQueues, dst, di.TxQueues)
				}
				l.txPort = dst
				l.tx = a.ports[dst].TxQueue(q)
				// This lane's worker is the only goroutine that drives
				// l.tx and l.rx and uses l.rx's pool: its TX reclaim may
				// return that pool's buffers straight into its cache.
				// Ports of two different drivers cannot pair; their
				// buffers then return through the pool's shared ring.
				if dr, ok := l.tx.(driver.DirectRecycler); ok {
					_ = dr.RecycleDirect(l.rx)
				}
				d := macUpdatingDst(dst)
				copy(l.macs[0:6], d[:])
				copy(l.macs[6:12], a.ports[dst].MAC())
				if err := a.bounceIfNeeded(l, i, dst); err != nil {
					return err
				}
				if a.cap != nil {
					l.capture = wire.NewFrameRing(captureSlots, captureSlotSize)
					l.capBuf = make([]byte, captureSlotSize+1)
					a.cap.rings = append(a.cap.rings, l.capture)
				}
			}
			a.lanes = append(a.lanes, l)
		}
	}
	if len(a.lanes) == 0 {
		return errors.New("no RX queue to poll: the ports report 0 RX queues")
	}
	if err := a.setupTaps(); err != nil {
		return err
	}
	for _, l := range a.lanes {
		l.hooked = l.pump != nil || l.down != nil
	}
	return nil
}

// workers spreads the lanes over the workers, each locked to an OS thread:
// one worker per RX queue (lane), as a poll-mode forwarder wants, with two
// exceptions. When simulated ports run in engine mode, their
// DMA engine is a goroutine that needs a CPU of its own next to the workers
// (a worker never yields its thread), so the workers are capped at
// GOMAXPROCS-1 and some poll several queues in turn. And synchronous sim
// ports joined by a cable are driven by one worker together (see
// laneUnits). --workers N sets the count outright. It records why in
// a.workerWhy.
func (a *app) workers() []*worker {
	units, bound := a.laneUnits()
	n := a.o.workers
	a.workerWhy = "one per RX queue"
	if bound {
		a.workerWhy = "one per RX queue, but synchronous sim ports joined by a cable share one"
	}
	if n == 0 {
		n = len(units)
		// A worker never yields its CPU: by default the workers leave one
		// CPU to everything else (the link watchers, whose MDIO gate waits
		// for the queues, the engine-mode models' DMA engine, metrics), so
		// l2fwd never oversubscribes the CPUs it polls on.
		if n+1 > runtime.GOMAXPROCS(0) {
			n = max(1, runtime.GOMAXPROCS(0)-1)
			a.workerWhy = fmt.Sprintf("capped at GOMAXPROCS-1 = %d: a worker never yields its CPU, and one stays for the link watchers, metrics and device engines", n)
			if a.engines() > 0 {
				a.workerWhy = fmt.Sprintf("capped at GOMAXPROCS-1 = %d so the simulated devices' engine goroutine and the link watchers keep a CPU", n)
			}
		}
	} else {
		a.workerWhy = "set by --workers"
	}
	if n > len(units) {
		n = len(units)
	}
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = &worker{burst: a.o.burst}
	}
	for i, u := range units {
		ws[i%n].lanes = append(ws[i%n].lanes, u...)
	}
	a.nWorkers = n
	return ws
}

// laneUnits groups the lanes that must run on one goroutine. Some ports
// must be driven by the goroutine that drives another (driveWith: two
// synchronous device models joined by a cable hand each other frames on
// the sender's goroutine, and such a model is not built to receive on one
// goroutine while its driver refills on another). So every port reachable
// from such a pair, through that binding or through forwarding (RX port to
// TX port), is polled by one worker. Every other lane is a unit of its
// own. bound reports whether any group was formed.
func (a *app) laneUnits() (units [][]*lane, bound bool) {
	g := newGroups(len(a.ports))
	byName := map[string]int{}
	for i, spec := range a.specs {
		byName[deviceName(spec)] = i
	}
	tied := make([]bool, len(a.ports))
	for i, s := range a.around {
		if j, ok := byName[s.driveWith()]; ok && s.driveWith() != "" {
			g.join(i, j)
			tied[i], tied[j] = true, true
		}
	}
	for _, l := range a.lanes {
		if l.txPort >= 0 {
			g.join(l.rxPort, l.txPort)
		}
	}
	tiedRoot := map[int]bool{}
	for i, t := range tied {
		if t {
			tiedRoot[g.root(i)] = true
		}
	}
	group := map[int]int{} // root -> index in units
	for _, l := range a.lanes {
		r := g.root(l.rxPort)
		if !tiedRoot[r] {
			units = append(units, []*lane{l})
			continue
		}
		if k, ok := group[r]; ok {
			units[k] = append(units[k], l)
			bound = true
			continue
		}
		group[r] = len(units)
		units = append(units, []*lane{l})
	}
	return units, bound
}

// groups is a union-find over port indexes.
type groups []int

func newGroups(n int) groups {
	g := make(groups, n)
	for i := range g {
		g[i] = i
	}
	return g
}

func (g groups) root(i int) int {
	for g[i] != i {
		g[i] = g[g[i]]
		i = g[i]
	}
	return i
}

func (g groups) join(x, y int) { g[g.root(x)] = g.root(y) }

// workerNote says how many workers poll how many RX queues, and why.
func (a *app) workerNote() string {
	return fmt.Sprintf("%d worker(s) locked to OS threads for %d RX queue(s) (%s)", a.nWorkers, len(a.lanes), a.workerWhy)
}

// closePorts closes every port and sorts the errors into buffer leaks and
// others.
func (a *app) closePorts() (leaks []string, errs []error) {
	for i, p := range a.ports {
		err := p.Close()
		if err == nil {
			continue
		}
		var le *pool.LeakError
		if errors.As(err, &le) {
			leaks = append(leaks, fmt.Sprintf("port %d (%s): %s", i, a.specs[i], err))
			continue
		}
		errs = append(errs, fmt.Errorf("close port %d (%s): %w", i, a.specs[i], err))
	}
	a.portsMu.Lock()
	a.ports = nil
	a.portsMu.Unlock()
	return leaks, errs
}

// closeAll releases everything after a failed start-up.
func (a *app) closeAll() {
	_, _ = a.closeBounces()
	if len(a.twins) > 0 {
		for _, p := range a.ports {
			_ = p.Stop() // the twins' buffers come back from the TX rings
		}
		_, _ = a.closeTwins()
	}
	for _, p := range a.ports {
		_ = p.Close()
	}
	a.ports = nil
	if a.cap != nil {
		_ = a.cap.w.Close()
	}
}

// listenMetrics is net.Listen; a seam for nothing but clarity.
var listenMetrics = func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

// livePorts is the open ports, for the metrics collector (which may run
// while shutdown closes them).
func (a *app) livePorts() []driver.Port {
	a.portsMu.Lock()
	defer a.portsMu.Unlock()
	return append([]driver.Port(nil), a.ports...)
}

// bounceMem is a lane's bounce pool and the DMA memory under it.
type bounceMem struct {
	pool   *pool.Pool
	region *dma.Region
	name   string
}

// domainOf is the DMA mapper a port's RX buffers are mapped through: two
// ports with the same one can DMA each other's buffers.
func domainOf(p driver.Port) dma.Mapper {
	if p.Info().RxQueues == 0 {
		return nil
	}
	pl := p.RxQueue(0).Pool()
	if pl == nil || pl.Region() == nil {
		return nil
	}
	return pl.Region().Mapper()
}

// bounceIfNeeded gives a lane a bounce pool when its TX port is in another
// DMA domain than its RX port (each device has its own IOMMU domain): the
// TX device could not read the RX buffers, so frames are copied.
func (a *app) bounceIfNeeded(l *lane, rx, tx int) error {
	if rx == tx {
		return nil
	}
	rm, tm := domainOf(a.ports[rx]), domainOf(a.ports[tx])
	if rm == nil || tm == nil || dma.SameDomain(rm, tm) {
		return nil
	}
	count := a.o.ringSize + 2*maxBurst
	name := fmt.Sprintf("l2fwd-bounce-%d.%d-to-%d", rx, l.rxQueue, tx)
	r, err := dma.Alloc(tm, count*pool.DefaultBufSize, dma.Options{Attr: dma.Attr{Name: name}})
	if err != nil {
		return fmt.Errorf("port %d to port %d: bounce buffers for a second DMA domain: %w", rx, tx, err)
	}
	pl, err := pool.New(r, pool.Config{Name: name, Count: count})
	if err != nil {
		_ = r.Close()
		return fmt.Errorf("port %d to port %d: %w", rx, tx, err)
	}
	l.bounce = pl
	a.bounces = append(a.bounces, &bounceMem{pool: pl, region: r, name: name})
	return nil
}

// closeBounces closes the bounce pools (after the ports have stopped and
// given their TX buffers back) and reports leaks as pool.LeakErrors do.
func (a *app) closeBounces() (leaks []string, errs []error) {
	for _, b := range a.bounces {
		err := b.pool.Close(a.closeTimeout())
		var le *pool.LeakError
		switch {
		case errors.As(err, &le):
			leaks = append(leaks, err.Error())
			continue // its memory may still be read: keep it mapped
		case err != nil:
			errs = append(errs, err)
			continue
		}
		if err := b.region.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", b.name, err))
		}
	}
	a.bounces = nil
	return leaks, errs
}

func (a *app) closeTimeout() time.Duration { return 200 * time.Millisecond }

// engines counts the ports with a device-engine goroutine of their own
// (simulated devices in engine mode): each needs CPU time next to the
// workers.
func (a *app) engines() int {
	n := 0
	for _, s := range a.around {
		if s.engine() {
			n++
		}
	}
	return n
}

// untilDoneCheck is how often --until-done looks whether the run is over.
const untilDoneCheck = 10 * time.Millisecond

// How long nothing may move before --until-done ends a run that did not
// balance (untilDoneQuiet: a frame dropped where no counter sees it would
// otherwise keep it waiting), or one whose lossless input waits for
// receive buffers the port never posts (untilDoneStall: a link that is
// down, a stopped RX; a variable so that a test of the stall error need not
// wait the whole second).
const untilDoneQuiet = 250 * time.Millisecond

var untilDoneStall = time.Second

// untilDone is --until-done's view between two looks.
type untilDone struct {
	sig   []uint64
	since time.Time // when sig last changed
}

// check tells --until-done whether the run is over: every input that ends
// (pcap-in, gen-count) has ended and nothing moved since the last look.
// Normally every frame produced has then been received or counted and
// every received frame handled; a run where that is not so ends after
// untilDoneQuiet without movement (the accounting check says what is
// missing). An input still waiting for receive buffers after
// untilDoneStall without movement ends the run with an error saying so.
func (u *untilDone) check(a *app, now time.Time) (bool, error) {
	sig, balanced := a.progress()
	moved := !slices.Equal(sig, u.sig)
	if moved || u.since.IsZero() {
		u.sig, u.since = sig, now
		return false, nil
	}
	quiet := now.Sub(u.since)
	var waiting []string
	done := true
	for i, s := range a.around {
		d, w := s.done()
		done = done && d
		if w {
			waiting = append(waiting, fmt.Sprintf("port %d (%s)", i, a.specs[i]))
		}
	}
	switch {
	case done && (balanced || quiet >= untilDoneQuiet):
		return true, nil
	case len(waiting) > 0 && quiet >= untilDoneStall:
		return true, fmt.Errorf("--until-done: %s: its input waits for receive buffers and nothing moved for %v (is the link down or RX stopped?); ended with the input unfinished", strings.Join(waiting, ", "), untilDoneStall)
	}
	return false, nil
}

// progress is a signature of every counter that moves while frames flow,
// and whether every port balances now (every frame produced received or
// counted, every frame received handled or counted).
func (a *app) progress() ([]uint64, bool) {
	snap := a.snapshot()
	var sig []uint64
	balanced := true
	for i, s := range snap {
		produced, known := a.around[i].produced()
		in := s.stats.Rx.Packets + rxLost(s.stats.Rx)
		balanced = balanced && (!known || in == produced) && s.handled+s.txRefused+s.noBounce+s.tap.Taken == s.stats.Rx.Packets
		sig = append(sig, produced, in, s.stats.Tx.Packets, s.stats.Tx.TotalDrops(), s.handled, s.txRefused, s.noBounce, s.tap.Taken, s.tap.DownFrames, a.around[i].carried())
		for _, w := range s.wire {
			sig = append(sig, w.n)
		}
	}
	return sig, balanced
}

// Shutdown drain: a drain ends once the ports' accounting balances and
// nothing has moved for drainQuiet, or once nothing has moved for
// drainStuck however it stands (a worker the scheduler keeps off its CPU
// for a while does not end it early: what sits in an RX ring keeps the
// accounting open).
const (
	drainQuiet = 30 * time.Millisecond
	drainStuck = time.Second
)

// drain holds every port's inputs and lets the workers poll on until every
// frame already produced is received and handled (or counted), so none is
// left in an RX ring where no counter sees it. A port l2fwd cannot see the
// inputs of (a real device) is not waited for, as its wire never holds
// still.
func (a *app) drain() {
	known := false
	for _, s := range a.around {
		s.hold()
		_, k := s.produced()
		known = known || k
	}
	if !known {
		return
	}
	prev, _ := a.progress()
	still := time.Now()
	for {
		time.Sleep(drainQuiet / 3)
		cur, balanced := a.progress()
		if !slices.Equal(cur, prev) {
			prev, still = cur, time.Now()
			continue
		}
		if quiet := time.Since(still); (balanced && quiet >= drainQuiet) || quiet >= drainStuck {
			return
		}
	}
}

// logLinkChanges writes one line to w for every link change of every port
// ("l2fwd: port 1 (sim:fec0): link down (was up 1000 Mb/s full duplex)")
// and returns the function that stops it. The lines of several ports'
// watchers never interleave.
func logLinkChanges(ports []driver.Port, specs []string, w io.Writer) (stop func()) {
	var mu sync.Mutex
	stopped := false
	cancels := make([]func(), 0, len(ports))
	for i, p := range ports {
		i := i
		cancels = append(cancels, p.OnLinkChange(func(e driver.LinkEvent) {
			mu.Lock()
			if !stopped {
				fmt.Fprintf(w, "l2fwd: port %d (%s): link %s (was %s)\n", i, specs[i], e.New, e.Old)
			}
			mu.Unlock()
		}))
	}
	return func() {
		for _, c := range cancels {
			c()
		}
		mu.Lock() // a call under way finishes first; none writes after this
		stopped = true
		mu.Unlock()
	}
}

// quietSimDMA keeps the DMA layer's warnings (no huge pages: 4 KiB pages
// used instead) off stderr while l2fwd opens no real device: simulated
// devices do no real DMA, so the warning means nothing to them. It
// returns the function that puts the previous warning function back.
func quietSimDMA(specs []string) (restore func()) {
	for _, s := range specs {
		if sp, err := driver.ParseSpec(s); err == nil && sp.Scheme != "sim" {
			return func() {}
		}
	}
	old := dma.Warn
	dma.Warn = func(string) {}
	return func() { dma.Warn = old }
}

// warnMACUpdating warns, once per port at start, when --mac-updating
// (the default) rewrites the frames sent into a real network: hosts there
// drop frames to 02:00:00:00:00:<port> with another port's source MAC, so
// a bridge between real interfaces passes nothing until --no-mac-updating.
func (a *app) warnMACUpdating(w io.Writer) {
	if !a.o.macUpdating || a.o.mode != modeFwd {
		return
	}
	for i, spec := range a.specs {
		why := realNetwork(spec)
		if why == "" {
			continue
		}
		dst := macUpdatingDst(i)
		fmt.Fprintf(w, "l2fwd: warning: port %d (%s) faces a real network (%s) and MAC updating is on: frames sent out of it get destination %s and the port's own source MAC, which hosts there do not accept; add --no-mac-updating to forward frames unchanged (a bridge)\n",
			i, spec, why, net.HardwareAddr(dst[:]))
	}
}

// macUpdatingDst is the destination --mac-updating writes into frames sent
// out of port: 02:00:00:00:00:<port>, a locally administered address, as
// DPDK's l2fwd writes.
func macUpdatingDst(port int) [6]byte {
	const localAdmin = 0x02 // first octet: locally administered, unicast
	return [6]byte{localAdmin, 0, 0, 0, 0, byte(port)}
}

package xdp

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/internal/rxirq"
	"github.com/gopmd/gopmd/xdp/internal/xsk"
	"golang.org/x/sys/unix"
)

// Spec options of the xdp: scheme (beside Open's generic queues=, rxq=,
// txq=, rx-ring=, tx-ring=, pool-size=, buf-size= and port-id=; the
// generic promisc=, mtu= and unsafe-noiommu= are refused).
var backendOptions = []string{"mode", "zero-copy", "frame-size", "force", "pass", "queue", "busy-poll", "need-wakeup", "umem", "umem-ports"}

func init() {
	driver.RegisterBackend(driver.Backend{Scheme: "xdp", Options: backendOptions, Open: openDevice})
	driver.RegisterDriver(driver.Driver{
		Name:  "xdp",
		Match: func(d *driver.Device) bool { return d.Backend == "xdp" },
		New:   func(d *driver.Device, cfg driver.Config) (driver.Port, error) { return newPort(d, cfg) },
	})
}

// netdev is what the backend found: a kernel network interface.
type netdev struct {
	name    string
	index   int
	mac     net.HardwareAddr
	mtu     int
	rxQueue int // RX queues the kernel gives the interface (/sys/class/net/IF/queues/rx-*)
	addrs   []net.IP
}

func openDevice(s driver.Spec, cfg driver.Config) (*driver.Device, error) {
	if len(s.Name) > unix.IFNAMSIZ-1 {
		return nil, fmt.Errorf("interface name %q is longer than %d bytes", s.Name, unix.IFNAMSIZ-1)
	}
	ifc, err := net.InterfaceByName(s.Name)
	if err != nil {
		return nil, fmt.Errorf("no network interface %s in this network namespace (ip link shows the ones there are): %w", s.Name, err)
	}
	nd := &netdev{name: ifc.Name, index: ifc.Index, mac: ifc.HardwareAddr, mtu: ifc.MTU}
	ents, err := os.ReadDir("/sys/class/net/" + ifc.Name + "/queues")
	if err != nil {
		return nil, fmt.Errorf("reading the queues of %s: %w", ifc.Name, err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "rx-") {
			nd.rxQueue++
		}
	}
	if as, err := ifc.Addrs(); err == nil {
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok {
				nd.addrs = append(nd.addrs, n.IP)
			}
		}
	}
	if len(nd.mac) != 6 {
		return nil, fmt.Errorf("interface %s is not an Ethernet interface (hardware address %q)", ifc.Name, nd.mac)
	}
	return &driver.Device{Backend: "xdp", Bus: "netdev", Extra: nd}, nil
}

// options are the parsed xdp: options.
type options struct {
	mode      string // "native", "generic", "auto"
	zeroCopy  string // "on", "off", "auto"
	frameSize int
	force     bool
	pass      passRules
	first     int // the interface queue of the port's queue 0 (queue=)
	// needWakeup binds with XDP_USE_NEED_WAKEUP (need-wakeup=, default
	// on): the kernel says when it needs a syscall. Off, every TX burst
	// makes one.
	needWakeup bool
	// busyPoll is SO_BUSY_POLL in microseconds (busy-poll=, 0: off): the
	// socket prefers busy polling, and RxBurst and TxBurst make the
	// syscall that drives the driver's NAPI on every call that finds or
	// queues something to do.
	busyPoll int
	// umem names the shared UMEM the port's sockets join (umem=, empty:
	// each socket has its own); umemPorts is how many ports like this one
	// the first port to open it sizes it for (umem-ports=, default 2).
	umem      string
	umemPorts int
}

// busyPollBudget is the SO_BUSY_POLL_BUDGET of a busy-polling socket:
// frames the driver handles per busy poll, one RxBurst's batch.
const busyPollBudget = batch

func parseOptions(s driver.Spec, cfg driver.Config) (options, error) {
	o := options{mode: "auto", zeroCopy: "auto", frameSize: cfg.BufSize, needWakeup: true, umemPorts: 2}
	for _, k := range []string{"promisc", "mtu", "unsafe-noiommu"} {
		if s.Options.Has(k) {
			return o, &driver.OptionError{Option: k, Value: s.Options.Get(k), Problem: "not taken by the xdp driver",
				Accepted: "the kernel keeps the interface: set promiscuous mode and the MTU with ip link set " + s.Name + " promisc on, mtu N; an AF_XDP socket reaches only its own UMEM, so no IOMMU question arises"}
		}
	}
	choice := func(k string, dst *string, vals ...string) error {
		if !s.Options.Has(k) {
			return nil
		}
		v := s.Options.Get(k)
		for _, x := range vals {
			if v == x {
				*dst = v
				return nil
			}
		}
		return driver.BadOption(k, v, "not a value the xdp driver takes", strings.Join(vals, ", "))
	}
	if err := choice("mode", &o.mode, "native", "generic", "auto"); err != nil {
		return o, err
	}
	if err := choice("zero-copy", &o.zeroCopy, "on", "off", "auto"); err != nil {
		return o, err
	}
	if o.mode == "generic" && o.zeroCopy == "on" {
		return o, driver.BadOption("zero-copy", "on", "zero-copy needs the driver's own XDP support, and mode=generic runs XDP in the kernel's generic path", "zero-copy=off or auto with mode=generic; mode=native or auto with zero-copy=on")
	}
	if s.Options.Has("frame-size") {
		v := s.Options.Get("frame-size")
		n, err := strconv.Atoi(v)
		if err != nil {
			return o, driver.BadOption("frame-size", v, "not a number", "2048 or 4096")
		}
		o.frameSize = n
	}
	if o.frameSize != 2048 && o.frameSize != 4096 {
		k := "frame-size"
		if !s.Options.Has(k) {
			k = "buf-size"
		}
		return o, driver.BadOption(k, strconv.Itoa(o.frameSize), "a UMEM frame is a power of two from 2048 bytes to the page size", "2048 or 4096")
	}
	for _, c := range []struct {
		k   string
		dst *bool
	}{{"force", &o.force}, {"need-wakeup", &o.needWakeup}} {
		if !s.Options.Has(c.k) {
			continue
		}
		v := s.Options.Get(c.k)
		b, err := strconv.ParseBool(v)
		if v == "" {
			b, err = true, nil
		}
		if err != nil {
			return o, driver.BadOption(c.k, v, "not a truth value", "1 or 0")
		}
		*c.dst = b
	}
	if s.Options.Has("busy-poll") {
		v := s.Options.Get("busy-poll")
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1000000 {
			return o, driver.BadOption("busy-poll", v, "not a busy-poll time", "microseconds from 0 (off) to 1000000, as SO_BUSY_POLL takes them")
		}
		o.busyPoll = n
	}
	if s.Options.Has("umem") {
		v := s.Options.Get("umem")
		if v == "" || len(v) > 64 || strings.ContainsAny(v, " /") {
			return o, driver.OptionInSpec(s.Raw, driver.BadOption("umem", v, "not a shared UMEM name", "a name of up to 64 bytes without spaces or slashes; the ports of this process with the same umem= share one UMEM"))
		}
		o.umem = v
	}
	if s.Options.Has("umem-ports") {
		v := s.Options.Get("umem-ports")
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			return o, driver.OptionInSpec(s.Raw, driver.BadOption("umem-ports", v, "not a port count", "1 to 64: how many ports like this one the shared UMEM holds frames for, when this port opens it first"))
		}
		if o.umem == "" {
			return o, driver.OptionInSpec(s.Raw, driver.BadOption("umem-ports", v, "sizes a shared UMEM, and the spec names none", "umem=NAME with it, or leave it out"))
		}
		o.umemPorts = n
	}
	if s.Options.Has("queue") {
		v := s.Options.Get("queue")
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1023 {
			return o, driver.BadOption("queue", v, "not a queue number", "the interface queue of the port's queue 0, from 0; queues=N takes N queues from it")
		}
		o.first = n
	}
	if s.Options.Has("pass") {
		v := s.Options.Get("pass")
		for _, x := range strings.Split(v, ",") {
			switch x {
			case "arp":
				o.pass.ARP = true
			case "nd":
				o.pass.ND = true
			case "host":
				o.pass.Host = true
			case "none":
			default:
				return o, driver.BadOption("pass", v, "unknown kind "+strconv.Quote(x), "a comma-separated list of arp, nd, host; or none")
			}
		}
	}
	for _, c := range []struct {
		k string
		n int
	}{{"rx-ring", cfg.RxRingSize}, {"tx-ring", cfg.TxRingSize}} {
		if c.n&(c.n-1) != 0 {
			return o, driver.BadOption(c.k, strconv.Itoa(c.n), "an AF_XDP ring size is a power of two", "a power of two from 8 to 65536")
		}
	}
	if cfg.RxQueues != cfg.TxQueues {
		return o, driver.BadOption("rxq", strconv.Itoa(cfg.RxQueues), fmt.Sprintf("an AF_XDP socket has one RX and one TX ring: %d RX queues and %d TX queues cannot be", cfg.RxQueues, cfg.TxQueues), "queues=N")
	}
	return o, nil
}

// umemMapper is the dma.Mapper of a socket's UMEM: bus address i is byte
// i of the UMEM, the address AF_XDP descriptors carry. Every xdp port
// reports the one domain: its TX copies any frame that is not in its own
// socket's UMEM into one that is, so any memory reaches it (a forwarder
// needs no bounce buffers of its own between two xdp ports).
type umemMapper struct{}

type umemDomain struct{}

func (umemMapper) Map(mem []byte, a dma.Attr) (dma.Mapping, error) { return dma.Mapping{IOVA: 0}, nil }
func (umemMapper) Unmap([]byte, dma.Mapping) error                 { return nil }
func (umemMapper) Name() string                                    { return "xdp-umem" }
func (umemMapper) NeedsLocked() bool                               { return false }

// Domain is the one domain of every xdp port (see umemMapper).
func (umemMapper) Domain() any { return umemDomain{} }

// port is an AF_XDP port: one socket per queue on a kernel interface.
type port struct {
	spec  string
	nd    *netdev
	cfg   driver.Config
	opt   options
	steer *steering
	mode  string // "native" or "generic": how the program runs
	flags uint32 // XDP_FLAGS_*_MODE it was attached with
	zc    bool   // the sockets run zero-copy
	// stale is the id of the steering program a run that ended without
	// detaching it left on the interface, which the open replaced (0:
	// none).
	stale uint32
	// umemWhy says why queues of a port with umem= have UMEMs of their
	// own (one reason each).
	umemWhy []string
	queues  []*queue
	g       gate.Gate
	flagsQ  []*gate.Flag
	events  driver.LinkEvents
	irq     rxirq.Port // the sockets as RX interrupts (irq.go)
	lw      *linkWatcher

	statsMu sync.RWMutex // Stats against the sockets' close
	mu      sync.Mutex   // set-up calls
	started bool
	closed  bool
}

func newPort(d *driver.Device, cfg driver.Config) (_ driver.Port, err error) {
	nd, ok := d.Extra.(*netdev)
	if !ok {
		return nil, errors.New("xdp: the device carries no network interface")
	}
	opt, err := parseOptions(d.Spec, cfg)
	if err != nil {
		return nil, err
	}
	if opt.first+cfg.RxQueues > nd.rxQueue {
		return nil, driver.BadOption("queues", strconv.Itoa(cfg.RxQueues),
			fmt.Sprintf("interface %s has %d RX queues, and the port's would be queues %d to %d", nd.name, nd.rxQueue, opt.first, opt.first+cfg.RxQueues-1),
			fmt.Sprintf("queue= plus queues= at most %d (ethtool -L %s combined N gives it more)", nd.rxQueue, nd.name))
	}
	p := &port{spec: d.Spec.Raw, nd: nd, cfg: cfg, opt: opt}
	p.g.Init()
	p.irq.Init()
	defer func() {
		if err != nil {
			p.release()
		}
	}()
	if err := p.attach(); err != nil {
		return nil, err
	}
	for i := 0; i < cfg.RxQueues; i++ {
		q, err := p.newQueue(i, opt.umem != "")
		var ns *errNoShare
		if errors.As(err, &ns) {
			// Not shared: the queue gets a UMEM of its own, and the
			// frames it sends from the others are copied, as Info says.
			p.umemWhy = append(p.umemWhy, ns.why)
			q, err = p.newQueue(i, false)
		}
		if err != nil {
			return nil, err
		}
		p.queues = append(p.queues, q)
		p.flagsQ = append(p.flagsQ, &q.rxFlag, &q.txFlag)
	}
	if err := p.startLinkWatch(); err != nil {
		return nil, err
	}
	return p, nil
}

// attach loads the steering program and attaches it to the interface,
// refusing one that runs another program unless force is given; a
// program of ours (a crashed run's) is replaced.
func (p *port) attach() error {
	cur, err := queryXDP(p.nd.index)
	if err != nil {
		return fmt.Errorf("reading the XDP program of %s: %w", p.nd.name, err)
	}
	if cur.ProgID != 0 {
		name := "?"
		if pr, err := ebpf.NewProgramFromID(ebpf.ProgramID(cur.ProgID)); err == nil {
			if info, err := pr.Info(); err == nil {
				name = info.Name
			}
			pr.Close()
		}
		if name != progName && !p.opt.force {
			return fmt.Errorf("interface %s already runs XDP program %q (id %d, %s mode); give force=1 to replace it, or remove it with: ip link set dev %s xdp off",
				p.nd.name, name, cur.ProgID, attachedModeName(cur.Mode), p.nd.name)
		}
		if name == progName && !p.opt.force {
			// Ours: a running port's while a process holds it, else one
			// a run left that ended without detaching it (SIGKILL, a
			// crash), which is replaced.
			if hs, ok := progHolders(cur.ProgID); ok && len(hs) > 0 {
				return fmt.Errorf("interface %s carries gopmd's steering program (id %d, %s mode), in use by process %s: another port runs on it; stop that one first, or give force=1 to take the interface from it",
					p.nd.name, cur.ProgID, attachedModeName(cur.Mode), holderList(hs))
			}
			p.stale = cur.ProgID
		}
		// Ours from a run that ended without detaching it, or forced:
		// take it off in its mode.
		off := uint32(unix.XDP_FLAGS_SKB_MODE)
		if cur.Mode == xdpAttachedDrv {
			off = unix.XDP_FLAGS_DRV_MODE
		} else if cur.Mode == xdpAttachedHw {
			off = unix.XDP_FLAGS_HW_MODE
		}
		if err := setXDP(p.nd.index, -1, off, 0); err != nil {
			return fmt.Errorf("removing XDP program %q (id %d) from %s: %w", name, cur.ProgID, p.nd.name, err)
		}
	}
	p.steer, err = loadSteering(p.nd.rxQueue, p.opt.pass, p.nd.addrs)
	if err != nil {
		return fmt.Errorf("steering program: %w", err)
	}
	try := func(flags uint32) error {
		return setXDP(p.nd.index, p.steer.prog.FD(), flags|unix.XDP_FLAGS_UPDATE_IF_NOEXIST, 0)
	}
	switch p.opt.mode {
	case "native":
		if err := try(unix.XDP_FLAGS_DRV_MODE); err != nil {
			return fmt.Errorf("attaching the XDP program to %s in native mode: %w (the kernel driver may lack XDP support: mode=generic runs it in the generic path)", p.nd.name, err)
		}
		p.mode, p.flags = "native", unix.XDP_FLAGS_DRV_MODE
	case "generic":
		if err := try(unix.XDP_FLAGS_SKB_MODE); err != nil {
			return fmt.Errorf("attaching the XDP program to %s in generic mode: %w", p.nd.name, err)
		}
		p.mode, p.flags = "generic", unix.XDP_FLAGS_SKB_MODE
	default:
		if err := try(unix.XDP_FLAGS_DRV_MODE); err == nil {
			p.mode, p.flags = "native", unix.XDP_FLAGS_DRV_MODE
		} else if err2 := try(unix.XDP_FLAGS_SKB_MODE); err2 == nil {
			p.mode, p.flags = "generic", unix.XDP_FLAGS_SKB_MODE
		} else {
			return fmt.Errorf("attaching the XDP program to %s: native mode: %v; generic mode: %w", p.nd.name, err, err2)
		}
	}
	return nil
}

// detach takes our program off the interface if it is still the one there.
func (p *port) detach() error {
	if p.steer == nil || p.flags == 0 {
		return nil
	}
	info, err := p.steer.prog.Info()
	if err != nil {
		return err
	}
	id, _ := info.ID()
	cur, err := queryXDP(p.nd.index)
	if err != nil || cur.ProgID != uint32(id) {
		return err // someone else replaced it: theirs stays
	}
	if err := setXDP(p.nd.index, -1, p.flags, 0); err != nil {
		return fmt.Errorf("detaching the XDP program from %s: %w", p.nd.name, err)
	}
	p.flags = 0
	return nil
}

// release undoes New: sockets, program, memory.
func (p *port) release() error {
	var errs []error
	p.stopLinkWatch()
	p.irq.Close(p.cfg.StopTimeout) // no poll(2) on a socket closed under it
	p.statsMu.Lock()
	defer p.statsMu.Unlock()
	for _, q := range p.queues {
		if err := q.close(p.cfg.StopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.detach(); err != nil {
		errs = append(errs, err)
	}
	if p.steer != nil {
		p.steer.close()
	}
	return errors.Join(errs...)
}

func (p *port) Info() driver.PortInfo {
	zc := "copy"
	if p.zc {
		zc = "zero-copy"
	}
	dev := fmt.Sprintf("netdev %s (XDP %s mode, %s)", p.nd.name, p.mode, zc)
	dev += p.umemState()
	if p.stale != 0 {
		dev += fmt.Sprintf("; replaced steering program id %d, which a run that ended without detaching it left", p.stale)
	}
	return driver.PortInfo{
		Name: p.spec, Driver: "xdp", Device: dev, Backend: "xdp",
		MAC: p.MAC(), RxQueues: len(p.queues), TxQueues: len(p.queues),
		MaxRxQueues: p.nd.rxQueue, MaxTxQueues: p.nd.rxQueue,
		RxRingSize: p.cfg.RxRingSize, TxRingSize: p.cfg.TxRingSize,
		MTU: p.nd.mtu, MaxMTU: p.opt.frameSize - xsk.PacketHeadroom - 18,
	}
}

func (p *port) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return driver.ErrClosed
	}
	if p.started {
		return nil
	}
	for _, q := range p.queues {
		q.refill()
		if err := p.steer.xsks.Put(uint32(q.kq), uint32(q.fd)); err != nil {
			p.unsteer()
			return fmt.Errorf("steering interface queue %d to its socket: %w", q.kq, err)
		}
	}
	p.started = true
	p.g.Open(gate.Stopped)
	p.irq.Start()
	return nil
}

func (p *port) unsteer() {
	for _, q := range p.queues {
		_ = p.steer.xsks.Delete(uint32(q.kq))
	}
}

// Stop takes the sockets out of the program's map (frames for their
// queues go to the kernel's stack meanwhile), waits for queued TX frames
// to be sent, and counts the received frames no RxBurst took. Buffers
// posted in the fill rings stay there until Close.
func (p *port) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !p.started {
		return nil
	}
	p.g.Close(gate.Stopped)
	p.irq.Stop(nil) // wakes workers asleep on the sockets
	deadline := time.Now().Add(p.cfg.StopTimeout)
	gate.WaitIdle(p.flagsQ, time.Time{})
	p.unsteer()
	for _, q := range p.queues {
		for q.pending.Load() > 0 && time.Now().Before(deadline) {
			if q.reclaim(false) == 0 {
				time.Sleep(100 * time.Microsecond)
			}
		}
		q.reclaim(false)
		q.drainRx()
	}
	p.started = false
	return nil
}

func (p *port) Close() error {
	if err := p.Stop(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.release()
}

func (p *port) Link() driver.Link {
	b, err := os.ReadFile("/sys/class/net/" + p.nd.name + "/operstate")
	if err != nil || strings.TrimSpace(string(b)) != "up" {
		return driver.Link{}
	}
	l := driver.Link{Up: true, FullDuplex: true}
	if s, err := os.ReadFile("/sys/class/net/" + p.nd.name + "/speed"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(s))); err == nil && n > 0 {
			l.SpeedMbps = n
		}
	}
	if d, err := os.ReadFile("/sys/class/net/" + p.nd.name + "/duplex"); err == nil && strings.TrimSpace(string(d)) == "half" {
		l.FullDuplex = false
	}
	return l
}

// OnLinkChange subscribes fn to the interface's link changes (carrier
// lost or back, the interface set down or up), which an rtnetlink watch
// follows from New to Close (link.go); fn runs on the watch's goroutine.
func (p *port) OnLinkChange(fn func(driver.LinkEvent)) func() { return p.events.Subscribe(fn) }

// Stats are the queues' counters, with the kernel's XDP_STATISTICS of
// each socket: frames the socket lost (rx_dropped: no fill-ring buffer or
// too long for a frame; rx_ring_full: the RX ring had no room) count as
// no_buffer drops of their RX queue, descriptors the kernel refused on TX
// (tx_invalid_descs) as bad_descriptor drops of the TX queue; all six
// appear in HW as xdp_<name> sums and drv_rxN_xdp_<name> per queue, as do
// rx_wakeups and tx_wakeups, the port's own count of the wake-up syscalls
// it made (recvfrom, sendto), and tx_copies, the frames TX copied into the
// UMEM because they lay outside it.
func (p *port) Stats() driver.PortStats {
	var s driver.PortStats
	s.HW = map[string]uint64{}
	p.statsMu.RLock()
	defer p.statsMu.RUnlock()
	for _, q := range p.queues {
		var k xsk.Statistics
		if q.fd >= 0 {
			_, _ = xsk.GetOpt(q.fd, xsk.OptStatistics, &k)
		}
		rx, tx := q.rxc.Snapshot(), q.txc.Snapshot()
		rx.Drops[driver.CauseNoBuffer] += k.RxDropped + k.RxRingFull
		tx.Drops[driver.CauseBadDescriptor] += k.TxInvalidDescs
		s.RxQueues = append(s.RxQueues, rx)
		s.TxQueues = append(s.TxQueues, tx)
		s.Rx.Add(rx)
		s.Tx.Add(tx)
		for _, c := range []struct {
			n string
			v uint64
		}{{"rx_dropped", k.RxDropped}, {"rx_invalid_descs", k.RxInvalidDescs}, {"tx_invalid_descs", k.TxInvalidDescs},
			{"rx_ring_full", k.RxRingFull}, {"rx_fill_ring_empty_descs", k.RxFillRingEmptyDescs}, {"tx_ring_empty_descs", k.TxRingEmptyDescs},
			{"rx_wakeups", q.rxWakes.Load()}, {"tx_wakeups", q.txWakes.Load()}, {"tx_copies", q.copies.Load()}} {
			s.HW["xdp_"+c.n] += c.v
			s.HW[fmt.Sprintf("drv_rx%d_xdp_%s", q.idx, c.n)] = c.v
		}
	}
	return s
}

var errKernelOwns = errors.New("the kernel keeps this interface: change it with ip link")

func (p *port) SetPromiscuous(on bool) error {
	return fmt.Errorf("promiscuous mode: %w (ip link set %s promisc on)", errKernelOwns, p.nd.name)
}

func (p *port) SetMTU(mtu int) error {
	return fmt.Errorf("MTU: %w (ip link set %s mtu %d)", errKernelOwns, p.nd.name, mtu)
}

func (p *port) MAC() net.HardwareAddr { return append(net.HardwareAddr(nil), p.nd.mac...) }

func (p *port) SetMAC(mac net.HardwareAddr) error {
	if prob := driver.MACProblem(mac); prob != "" {
		return fmt.Errorf("MAC %v: %s", mac, prob)
	}
	return fmt.Errorf("MAC address: %w (ip link set %s address %v)", errKernelOwns, p.nd.name, mac)
}

func (p *port) RxQueue(i int) driver.RxQueue {
	if i < 0 || i >= len(p.queues) {
		return nil
	}
	return (*rxQueue)(p.queues[i])
}

func (p *port) TxQueue(i int) driver.TxQueue {
	if i < 0 || i >= len(p.queues) {
		return nil
	}
	return (*txQueue)(p.queues[i])
}

// umemState is what Info says of a port with umem=: the shared UMEM its
// queues are bound to, or why a queue has its own.
func (p *port) umemState() string {
	if p.opt.umem == "" {
		return ""
	}
	shared := 0
	for _, q := range p.queues {
		if q.group != nil {
			shared++
		}
	}
	s := fmt.Sprintf("; UMEM %s shared by %d of %d queues", p.opt.umem, shared, len(p.queues))
	if len(p.umemWhy) > 0 {
		s += " (not shared, frames sent from other ports are copied: " + strings.Join(p.umemWhy, "; ") + ")"
	}
	return s
}

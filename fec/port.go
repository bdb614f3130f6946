package fec

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/internal/mii"
	"github.com/gopmd/gopmd/pool"
)

// Spec options the driver understands.
var options = []string{"bd", "phy", "fixed-link", "phy-mode", "link-poll", "mac", "dma-coherent", "shift16", "rx-coalesce-frames", "rx-coalesce-ticks", "ptp-clock", "phy-reset", "timestamps"}

func init() {
	driver.RegisterDriver(driver.Driver{
		Name:    "fec",
		Options: options,
		Match: func(d *driver.Device) bool {
			if d.Bus != "platform" {
				return false
			}
			_, ok := lookupProfile(d.Compatible)
			return ok
		},
		New:         func(d *driver.Device, cfg driver.Config) (driver.Port, error) { return New(d, cfg) },
		RegisterMap: rawRegisterMap,
	})
}

// rawRegisterMap is RegisterMap, less what lies past window 0, for tools
// that read registers without a port.
func rawRegisterMap(d *driver.Device) []driver.RegDesc {
	if len(d.Regions) == 0 || d.Regions[0] == nil {
		return nil
	}
	size := d.Regions[0].Size()
	var out []driver.RegDesc
	for _, r := range RegisterMap() {
		if int(r.Offset)+4 > size {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Sizes that follow from the reference (§4.1, §2.5).
const (
	ethHdr     = 14
	fcsLen     = 4
	vlanLen    = 4
	shiftLen   = 2     // RACC.SHIFT16 pad
	maxFLLimit = 16383 // RCR.MAX_FL is 14 bits
	// storeFwdMax is the longest frame sent store-and-forward (§2.8, §4.1):
	// Linux's PKT_MAXBUF_SIZE, round_down(2048 - 64, 64). Longer frames
	// (jumbo parts only) are sent cut-through.
	storeFwdMax = 1984
	// tfwrCutThrough is TFWR for cut-through: STRFWD clear, transmission
	// starts at watermark 0xF (Linux's value for jumbo MTUs).
	tfwrCutThrough = 0xF
	maxRxSegs      = 16 // BDs one received frame may span
	maxTxSegs      = 16 // BDs one transmitted frame may span
	mdcHz          = 2_500_000
	// ipgHzBound is the fastest ENET register clock assumed when
	// deriving the MDC divider: user space does not know the real clock,
	// and a slower MDC than needed is always safe.
	ipgHzBound = 266_000_000
	// defaultLinkPoll is how often the link watcher reads the PHY while
	// no frame flows: a few MDIO frames of ~25 µs each, once a second
	// (link-poll= overrides it; fastLinkPoll while frames flow).
	defaultLinkPoll = time.Second
)

// Port is one FEC/ENET MAC driven from user space. It implements
// driver.Port; the exported methods beyond it serve the bring-up tool.
type Port struct {
	dev     *driver.Device
	regs    driver.Regs
	prof    *profile
	cfg     driver.Config
	name    string
	ownerID string

	enhanced    bool
	stamps      driver.Timestamps // timestamps=: the stamped RX and TX calls, the clock started at Start
	nonCoherent bool
	// uncachedBufs: packet buffers must be uncached because the device is
	// non-coherent and this CPU cannot maintain caches from user space
	// (32-bit ARM); a simulated IOMMU plays the cache itself instead.
	uncachedBufs bool
	noShift16    bool // shift16=0
	shift        int  // 2 with RACC.SHIFT16, else 0
	headroom     int
	rxBufLen     int // bytes the device may write per RX buffer
	maxFL        int
	mtu          int
	phyMode      string
	promisc      bool
	allMulti     bool                 // every group passes the hash filter (multicast.go)
	mcGroups     map[[6]byte]struct{} // multicast groups joined
	mac          net.HardwareAddr

	rx      []*rxQueue
	tx      []*txQueue
	regions []*dma.Region // ring memory, closed after the pools

	// avbSlope is the IDLE_SLOPE of AVB rings 1 and 2 (0: Linux's 0x200)
	// and tcMap the priority map set (avb.go); under ctl.
	avbSlope [3]uint16
	tcMap    driver.TCMap

	// ctl serialises the control path: Start, Stop, the setters and the
	// link watcher, which all write ECR, RCR or TCR and read the settings
	// above. The data path never takes it.
	ctl     sync.Mutex
	started bool
	closed  bool
	// shut is closed for the lock-free callers (Stats, Link, MDIO, the
	// queue accessors); set by Close before the device is released.
	shut  atomic.Bool
	final driver.PortStats // the counters Close read before it released the device
	// gate is read once per burst by every queue (internal/gate): Stopped
	// from New until Start and from the start of Stop; LinkDown while the
	// PHY last reported the link down (the MAC does not sense the link
	// itself and would "send" into nothing).
	gate gate.Gate

	phyAddr int  // phyFixed (-1): no PHY answered, or phy=none / fixed-link
	phySet  bool // phy=N or phy=none was given
	phyScan bool // phy=scan: the own bus's one PHY, the device tree ignored
	// phyModeName is the phy-mode the PHY is set up for (option phy-mode=,
	// else the device tree's; "" leaves its delays alone); phyResetKeep
	// is phy-reset=keep; phyResetBusy a reset line someone else held
	// (checkPHYReset); phySetup what was done to the PHY (physetup.go).
	phyModeName  string
	phyResetKeep bool
	phyResetBusy error
	phySetup     mii.Report
	ecrDelays    uint32 // ECR.TXC_DLY and RXC_DLY from tx/rx-internal-delay-ps (physetup.go)
	linkMu       sync.Mutex
	link         driver.Link // what Link reports: phyLink once the MAC runs for it
	// phyLink is what the PHY last reported (ctl held); macLink is the
	// link the MAC's speed and duplex bits are programmed for (ctl held);
	// restartMAC brings macLink in line with phyLink.
	phyLink driver.Link
	macLink driver.Link
	// macHeld: a restart disabled the MAC and found the DMA still active;
	// the MAC stays disabled and the gate closed until a later restartMAC
	// sees the DMA idle (ctl held).
	macHeld      bool
	restarts     atomic.Uint64     // restartMAC runs that completed
	restartFails atomic.Uint64     // restartMAC runs that ran out of time
	linkEv       driver.LinkEvents // OnLinkChange's subscribers; flushed after ctl is released
	linkPoll     time.Duration
	watchStop    chan struct{} // closed to end the watcher (link, ERR006358 stalls)
	watchDone    chan struct{} // closed by the watcher when it ends

	// own is the MDIO bus this port's MAC drives; bus is the one its PHY
	// sits on (own, another port's, or the kernel's: mdiobus.go).
	own *mdioBus
	bus phyBus

	// fixedLink is the link without a PHY (phy.go, setFixedLink) and
	// fixedFrom what set it; fixedOpt is option fixed-link=.
	fixedLink driver.Link
	fixedFrom string
	fixedOpt  fixedLinkOpt

	irq irqState // RX interrupts (irq.go)

	ptpMu   sync.Mutex
	ptp     *ptpClock // the 1588 timer once Clock was called (ptp.go)
	ptpHz   uint64    // ptp-clock=
	ptpGone bool      // Close has begun: Clock refuses (ptpMu)

	statsMu  sync.Mutex
	busErrs  uint64 // EBERR found set and not a TX frame's (busErrorLocked)
	mibLast  [len(mibNames)]uint32
	mibSum   [len(mibNames)]uint64
	mibBased bool // mibLast holds the counters' values after a reset
}

// New brings up a port on d (not started). It is the driver's
// driver.Driver.New; most programs call driver.Open instead.
func New(d *driver.Device, cfg driver.Config) (*Port, error) {
	cfg = cfg.Defaults()
	prof, ok := lookupProfile(d.Compatible)
	if !ok {
		return nil, fmt.Errorf("no quirk profile for compatible %q; known: %s", d.Compatible, knownCompatibles())
	}
	if prof.has(qSwapFrame) {
		return nil, fmt.Errorf("%s stores frame data big-endian per word (i.MX28); this driver does not swap frames", prof.compatible)
	}
	if len(d.Regions) == 0 || d.Regions[0] == nil {
		return nil, errors.New("device has no register window; the backend must map the node's first reg range")
	}
	regs := d.Regions[0]
	if regs.Size() < minWindow {
		return nil, fmt.Errorf("register window of %#x bytes is smaller than the %#x the driver uses (MIB counters end at 0x2E0)", regs.Size(), minWindow)
	}
	if d.Mapper == nil {
		return nil, errors.New("device has no DMA mapper; the backend must provide one (pagemap, carve-out, IOMMU or sim)")
	}
	p := &Port{dev: d, regs: regs, prof: prof, cfg: cfg, name: d.Spec.Raw, phyAddr: -1,
		headroom: pool.DefaultHeadroom, phyMode: prof.phyMode, linkPoll: defaultLinkPoll}
	p.gate.Init() // stopped until Start
	p.irq.Init()
	if p.name == "" {
		p.name = "fec"
	}
	p.ownerID = p.name
	p.own = &mdioBus{owner: p, name: p.name}
	p.bus = ownBus{p.own}
	if err := p.parseOptions(); err != nil {
		return nil, err
	}
	p.setRingLines()
	if cfg.RxQueues > prof.maxQueues() || cfg.TxQueues > prof.maxQueues() {
		return nil, fmt.Errorf("%d RX / %d TX queues asked; %s has %d of each (queues=%d)",
			cfg.RxQueues, cfg.TxQueues, prof.compatible, prof.maxQueues(), prof.maxQueues())
	}
	if prof.has(qRACC) && !p.noShift16 {
		p.shift = shiftLen
	}
	p.rxBufLen = (cfg.BufSize - p.headroom) &^ 15 // MRBR[13:4]: a multiple of 16
	if p.rxBufLen < 64 || p.rxBufLen > 0x3FF0 {
		return nil, fmt.Errorf("buf-size=%d leaves %d bytes per RX buffer after %d of headroom; MRBR must be 64..16368 (use buf-size=2048)", cfg.BufSize, p.rxBufLen, p.headroom)
	}
	if uint64(p.headroom)&prof.rxAlign() != 0 {
		return nil, fmt.Errorf("RX data at headroom %d breaks the %d-byte buffer alignment %s needs", p.headroom, prof.rxAlign()+1, prof.compatible)
	}
	if err := p.setMTU(cfg.MTU); err != nil {
		return nil, err
	}
	p.promisc = *cfg.Promiscuous
	_, simSync := d.Mapper.(dma.Syncer)
	if simSync {
		p.nonCoherent = d.NonCoherent
	}
	p.uncachedBufs = p.nonCoherent && !dma.CacheMaintenance && !simSync
	if !simSync && p.nonCoherent {
		if _, ok := d.Mapper.(dma.Allocator); !ok {
			what := "descriptor rings need"
			if !dma.CacheMaintenance {
				what = "descriptor rings and (on 32-bit ARM, which cannot clean or invalidate caches from user space) packet buffers need"
			}
			return nil, fmt.Errorf("%s DMA is not cache-coherent, so %s uncached memory, which this backend's %s mapper cannot give (huge pages do not help): reserve RAM below 4 GiB that the kernel does not manage, with a reserved-memory node with no-map or by booting with mem= below the RAM size, and name it with dma-carveout=ADDR+SIZE; nicctl info platform:NODE finds such a range or prints the lines to add. dma-coherent=1 only if the device does snoop caches (QEMU)", prof.compatible, what, d.Mapper.Name())
		}
	}
	if _, isPM := d.Mapper.(*dma.Pagemap); isPM {
		if err := checkNoMigration(compactSysctl); err != nil {
			return nil, err
		}
	}
	if err := p.allocRings(); err != nil {
		p.freeMemory()
		return nil, err
	}
	if p.mac == nil { // no mac= option
		p.mac = p.readMAC()
	}
	if err := p.reset(); err != nil {
		p.freeMemory()
		return nil, err
	}
	if err := p.resetPHY(); err != nil {
		p.freeMemory()
		return nil, err
	}
	if err := p.selectPHY(); err != nil {
		p.freeMemory()
		return nil, err
	}
	if err := p.checkPHYReset(); err != nil {
		p.freeMemory()
		return nil, err
	}
	if err := p.configurePHY(); err != nil {
		p.freeMemory()
		return nil, err
	}
	if err := p.capPHYAdvertisement(); err != nil {
		p.freeMemory()
		return nil, err
	}
	p.registerBus()
	return p, nil
}

// compactSysctl is the switch that lets memory compaction move mlocked
// pages (a variable so tests can point it elsewhere).
var compactSysctl = "/proc/sys/vm/compact_unevictable_allowed"

// checkNoMigration refuses pagemap DMA memory while the kernel may migrate
// mlocked pages: the device would keep writing to the physical address the
// driver gave it after the page moved away. A kernel without the switch
// (no compaction) cannot move them.
func checkNoMigration(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("pagemap DMA memory: read %s: %w", path, err)
	}
	if strings.TrimSpace(string(b)) != "0" {
		return fmt.Errorf("pagemap DMA memory needs pages that stay put, but %s is %s: compaction may move mlocked pages under the device; run sysctl -w vm.compact_unevictable_allowed=0, or name a carve-out (dma-carveout=ADDR+SIZE)", path, strings.TrimSpace(string(b)))
	}
	return nil
}

// errClosed is what calls that would touch a released device return:
// driver.ErrClosed, which the caller puts in the context of the port.
func (p *Port) errClosed() error { return driver.ErrClosed }

// concurrentUse reports a burst entered while another goroutine is inside
// one on the same queue. It panics: the call has no error to return, and
// going on would hand one buffer to two owners.
//
//go:noinline
func (p *Port) concurrentUse(kind string, id int, call string) {
	panic(&driver.ConcurrentUse{Port: p.name, Queue: kind + " " + strconv.Itoa(id), Call: call})
}

func knownCompatibles() string {
	s := ""
	for i, pr := range profiles {
		if i > 0 {
			s += ", "
		}
		s += pr.compatible
	}
	return s
}

func (p *Port) parseOptions() error {
	get := p.dev.Spec.Option
	p.enhanced = p.prof.has(qBufDescEx)
	if err := p.parseIRQOptions(get); err != nil {
		return err
	}
	if err := p.parseFixedLink(get); err != nil {
		return err
	}
	if err := p.parsePTPOptions(get); err != nil {
		return err
	}
	if v, ok := get("shift16"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return driver.BadOption("shift16", v, "not a truth value", "1 or 0")
		}
		p.noShift16 = !b
	}
	if v, ok := get("bd"); ok {
		switch v {
		case "legacy":
			p.enhanced = false
		case "enhanced":
			if !p.prof.has(qBufDescEx) {
				return driver.BadOption("bd", v, p.prof.compatible+" has only legacy 8-byte descriptors", "legacy")
			}
			p.enhanced = true
		default:
			return driver.BadOption("bd", v, "unknown descriptor format", "legacy or enhanced")
		}
	}
	if v, ok := get("timestamps"); ok {
		t, err := driver.ParseTimestamps(v)
		if err != nil {
			return err
		}
		if t != 0 && !p.enhanced {
			why := p.prof.compatible + " has only legacy 8-byte descriptors, which hold no timestamp"
			accepted := "off: this part has no 1588 timestamps"
			if p.prof.has(qBufDescEx) {
				why, accepted = "bd=legacy descriptors hold no timestamp", "off, or drop bd=legacy (the 32-byte enhanced descriptors carry the 1588 timestamp)"
			}
			return driver.BadOption("timestamps", v, why, accepted)
		}
		p.stamps = t
	}
	if v, ok := get("phy"); ok {
		n, err := strconv.Atoi(v)
		switch {
		case v == "scan":
			p.phyScan = true // the port's own bus, whatever the device tree says
		case v == "none":
			p.phyAddr, p.phySet = phyFixed, true
		case err != nil || n < 0 || n > 31:
			return driver.BadOption("phy", v, "not a PHY address", "0 to 31, none (fixed link: no PHY) or scan (the one PHY on the port's own MDIO bus)")
		default:
			p.phyAddr, p.phySet = n, true
		}
	}
	if v, ok := get("link-poll"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Hour {
			return driver.BadOption("link-poll", v, "not a poll interval", "a duration from 0 to 1h such as 100ms; 0 reads the PHY only at Start and UpdateLink")
		}
		p.linkPoll = d
	}
	if v, ok := get("mac"); ok {
		m, err := driver.MACOption(v)
		if err != nil {
			return err
		}
		p.mac = m
	}
	p.phyModeName = p.readDTPhyMode()
	if v, ok := get("phy-mode"); ok {
		switch v {
		case "rgmii", "rmii", "mii":
			p.phyMode, p.phyModeName = v, v
		case "rgmii-id", "rgmii-rxid", "rgmii-txid":
			p.phyMode, p.phyModeName = "rgmii", v // the PHY adds the delays (physetup.go)
		default:
			return driver.BadOption("phy-mode", v, "unknown interface mode", "rgmii, rgmii-id, rgmii-rxid, rgmii-txid, rmii or mii")
		}
	}
	if err := p.parsePHYReset(get); err != nil {
		return err
	}
	if err := p.readMACDelays(); err != nil {
		return err
	}
	// Every i.MX FEC is taken as non-coherent (docs/hardware-fec.md §4.7) unless the
	// profile or the user says otherwise; sim devices say so themselves.
	p.nonCoherent = p.dev.NonCoherent || !p.prof.has(qCoherent)
	if v, ok := get("dma-coherent"); ok {
		b, err := strconv.ParseBool(v)
		if v == "" {
			b, err = true, nil
		}
		if err != nil {
			return driver.BadOption("dma-coherent", v, "not a truth value", "1 or 0")
		}
		if b {
			p.nonCoherent = false
		}
	}
	return nil
}

// alloc gets DMA memory through the device's mapper (a carve-out mapper
// hands out pieces of itself: dma.Allocator). Rings and pools are small:
// 4 KiB pages, no huge pages.
func (p *Port) alloc(name string, size int, o dma.Options) (*dma.Region, error) {
	o.Name = name
	o.Hugepages = dma.HugeNever
	return dma.Alloc(p.dev.Mapper, size, o)
}

func (p *Port) bdSize() int {
	if p.enhanced {
		return bdEnhancedSize
	}
	return bdLegacySize
}

// ringMemory allocates one descriptor ring: uncached (or coherent) and
// physically contiguous. Without an IOMMU or a carve-out only a single
// 4 KiB page is known to be contiguous, so a ring must fit in one.
func (p *Port) ringMemory(name string, n int, what string) (bdRing, error) {
	bytes := n * p.bdSize()
	if _, isPM := p.dev.Mapper.(*dma.Pagemap); isPM && bytes > dma.PageSize {
		if _, ok := p.dev.Mapper.(dma.Allocator); !ok {
			return bdRing{}, fmt.Errorf("%s=%d with %d-byte descriptors needs %d bytes; without an IOMMU or a carve-out only one 4 KiB page is physically contiguous: use %s=%d or name a carve-out (dma-carveout=ADDR+SIZE)",
				what, n, p.bdSize(), bytes, what, dma.PageSize/p.bdSize())
		}
	}
	r, err := p.alloc(name, bytes, dma.Options{Attr: dma.Attr{Uncached: true, Contiguous: true}})
	if err != nil {
		return bdRing{}, fmt.Errorf("%s ring memory: %w", name, err)
	}
	p.regions = append(p.regions, r)
	if r.IOVA()%64 != 0 || r.IOVA()+uint64(bytes) > 1<<32 {
		return bdRing{}, fmt.Errorf("%s ring at bus address %#x: the FEC needs a 64-byte aligned ring below 4 GiB", name, r.IOVA())
	}
	mem := r.Bytes()
	clear(mem[:bytes])
	return newBDRing(mem, r.IOVA(), n, p.bdSize()), nil
}

// allocRings allocates each queue's BD ring and, for each RX queue, its
// buffer pool, and builds the queues.
func (p *Port) allocRings() error {
	cfg := p.cfg
	for i := 0; i < cfg.RxQueues; i++ {
		name := fmt.Sprintf("%s rx%d", p.name, i)
		ring, err := p.ringMemory(name+" ring", cfg.RxRingSize, "rx-ring")
		if err != nil {
			return err
		}
		bufs, err := p.alloc(name+" buffers", cfg.PoolSize*cfg.BufSize, dma.Options{
			Attr:        dma.Attr{Uncached: p.uncachedBufs},
			NonCoherent: p.nonCoherent,
		})
		if err != nil {
			return fmt.Errorf("%s buffer memory (%d x %d bytes): %w", name, cfg.PoolSize, cfg.BufSize, err)
		}
		for off := 0; off < bufs.Len(); off += dma.PageSize { // scattered pages: check each
			if a := bufs.IOVAAt(off) + dma.PageSize - 1; a >= 1<<32 {
				bufs.Close()
				return fmt.Errorf("%s buffers reach bus address %#x; the FEC addresses only 32 bits: use memory below 4 GiB (a carve-out: dma-carveout=ADDR+SIZE)", name, a)
			}
		}
		pl, err := pool.New(bufs, pool.Config{Name: fmt.Sprintf("rx%d", i), Port: p.ownerID, Count: cfg.PoolSize, BufSize: cfg.BufSize, Headroom: p.headroom})
		if err != nil {
			bufs.Close()
			return fmt.Errorf("RX queue %d pool: %w", i, err)
		}
		q := newRxQueue(p, i, ring, pl, bufs)
		p.rx = append(p.rx, q)
	}
	for i := 0; i < cfg.TxQueues; i++ {
		name := fmt.Sprintf("%s tx%d", p.name, i)
		ring, err := p.ringMemory(name+" ring", cfg.TxRingSize, "tx-ring")
		if err != nil {
			return err
		}
		p.tx = append(p.tx, newTxQueue(p, i, ring))
	}
	return nil
}

// closePools closes each RX queue's pool, waiting up to StopTimeout for
// the buffers still out, and reports those by holder; a pool with buffers
// out keeps its memory mapped (freeMemory leaves it), for they may still
// be written.
func (p *Port) closePools() error {
	var errs []error
	for _, q := range p.rx {
		if err := q.pool.Close(p.cfg.StopTimeout); err != nil {
			errs = append(errs, fmt.Errorf("RX queue %d: %w", q.idx, err))
			q.bufRegion = nil // leaked buffers may still be written: keep the memory
		}
	}
	return errors.Join(errs...)
}

// freeMemory unmaps what allocRings got, less a leaking pool's buffers
// (closePools); only for a device that is not running.
func (p *Port) freeMemory() error {
	var errs []error
	for _, q := range p.rx {
		if q.bufRegion != nil {
			if err := q.bufRegion.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, r := range p.regions {
		if err := r.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	p.rx, p.tx, p.regions = nil, nil, nil
	return errors.Join(errs...)
}

// readMAC takes the address the boot firmware or the kernel left in
// PALR/PAUR (ECR.RESET wipes it), else a locally administered one.
func (p *Port) readMAC() net.HardwareAddr {
	lo, hi := p.regs.Read32(regPALR), p.regs.Read32(regPAUR)
	mac := net.HardwareAddr{byte(lo >> 24), byte(lo >> 16), byte(lo >> 8), byte(lo), byte(hi >> 24), byte(hi >> 16)}
	if driver.MACProblem(mac) != "" { // zero, multicast or broadcast
		// Locally administered, unicast, derived from the spec so it is stable.
		h := uint32(2166136261)
		for i := 0; i < len(p.name); i++ {
			h = (h ^ uint32(p.name[i])) * 16777619
		}
		mac = net.HardwareAddr{0x02, 0x00, byte(h >> 24), byte(h >> 16), byte(h >> 8), byte(h)}
	}
	return mac
}

// reset puts the MAC into its reset state and programs everything that
// does not depend on the rings: §5.3 steps 2-4.
func (p *Port) reset() error {
	r := p.regs
	// A RESET pulse may zero the MIB counters, and stops them (MIBC resets
	// to MIB_DIS, §2.4, §10.1): keep what they counted and count from
	// their values after it. Without the pulse they keep counting (frames the
	// disabled MAC discards meanwhile are in RMON_R_DROP): the next read
	// goes on from the last, so none is lost to a new base. The first
	// reset takes the values a previous owner left as the base.
	p.statsMu.Lock()
	defer p.statsMu.Unlock()
	if p.mibBased {
		p.accumulateLocked()
		p.busErrorLocked() // before the reset clears EIR
	}
	p.ptpSave() // the reset wipes the 1588 timer
	defer p.ptpRestore()
	pulse := !p.prof.has(qMultiQueues) && !p.prof.has(qNoHardReset)
	if pulse {
		r.Write32(regECR, ecr_RESET)
	} else {
		r.Write32(regECR, 0) // multi-queue parts: no RESET pulse (Linux fec_restart)
	}
	time.Sleep(20 * time.Microsecond) // ≥10 µs for the self-clearing reset
	if pulse || !p.mibBased {
		p.mibRebaseLocked() // before MIBC = 0 below: stopped counters hold still
	}
	r.Write32(regEIMR, 0) // poll mode: no interrupts
	r.Write32(regEIR, 0xFFFF_FFFF)
	p.writeMAC()
	r.Write32(regIAUR, 0)
	r.Write32(regIALR, 0)
	p.writeMulticast() // the groups joined, or all with all-multicast
	p.setupMDIO()
	// MIB counters on from here (a reset stops them): frames the MAC
	// discards before Start are counted too.
	r.Write32(regMIBC, 0)
	p.mibBased = true
	return r.Err()
}

func (p *Port) writeMAC() {
	m := p.mac
	p.regs.Write32(regPALR, uint32(m[0])<<24|uint32(m[1])<<16|uint32(m[2])<<8|uint32(m[3]))
	p.regs.Write32(regPAUR, uint32(m[4])<<24|uint32(m[5])<<16|0x8808)
}

// rcr is the receive control value for the current settings (§5.1 step 9).
func (p *Port) rcr() uint32 {
	v := uint32(p.maxFL)<<rcr_MAX_FL_SHIFT | rcr_MII_MODE // LOOP (set at reset) cleared
	if p.prof.has(qENETMAC) {
		v |= rcr_NLC
	}
	switch p.phyMode {
	case "rgmii":
		v |= rcr_RGMII_EN
	case "rmii":
		v |= rcr_RMII_MODE
	}
	l := p.macLink // what the MAC is (being) programmed for
	if l.Up && l.SpeedMbps == 10 {
		v |= rcr_RMII_10T
	}
	if l.Up && !l.FullDuplex {
		v |= rcr_DRT
	}
	if p.promisc {
		v |= rcr_PROM
	}
	return v
}

// tcr is the transmit control value for the programmed link (§5.1 step 6):
// full duplex unless the PHY resolved half; GTS clear.
func (p *Port) tcr() uint32 {
	if l := p.macLink; !l.Up || l.FullDuplex {
		return tcr_FDEN
	}
	return 0
}

// ecr is the enabled ECR for the programmed link: ETHEREN, DBSWP on
// ENET-MAC parts, EN1588 with enhanced descriptors, SPEED at 1000 Mb/s.
func (p *Port) ecr() uint32 {
	ecr := uint32(ecr_ETHEREN)
	if p.prof.has(qENETMAC) {
		ecr |= ecr_DBSWP // little-endian descriptors on ENET-MAC parts
	}
	if p.enhanced {
		ecr |= ecr_EN1588 // 32-byte descriptors
	}
	if l := p.macLink; p.maxSpeed() == 1000 && l.Up && l.SpeedMbps == 1000 {
		ecr |= ecr_SPEED
	}
	return ecr | p.ecrDelays // the MAC's RGMII clock delays (physetup.go)
}

// Start programs the rings and the MAC and enables it (§5.3 steps 5-7):
// frames flow when it returns. A queue goroutine may keep polling through
// Stop and Start: its bursts return 0 until the RX rings are filled.
func (p *Port) Start() error {
	defer p.linkEv.Flush() // runs after ctl is released
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return p.errClosed()
	}
	if p.started {
		return nil
	}
	if err := p.reset(); err != nil {
		return err
	}
	if err := p.startStamps(); err != nil {
		return err
	}
	r := p.regs
	link := p.updateLinkLocked()
	for i, q := range p.rx {
		q.init()
		r.Write32(regRDSRn[i], uint32(q.ring.iova))
		r.Write32(regMRBRn[i], uint32(p.rxBufLen))
	}
	// Rings 1 and 2 take VLAN priorities 0-3 and 4-7 (Linux's choice);
	// untagged frames stay on ring 0.
	if len(p.rx) > 1 {
		r.Write32(regRCMR1, rcmr_MATCHEN|0<<0|1<<4|2<<8|3<<12)
	}
	if len(p.rx) > 2 {
		r.Write32(regRCMR2, rcmr_MATCHEN|4<<0|5<<4|6<<8|7<<12)
	}
	for i, q := range p.tx {
		q.init()
		r.Write32(regTDSRn[i], uint32(q.ring.iova))
	}
	if len(p.tx) > 1 {
		r.Write32(regDMA1CFG, dmacfg_DMA_CLASS_EN|p.idleSlope(1)) // avb.go
	}
	if len(p.tx) > 2 {
		r.Write32(regDMA2CFG, dmacfg_DMA_CLASS_EN|p.idleSlope(2))
	}
	if p.prof.has(qRACC) {
		racc := uint32(0) // no checksum discards
		if p.shift != 0 {
			racc |= racc_SHIFT16 // IP header 4-byte aligned
		}
		r.Write32(regRACC, racc)
		r.Write32(regFTRL, uint32(p.maxFL))
	}
	r.Write32(regTACC, 0) // TX data starts at the BD address; no checksum insertion
	p.macLink = link
	if p.prof.has(qENETMAC) {
		r.Write32(regTFWR, p.tfwr())
	}
	r.Write32(regRCR, p.rcr())
	r.Write32(regTCR, p.tcr())
	r.Write32(regOPD, 0xFFF0) // pause duration, should pause ever be enabled
	r.Write32(regMIBC, 0)     // counters on
	p.startIRQ()
	r.Write32(regECR, p.ecr())
	for _, q := range p.rx {
		q.refill() // posts every buffer and writes RDAR once
	}
	p.started = true
	// Only now, with every ring set up and the RX rings filled from their
	// pools, may a queue goroutine's burst run: one that polls during
	// Start sees the gate closed and returns 0 until here.
	p.gate.Open(gate.Stopped)
	var every time.Duration
	if (p.phyAddr >= 0 || p.prof.has(qERR006358)) && p.linkPoll > 0 {
		every = p.linkPoll
	}
	p.watchStop, p.watchDone = make(chan struct{}), make(chan struct{})
	go p.watch(p.watchStop, p.watchDone, every)
	return r.Err()
}

// Stop quiesces the port in the safe order: refuse new TX, wait (bounded
// by Config.StopTimeout; not while the link is down, when none can) for
// queued frames to leave (those left count as stopped), graceful TX stop,
// disable the MAC (which rewinds its ring pointers), wait for the DMA to go
// idle, and take every buffer back from the rings (counting each frame the
// MAC had written into an RX ring unread: drain). From its start every
// burst returns 0 (internal/gate); it waits for bursts already running to
// leave before it touches the rings.
func (p *Port) Stop() error {
	p.stopWatcher() // before ctl: the watcher takes ctl on every tick
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return p.errClosed()
	}
	if !p.started {
		return nil
	}
	p.gate.Close(gate.Stopped) // bursts starting from now return 0
	p.macHeld = false          // a held restart ends here: Stop disables the MAC and drains the rings
	p.stopIRQ()
	r := p.regs
	deadline := time.Now().Add(p.cfg.StopTimeout)
	var errs []error
	if !gate.WaitIdle(p.bursts(), deadline) {
		errs = append(errs, fmt.Errorf("a queue goroutine stayed inside a burst for %v after Stop closed the gate", p.cfg.StopTimeout))
	}
	for _, q := range p.tx {
		if q.reclaim(); !p.phyLink.Up {
			continue // nothing leaves while the link is down: drain counts them stopped
		}
		for ; q.inFlight > 0 && time.Now().Before(deadline); q.reclaim() {
			time.Sleep(50 * time.Microsecond)
		}
		if q.inFlight > 0 {
			errs = append(errs, fmt.Errorf("TX ring %d did not drain within %v: %d descriptors still owned by the MAC, their frames dropped", q.idx, p.cfg.StopTimeout, q.inFlight))
		}
	}
	r.Write32(regTCR, r.Read32(regTCR)|tcr_GTS)
	if p.phyLink.Up {
		for r.Read32(regEIR)&eir_GRA == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Microsecond)
		}
	}
	r.Write32(regEIR, eir_GRA)
	r.Write32(regECR, 0) // ETHEREN=0: DMA stops, BD pointers rewind to RDSR/TDSR
	p.dmaIdle(deadline)  // the drains below take back what is still owned either way
	for _, q := range p.tx {
		q.drain()
	}
	for _, q := range p.rx {
		q.drain()
	}
	p.started = false
	if err := r.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// bursts are the queues' "in a burst" flags, for Stop to wait on.
func (p *Port) bursts() []*gate.Flag {
	flags := make([]*gate.Flag, 0, len(p.rx)+len(p.tx))
	for _, q := range p.rx {
		flags = append(flags, &q.burst)
	}
	for _, q := range p.tx {
		flags = append(flags, &q.burst)
	}
	return flags
}

// Close stops the port, closes the pools (reporting leaked buffers),
// unmaps DMA memory and releases the device. Buffers the application still
// holds are waited for up to Config.StopTimeout, then reported by holder
// (*pool.LeakError) and their pool's memory stays mapped: Data on them
// stays safe. Afterwards every method fails closed (driver.ErrClosed, see
// package driver); a second Close returns nil.
//
// The steps, in the order both drivers take them: Stop; mark the port closed and keep
// every burst off the rings; close the interrupts; close the pools
// (waiting for buffers out); read the counters a last time; disable the
// device; unmap the memory no leaked buffer needs; release the device.
func (p *Port) Close() error {
	p.ptpClose() // the timer's own goroutine, before the port it reads goes
	stopErr := p.Stop()
	if errors.Is(stopErr, driver.ErrClosed) {
		return nil // a second Close
	}
	p.ctl.Lock()
	defer p.ctl.Unlock()
	p.closed = true
	p.closeQueues()
	p.closeIRQ()
	errs := []error{stopErr}
	errs = append(errs, p.closePools())
	p.statsMu.Lock()
	p.final = p.statsLocked() // the last look at the counters: the window goes away
	p.shut.Store(true)
	p.statsMu.Unlock()
	p.regs.Write32(regECR, 0)
	errs = append(errs, p.freeMemory())
	p.detachBus() // before the registers go: a port sharing the bus gets ErrClosed
	if p.dev.Release != nil {
		if err := p.dev.Release(); err != nil {
			errs = append(errs, fmt.Errorf("release: %w", err))
		}
	}
	return errors.Join(errs...)
}

// closeQueues keeps every burst off the rings for good: the gate stays
// Stopped (Start refuses a closed port), and a burst still running, which
// Stop's contract says there is none, is waited for up to StopTimeout. A
// burst started later returns 0 instead of reaching the unmapped rings.
func (p *Port) closeQueues() {
	p.gate.Close(gate.Stopped)
	gate.WaitIdle(p.bursts(), time.Now().Add(p.cfg.StopTimeout))
}

// Info describes the port; a zero PortInfo once it is closed.
func (p *Port) Info() driver.PortInfo {
	if p.shut.Load() {
		return driver.PortInfo{}
	}
	caps := driver.CapPromiscuous | driver.CapHWStats | driver.CapMDIO | driver.CapMultiSegRx | driver.CapMultiSegTx
	dev := p.prof.compatible
	if len(p.dev.Compatible) > 0 {
		dev = p.dev.Compatible[0]
	}
	return driver.PortInfo{
		Name: p.name, Driver: "fec", Device: dev, Backend: p.dev.Backend,
		MAC: p.MAC(), RxQueues: len(p.rx), TxQueues: len(p.tx),
		MaxRxQueues: p.prof.maxQueues(), MaxTxQueues: p.prof.maxQueues(),
		RxRingSize: p.cfg.RxRingSize, TxRingSize: p.cfg.TxRingSize,
		MTU: p.mtu, MaxMTU: p.maxMTU(), Caps: caps,
	}
}

// MACRestarts counts the times a running MAC was stopped gracefully and
// reprogrammed (a new link speed or duplex, a TX FIFO mode change).
func (p *Port) MACRestarts() uint64 { return p.restarts.Load() }

// MACRestartFailures counts the restarts of a running MAC that could not
// finish within Config.StopTimeout (a burst that did not leave, a graceful
// transmit stop that did not complete, a DMA that did not go idle); each
// is tried again at the next link poll, UpdateLink or SetMTU, and Link
// reports down until one succeeds (§5.6).
func (p *Port) MACRestartFailures() uint64 { return p.restartFails.Load() }

// MAC is the port's address; nil once the port is closed.
func (p *Port) MAC() net.HardwareAddr {
	if p.shut.Load() {
		return nil
	}
	return append(net.HardwareAddr(nil), p.mac...)
}

// SetMAC changes the port's address (PALR/PAUR). An address no station
// may have (driver.MACProblem: not 6 bytes, multicast, broadcast, zero) is
// refused and nothing changes.
func (p *Port) SetMAC(mac net.HardwareAddr) error {
	if err := driver.CheckUnicast("set MAC", mac); err != nil {
		return err
	}
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return p.errClosed()
	}
	p.mac = append(net.HardwareAddr(nil), mac...)
	p.writeMAC()
	return p.regs.Err()
}

// SetPromiscuous turns RCR.PROM on or off.
func (p *Port) SetPromiscuous(on bool) error {
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return p.errClosed()
	}
	p.promisc = on
	if p.started {
		p.regs.Write32(regRCR, p.rcr())
	}
	return p.regs.Err()
}

// maxMTU is the largest MTU the part takes (§4.1): its longest frame
// less Ethernet header, one VLAN tag and FCS, and RCR.MAX_FL's 14 bits
// less the SHIFT16 pad too.
func (p *Port) maxMTU() int {
	return min(p.prof.maxFrame()-ethHdr-vlanLen-fcsLen, maxFLLimit-ethHdr-vlanLen-fcsLen-p.shift)
}

func (p *Port) setMTU(mtu int) error {
	fl := mtu + ethHdr + vlanLen + fcsLen + p.shift // QEMU compares MAX_FL with the shifted length
	if mtu < 68 || mtu > p.maxMTU() {
		why := "RCR.MAX_FL is 14 bits"
		if !p.prof.has(qJumbo) {
			why = fmt.Sprintf("%s sends frames of at most %d bytes store-and-forward and takes no jumbo frames; only the i.MX8QM/QXP ENET (fsl,imx8qm-fec) does", p.prof.compatible, storeFwdMax)
		}
		return fmt.Errorf("MTU %d must be in [68, %d] on %s (%s)", mtu, p.maxMTU(), p.prof.compatible, why)
	}
	if fl > p.rxBufLen*maxRxSegs {
		return fmt.Errorf("MTU %d needs %d-byte frames, more than %d buffers of %d bytes: raise buf-size", mtu, fl, maxRxSegs, p.rxBufLen)
	}
	p.mtu, p.maxFL = mtu, fl
	return nil
}

// SetMTU sets the largest L3 payload (RCR.MAX_FL, FTRL). Frames longer than
// one buffer span several descriptors. Beyond Info().MaxMTU, the part's
// limit, it is an error naming the part; on a running jumbo part, an MTU
// that moves the TX FIFO between store-and-forward and cut-through
// restarts the MAC gracefully (restartMAC).
func (p *Port) SetMTU(mtu int) error {
	defer p.linkEv.Flush() // runs after ctl is released
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if p.closed {
		return p.errClosed()
	}
	was, oldMTU := p.cutThrough(), p.mtu
	if err := p.setMTU(mtu); err != nil {
		return err
	}
	if p.started && p.cutThrough() != was {
		// TFWR changes only with the MAC disabled.
		err := p.restartMAC(p.macLink)
		if err != nil {
			p.restartFails.Add(1)
			_ = p.setMTU(oldMTU) // the MAC keeps (or, held, gets) the old FIFO mode: keep the MTU it fits
		}
		p.publishLinkLocked() // down while a restart holds the MAC disabled
		return err
	}
	if p.started {
		p.regs.Write32(regRCR, p.rcr())
		if p.prof.has(qRACC) {
			p.regs.Write32(regFTRL, uint32(p.maxFL))
		}
	}
	return p.regs.Err()
}

// RxQueue returns receive queue i, nil when i is out of range (driver.Port).
func (p *Port) RxQueue(i int) driver.RxQueue {
	if i < 0 || i >= len(p.rx) || p.shut.Load() {
		return nil // out of range: nil, as driver.Port says
	}
	return p.rx[i]
}

// TxQueue returns transmit queue i, nil when i is out of range (driver.Port).
func (p *Port) TxQueue(i int) driver.TxQueue {
	if i < 0 || i >= len(p.tx) || p.shut.Load() {
		return nil // out of range: nil, as driver.Port says
	}
	return p.tx[i]
}

package enetc

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
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

func init() {
	driver.RegisterDriver(driver.Driver{
		Name:        "enetc",
		Options:     []string{"phy", "link-poll", "mac", "phy-mode", "in-band", "rx-coalesce-frames", "rx-coalesce-ticks", "switch-cpu-port", "pause", "ierb", "ipv4-check", "par-bits", "timestamps"},
		Match:       match,
		New:         func(d *driver.Device, cfg driver.Config) (driver.Port, error) { return New(d, cfg) },
		RegisterMap: rawRegisterMap,
	})
}

// rawRegisterMap is ProbeRegisterMap on window 0 (BAR0) for tools that
// read registers without a port.
func rawRegisterMap(d *driver.Device) []driver.RegDesc {
	if len(d.Regions) == 0 || d.Regions[0] == nil {
		return nil
	}
	return ProbeRegisterMap(d.Regions[0])
}

// match claims ENETC PFs and VFs by PCI ID.
func match(d *driver.Device) bool {
	return d.Bus == "pci" && d.VendorID == pciVendorFreescale &&
		(d.DeviceID == pciDevicePF || d.DeviceID == pciDeviceVF)
}

// Sizes and limits.
const (
	maxRings = 64 // ring blocks fit below 0x10000
	// cbdrLen is the control BD ring length (Linux uses 64).
	cbdrLen = 64
	// rssTableMax bounds the RSS indirection table buffer.
	rssTableMax = 4096
	// ethOverhead is header + one VLAN tag + FCS: frame = MTU + ethOverhead.
	ethOverhead = 22
	// MaxMTU is the largest MTU the MAC allows (§4.1: 9600 - 22).
	MaxMTU = MaxFrame - ethOverhead
	// fcsLen is the FCS the device strips on RX and appends on TX.
	fcsLen = 4
	// defaultLinkPoll is how often the link watcher polls the PHY. Every
	// MDIO register access of a poll holds the data path off for itself
	// (ERR050089: TX bursts wait, RX bursts return nothing), and if the OS
	// deschedules the watcher meanwhile the queues wait for it: once a
	// second keeps that cost negligible and notices a link change within a
	// second (link-poll= overrides it).
	defaultLinkPoll = time.Second
	// minLinkPoll is the shortest link-poll= taken. One poll is up to ten
	// clause-22 reads (~26 µs each at 2.5 MHz) of some seven MDIO register
	// accesses each, during each of which TX bursts wait and RX bursts
	// return nothing: shorter polls buy nothing a link change needs.
	minLinkPoll = 10 * time.Millisecond
)

// ErrNotPF is returned for operations only a PF can perform (MAC, MDIO,
// port registers): a VF reaches only its station interface. It is
// driver.ErrNeedsPF, so tools test for it without naming this driver.
var ErrNotPF = driver.ErrNeedsPF

// Port is one ENETC station interface with its rings: a driver.Port, plus
// bring-up helpers (MDIO, register dump, ring state) for tools.
type Port struct {
	dev  *driver.Device
	regs driver.Regs
	cfg  driver.Config
	name string
	pf   bool

	// gate is read once per burst by every queue (see the package doc).
	gate gate.Gate
	irq  irqState // RX interrupts (irq.go)

	// chip is the ERR050089 rule this port shares with every port of its
	// chip (chiplock.go), held from New to Close.
	chip *chip
	// ctl serialises control-path register access with MDIO (ERR050089).
	ctl     sync.Mutex
	started bool
	closed  bool
	// shut is closed for the lock-free readers (Link): set by Close under
	// ctl, before the device is released.
	shut         atomic.Bool
	final        driver.PortStats // the counters Close read before it released the device
	needsReset   bool
	mac          net.HardwareAddr
	mtu          int
	promisc      bool
	allMulti     bool
	mcGroups     map[[6]byte]struct{} // multicast groups joined (multicast.go)
	phyAddr      int                  // -1: no PHY found, fixed link
	phyWhy       string               // which PHY and why (selectPHY, PHYChoice)
	switchLink   string               // the switch port whose CPU port this is (switchport.go)
	takeCPUPort  bool                 // switch-cpu-port=take
	stamps       driver.Timestamps    // timestamps= (timestamp.go)
	phyMode      phyMode              // the board interface IF_MODE and the PCS are programmed for (pcs.go)
	phyModeName  string               // phy-mode as given (rgmii-id and the like; physetup.go), "" when neither option nor tree gives one
	phySetup     mii.Report           // what was done to the PHY (physetup.go)
	inband       bool                 // SGMII: in-band AN (else the PHY's speed is forced into the PCS)
	pcsIfMode    uint16               // what the PCS's IF_MODE holds (SGMII out of band)
	fixedSpeed   int                  // Mb/s a link without PHY or PCS reports
	link         driver.Link
	linkPoll     time.Duration
	watchStop    chan struct{}
	watchDone    chan struct{}
	linkValue    atomic.Pointer[driver.Link] // last link state, for Link from any goroutine
	linkEv       driver.LinkEvents           // OnLinkChange's subscribers; flushed by unlock
	maxTx        int
	pause        pauseMode // flow control programmed at link-up (pause.go)
	ierbPrepared bool      // ierb=prepared: jumbo frames allowed (ierb.go)
	ipv4Check    string    // ipv4-check= ("" leaves PAR_PORT_CFG alone; parser.go)
	parL3Bit     uint32    // the PAR_PORT_CFG bit par-bits= names for it
	pauseWhy     string    // where pause came from
	maxRx        int
	mdioPorts    []*Port // the ports whose gates the running MDIO register access closed
	// 64-bit totals of the 32-bit device counters (stats.go), under ctl.
	dcrAcc       []acc32 // RBDCR of each RX ring
	macAcc       []acc64 // macCounters
	ufdmf, mfdmf acc32
	rssOn        bool
	rssEntries   int

	// txConsumed and txErrTaken are txErrorsLocked's, under ctl: the
	// frames the TX queues counted consumed at the last look, and the TERR
	// errors moved from them to CauseFrame so far.
	txConsumed, txErrTaken uint64

	ringMem  *dma.Region // all BD rings, the CBDR and the RSS table buffer
	msgMem   *dma.Region // VF messages: a PF's receive buffers, a VF's send buffer (vf.go)
	vfMsgs   atomic.Uint64
	cbdrOff  int
	cbdrPI   uint32
	rssOff   int
	rxBufLen int // RBBSR: bytes the device may write per buffer
	bufSize  int // pool buffer size
	perPage  int

	vfMAC [maxVFs]net.HardwareAddr // what the PF set for each VF (restore.go)
	// resetNote is what the last function reset lost (restore.go), for
	// Start to report.
	resetNote error

	rx []*rxQueue
	tx []*txQueue

	tsn tsnConfig // traffic classes, gate list, shapers (tsn.go), under ctl
	qci qciConfig // stream filters (qci.go), under ctl
}

var _ driver.Port = (*Port)(nil)

// New brings up the ENETC function d (§9): checks BAR0, configures port and
// station interface, allocates rings and pools, and programs RSS. The port
// is not started. On error nothing stays allocated.
func New(d *driver.Device, cfg driver.Config) (*Port, error) {
	cfg = cfg.Defaults()
	if !hostLittleEndian() {
		return nil, errors.New("big-endian host: descriptor overlays assume little-endian")
	}
	p := &Port{dev: d, cfg: cfg, name: d.Spec.Raw, pf: d.DeviceID == pciDevicePF, phyAddr: -1, linkPoll: defaultLinkPoll}
	if p.name == "" {
		p.name = "enetc"
	}
	if len(d.Regions) == 0 || d.Regions[0] == nil {
		return nil, errors.New("BAR0 is not mapped: the device exposes no register window")
	}
	p.regs = d.Regions[0]
	size := p.regs.Size()
	if p.pf && size <= pfBAR0Min {
		return nil, fmt.Errorf("BAR0 is %#x bytes; a PF needs more than %#x (SI, port and global blocks): is this a VF, or is the BAR mapped short?", size, pfBAR0Min)
	}
	if !p.pf && size < vfBAR0Min {
		return nil, fmt.Errorf("BAR0 is %#x bytes; a VF needs %#x (the SI block)", size, vfBAR0Min)
	}
	if d.Mapper == nil {
		return nil, errors.New("the device has no DMA mapper")
	}
	if err := p.parseOptions(); err != nil {
		return nil, err
	}
	if err := p.resolvePHYMode(); err != nil {
		return nil, err
	}
	if err := p.resolvePause(); err != nil {
		return nil, err
	}
	if err := p.parseSwitchOption(); err != nil {
		return nil, err
	}
	if err := p.checkSwitchLink(); err != nil {
		return nil, err
	}
	if err := p.checkConfig(); err != nil {
		return nil, err
	}
	if err := p.parseIERB(); err != nil {
		return nil, err
	}
	if err := p.parseParserOptions(); err != nil {
		return nil, err
	}
	if err := p.checkJumbo(p.mtu); err != nil {
		return nil, err
	}
	p.promisc = *cfg.Promiscuous
	p.chip = chipOf(d.Chip)
	ok := false
	defer func() {
		if !ok {
			p.freeMemory()
			p.chip.release()
		}
	}()
	if err := p.bringUp(); err != nil {
		return nil, err
	}
	if p.pf {
		p.lock()
		err := p.setupInterface()
		p.unlock()
		if err != nil {
			return nil, err
		}
		if err := p.selectPHY(); err != nil {
			return nil, err
		}
		if err := p.configurePHY(); err != nil {
			return nil, err
		}
	}
	l := driver.Link{Up: true, SpeedMbps: p.fixedSpeed, FullDuplex: true}
	p.link = l
	p.linkValue.Store(&l)
	p.gate.Init()
	p.irq.Init() // stopped until Start
	p.register()
	pool.AddClaimer(txClaim{p}) // a leak report of any pool names the frames on its TX rings
	ok = true
	return p, nil
}

// bringUp configures port and SI, allocates the rings and programs RSS,
// holding off MDIO on every other port of the chip meanwhile (ERR050089).
func (p *Port) bringUp() error {
	p.chip.rw.RLock()
	defer p.chip.rw.RUnlock()
	if err := p.allocMsg(); err != nil {
		return err
	}
	if p.pf {
		if err := p.configurePort(); err != nil {
			return err
		}
	}
	if err := p.configureSI(); err != nil {
		return err
	}
	if err := p.allocRings(); err != nil {
		return err
	}
	if p.pf {
		if err := p.zeroPortMemories(); err != nil {
			return err
		}
	}
	if p.cfg.RxQueues > 1 {
		if err := p.setupRSS(); err != nil {
			return err
		}
	}
	return nil
}

// parseOptions reads the driver's spec options: phy=N|none, link-poll=DUR,
// mac=ADDR, rx-coalesce-frames=N (at most half the RX ring) and
// rx-coalesce-ticks=T (RX interrupt coalescing, irq.go); phy-mode= and in-band= are resolvePHYMode's
// (pcs.go). A value it cannot take is a *driver.OptionError.
func (p *Port) parseOptions() error {
	get := p.dev.Spec.Option
	if v, ok := get("timestamps"); ok {
		if err := p.parseTimestamps(v); err != nil {
			return err
		}
	}
	if v, ok := get("link-poll"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Hour {
			return driver.BadOption("link-poll", v, "not a poll interval", "0, or a duration from 10ms to 1h such as 100ms; 0 polls only on UpdateLink()")
		}
		if d > 0 && d < minLinkPoll {
			return driver.BadOption("link-poll", v, "polls the PHY too often: every MDIO register access of a poll holds every ENETC port's data path off (ERR050089)", "0, or a duration from 10ms to 1h such as 100ms; 0 polls only on UpdateLink()")
		}
		p.linkPoll = d
	}
	if err := p.parseIRQOptions(get); err != nil {
		return err
	}
	if v, ok := get("mac"); ok {
		m, err := driver.MACOption(v)
		if err != nil {
			return err
		}
		p.mac = m
	}
	if v, ok := get("phy"); ok {
		if n, err := strconv.Atoi(v); (err != nil || n < 0 || n > 31) && v != "none" {
			return driver.BadOption("phy", v, "not a PHY address", "0 to 31, or none for a fixed link")
		}
		if !p.pf {
			return driver.BadOption("phy", v, "a VF has no MDIO bus of its own", "no phy= on a VF; give it to the PF")
		}
	}
	return nil
}

// checkConfig validates ring sizes, buffer size and MTU.
func (p *Port) checkConfig() error {
	c := &p.cfg
	for _, r := range []struct {
		what string
		n    int
	}{{"rx-ring", c.RxRingSize}, {"tx-ring", c.TxRingSize}} {
		if r.n < 64 || r.n > 32768 || r.n&(r.n-1) != 0 {
			return fmt.Errorf("%s size %d must be a power of two in [64, 32768]", r.what, r.n)
		}
	}
	if c.RxQueues < 1 || c.RxQueues > maxRings || c.TxQueues < 1 || c.TxQueues > maxRings {
		return fmt.Errorf("%d RX / %d TX queues: each must be in [1, %d]", c.RxQueues, c.TxQueues, maxRings)
	}
	// Buffers: each its own recycling unit (the pool's default; the region
	// is mapped once, so whole 2048-byte buffers cost no more memory than
	// half pages, and skip the split pages' shared count).
	bs := c.BufSize
	if bs < 256 || bs%dma.CacheLine != 0 || bs-pool.DefaultHeadroom > rbbsr_MAX {
		return fmt.Errorf("buffer size %d must be a multiple of %d in [256, %d]", bs, dma.CacheLine, rbbsr_MAX+pool.DefaultHeadroom)
	}
	p.bufSize = bs
	p.perPage = 1
	// RBBSR is the buffer minus headroom, kept a multiple of 64 (§9 step 4).
	p.rxBufLen = (bs - pool.DefaultHeadroom) &^ (dma.CacheLine - 1)
	if c.MTU < 68 || c.MTU > MaxMTU {
		return fmt.Errorf("MTU %d must be in [68, %d]", c.MTU, MaxMTU)
	}
	p.mtu = c.MTU
	if c.PoolSize < c.RxRingSize {
		return fmt.Errorf("pool size %d is smaller than the RX ring (%d): the ring could never be filled", c.PoolSize, c.RxRingSize)
	}
	return nil
}

// maxFrame is the longest frame accepted, FCS included.
func (p *Port) maxFrame() int { return p.mtu + ethOverhead }

// configurePort programs the port and MAC blocks of a PF (§9 step 2).
func (p *Port) configurePort() error {
	r := p.regs
	r.Write32(regPM0_RX_FIFO, pm0_rx_fifo_VALUE) // erratum: the POR value can lock up RX (§5.4)
	r.Write32(regPM0_MAXFRM, uint32(p.maxFrame()))
	r.Write32(regPTCMSDUR(0), MaxFrame)
	cmd := uint32(pm_cmd_cfg_PHY_TX_EN | pm_cmd_cfg_TXP | pm_cmd_cfg_PROMIS) // MAC enabled on link up
	r.Write32(regPM0_CMD_CFG, cmd)
	r.Write32(regPM1_CMD_CFG, cmd)
	// Give SI0 its rings: what the port has, at least what was asked for.
	pc := r.Read32(regPCAPR0)
	ptx := int(pc>>pcapr0_TXBDR_SHIFT) & 0xFF
	prx := int(pc>>pcapr0_RXBDR_SHIFT) & 0xFF
	if ptx == 0 {
		ptx = pfRings
	}
	if prx == 0 {
		prx = pfRings
	}
	wantTx := min(ptx, max(pfRings, p.cfg.TxQueues))
	wantRx := min(prx, max(pfRings, p.cfg.RxQueues))
	r.Write32(regPSICFGR0(0), uint32(wantTx)<<psicfgr0_TXBDR_SHIFT|uint32(wantRx)<<psicfgr0_RXBDR_SHIFT)
	p.maxTx, p.maxRx = wantTx, wantRx
	// The VF SIs share what is left, as Linux's enetc_port_si_configure
	// splits it (the same count each way, the smaller rest): without this
	// a VF of this PF owns no ring (§2.3).
	vfRings := min(ptx-wantTx, prx-wantRx) / maxVFs
	for n := 1; n <= maxVFs; n++ {
		r.Write32(regPSICFGR0(n), uint32(vfRings)<<psicfgr0_TXBDR_SHIFT|uint32(vfRings)<<psicfgr0_RXBDR_SHIFT)
	}
	// Primary MAC: the option, else what the bootloader/IERB left, else
	// (nothing there, or no station's address: zero, multicast,
	// broadcast) random.
	if p.mac == nil {
		p.mac = macFromRegs(r.Read32(regPSIPMAR0(0)), r.Read32(regPSIPMAR1(0)))
		if driver.MACProblem(p.mac) != "" {
			p.mac = randomMAC()
		}
	}
	r.Write32(regPSIPMAR0(0), macLo(p.mac))
	r.Write32(regPSIPMAR1(0), macHi(p.mac))
	p.writeMulticast() // and PSIPMR
	p.writeParser()
	p.setMsgBuffers(true)
	r.Write32(regPMR, r.Read32(regPMR)|pmr_EN)
	return nil
}

// writePromisc programs PSIPMR for SI0. Caller holds ctl (or is New).
func (p *Port) writePromisc() {
	v := p.regs.Read32(regPSIPMR) &^ (psipmr_UP(0) | psipmr_MP(0))
	if p.promisc {
		v |= psipmr_UP(0) | psipmr_MP(0)
	}
	if p.allMulti {
		v |= psipmr_MP(0)
	}
	p.regs.Write32(regPSIPMR, v)
}

// pfRings is how many rings each way a PF takes at least (Linux's
// ENETC_PF_NUM_RINGS); its VFs share the rest of the port's.
const pfRings = 8

// pfName names a VF's PF for errors: the sim's pf= option, else where
// Linux shows it.
func (p *Port) pfName() string {
	if v := p.dev.Spec.Options.Get("pf"); v != "" {
		return v
	}
	if p.dev.Backend == "vfio" {
		// The VF's sysfs node links to its PF (physfn).
		addr := strings.TrimPrefix(p.dev.Spec.Raw, "pci:")
		if i := strings.IndexByte(addr, '?'); i >= 0 {
			addr = addr[:i]
		}
		if l, err := os.Readlink(filepath.Join("/sys/bus/pci/devices", addr, "physfn")); err == nil {
			return filepath.Base(l)
		}
	}
	return "the function the VF's physfn link in sysfs names"
}

// configureSI enables the station interface (§9 step 3) and reads its
// ring counts.
func (p *Port) configureSI() error {
	r := p.regs
	r.Write32(regSICAR0, sicar0_VALUE) // ring and frame DMA snoop, no allocate (§2.1)
	r.Write32(regSICAR1, sicar1_VALUE) // MSI-X message writes: device memory, no snoop (as Linux, FreeBSD)
	r.Write32(regSIMR, simr_EN)
	c := r.Read32(regSICAPR0)
	tx := int(c>>sicapr0_TXBDR_SHIFT) & sicapr0_BDR_MASK
	rx := int(c>>sicapr0_RXBDR_SHIFT) & sicapr0_BDR_MASK
	if tx != 0 || rx != 0 || !p.pf {
		p.maxTx, p.maxRx = tx, rx
	}
	if p.maxTx == 0 || p.maxRx == 0 {
		if !p.pf {
			return fmt.Errorf("SICAPR0=%#x: this VF owns %d TX and %d RX rings: its PF (%s) assigns a VF's rings (PSICFGR0(VF+1)) as it starts; open that PF with gopmd first, asking it for at most %d queues so rings are left for its VFs, or leave the PF to Linux's fsl-enetc, which assigns them at probe", c, p.maxTx, p.maxRx, p.pfName(), pfRings)
		}
		return fmt.Errorf("SICAPR0=%#x: this SI owns %d TX and %d RX rings; the PF must assign rings (PSICFGR0) first", c, p.maxTx, p.maxRx)
	}
	if p.cfg.TxQueues > p.maxTx || p.cfg.RxQueues > p.maxRx {
		return fmt.Errorf("%d RX / %d TX queues asked, the SI owns %d / %d rings (SICAPR0): ask for fewer queues", p.cfg.RxQueues, p.cfg.TxQueues, p.maxRx, p.maxTx)
	}
	if !p.pf {
		// The VF's MAC is the PF's to set (§2.10): what SIPMAR holds, or
		// the mac= option (a random one when SIPMAR holds no station's
		// address) asked for.
		cur := macFromRegs(r.Read32(regSIPMAR0), r.Read32(regSIPMAR1))
		want := p.mac
		if want == nil && driver.MACProblem(cur) != "" {
			want = randomMAC()
		}
		if want != nil && want.String() != cur.String() {
			if err := p.askPFSetMAC(want); err != nil {
				return err
			}
			cur = want
		}
		p.mac = cur
	}
	return nil
}

// align rounds n up to a multiple of a.
func align(n, a int) int { return (n + a - 1) / a * a }

// allocRings allocates one contiguous region for every BD ring, the CBDR
// and the RSS table buffer, and one buffer pool per RX ring.
func (p *Port) allocRings() error {
	c := &p.cfg
	off := 0
	txOff := make([]int, c.TxQueues)
	for i := range txOff {
		txOff[i] = off
		off = align(off+c.TxRingSize*bdSize, bdRingAlign)
	}
	rxOff := make([]int, c.RxQueues)
	for i := range rxOff {
		rxOff[i] = off
		off = align(off+c.RxRingSize*p.rxBDSize(), bdRingAlign) // 32-byte BDs with timestamps=rx (rxstamp.go)
	}
	p.cbdrOff = off
	off = align(off+cbdrLen*cbdSize, bdRingAlign)
	p.rssOff = off
	off += rssTableMax
	reg, err := dma.Alloc(p.dev.Mapper, off, dma.Options{Attr: dma.Attr{Contiguous: true, Name: p.name + " rings"}})
	if err != nil {
		return fmt.Errorf("BD ring memory (%d bytes, one contiguous run): %w", off, err)
	}
	p.ringMem = reg
	if reg.IOVA()%bdRingAlign != 0 {
		return fmt.Errorf("ring memory IOVA %#x is not %d-byte aligned", reg.IOVA(), bdRingAlign)
	}
	mem := reg.Bytes()
	for i := range txOff {
		q := newTxQueue(p, i, mem[txOff[i]:txOff[i]+c.TxRingSize*bdSize], reg.IOVAAt(txOff[i]))
		p.tx = append(p.tx, q)
	}
	count := align(c.PoolSize, p.perPage)
	for i := range rxOff {
		name := fmt.Sprintf("%s rx%d", p.name, i)
		preg, err := dma.Alloc(p.dev.Mapper, count*p.bufSize, dma.Options{Attr: dma.Attr{Name: name + " buffers"}, NonCoherent: p.dev.NonCoherent})
		if err != nil {
			return fmt.Errorf("RX queue %d buffers (%d x %d bytes): %w", i, count, p.bufSize, err)
		}
		pl, err := pool.New(preg, pool.Config{Name: fmt.Sprintf("rx%d", i), Port: p.name, Count: count, BufSize: p.bufSize, PerPage: p.perPage})
		if err != nil {
			_ = preg.Close()
			return fmt.Errorf("RX queue %d pool: %w", i, err)
		}
		q := newRxQueue(p, i, mem[rxOff[i]:rxOff[i]+c.RxRingSize*p.rxBDSize()], reg.IOVAAt(rxOff[i]), pl, preg)
		p.rx = append(p.rx, q)
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
			q.region = nil // leaked buffers may still be written: keep the memory
		}
	}
	return errors.Join(errs...)
}

// freeMemory releases what allocRings got (the device must be quiet).
func (p *Port) freeMemory() error {
	var errs []error
	for _, q := range p.rx {
		if q.region != nil {
			if err := q.region.Close(); err != nil {
				errs = append(errs, err)
			}
			q.region = nil
		}
	}
	for _, r := range []**dma.Region{&p.ringMem, &p.msgMem} {
		if *r != nil {
			if err := (*r).Close(); err != nil {
				errs = append(errs, err)
			}
			*r = nil
		}
	}
	return errors.Join(errs...)
}

// errClosed is what calls that would touch a released device return:
// driver.ErrClosed, which the caller puts in the context of the port.
func (p *Port) errClosed() error { return driver.ErrClosed }

// Info implements driver.Port; a closed port returns a zero PortInfo.
func (p *Port) Info() driver.PortInfo {
	p.lock()
	defer p.unlock()
	if p.closed {
		return driver.PortInfo{}
	}
	kind := "ENETC VF"
	if p.pf {
		kind = "ENETC PF"
	}
	caps := driver.CapJumbo | driver.CapMultiSegRx | driver.CapMultiSegTx | driver.CapHWStats
	if p.pf {
		caps |= driver.CapPromiscuous | driver.CapMDIO
	}
	if p.rssEntries > 0 || p.regs.Read32(regSIPCAPR0)&sipcapr0_RSS != 0 {
		caps |= driver.CapRSS
	}
	return driver.PortInfo{
		Name: p.name, Driver: "enetc",
		Device:  fmt.Sprintf("%04x:%04x %s", p.dev.VendorID, p.dev.DeviceID, kind),
		Backend: p.dev.Backend, MAC: append(net.HardwareAddr(nil), p.mac...),
		RxQueues: len(p.rx), TxQueues: len(p.tx), MaxRxQueues: p.maxRx, MaxTxQueues: p.maxTx,
		RxRingSize: p.cfg.RxRingSize, TxRingSize: p.cfg.TxRingSize,
		MTU: p.mtu, MaxMTU: MaxMTU, Caps: caps,
	}
}

// PF reports whether the port is a physical function (it owns MAC and MDIO).
func (p *Port) PF() bool { return p.pf }

// Start implements driver.Port: it programs and enables every ring with its
// BDs fully written first (§4.2, §4.3), then enables the MAC if the link is
// up. It fills the RX rings from their pools as their owner before it
// opens the gate: a queue goroutine may keep polling through Stop and
// Start, its bursts return 0 until then. After a Stop that left a TX ring stuck it
// first resets the function and sets the port up again, with what was set
// since Open (gate list, shapers, streams, MAC merge, the VFs' MACs); what
// does not load fails Start, naming it (restore.go).
func (p *Port) Start() error {
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	if p.started {
		return nil
	}
	if p.needsReset {
		if err := p.resetFunction(); err != nil {
			return err
		}
	}
	if err := p.restoreLocked(p.resetNote); err != nil {
		p.resetNote = nil // reported
		return err
	}
	for _, q := range p.tx {
		if err := q.setup(); err != nil {
			return err
		}
	}
	for _, q := range p.rx {
		q.setup()
	}
	// Enable only now: every BD is valid before the device may fetch it.
	for _, q := range p.tx {
		p.regs.Write32(txRingReg(q.idx, regTBMR), tbmr_EN|p.ringPrio(q.idx)) // the ring's traffic class (tsn.go)
	}
	for _, q := range p.rx {
		p.regs.Write32(rxRingReg(q.idx, regRBMR), rbmr_EN|q.rbmrBDS())
	}
	p.started = true
	p.gate.Open(gate.Stopped | gate.LinkDown)
	p.startIRQ()
	p.updateLinkLocked()
	if p.pf {
		var linkEvery time.Duration
		if p.phyAddr >= 0 || p.hasPCS() {
			linkEvery = p.linkPoll
		}
		p.watchStop, p.watchDone = make(chan struct{}), make(chan struct{})
		go p.watch(p.watchStop, p.watchDone, linkEvery)
	}
	return nil
}

// resetFunction recovers from a TX ring that could not drain (its indices
// cannot be reset otherwise, §5.4): a function-level reset, then port, SI and
// RSS set up again as in New, and what was set since written again or left
// for Start to load (restore.go). Caller holds ctl; the port is stopped.
func (p *Port) resetFunction() error {
	if p.dev.Reset == nil {
		return fmt.Errorf("a TX ring did not drain at the last Stop and this device offers no function reset: close and reopen it")
	}
	p.accumulateLocked() // the reset zeroes the counters: keep what they held
	lost := p.saveBeforeReset()
	if err := p.dev.Reset(); err != nil {
		return fmt.Errorf("function reset after a stuck TX ring: %w", err)
	}
	p.resetNote = errors.Join(p.resetNote, lost)
	p.countersResetLocked()
	if p.pf {
		if err := p.configurePort(); err != nil {
			return err
		}
		if err := p.setupInterface(); err != nil {
			return err
		}
		p.afterReset()
	}
	if err := p.configureSI(); err != nil {
		return err
	}
	if p.rssOn {
		if err := p.setupRSS(); err != nil {
			return err
		}
	}
	p.needsReset = false
	return nil
}

// Stop implements driver.Port, in the safe order: refuse new TX, wait for
// queued TX to leave (bounded by Config.StopTimeout), disable the MAC,
// disable the rings, wait for TBSR.BUSY to clear, and take back every buffer:
// RX posted buffers are recycled (each frame the device had written back
// into them unread is counted: drain), unsent TX frames freed and counted. The
// queue goroutines must have returned from their last burst.
func (p *Port) Stop() error {
	p.stopWatcher()
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	return p.stopLocked()
}

func (p *Port) stopWatcher() {
	p.lock()
	stop, done := p.watchStop, p.watchDone
	p.watchStop, p.watchDone = nil, nil
	p.unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (p *Port) stopLocked() error {
	if !p.started {
		return nil
	}
	p.gate.Close(gate.Stopped)
	p.stopIRQ()
	deadline := time.Now().Add(p.cfg.StopTimeout)
	var errs []error
	if !p.waitQueuesIdle(deadline) {
		errs = append(errs, fmt.Errorf("a queue goroutine stayed inside a burst for %v after Stop closed the gate", p.cfg.StopTimeout))
	}
	// TX first: wait until the device consumed every queued BD (TBCIR ==
	// TBPIR). Frames cannot leave while the link is down or the MAC is off
	// (§5.4), so follow the link meanwhile: a link that came back since the
	// last poll gets the MAC enabled again.
	p.updateLinkLocked()
	lastPoll := time.Now()
	for _, q := range p.tx {
		for q.hwCI() != q.ntu && time.Now().Before(deadline) {
			time.Sleep(50 * time.Microsecond)
			if p.pf && p.phyAddr >= 0 && time.Since(lastPoll) > 2*time.Millisecond {
				p.updateLinkLocked()
				lastPoll = time.Now()
			}
		}
	}
	if p.pf {
		v := p.regs.Read32(regPM0_CMD_CFG) &^ (pm_cmd_cfg_TX_EN | pm_cmd_cfg_RX_EN)
		p.regs.Write32(regPM0_CMD_CFG, v)
		p.regs.Write32(regPM1_CMD_CFG, v)
	}
	for _, q := range p.tx {
		p.regs.Write32(txRingReg(q.idx, regTBMR), 0)
		p.regs.Write32(txRingReg(q.idx, regTBIER), 0)
	}
	for _, q := range p.rx {
		p.regs.Write32(rxRingReg(q.idx, regRBMR), 0)
		p.regs.Write32(rxRingReg(q.idx, regRBIER), 0)
	}
	for _, q := range p.tx {
		for p.regs.Read32(txRingReg(q.idx, regTBSR))&tbsr_BUSY != 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Microsecond)
		}
		if n := q.drain(); n > 0 {
			p.needsReset = true
			errs = append(errs, fmt.Errorf("TX ring %d did not drain within %v (TBCIR %d, TBPIR %d): %d frames dropped; the ring needs a function reset (erratum: PI/CI cannot be reset), which Close performs",
				q.idx, p.cfg.StopTimeout, q.hwCI(), q.ntu, n))
		}
	}
	for _, q := range p.rx {
		q.drain()
	}
	p.started = false
	return errors.Join(errs...)
}

// concurrentUse reports a burst entered while another goroutine is inside
// one on the same queue. It panics: the call has no error to return, and
// going on would hand one buffer to two owners.
//
//go:noinline
func (p *Port) concurrentUse(kind string, idx int, call string) {
	panic(&driver.ConcurrentUse{Port: p.name, Queue: kind + " " + strconv.Itoa(idx), Call: call})
}

// waitQueuesIdle waits until no queue is inside a burst, or until deadline
// if it is not zero, and reports whether none is.
func (p *Port) waitQueuesIdle(deadline time.Time) bool {
	return gate.WaitIdle(p.bursts(), deadline)
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

// Close implements driver.Port: Stop, close the pools (leaks are
// reported), reset the function if a TX ring could not drain, unmap DMA
// memory and release the device. Buffers the application still holds are
// waited for up to Config.StopTimeout, then reported by holder
// (*pool.LeakError) and their pool's memory stays mapped: Data on them
// stays safe. Afterwards every method fails closed (driver.ErrClosed, see
// package driver); a second Close returns nil.
//
// The steps, in the order both drivers take them: Stop; mark the port closed and keep
// every burst off the rings; close the interrupts; close the pools
// (waiting for buffers out); read the counters a last time; disable the
// device; unmap the memory no leaked buffer needs; release the device.
func (p *Port) Close() error {
	stopErr := p.Stop() // a TX ring that did not drain: its frames were dropped
	if errors.Is(stopErr, driver.ErrClosed) {
		return nil // a second Close
	}
	p.ctl.Lock()
	defer p.ctl.Unlock()
	p.closed = true
	p.shut.Store(true)
	p.gate.Close(gate.Stopped) // no burst starts again: it would reach unmapped rings
	defer p.unregister()       // its queues are never polled again; the chip's rule lets go of it
	defer pool.RemoveClaimer(txClaim{p})
	p.closeIRQ()
	errs := []error{stopErr}
	// Waiting for buffers touches no register, so it runs without the
	// ERR050089 read lock: another port's Stop, which may be what returns
	// them (it reclaims this port's buffers from its TX ring), must not
	// queue behind an MDIO transaction that queues behind us.
	poolErr := p.closePools()
	leaked := poolErr != nil
	errs = append(errs, poolErr)
	p.chip.rw.RLock()
	p.final = p.statsLocked() // the last look at the counters: the window goes away
	if p.rssOn {
		p.regs.Write32(regSIMR, p.regs.Read32(regSIMR)&^simr_RSSE)
	}
	if err := p.tsnOff(); err != nil {
		errs = append(errs, err)
	}
	p.regs.Write32(regSICBDRMR, 0)
	p.regs.Write32(regSIMR, 0)
	if p.pf && p.msgMem != nil {
		p.setMsgBuffers(false) // no VF message lands in memory about to go
	}
	if p.needsReset && p.dev.Reset != nil {
		if err := p.dev.Reset(); err != nil {
			errs = append(errs, fmt.Errorf("function reset after a stuck TX ring: %w; DMA memory stays mapped", err))
			leaked = true
		}
	}
	p.chip.rw.RUnlock()
	if !leaked {
		if err := p.freeMemory(); err != nil {
			errs = append(errs, err)
		}
	}
	if p.dev.Release != nil {
		if err := p.dev.Release(); err != nil {
			errs = append(errs, fmt.Errorf("release: %w", err))
		}
	}
	return errors.Join(errs...)
}

// SetPromiscuous implements driver.Port (PF only: PSIPMR).
func (p *Port) SetPromiscuous(on bool) error {
	if !p.pf {
		return fmt.Errorf("promiscuous mode: %w", ErrNotPF)
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	p.promisc = on
	p.writePromisc()
	return nil
}

// SetMTU implements driver.Port. Frames up to MTU+22 bytes (header, one VLAN
// tag, FCS) are accepted, up to 9600 (§4.9). The port must be stopped.
func (p *Port) SetMTU(mtu int) error {
	if mtu < 68 || mtu > MaxMTU {
		return fmt.Errorf("MTU %d must be in [68, %d]", mtu, MaxMTU)
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	if p.started {
		return fmt.Errorf("set MTU: stop the port first")
	}
	if err := p.checkJumbo(mtu); err != nil {
		return err
	}
	p.mtu = mtu
	if p.pf {
		p.regs.Write32(regPM0_MAXFRM, uint32(p.maxFrame()))
	}
	for _, q := range p.rx {
		q.setMaxLen(uint32(p.maxFrame() - fcsLen))
	}
	for _, q := range p.tx {
		q.maxLen = uint32(p.maxFrame() - fcsLen)
	}
	return nil
}

// MAC implements driver.Port; nil once the port is closed.
func (p *Port) MAC() net.HardwareAddr {
	p.lock()
	defer p.unlock()
	if p.closed {
		return nil
	}
	return append(net.HardwareAddr(nil), p.mac...)
}

// SetMAC implements driver.Port: PSIPMAR0/1(0) on a PF; a VF asks its PF
// with a VSI-to-PSI message (vf.go) and fails with ErrNoPFAnswer when no
// PF answers. An address no station may have (driver.MACProblem: not 6
// bytes, multicast, broadcast, zero) is refused and nothing changes.
func (p *Port) SetMAC(mac net.HardwareAddr) error {
	if err := driver.CheckUnicast("set MAC", mac); err != nil {
		return err
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	if !p.pf {
		if err := p.askPFSetMAC(mac); err != nil {
			return err
		}
		p.mac = append(net.HardwareAddr(nil), mac...)
		return nil
	}
	p.mac = append(net.HardwareAddr(nil), mac...)
	p.regs.Write32(regPSIPMAR0(0), macLo(mac))
	p.regs.Write32(regPSIPMAR1(0), macHi(mac))
	return nil
}

// RxQueue implements driver.Port; nil once the port is closed.
func (p *Port) RxQueue(i int) driver.RxQueue {
	if i < 0 || i >= len(p.rx) || p.shut.Load() {
		return nil
	}
	return p.rx[i].api() // a stamping queue's RxBurst reads 32-byte BDs (rxstamp.go)
}

// TxQueue implements driver.Port; nil once the port is closed.
func (p *Port) TxQueue(i int) driver.TxQueue {
	if i < 0 || i >= len(p.tx) || p.shut.Load() {
		return nil
	}
	return p.tx[i]
}

// MAC address register packing (§2.1): byte 0 in bits 7:0 of the low word,
// bytes 4..5 in bits 15:0 of the high word.
func macLo(m net.HardwareAddr) uint32 {
	return uint32(m[0]) | uint32(m[1])<<8 | uint32(m[2])<<16 | uint32(m[3])<<24
}
func macHi(m net.HardwareAddr) uint32 { return uint32(m[4]) | uint32(m[5])<<8 }

func macFromRegs(lo, hi uint32) net.HardwareAddr {
	return net.HardwareAddr{byte(lo), byte(lo >> 8), byte(lo >> 16), byte(lo >> 24), byte(hi), byte(hi >> 8)}
}

// randomMAC is a random locally administered unicast address.
func randomMAC() net.HardwareAddr {
	m := make(net.HardwareAddr, 6)
	_, _ = rand.Read(m)
	m[0] = m[0]&^1 | 2
	return m
}

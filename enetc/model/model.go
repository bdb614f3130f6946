package model

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/sim/simdma"
	"github.com/gopmd/gopmd/wire"
)

// DefaultPHYID is the PHY identifier (registers 2 and 3) of the model's
// PHY: the Qualcomm Atheros AR8031/AR8033's, the gigabit PHY on the
// LS1028A-RDB's SGMII port (U-Boot board/nxp/ls1028a/README: lane 0
// "connected through the Qualcomm AR8033 PHY"; the ID is U-Boot
// drivers/net/phy/atheros.c AR8031_PHY_ID and Linux at803x.c
// ATH8031_PHY_ID, one driver for both parts).
const DefaultPHYID = 0x004D_D074

// Config describes a model device.
type Config struct {
	// Name names the device in errors ("enetc0").
	Name string
	// PF selects a physical function: 256 KiB BAR0 with SI, port, MAC and
	// global blocks. Otherwise a VF: 64 KiB BAR0 with the SI block only.
	PF bool
	// MAC is the primary MAC address (what the IERB loads into
	// PSIPMAR/SIPMAR at FLR).
	MAC [6]byte
	// TxRings and RxRings are the rings of the SI (default 8 each, at most
	// MaxRings). A VF attached to a PF (AttachVF) owns at most what the PF
	// assigns it in PSICFGR0(n+1), which resets to none.
	TxRings, RxRings int
	// PortRings is how many TX and RX rings a PF's port has for its SIs
	// together (PCAPR0; default MaxRings, never fewer than the PF's own).
	PortRings int
	// IOMMU translates every DMA address the device uses. Required.
	IOMMU *simdma.IOMMU
	// Engine selects engine mode (a DMA-engine goroutine, started by
	// Start) instead of synchronous mode.
	Engine bool
	// ClockHz is the ENETC clock RBICR1's coalescing timer counts; 0
	// means 400 MHz.
	ClockHz int64
	// MMIOCost is busy-waited on every register access (0 = none): a
	// stand-in for posted-write and MMIO-read latency.
	MMIOCost time.Duration
	// PHYAddr is the PHY's address on the port's external MDIO bus.
	PHYAddr int
	// PHYID is the PHY identifier (default DefaultPHYID).
	PHYID uint32
	// LinkDown starts the device with the link down.
	LinkDown bool
	// SpeedMbps is the link speed the PHY resolves: 10, 100 or 1000
	// (default 1000).
	SpeedMbps int
	// FIFOLockAfter is how many frames the MAC receives with PM0_RX_FIFO
	// at its power-on value before RX locks up (erratum, §5.4); default 256.
	FIFOLockAfter int
	// PHYMode is how the port is wired to the board (PHYModeSGMII,
	// PHYMode2500BaseX, PHYModeRGMII, PHYModeInternal; PF only). With it
	// set, frames pass only while PM0_IF_MODE and, for SGMII and
	// 2500BASE-X, the PCS are set for that wiring (§6.1). PM0_IF_MODE
	// resets to the wiring's value, as the RCW leaves it (GMII, with RG
	// for RGMII), since Linux and U-Boot rely on it. Empty: the interface
	// is not modelled and never blocks traffic.
	PHYMode string
	// StrictIFMode makes PM0/PM1_IF_MODE reset to 0 (XGMII) whatever the
	// wiring, so frames pass only once the driver programs IFMODE (as
	// Linux and DPDK do for RGMII and gopmd for every wiring; U-Boot's
	// RGMII path and Linux's SGMII and 2500BASE-X paths do not, §6.1).
	StrictIFMode bool
	// PARBitsFreeBSD makes PAR_PORT_CFG follow FreeBSD's bit names (bit 1
	// turns the IPv4 header checksum check off) instead of DPDK's (bit 0);
	// the public sources disagree (§8.2).
	PARBitsFreeBSD bool
	// Chip is the LS1028A the function belongs to: ERR050089 spans every
	// ENETC function of a chip. Nil gives the device a chip of its own.
	Chip *Chip
}

// Chip is what the ENETC functions of one LS1028A share. ERR050089 spans
// all of them (Linux guards it with one global lock): while an MDIO
// register access to one function is under way, a register access to any
// function is a recorded model error of the function accessed.
type Chip struct {
	mdio  atomic.Pointer[Device] // the function whose MDIO register access is under way, if any
	timer atomic.Pointer[Timer]  // the chip's 1588 timer (timer.go), nil until attached
	// inWindow, when set (tests), runs inside every MDIO register access's
	// window instead of the yield.
	inWindow func()
}

// NewChip returns a chip for functions to share through Config.Chip.
func NewChip() *Chip { return &Chip{} }

// Chip returns the chip the function belongs to (Config.Chip, or the one
// New made for it).
func (d *Device) Chip() *Chip { return d.chip }

// Access is one recorded access to an unimplemented register.
type Access struct {
	Off   uint32
	Write bool
}

// String says "read 0x..." or "write 0x...".
func (a Access) String() string {
	if a.Write {
		return fmt.Sprintf("write %#x", a.Off)
	}
	return fmt.Sprintf("read %#x", a.Off)
}

// maxRecorded bounds the lists of model errors and unimplemented accesses;
// the counts in Stats keep counting.
const maxRecorded = 256

// txScratch is the per-ring buffer multi-BD and padded frames are gathered
// in; a frame longer than this is refused (TERR) as the MAC has no room.
const txScratch = 16 << 10

// Device is one ENETC function (PF or VF) of the model.
type Device struct {
	cfg   Config
	name  string
	pf    bool
	size  uint32
	iommu *simdma.IOMMU
	chip  *Chip
	t0    time.Time
	cost  time.Duration

	regs []atomic.Uint32 // storage of plain registers, by word

	nTx, nRx int
	tx       [MaxRings]txRing
	rx       [MaxRings]rxRing

	si  [8]atomic.Uint64            // SIROCT..SITMCA
	mac [nMACCounters]atomic.Uint64 // eMAC counters in macCounters order
	st  counters                    // model counters (Stats)
	msi msiState                    // MSI-X messages and RX coalescing (irq.go)

	link      atomic.Bool
	ifOK      atomic.Bool  // MAC interface programmed for the wiring (pcs.go)
	mbox      mailbox      // VSI-to-PSI messages (msg.go)
	speed     atomic.Int32 // Mb/s the PHY resolves (Config.SpeedMbps, SetSpeed)
	latchDown atomic.Bool  // PHY BMSR link latched low since the last read
	emdio     mdioBus
	imdio     mdioBus
	clock     atomic.Pointer[Clock] // times MDIO cycles (SetClock); nil: instant
	phy       phy
	pcs       pcs

	// RSS: indirection table (set through the CBDR) and the Toeplitz
	// lookup table derived from PRSSK, rebuilt when the key changes.
	rssTable [RSSTableLen]atomic.Uint32
	rssInit  atomic.Uint64 // bit n: RSS entry n written since power-on (not cleared by FLR)
	rfsInit  atomic.Uint64 // bit n: RFS entry n written since power-on
	rssRings atomic.Uint32 // bitmap of rings named in the table
	keyGen   atomic.Uint32 // bumped on every PRSSK write
	tabGen   uint32        // keyGen the lookup table was built for (RX side)
	toep     [36][256]uint32

	macFilt [MACFilterEntries]macFilter
	tsn     tsnState   // scheduled traffic: gate list, shapers, departures (tsn.go)
	qci     qciState   // per-stream filtering and policing (qci.go)
	merge   mergeState // frame preemption: verify state, reassembly, counters (preempt.go)

	cbdrHalted atomic.Bool

	// RX side state owned by whoever delivers frames.
	rxd         [MaxRings]rxDeliver // per ring: the open delivery batch
	rxc         rxCounts            // the batch's counters
	rxOpenRings uint32              // bit n: ring n has an open batch
	fifoCount   int
	fifoLock    atomic.Bool
	stage       []byte                   // pulled frames waiting for delivery (pump)
	staged      [stageFrames]stagedFrame // where in stage
	staging     bool                     // delivering a stage: copies may wait (runCopies)
	copies      [rxCopies]rxCopy         // frame data waiting for its buffers (runCopies)
	nCopies     int
	pumping     atomic.Bool // a synchronous-mode pump is running
	vlanBuf     []byte

	out     atomic.Pointer[wireBox]
	discard discard
	srcs    atomic.Pointer[[]*srcEntry]
	srcMu   sync.Mutex

	faults faultState

	recMu  sync.Mutex
	errs   []string
	unimpl []Access
	oow    error // first out-of-window access

	// engine mode
	engine   bool
	engMu    sync.Mutex // held by the engine for each poll round, and by Reset
	rxMu     sync.Mutex // serialises Receive with the engine's deliveries
	running  atomic.Bool
	stop     atomic.Bool
	sleeping atomic.Bool
	wakeups  atomic.Uint64
	shared   atomic.Pointer[Engine] // the shared engine running this device, if any
	wake     chan struct{}
	done     chan struct{}
	// srcLive: the receive side has run, so the engine pulls the sources
	// (round, rxStarted; guarded by engMu).
	srcLive bool
}

type wireBox struct{ w wire.Wire }

// srcEntry is an attached source; a lossless source's frame that did not
// fit yet waits in pend (owned by whoever pumps).
type srcEntry struct {
	s        wire.Source
	waker    wire.Waker // s, when it can wake the engine; else nil
	lossless bool
	pend     []byte
	pendN    int
}

// discard is the default wire: it counts and drops (goroutine-safe).
type discard struct{ frames, bytes atomic.Uint64 }

// Transmit counts and drops the frame.
func (d *discard) Transmit(frame []byte) { d.frames.Add(1); d.bytes.Add(uint64(len(frame))) }

type macFilter struct {
	en   atomic.Bool
	si   atomic.Uint32
	addr atomic.Uint64 // MAC bytes in bits 47:0, byte 0 lowest
}

// New builds a device at its power-on state. It panics only on a missing
// IOMMU (a programming error); every later misuse is a recorded model error.
func New(cfg Config) *Device {
	if cfg.IOMMU == nil {
		panic("enetc model: Config.IOMMU is required")
	}
	if err := checkPHYMode(&cfg); err != nil {
		panic(err.Error())
	}
	if cfg.TxRings <= 0 {
		cfg.TxRings = 8
	}
	if cfg.RxRings <= 0 {
		cfg.RxRings = 8
	}
	cfg.TxRings = min(cfg.TxRings, MaxRings)
	cfg.RxRings = min(cfg.RxRings, MaxRings)
	if cfg.PortRings <= 0 {
		cfg.PortRings = MaxRings
	}
	cfg.PortRings = min(max(cfg.PortRings, cfg.TxRings, cfg.RxRings), 255)
	if cfg.PHYID == 0 {
		cfg.PHYID = DefaultPHYID
	}
	switch cfg.SpeedMbps {
	case 10, 100, 1000:
	default:
		cfg.SpeedMbps = 1000
	}
	if cfg.FIFOLockAfter <= 0 {
		cfg.FIFOLockAfter = 256
	}
	if cfg.Name == "" {
		cfg.Name = "enetc"
	}
	d := &Device{
		cfg:     cfg,
		name:    cfg.Name,
		pf:      cfg.PF,
		iommu:   cfg.IOMMU,
		chip:    cfg.Chip,
		t0:      time.Now(),
		cost:    cfg.MMIOCost,
		nTx:     cfg.TxRings,
		nRx:     cfg.RxRings,
		engine:  cfg.Engine,
		stage:   make([]byte, stageBytes),
		vlanBuf: make([]byte, txScratch),
		wake:    make(chan struct{}, 1),
	}
	if d.chip == nil {
		d.chip = NewChip()
	}
	d.msi.clock = cfg.ClockHz
	d.size = VFBAR0Size
	if d.pf {
		d.size = PFBAR0Size
	}
	d.regs = make([]atomic.Uint32, d.size/4)
	for i := range d.tx {
		d.tx[i].idx = i
		d.tx[i].scratch = make([]byte, txScratch)
		d.tx[i].ringView, d.tx[i].dataView = cfg.IOMMU.View(), cfg.IOMMU.View()
		d.tx[i].staged = make([][]byte, 0, txStageFrames)
	}
	for i := range d.rxd {
		d.rxd[i].ringView, d.rxd[i].bufView = cfg.IOMMU.View(), cfg.IOMMU.View()
	}
	d.out.Store(&wireBox{&d.discard})
	d.srcs.Store(&[]*srcEntry{})
	d.phy.addr = cfg.PHYAddr
	d.speed.Store(int32(d.cfg.SpeedMbps))
	d.phy.reset() // power-on: an FLR reaches neither the PHY nor the PCS
	// The vendor registers start from their power-on values; a BMCR reset
	// keeps them (phyvendor.go).
	d.phy.vendorReset()
	d.pcs.reset()
	d.reset()
	d.link.Store(!cfg.LinkDown)
	d.ifOK.Store(d.ifUp())
	return d
}

// Name is the device's name.
func (d *Device) Name() string { return d.name }

// PF reports whether the device is a physical function.
func (d *Device) PF() bool { return d.pf }

// IOMMU is the IOMMU the device's DMA goes through.
func (d *Device) IOMMU() *simdma.IOMMU { return d.iommu }

// Reset is a function-level reset: every register back to its power-on
// value, TX and RX producer/consumer indices cleared, RX FIFO lock-up and
// TX ring state forgotten. The external PHY (a chip of its own on the
// board) and the Lynx PCS keep their state (§6.1). Counters of Stats,
// model errors and attached wires and sources are kept; pending injected
// faults are dropped. In engine mode it waits for the engine's current
// round.
func (d *Device) Reset() error {
	if d.engine {
		d.engMu.Lock()
		d.rxMu.Lock()
	}
	d.reset()
	if d.engine {
		d.rxMu.Unlock()
		d.engMu.Unlock()
	}
	d.resetMSI()
	d.st.resets.Add(1)
	return nil
}

// reset puts the registers at their power-on values. Values the reference
// does not give are the model's choice:
//
//	SIMR, SICAR*, rings, PMR, PSIPMR: 0 (everything disabled)
//	SIPMAR0/1, PSIPMAR0/1(0): Config.MAC (loaded from the IERB at FLR)
//	SICAPR0: TxRings | RxRings<<16; PSICFGR0(0) the same (PF);
//	  PSICFGR0(1), (2): 0, so an attached VF owns no ring until its PF
//	  assigns it some (Linux enetc_port_si_configure gives the VF SIs
//	  their rings at PF probe; nothing else does)
//	SIPCAPR0: PSFP (bit 9), RSS (bit 8), QBV (bit 4), QBU (bit 3);
//	  SIRSSCAPR, PRSSCAPR: 1 (64-entry table)
//	PTGCAPR: GateListMax (tsn.go)
//	PSIDCAPR, PSFCAPR, PFMCAPR: StreamEntries; PSGCAPR: StreamGateListMax<<16 |
//	  StreamEntries (qci.go)
//	PCAPR0: PortRings<<24 | PortRings<<16 | bit 11 (internal MDIO present)
//	PM0/PM1_CMD_CFG: 0x0810 (TXP | PROMIS; U-Boot's "default", UNVERIFIED)
//	PM0_MAXFRM: 1536; PM0_RX_FIFO: 2 (documented power-on value)
//	PM0/PM1_IF_MODE: the wiring's value as the RCW leaves it (ifModeReset)
//	G_EIPBRR0: 0x00010100 (model's revision)
func (d *Device) reset() {
	for i := range d.regs {
		d.regs[i].Store(0)
	}
	mac := d.cfg.MAC
	mac0 := uint32(mac[0]) | uint32(mac[1])<<8 | uint32(mac[2])<<16 | uint32(mac[3])<<24
	mac1 := uint32(mac[4]) | uint32(mac[5])<<8
	caps := uint32(d.nTx) | uint32(d.nRx)<<16
	d.set(regSIPMAR0, mac0)
	d.set(regSIPMAR1, mac1)
	d.set(regSICAPR0, caps)
	d.set(regSIPCAPR0, sipcapr0_RSS|sipcapr0_QBV|sipcapr0_QBU|sipcapr0_PSFP)
	d.set(regSIRSSCAPR, RSSCapField)
	if d.pf {
		d.set(regPSIPMAR0, mac0)
		d.set(regPSIPMAR1, mac1)
		d.set(regPSICFGR0, caps)
		pr := uint32(d.cfg.PortRings)
		d.set(regPCAPR0, pr<<24|pr<<16|pcapr0_IMDIO)
		d.set(regPRSSCAPR, RSSCapField)
		d.set(regPM0_CMD_CFG, pm_cmd_cfg_TXP|pm_cmd_cfg_PROMIS)
		d.set(regPM1_CMD_CFG, pm_cmd_cfg_TXP|pm_cmd_cfg_PROMIS)
		d.set(regPM0_MAXFRM, 1536)
		d.set(regPM0_RX_FIFO, 2)
		d.set(regPM0_IF_MODE, d.ifModeReset())
		d.set(regPM1_IF_MODE, d.ifModeReset())
		d.set(regG_EIPBRR0, 0x00010100)
		d.set(regPTGCAPR, GateListMax)
		d.qciCaps()
	}
	for i := range d.tx {
		t := &d.tx[i]
		t.pi.Store(0)
		t.ci.Store(0)
		t.halted.Store(false)
		t.reported.Store(0)
	}
	for i := range d.rxd {
		d.rxd[i].open, d.rxd[i].n, d.rxd[i].ring = false, 0, nil // no delivery runs during a reset
	}
	d.rxc, d.rxOpenRings = rxCounts{}, 0
	for i := range d.rx {
		r := &d.rx[i]
		r.pi.Store(0)
		r.ci.Store(0)
		r.dcr.Store(0)
		r.reported.Store(0)
	}
	d.st.rxFramesBase.Add(d.si[sRFRM].Load()) // Stats survive a reset
	d.st.rxBytesBase.Add(d.si[sROCT].Load())
	for i := range d.si {
		d.si[i].Store(0)
	}
	for i := range d.mac {
		d.mac[i].Store(0)
	}
	for i := range d.rssTable {
		d.rssTable[i].Store(0)
	}
	d.rssRings.Store(1)
	d.keyGen.Add(1)
	d.tsnReset()
	d.qciReset()
	d.mergeReset()
	for i := range d.macFilt {
		d.macFilt[i].en.Store(false)
		d.macFilt[i].si.Store(0)
		d.macFilt[i].addr.Store(0)
	}
	d.cbdrHalted.Store(false)
	d.fifoCount = 0
	d.fifoLock.Store(false)
	d.emdio = mdioBus{}
	d.imdio = mdioBus{}
	d.ifOK.Store(d.ifUp())
	d.mbox.mu.Lock()
	d.mbox.vsimsgsr.Store(0)
	d.mbox.pending = false
	d.mbox.mu.Unlock()
	d.faults.clear()
}

// set stores a register's value (no side effects).
func (d *Device) set(off, v uint32) { d.regs[off>>2].Store(v) }

// get loads a register's stored value (no side effects).
func (d *Device) get(off uint32) uint32 { return d.regs[off>>2].Load() }

// SetWire sets where transmitted frames go (nil: the counting discard).
func (d *Device) SetWire(w wire.Wire) {
	if w == nil {
		w = &d.discard
	}
	d.out.Store(&wireBox{w})
}

// AddSource adds a frame source for the receive side: Pump pulls it in
// synchronous mode, the engine in engine mode.
func (d *Device) AddSource(s wire.Source) {
	d.srcMu.Lock()
	old := *d.srcs.Load()
	n := make([]*srcEntry, len(old), len(old)+1)
	copy(n, old)
	e := &srcEntry{s: s, lossless: s.Lossless()}
	if e.lossless {
		e.pend = make([]byte, txScratch)
	}
	if w, ok := s.(wire.Waker); ok {
		e.waker = w
		w.SetWake(d.kickEngine)
	}
	n = append(n, e)
	d.srcs.Store(&n)
	d.srcMu.Unlock()
	d.kickEngine()
}

// Port is the receive side of the device as the wire sees it.
func (d *Device) Port() wire.Port { return d }

// recordErr records a model error: a rule of the reference the driver
// broke, or a fault the model ran into. It never panics.
func (d *Device) recordErr(format string, args ...any) {
	d.st.modelErrors.Add(1)
	d.recMu.Lock()
	if len(d.errs) < maxRecorded {
		d.errs = append(d.errs, d.name+": "+fmt.Sprintf(format, args...))
	}
	d.recMu.Unlock()
}

// ModelErrors returns the recorded model errors (the first 256), each
// naming the device, the register or ring and what was wrong.
func (d *Device) ModelErrors() []string {
	d.recMu.Lock()
	defer d.recMu.Unlock()
	return append([]string(nil), d.errs...)
}

// Unimplemented returns the recorded accesses to unimplemented registers
// (the first 256).
func (d *Device) Unimplemented() []Access {
	d.recMu.Lock()
	defer d.recMu.Unlock()
	return append([]Access(nil), d.unimpl...)
}

func (d *Device) recordUnimpl(off uint32, write bool) {
	d.st.unimpl.Add(1)
	d.recMu.Lock()
	if len(d.unimpl) < maxRecorded {
		d.unimpl = append(d.unimpl, Access{Off: off, Write: write})
	}
	d.recMu.Unlock()
}

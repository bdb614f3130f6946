package model

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/internal/simtime"
	"github.com/gopmd/gopmd/sim/simdma"
	"github.com/gopmd/gopmd/wire"
)

// Config configures a model instance.
type Config struct {
	// Name names the instance in errors ("fec0").
	Name string
	// SoC selects the profile ("imx8mp"); "" means DefaultSoC.
	SoC string
	// MAC is the address the boot loader left in PALR/PAUR. ECR.RESET
	// wipes it, as on silicon: a driver must program its address.
	MAC [6]byte
	// IOMMU is the simulated IOMMU the DMA engine reaches memory through;
	// nil makes one that is non-coherent when the profile is.
	IOMMU *simdma.IOMMU
	// Engine runs the DMA engine in its own goroutine (Start/Stop) instead
	// of inside register writes.
	Engine bool
	// MMIOCost is spent (busy-waiting) on every register access.
	MMIOCost time.Duration
	// PHYAddr is the MDIO address of the simulated PHY (0..31).
	PHYAddr int
	// SharedPHYs are the addresses of further PHYs on this MAC's MDIO bus:
	// another MAC's PHYs on a shared bus (i.MX6UL/7D boards). They answer
	// management frames like the port's own PHY but carry no link for it.
	SharedPHYs []int
	// PHYBus puts the port's PHY on another model's MDIO bus, at
	// PHYAddr: the i.MX6UL-EVK and i.MX7D boards wire ENET1's PHY to
	// ENET2's MDIO pins (docs/hardware-fec.md §5.5). This MAC's own MDIO
	// then reaches no PHY; the PHY still carries this MAC's link.
	PHYBus *Device
	// PHYID is the PHY's identifier (PHYID1<<16 | PHYID2); 0 is a
	// generic PHY's (0x00221622). The RTL8211F's and the KSZ8081's ids
	// bring their vendor registers (phyvendor.go).
	PHYID uint32
	// RGMIIStrapDelays: an RTL8211F strapped to add both RGMII clock
	// delays from reset.
	RGMIIStrapDelays bool
	// LinkSpeed is the link partner's top speed in Mb/s (10, 100, 1000); 0
	// means 1000 on gigabit parts, else 100. The PHY resolves it unless
	// the driver takes it out of the PHY's advertisement.
	LinkSpeed int
	// LinkDown starts with the link down.
	LinkDown bool
	// CoalesceClockHz is the clock RX interrupt coalescing's timer counts
	// (RXICn.ICTT is in units of 64 of its cycles); 0 means 125 MHz.
	CoalesceClockHz int64
	// PTPClock is the 1588 timer's clock: its nominal rate (0: 100 MHz,
	// DefaultPTPClockHz) and its frequency error.
	PTPClock simtime.Oscillator
	// Timeline is the model time the 1588 timer's clock runs on; nil
	// follows the host's clock.
	Timeline *simtime.Timeline
	// MDIOTime is how long a management frame takes (about 25 µs at the
	// usual 2.5 MHz MDC); 0 completes it inside the MMFR write. A driver
	// must then wait for EIR.MII before reading MMFR, as on silicon.
	MDIOTime time.Duration
}

// Access is one recorded access to an unimplemented register.
type Access struct {
	Offset uint32
	Write  bool
	Value  uint32
}

// maxRecordedAccesses bounds the unimplemented-access log.
const maxRecordedAccesses = 64

// Device is one FEC/ENET instance: its register window and DMA engine.
type Device struct {
	name    string
	prof    Profile
	iommu   *simdma.IOMMU
	engine  bool
	cost    time.Duration
	size    uint32
	bootMAC [6]byte

	regs [regSpan / 4]atomic.Uint32
	ptp  ptpTimer             // the 1588 timer (ptp.go)
	avb  avbSched             // the AVB classes' shaper (avb.go)
	defs [regSpan / 4]*regDef // nil: not present on this part

	nrings int
	rx     [3]rxRing
	tx     [3]txRing
	// txMu and rxMu serialise the DMA engine's TX and RX sides in engine
	// mode (lock order: txMu before rxMu). In synchronous mode only txMu is
	// used, around the TX walk a TDAR write runs.
	txMu, rxMu sync.Mutex
	// stage holds one received frame as it will be written to memory.
	stage []byte

	// dmaOwns: RDAR or TDAR was written since ECR.ETHEREN was last set, so
	// the DMA owns a ring; the speed rule (runningSpeedChange) applies
	// from then on.
	dmaOwns atomic.Bool

	phy       phy
	others    []*phy // Config.SharedPHYs, and PHYs of MACs whose Config.PHYBus is this one (busMu)
	link      atomic.Bool
	mdioTime  time.Duration
	mdioFrame atomic.Uint32
	mdioDue   atomic.Int64 // UnixNano when the pending frame completes; 0: none

	// busMu guards others; phyElsewhere: this MAC's PHY is on another's
	// bus (Config.PHYBus), its own MDIO reaches none.
	busMu        sync.Mutex
	phyElsewhere bool

	wire    atomic.Pointer[wireHolder]
	srcMu   sync.Mutex
	sources atomic.Pointer[[]wire.Source]
	srcBuf  []byte

	faults faults
	st     counters

	errMu   sync.Mutex
	err     error
	lastErr error
	unimpl  []Access

	run runState
	// roomWait: the last pull stopped because a lossless source found no
	// receive room (owned by whoever pulls: the engine, or Pump).
	roomWait bool
	irq      irqState
}

type wireHolder struct{ w wire.Wire }

// New builds a model instance. An unknown SoC is an error listing the
// profiles.
func New(cfg Config) (*Device, error) {
	name := cfg.Name
	if name == "" {
		name = "fec"
	}
	prof, ok := LookupProfile(cfg.SoC)
	if !ok {
		return nil, fmt.Errorf("fec model %s: unknown SoC %q (profiles: %s)", name, cfg.SoC, strings.Join(Profiles(), ", "))
	}
	if cfg.PHYAddr < 0 || cfg.PHYAddr > 31 {
		return nil, fmt.Errorf("fec model %s: PHY address %d outside 0..31", name, cfg.PHYAddr)
	}
	speed, err := checkSpeed(name, prof, cfg.LinkSpeed)
	if err != nil {
		return nil, err
	}
	var others []*phy
	for _, a := range cfg.SharedPHYs {
		if a < 0 || a > 31 || a == cfg.PHYAddr {
			return nil, fmt.Errorf("fec model %s: shared PHY address %d outside 0..31 or the port's own PHY's (%d)", name, a, cfg.PHYAddr)
		}
		o := &phy{}
		o.init(a, speed, prof.Gigabit, 0, false)
		o.setLink(true)
		others = append(others, o)
	}
	d := &Device{
		name:     name,
		prof:     prof,
		iommu:    cfg.IOMMU,
		engine:   cfg.Engine,
		cost:     cfg.MMIOCost,
		mdioTime: cfg.MDIOTime,
		size:     uint32(prof.WindowSize),
		bootMAC:  cfg.MAC,
		nrings:   prof.rings(),
		stage:    make([]byte, rxMaxFrame+8),
		srcBuf:   make([]byte, rxMaxFrame),
		others:   others,
	}
	if d.iommu == nil {
		d.iommu = simdma.NewIOMMU(prof.NonCoherent)
	}
	for i := range regTable {
		r := &regTable[i]
		if prof.has(r.Only) {
			d.defs[r.Offset/4] = r
		}
	}
	for i := 0; i < 3; i++ {
		d.rx[i].n = i
		d.tx[i].n = i
		d.tx[i].buf = make([]byte, txMaxFrame+64)
	}
	d.phy.init(cfg.PHYAddr, speed, prof.Gigabit, cfg.PHYID, cfg.RGMIIStrapDelays)
	d.link.Store(!cfg.LinkDown)
	d.phy.setLink(!cfg.LinkDown)
	if b := cfg.PHYBus; b != nil {
		b.busMu.Lock()
		taken := b.phyAtLocked(cfg.PHYAddr) != nil
		if !taken {
			b.others = append(b.others, &d.phy)
		}
		b.busMu.Unlock()
		if taken {
			return nil, fmt.Errorf("fec model %s: address %d on %s's MDIO bus is taken", name, cfg.PHYAddr, b.name)
		}
		d.phyElsewhere = true
	}
	d.wire.Store(&wireHolder{&CountingDiscard{}})
	d.sources.Store(&[]wire.Source{})
	d.ptp.init(cfg.Timeline, cfg.PTPClock)
	d.resetRegs()
	d.writeMAC(cfg.MAC)
	d.run.init()
	d.irq.clock = cfg.CoalesceClockHz
	return d, nil
}

// Name is the instance name.
func (d *Device) Name() string { return d.name }

// Profile is the instance's SoC profile.
func (d *Device) Profile() Profile { return d.prof }

// IOMMU is the simulated IOMMU the DMA engine uses.
func (d *Device) IOMMU() *simdma.IOMMU { return d.iommu }

// BootMAC is the address given in Config.MAC.
func (d *Device) BootMAC() [6]byte { return d.bootMAC }

// Size is the register window's length in bytes.
func (d *Device) Size() int { return int(d.size) }

// Err reports the first access outside the window (or unaligned), naming
// offset and size.
func (d *Device) Err() error {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	return d.err
}

// LastModelError is the most recent error the DMA engine met (a DMA fault,
// a ring without a wrap bit, a zero MRBR), or nil.
func (d *Device) LastModelError() error {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	return d.lastErr
}

// Unimplemented returns the recorded accesses to registers this part does
// not have (the first 64; Stats counts them all).
func (d *Device) Unimplemented() []Access {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	return append([]Access(nil), d.unimpl...)
}

func (d *Device) modelError(format string, args ...any) {
	d.st.modelErrors.Add(1)
	err := fmt.Errorf("fec model %s: "+format, append([]any{d.name}, args...)...)
	d.errMu.Lock()
	d.lastErr = err
	d.errMu.Unlock()
}

// runningReconfig records a speed or duplex change made to a running MAC
// (Stats.RunningReconfig, a model error).
func (d *Device) runningReconfig(what string) {
	d.st.runningReconfig.Add(1)
	d.modelError("%s", what)
}

// speedRuleApplies is whether a change of ECR.SPEED or RCR.RMII_10T/DRT
// now counts as reprogramming a running MAC: ETHEREN set, a ring handed to
// the DMA since (RDAR or TDAR written) and TX not gracefully stopped. The
// reference restricts only TCR.FDEN; U-Boot's fec_open sets ECR.SPEED and
// RCR.RMII_10T after ETHEREN and the PHY's start but before its first RDAR
// (docs/hardware-fec.md §5.6).
func (d *Device) speedRuleApplies() bool {
	return d.reg(regECR)&ecr_ETHEREN != 0 && d.dmaOwns.Load() && d.reg(regTCR)&tcr_GTS == 0
}

func (d *Device) badAccess(off uint32, width int) {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	if d.err != nil {
		return
	}
	if off%uint32(width) != 0 {
		d.err = fmt.Errorf("fec model %s: unaligned %d-bit register access at offset %#x", d.name, width*8, off)
		return
	}
	d.err = fmt.Errorf("fec model %s: %d-bit register access at offset %#x outside the %#x-byte window", d.name, width*8, off, d.size)
}

func (d *Device) recordUnimpl(off uint32, write bool, v uint32) {
	d.st.unimplemented.Add(1)
	d.errMu.Lock()
	if len(d.unimpl) < maxRecordedAccesses {
		d.unimpl = append(d.unimpl, Access{Offset: off, Write: write, Value: v})
	}
	d.errMu.Unlock()
}

// spend burns the configured MMIO cost.
func (d *Device) spend() {
	if d.cost <= 0 {
		return
	}
	for t := time.Now(); time.Since(t) < d.cost; {
	}
}

// reg is the raw value of a register (the model's own view).
func (d *Device) reg(off uint32) uint32 { return d.regs[off/4].Load() }

func (d *Device) setEIR(bits uint32) {
	if bits = d.coalesce(bits); bits != 0 {
		d.regs[regEIR/4].Or(bits)
		d.updateIRQ()
	}
}

// Read32 reads a register. Outside the window it returns all ones and
// records the error for Err.
func (d *Device) Read32(off uint32) uint32 {
	d.spend()
	d.st.regReads.Add(1)
	if off&3 != 0 || uint64(off)+4 > uint64(d.size) {
		d.badAccess(off, 4)
		return ^uint32(0)
	}
	if off >= regSpan || d.defs[off/4] == nil {
		d.recordUnimpl(off, false, 0)
		return 0
	}
	if off >= regATCR && off <= regTCSR0+28 {
		if v, ok := d.ptp.read(off); ok {
			return v
		}
	}
	switch off {
	case regEIR, regMMFR:
		d.mdioPoll()
	case regRDAR, regRDAR1, regRDAR2:
		if d.rx[rdarRing(off)].req.Load() != 0 {
			return activeBit
		}
		return 0
	case regTDAR, regTDAR1, regTDAR2:
		if d.tx[tdarRing(off)].req.Load() != 0 {
			return activeBit
		}
		return 0
	}
	return d.regs[off/4].Load()
}

// Read64 reads two 32-bit registers, low word first: the FEC has no 64-bit
// registers and the bus splits the access.
func (d *Device) Read64(off uint32) uint64 {
	if off&7 != 0 || uint64(off)+8 > uint64(d.size) {
		d.badAccess(off, 8)
		return ^uint64(0)
	}
	lo := d.Read32(off)
	return uint64(d.Read32(off+4))<<32 | uint64(lo)
}

// Write32 writes a register with its documented semantics.
func (d *Device) Write32(off uint32, v uint32) {
	d.spend()
	d.st.regWrites.Add(1)
	if off&3 != 0 || uint64(off)+4 > uint64(d.size) {
		d.badAccess(off, 4)
		return
	}
	if off >= regSpan || d.defs[off/4] == nil {
		d.recordUnimpl(off, true, v)
		return
	}
	if off >= regATCR && off <= regTCSR0+28 && d.ptp.write(off, v) {
		return
	}
	def := d.defs[off/4]
	w := &d.regs[off/4]
	switch {
	case off == regEIR || off == regTGSR:
		w.And(^(v & def.mask))
		d.updateIRQ()
	case off == regEIMR:
		w.Store(v & def.mask)
		d.updateIRQ()
	case off == regRDAR || off == regRDAR1 || off == regRDAR2:
		d.rdarWrite(rdarRing(off))
	case off == regTDAR || off == regTDAR1 || off == regTDAR2:
		d.tdarWrite(tdarRing(off))
	case off == regECR:
		d.ecrWrite(v)
	case off == regMMFR:
		d.mmfrWrite(v)
	case off == regMSCR:
		d.mscrWrite(v)
	case off == regMIBC:
		d.mibcWrite(v)
	case off == regTCR:
		d.tcrWrite(v)
	case off == regRDSR || off == regRDSR1 || off == regRDSR2 || off == regTDSR || off == regTDSR1 || off == regTDSR2:
		d.ringBaseWrite(off, v&def.mask)
	case off == regRCR:
		old := w.Load()
		if d.speedRuleApplies() && (old^v)&def.mask&(rcr_RMII_10T|rcr_DRT) != 0 {
			d.runningReconfig("RCR.RMII_10T or RCR.DRT changed while the MAC runs (ETHEREN set, a ring given to the DMA, no graceful stop)")
		}
		w.Store(old&^def.mask | v&def.mask)
	case off >= regMIBFirst && off <= regMIBLast:
		// Counters are writable only while MIBC.MIB_DIS holds them.
		if d.reg(regMIBC)&mibc_MIB_DIS != 0 {
			w.Store(v)
		}
	default:
		if def.Access == "ro" {
			return
		}
		old := w.Load()
		w.Store(old&^def.mask | v&def.mask)
	}
}

func rdarRing(off uint32) int {
	switch off {
	case regRDAR1:
		return 1
	case regRDAR2:
		return 2
	}
	return 0
}

func tdarRing(off uint32) int {
	switch off {
	case regTDAR1:
		return 1
	case regTDAR2:
		return 2
	}
	return 0
}

var (
	rdsrOff = [3]uint32{regRDSR, regRDSR1, regRDSR2}
	tdsrOff = [3]uint32{regTDSR, regTDSR1, regTDSR2}
	mrbrOff = [3]uint32{regMRBR, regMRBR1, regMRBR2}
)

// lockAll takes both engine locks in engine mode.
func (d *Device) lockAll() {
	if d.engine {
		d.txMu.Lock()
		d.rxMu.Lock()
	}
}

func (d *Device) unlockAll() {
	if d.engine {
		d.rxMu.Unlock()
		d.txMu.Unlock()
	}
}

// resetRegs loads the reset values and rewinds the rings. Callers hold
// the engine locks.
func (d *Device) resetRegs() {
	d.mdioDue.Store(0)
	d.dmaOwns.Store(false)
	for i := range d.regs {
		if d.defs[i] != nil {
			d.regs[i].Store(d.defs[i].reset)
		} else {
			d.regs[i].Store(0)
		}
	}
	d.ptp.reset()
	for i := 0; i < 3; i++ {
		d.rx[i].req.Store(0)
		d.rx[i].cur = 0
		d.tx[i].req.Store(0)
		d.tx[i].cur = 0
		d.tx[i].inFrame = false
		d.tx[i].sawEmpty.Store(false)
	}
}

func (d *Device) writeMAC(mac [6]byte) {
	d.regs[regPALR/4].Store(uint32(mac[0])<<24 | uint32(mac[1])<<16 | uint32(mac[2])<<8 | uint32(mac[3]))
	d.regs[regPAUR/4].Store(uint32(mac[4])<<24 | uint32(mac[5])<<16 | 0x8808)
}

// Reset performs a hardware reset, as ECR.RESET does: every register
// returns to its reset value (PALR/PAUR are wiped), the rings rewind and
// the DMA engine stops. The PHY is not reset.
func (d *Device) Reset() error {
	d.lockAll()
	d.resetRegs()
	d.unlockAll()
	d.resetIRQ()
	return nil
}

func (d *Device) ecrWrite(v uint32) {
	if v&ecr_RESET != 0 {
		_ = d.Reset()
		return
	}
	mask := uint32(0xF00301FE)
	if !d.prof.EnhancedBD {
		mask &^= ecr_EN1588
	}
	if !d.prof.Gigabit {
		mask &^= ecr_SPEED
	}
	if !d.prof.DBSWP {
		mask &^= ecr_DBSWP
	}
	if !d.prof.DelayClocks {
		mask &^= ecr_TXC_DLY | ecr_RXC_DLY
	}
	d.lockAll()
	old := d.reg(regECR)
	if v&ecr_ETHEREN != 0 && (old^v)&mask&ecr_SPEED != 0 && d.speedRuleApplies() {
		d.runningReconfig("ECR.SPEED changed while the MAC runs (ETHEREN set, a ring given to the DMA, no graceful stop)")
	}
	d.regs[regECR/4].Store(v & mask)
	if old&ecr_ETHEREN != 0 && v&ecr_ETHEREN == 0 || old&ecr_ETHEREN == 0 && v&ecr_ETHEREN != 0 {
		d.dmaOwns.Store(false)
		// Clearing ETHEREN stops DMA and rewinds the descriptor pointers
		// to RDSR/TDSR; setting it starts from there.
		for i := 0; i < 3; i++ {
			d.rx[i].req.Store(0)
			d.rx[i].cur = uint64(d.reg(rdsrOff[i]))
			d.tx[i].req.Store(0)
			d.tx[i].cur = uint64(d.reg(tdsrOff[i]))
			d.tx[i].inFrame = false
			d.tx[i].sawEmpty.Store(false)
		}
	}
	d.unlockAll()
}

func (d *Device) ringBaseWrite(off, v uint32) {
	d.lockAll()
	d.regs[off/4].Store(v)
	for i := 0; i < 3; i++ {
		if rdsrOff[i] == off {
			d.rx[i].cur = uint64(v)
		}
		if tdsrOff[i] == off {
			d.tx[i].cur = uint64(v)
			d.tx[i].inFrame = false
		}
	}
	d.unlockAll()
}

func (d *Device) mibcWrite(v uint32) {
	v &= mibc_MIB_DIS | mibc_MIB_CLEAR
	d.regs[regMIBC/4].Store(v | mibc_MIB_IDLE)
	if v&mibc_MIB_CLEAR != 0 {
		for off := uint32(regMIBFirst); off <= regMIBLast; off += 4 {
			d.regs[off/4].Store(0)
		}
	}
}

// mib adds to a MIB counter while counting is enabled.
func (d *Device) mib(off uint32, n uint32) {
	if d.regs[regMIBC/4].Load()&(mibc_MIB_DIS|mibc_MIB_CLEAR) == 0 {
		d.regs[off/4].Add(n)
	}
}

// mibSize counts a frame of n bytes (FCS included) in the size buckets
// that start at p64 (P64, P65TO127, ..., P_GTE2048).
func (d *Device) mibSize(p64 uint32, n int) {
	k := uint32(0)
	for _, lim := range [...]int{64, 127, 255, 511, 1023, 2047} {
		if n <= lim {
			break
		}
		k++
	}
	d.mib(p64+4*k, 1)
}

func (d *Device) tcrWrite(v uint32) {
	def := d.defs[regTCR/4]
	if d.engine {
		// GTS takes effect at a frame boundary: wait for the engine's walk.
		d.txMu.Lock()
	}
	old := d.reg(regTCR)
	if d.reg(regECR)&ecr_ETHEREN != 0 && (old^v)&def.mask&tcr_FDEN != 0 {
		d.runningReconfig("TCR.FDEN changed while ECR.ETHEREN is set; the reference allows it only with the MAC disabled")
	}
	d.regs[regTCR/4].Store(old&^def.mask | v&def.mask)
	if v&tcr_GTS != 0 {
		d.setEIR(eir_GRA)
	}
	if d.engine {
		d.txMu.Unlock()
	}
	if old&tcr_GTS != 0 && v&tcr_GTS == 0 {
		d.resumeTX()
	}
}

// checkSpeed validates a PHY speed for prof; 0 picks the part's top speed.
func checkSpeed(name string, prof Profile, speed int) (int, error) {
	if speed == 0 {
		speed = 100
		if prof.Gigabit {
			speed = 1000
		}
	}
	if speed != 10 && speed != 100 && speed != 1000 || speed == 1000 && !prof.Gigabit {
		top := "10, 100"
		if prof.Gigabit {
			top += ", 1000"
		}
		return 0, fmt.Errorf("fec model %s: link speed %d Mb/s not possible on %s (%s)", name, speed, prof.Name, top)
	}
	return speed, nil
}

// MAC returns the station address PALR/PAUR hold now.
func (d *Device) MAC() [6]byte {
	l, u := d.reg(regPALR), d.reg(regPAUR)
	return [6]byte{byte(l >> 24), byte(l >> 16), byte(l >> 8), byte(l), byte(u >> 24), byte(u >> 16)}
}

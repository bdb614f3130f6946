package enetc

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/internal/mii"
)

// MDIO on the PF's external MDIO controller (EMDIO, §2.9), clause 22 and 45,
// under the ERR050089 rule: see the package documentation for how the data
// path is kept off the registers during each MDIO register access.

// mdioTimeout bounds each busy-wait (the reference: 10 ms).
const mdioTimeout = 10 * time.Millisecond

// ErrMDIOTimeout is wrapped when the MDIO controller stays busy.
var ErrMDIOTimeout = errors.New("MDIO controller stayed busy")

// ErrMDIONoResponse is wrapped when a read finds no PHY answering (RD_ER).
var ErrMDIONoResponse = errors.New("no PHY answered the MDIO read")

// ERR050089 spans the whole chip: an MDIO register access concurrent with
// any other register access of any ENETC function of the chip may be lost
// (reference §5.4; Linux takes one global rwlock for all of them). So the
// rule is kept across every port of the chip, not per port: every control
// path holds the read side of its chip's rw while it touches registers
// (Port.lock), each MDIO register access the write side; and the data path
// of every port of the chip is held off by the MDIO bit of its gate, which
// an MDIO register access on any of them sets for that access only.
//
// The unit is the register access, not the transaction, as in Linux, whose
// MDIO accessors take the erratum lock for writing around each register
// access (enetc_hw.h enetc_port_rd_mdio/enetc_port_wr_mdio) and let the data
// path run while a frame is on the MDIO wire. Holding the data path off for
// a whole transaction would cost far more: one link poll (up to 7 PHY and 3
// PCS reads, each a 25.6 µs MDIO frame at 2.5 MHz) is 0.2 ms or more, over
// 760 minimum-size frames at 2.5 Gb/s against a 512-BD ring.
//
// The chip is driver.Device.Chip. Every backend that reaches silicon leaves
// it empty, so every real ENETC function of the process shares one rule, as
// the functions of one LS1028A must; only the sim backend names simulated
// chips apart (chip=), whose models keep the same rule per chip.
type chip struct {
	name string
	rw   sync.RWMutex
	mu   sync.Mutex // guards ports
	// ports is every open port of the chip, whose gates an MDIO register
	// access closes. Copied on write: an access keeps the slice it closed
	// the gates of, to open the same ones.
	ports []*Port
	refs  int // ports from New to Close, under chips.mu
}

// chips are the chips of the open ports, by name.
var chips struct {
	mu sync.Mutex
	m  map[string]*chip
}

// chipOf returns the chip named name, counting one more port on it; the
// port gives it back with release.
func chipOf(name string) *chip {
	chips.mu.Lock()
	defer chips.mu.Unlock()
	c := chips.m[name]
	if c == nil {
		if chips.m == nil {
			chips.m = map[string]*chip{}
		}
		c = &chip{name: name}
		chips.m[name] = c
	}
	c.refs++
	return c
}

// release drops one port's hold on c; the last forgets it.
func (c *chip) release() {
	chips.mu.Lock()
	defer chips.mu.Unlock()
	if c.refs--; c.refs == 0 {
		delete(chips.m, c.name)
	}
}

// register adds p to the ports an MDIO register access on its chip holds off.
func (p *Port) register() {
	c := p.chip
	c.mu.Lock()
	c.ports = append(slices.Clip(c.ports), p)
	c.mu.Unlock()
}

// unregister removes p and gives its hold on the chip back (Close).
func (p *Port) unregister() {
	c := p.chip
	c.mu.Lock()
	c.ports = slices.DeleteFunc(slices.Clone(c.ports), func(x *Port) bool { return x == p })
	c.mu.Unlock()
	c.release()
}

// lock takes the port's control-path lock and the read side of its chip's
// ERR050089 lock: no MDIO register access on any port of the chip runs while
// the caller touches registers. Never nested.
func (p *Port) lock() {
	p.ctl.Lock()
	p.chip.rw.RLock()
}

func (p *Port) unlock() {
	p.chip.rw.RUnlock()
	p.ctl.Unlock()
	p.linkEv.Flush() // link changes seen under the lock, with no lock held
}

// mdioBegin starts one MDIO register access (caller holds p.lock): it
// trades the read side of the chip's ERR050089 lock for the write side, so
// no control path of any port of the chip touches a register, then closes
// the gate of every such port's data path and waits until none of their
// queues is inside a burst.
func (p *Port) mdioBegin() {
	c := p.chip
	c.rw.RUnlock()
	c.rw.Lock()
	c.mu.Lock()
	ports := c.ports
	for _, x := range ports {
		x.gate.Close(gate.MDIO) // bursts starting from now see the gate closed
	}
	if !slices.Contains(ports, p) {
		p.gate.Close(gate.MDIO) // not registered yet (New): its own gate too
		ports = append(slices.Clip(ports), p)
	}
	c.mu.Unlock()
	for _, x := range ports {
		x.waitIdle()
	}
	p.mdioPorts = ports
}

// waitIdle waits until no queue of p is inside a burst (its gate closed).
func (p *Port) waitIdle() { p.waitQueuesIdle(time.Time{}) }

// mdioEnd ends the access: it opens the gates again and returns to the
// read side.
func (p *Port) mdioEnd() {
	for _, x := range p.mdioPorts {
		x.gate.Open(gate.MDIO)
	}
	p.mdioPorts = nil
	p.chip.rw.Unlock()
	p.chip.rw.RLock()
}

// mdioRd reads the MDIO controller register at off as one ERR050089
// access (caller holds p.lock).
func (p *Port) mdioRd(off uint32) uint32 {
	p.mdioBegin()
	v := p.regs.Read32(off)
	p.mdioEnd()
	return v
}

// mdioWr writes the MDIO controller register at off as one ERR050089
// access (caller holds p.lock).
func (p *Port) mdioWr(off, v uint32) {
	p.mdioBegin()
	p.regs.Write32(off, v)
	p.mdioEnd()
}

// mdioGateWaitMax bounds how long a TX burst waits for an MDIO register
// access to end. An access normally closes the gate for well under a
// microsecond, but the thread running it can be descheduled by a loaded
// host for tens of milliseconds (measured: up to 80 ms with six runnable
// threads on two cores). Linux's data path waits for the erratum lock
// without any bound; this one gives up only when the gate stayed closed far
// longer than any access can take, which means the process is being stopped
// or starved: the burst then takes nothing (TxBurst returns 0) and
// drv_tx<n>_mdio_wait_timeouts counts it.
const mdioGateWaitMax = time.Second

// mdioSpin is how long a waiting burst spins on the gate before it also
// yields its processor at every check: the goroutine running the MDIO
// access may need the processor the burst's goroutine holds (GOMAXPROCS at
// or below the busy goroutines).
const mdioSpin = 5 * time.Microsecond

// waitMDIO is TxBurst's slow path, taken when it found the MDIO bit of its
// gate set (the caller has entered the burst): like the Linux driver, whose
// data path waits for the ERR050089 lock, the burst waits for the
// MDIO register access to end instead of refusing frames for it. It leaves
// the burst (its flag down) so the access can start, spins on the gate, enters
// the burst again and returns the gate value it then read, inside the
// burst. That value still has gate.MDIO set only when the wait went past
// mdioGateWaitMax. The waits are counted per queue (Stats: drv_tx<n>_mdio_*).
//
//go:noinline
func (q *txQueue) waitMDIO() uint32 {
	start := time.Now()
	var (
		g        uint32
		timedOut bool
	)
	for i := 1; ; i++ {
		q.burst.Leave() // let the MDIO access see this queue idle
		for q.gate.Load()&gate.MDIO != 0 {
			i++
			if i&63 != 0 {
				continue
			}
			el := time.Since(start)
			if el > mdioGateWaitMax {
				timedOut = true
				break
			}
			if el > mdioSpin {
				runtime.Gosched()
			}
		}
		var shared bool
		if g, shared = q.burst.Enter(q.gate); shared { // another goroutine entered while this one stood aside
			q.port.concurrentUse("tx", q.idx, "TxBurst")
		}
		if g&gate.MDIO == 0 || timedOut {
			break
		}
	}
	ns := uint64(time.Since(start))
	q.mdioWaits.Add(1)
	q.mdioWaitNs.Add(ns)
	if ns > q.mdioWaitMaxNs.Load() {
		q.mdioWaitMaxNs.Store(ns) // one writer: the queue's goroutine
	}
	if timedOut {
		q.mdioWaitTimeouts.Add(1)
	}
	return g
}

func (p *Port) mdioWait() error { return p.mdioWaitAt(regEMDIO) }

// mdioPollGap is how long the busy-wait leaves between two reads of
// MDIO_CFG: each read holds every port's data path off (ERR050089), the
// frame on the MDIO wire does not, and it lasts about 26 µs at 2.5 MHz.
// Linux polls every 10 µs (enetc_mdio_wait_complete).
const mdioPollGap = 5 * time.Microsecond

// mdioWaitAt busy-waits for the MDIO controller at base (EMDIO or IMDIO),
// reading MDIO_CFG as one ERR050089 access each time; between reads the
// data path runs.
func (p *Port) mdioWaitAt(base uint32) error {
	deadline := time.Now().Add(mdioTimeout)
	for i := 0; ; i++ {
		if p.mdioRd(base+regMDIO_CFG)&mdio_cfg_BSY == 0 {
			return nil
		}
		now := time.Now()
		if i > 16 && !now.Before(deadline) {
			return fmt.Errorf("enetc %s: MDIO_CFG.BSY still set after %v: %w (is the port's MDIO clocked?)", p.name, mdioTimeout, ErrMDIOTimeout)
		}
		// Spin with the gates open, do not sleep: a timer sleep lasts far
		// longer than the frame; yield, so that the data path (or whatever
		// moves the frame on) gets a processor.
		for time.Since(now) < mdioPollGap {
			runtime.Gosched()
		}
	}
}

func checkMDIOArgs(phy, reg, regMax int) error {
	if phy < 0 || phy > 31 {
		return fmt.Errorf("MDIO PHY address %d must be in [0, 31]", phy)
	}
	if reg < 0 || reg > regMax {
		return fmt.Errorf("MDIO register %d must be in [0, %d]", reg, regMax)
	}
	return nil
}

// MDIORead reads clause-22 register reg of the PHY at address phy on the
// port's MDIO bus. PF only.
func (p *Port) MDIORead(phy, reg int) (uint16, error) {
	if !p.pf {
		return 0, ErrNotPF
	}
	if err := checkMDIOArgs(phy, reg, 31); err != nil {
		return 0, err
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return 0, p.errClosed()
	}
	return p.mdioRead22(phy, reg)
}

// MDIOWrite writes clause-22 register reg of the PHY at address phy. PF only.
func (p *Port) MDIOWrite(phy, reg int, v uint16) error {
	if !p.pf {
		return ErrNotPF
	}
	if err := checkMDIOArgs(phy, reg, 31); err != nil {
		return err
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	return p.mdioWrite22(phy, reg, v)
}

// MDIORead45 reads clause-45 register reg of MMD devad of the PHY at phy.
// PF only.
func (p *Port) MDIORead45(phy, devad, reg int) (uint16, error) {
	if !p.pf {
		return 0, ErrNotPF
	}
	if err := checkMDIOArgs(phy, reg, 0xFFFF); err != nil {
		return 0, err
	}
	if devad < 0 || devad > 31 {
		return 0, fmt.Errorf("MDIO MMD %d must be in [0, 31]", devad)
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return 0, p.errClosed()
	}
	if err := p.mdioSetup45(phy, devad, reg); err != nil {
		return 0, err
	}
	return p.mdioReadCycle(uint32(phy)<<mdio_ctl_PORT | uint32(devad))
}

// MDIOWrite45 writes clause-45 register reg of MMD devad of the PHY at phy.
// PF only.
func (p *Port) MDIOWrite45(phy, devad, reg int, v uint16) error {
	if !p.pf {
		return ErrNotPF
	}
	if err := checkMDIOArgs(phy, reg, 0xFFFF); err != nil {
		return err
	}
	if devad < 0 || devad > 31 {
		return fmt.Errorf("MDIO MMD %d must be in [0, 31]", devad)
	}
	p.lock()
	defer p.unlock()
	if p.closed {
		return p.errClosed()
	}
	if err := p.mdioSetup45(phy, devad, reg); err != nil {
		return err
	}
	p.mdioWr(regEMDIO+regMDIO_DATA, uint32(v)) // starts the write cycle
	return p.mdioWait()
}

// mdioSetup45: CFG with ENC45, wait, CTL = phy|devad, ADDR = reg, wait.
func (p *Port) mdioSetup45(phy, devad, reg int) error {
	p.mdioWr(regEMDIO+regMDIO_CFG, mdio_cfg_VALC45)
	if err := p.mdioWait(); err != nil {
		return err
	}
	p.mdioWr(regEMDIO+regMDIO_CTL, uint32(phy)<<mdio_ctl_PORT|uint32(devad))
	p.mdioWr(regEMDIO+regMDIO_ADDR, uint32(reg)) // starts the address cycle
	return p.mdioWait()
}

// mdioReadCycle starts a read with CTL|READ, waits, checks RD_ER, reads DATA.
func (p *Port) mdioReadCycle(ctl uint32) (uint16, error) { return p.mdioReadCycleAt(regEMDIO, ctl) }

// mdioReadCycleAt is mdioReadCycle on the controller at base.
func (p *Port) mdioReadCycleAt(base, ctl uint32) (uint16, error) {
	p.mdioWr(base+regMDIO_CTL, ctl|mdio_ctl_READ)
	if err := p.mdioWaitAt(base); err != nil {
		return 0xFFFF, err
	}
	if p.mdioRd(base+regMDIO_CFG)&mdio_cfg_RD_ER != 0 {
		return 0xFFFF, fmt.Errorf("enetc %s: MDIO read (CTL %#x): %w", p.name, ctl, ErrMDIONoResponse)
	}
	return uint16(p.mdioRd(base+regMDIO_DATA) & mdio_data_MASK), nil
}

// mdioRead22 is a clause-22 read (§2.9) on the port's EMDIO. Caller holds
// ctl.
func (p *Port) mdioRead22(phy, reg int) (uint16, error) {
	return p.mdioRead22At(regEMDIO, phy, reg)
}

// mdioRead22At is a clause-22 read on the controller at base (EMDIO, or
// IMDIO for the PCS), every register access of it one ERR050089 access.
// Caller holds ctl.
func (p *Port) mdioRead22At(base uint32, phy, reg int) (uint16, error) {
	p.mdioWr(base+regMDIO_CFG, mdio_cfg_VALUE)
	if err := p.mdioWaitAt(base); err != nil {
		return 0xFFFF, err
	}
	ctl := uint32(phy)<<mdio_ctl_PORT | uint32(reg)
	p.mdioWr(base+regMDIO_CTL, ctl)
	return p.mdioReadCycleAt(base, ctl)
}

// mdioWrite22At is a clause-22 write on the controller at base, every
// register access of it one ERR050089 access. Caller holds ctl.
func (p *Port) mdioWrite22At(base uint32, phy, reg int, v uint16) error {
	p.mdioWr(base+regMDIO_CFG, mdio_cfg_VALUE)
	if err := p.mdioWaitAt(base); err != nil {
		return err
	}
	p.mdioWr(base+regMDIO_CTL, uint32(phy)<<mdio_ctl_PORT|uint32(reg))
	p.mdioWr(base+regMDIO_DATA, uint32(v)) // starts the write cycle
	return p.mdioWaitAt(base)
}

// mdioWrite22 is a clause-22 write (§2.9) on the port's EMDIO. Caller
// holds ctl.
func (p *Port) mdioWrite22(phy, reg int, v uint16) error {
	return p.mdioWrite22At(regEMDIO, phy, reg, v)
}

// findPHY picks the PHY: option phy=N or phy=none; else the device
// tree's phy-handle when it names a PHY on the port's own MDIO bus (a PHY
// on the LS1028A's central MDIO function, 00:00.3, where mainline puts the
// RDB's PHYs since 2021, is refused with what to do: gopmd does not drive
// that function); else the first address whose ID registers answer.
// Without one the link is fixed (an internal port). It records why in
// phyWhy (PHYChoice). Called from New.
func (p *Port) findPHY() error {
	p.lock()
	defer p.unlock()
	p.phyAddr = -1
	if o := p.dev.Spec.Options; o != nil && o.Has("phy") {
		v := o.Get("phy")
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < 32 {
			p.phyAddr = n
			p.phyWhy = fmt.Sprintf("phy=%d: address %d on the port's own MDIO bus, as the option says", n, n)
		} else {
			p.phyWhy = "phy=none: no PHY, a fixed link (with a PCS, the link is the PCS's)"
		}
		return nil
	}
	if p.phyMode == modeInternal {
		p.phyWhy = "none: an internal port, a fixed link inside the SoC"
		return nil // a fixed link inside the SoC: no PHY to look for
	}
	dt, err := devtree.ReadPHY(p.dev.OFNode)
	if err != nil {
		return fmt.Errorf("enetc %s: %w; give phy=N (the PHY's address on the port's MDIO bus) or phy=none (fixed link) to choose by hand", p.name, err)
	}
	if dt.Found {
		return p.phyFromDT(dt)
	}
	for a := 0; a < 32; a++ {
		id1, err1 := p.mdioRead22(a, mii.PHYID1)
		id2, err2 := p.mdioRead22(a, mii.PHYID2)
		if err1 != nil || err2 != nil {
			if errors.Is(err1, ErrMDIOTimeout) || errors.Is(err2, ErrMDIOTimeout) {
				p.phyWhy = "none: the port's MDIO controller stayed busy, so no PHY could be read; a fixed link"
				return nil // no working MDIO: fixed link
			}
			continue
		}
		if (id1 == 0xFFFF && id1 == id2) || (id1 == 0 && id2 == 0) {
			continue
		}
		p.phyAddr = a
		p.phyWhy = fmt.Sprintf("address %d, the first on the port's own MDIO bus whose ID registers answer (ID %#08x): the device tree names no PHY", a, uint32(id1)<<16|uint32(id2))
		return nil
	}
	p.phyWhy = "none: the device tree names no PHY and none answers on the port's own MDIO bus; a fixed link"
	return nil
}

// phyFromDT takes the PHY the device tree names (caller holds p.lock).
func (p *Port) phyFromDT(dt devtree.PHY) error {
	if dt.Fixed {
		p.phyWhy = "none: the device tree's fixed-link, no PHY"
		return nil
	}
	own := filepath.Clean(p.dev.OFNode)
	switch {
	case dt.Bus != "" && filepath.Clean(dt.Bus) == own:
		p.phyAddr = dt.Addr
		p.phyWhy = fmt.Sprintf("address %d on the port's own MDIO bus: the device tree's %s names %s", dt.Addr, dt.Prop, dt.Node)
		return nil
	case devtree.CentralMDIO(dt.Parent):
		return fmt.Errorf("enetc %s: the device tree's %s names %s, address %d on the LS1028A's central MDIO function (%s, PCI 00:00.3, 1957:ee01; mainline's RDB tree puts its PHYs there since 2021), which gopmd does not drive: "+
			"give phy=none to take the link from the Lynx PCS alone (SGMII or 2500BASE-X; the PHY keeps what the bootloader or kernel set), "+
			"or phy=%d to reach it through this port's own MDIO controller where the board wires that one to the PHY (NXP calls MDIO through the port defeatured on the LS1028A)",
			p.name, dt.Prop, dt.Node, dt.Addr, dt.Parent, dt.Addr)
	default:
		return fmt.Errorf("enetc %s: the device tree's %s names %s, address %d on the MDIO bus of %s, which this port's MDIO registers do not drive: give phy=none (fixed link, or the PCS's link) or phy=N if this port's own MDIO reaches a PHY",
			p.name, dt.Prop, dt.Node, dt.Addr, dt.Parent)
	}
}

// PHYChoice says which PHY the port uses and why: the option, the device
// tree's phy-handle, a scan, or none (nicctl info prints it).
func (p *Port) PHYChoice() string {
	p.lock()
	defer p.unlock()
	if !p.pf {
		return "none: a VF has no MDIO bus; the PF owns the PHY"
	}
	return p.phyWhy
}

// PHYAddr is the MDIO address of the port's PHY, or -1 when the port runs
// as a fixed link (a VF, an internal port, or no PHY answered).
func (p *Port) PHYAddr() int {
	p.lock()
	defer p.unlock()
	return p.phyAddr
}

// readPHYLink reads link, speed and duplex from the PHY's clause-22
// registers (mii.ReadLink; the eMAC runs at 1000 Mb/s) and, for SGMII and
// 2500BASE-X, the PCS (pcs.go). Each MDIO register access holds the data
// path off for itself only (ERR050089). With a PCS the link is up when the
// PCS and the PHY (if any) are, at the PCS's speed and duplex. Caller
// holds ctl.
func (p *Port) readPHYLink() (driver.Link, error) {
	var l driver.Link
	if a := p.phyAddr; a >= 0 {
		var err error
		l, err = mii.ReadLink(func(reg int) (uint16, error) { return p.mdioRead22(a, reg) }, true)
		if err != nil || !p.hasPCS() {
			return l, err
		}
		if !l.Up {
			return driver.Link{}, nil
		}
		if err := p.followPCS(l); err != nil {
			return driver.Link{}, err
		}
	}
	pl, err := p.readPCSLink()
	if err != nil || !pl.Up || p.phyMode != modeSGMII || p.inband || p.phyAddr < 0 {
		return pl, err
	}
	return l, nil // out of band: the PHY's speed and duplex
}

// hasPCS reports whether the port runs through the SerDes PCS.
func (p *Port) hasPCS() bool { return p.phyMode == modeSGMII || p.phyMode == mode2500BaseX }

// pollLinkLocked refreshes the link state and follows it: MAC TX/RX enabled
// and TX accepted while up; MAC disabled and TX refused while down (§6,
// §9 step 5). Caller holds ctl.
func (p *Port) pollLinkLocked() driver.Link {
	l := driver.Link{Up: true, SpeedMbps: p.fixedSpeed, FullDuplex: true} // VF and fixed links
	if p.pf && (p.phyAddr >= 0 || p.hasPCS()) {
		nl, err := p.readPHYLink()
		if err != nil {
			nl = driver.Link{} // a PHY that cannot be read is no link to send on
		}
		l = nl
	}
	if p.pf {
		p.followRGMII(l) // before the MAC is enabled at the new speed
	}
	p.linkEv.Note(p.name, p.link, l)
	p.link = l
	p.linkValue.Store(&l)
	if !p.started {
		return l
	}
	if p.pf {
		v := p.regs.Read32(regPM0_CMD_CFG)
		nv := v &^ (pm_cmd_cfg_TX_EN | pm_cmd_cfg_RX_EN)
		if l.Up {
			nv |= pm_cmd_cfg_TX_EN | pm_cmd_cfg_RX_EN
			if v&(pm_cmd_cfg_TX_EN|pm_cmd_cfg_RX_EN) != pm_cmd_cfg_TX_EN|pm_cmd_cfg_RX_EN {
				nv = p.applyPauseLocked(nv) // as the link comes up, before the MAC is enabled
			}
		}
		if nv != v {
			p.regs.Write32(regPM0_CMD_CFG, nv)
			p.regs.Write32(regPM1_CMD_CFG, nv)
		}
	}
	if l.Up {
		p.gate.Open(gate.LinkDown)
	} else {
		p.gate.Close(gate.LinkDown)
	}
	return l
}

// Link is the last link state read from the PHY (UpdateLink reads it; the
// link watcher, option link-poll=, calls UpdateLink once a second). It
// takes no lock and touches no register: any goroutine may call it.
// A closed port reports the zero Link (down).
func (p *Port) Link() driver.Link {
	if p.shut.Load() {
		return driver.Link{}
	}
	return *p.linkValue.Load()
}

// OnLinkChange implements driver.Port: fn sees every change the link
// watcher (link-poll=), Start and UpdateLink find. On a closed port it
// does nothing and returns a no-op cancel.
func (p *Port) OnLinkChange(fn func(driver.LinkEvent)) (cancel func()) {
	if p.shut.Load() {
		return func() {}
	}
	return p.linkEv.Subscribe(fn)
}

// UpdateLink reads the link state now: on a PF with a PHY it polls the PHY
// over MDIO and a started port follows a change (MAC enabled and TX
// accepted while up); VFs and fixed links report up.
func (p *Port) UpdateLink() driver.Link {
	p.lock()
	defer p.unlock()
	if p.closed {
		return driver.Link{}
	}
	return p.pollLinkLocked()
}

// watch is a started PF's housekeeping goroutine until stop closes: it
// polls the link every linkEvery (0: never) and accumulates the 32-bit
// counters every counterPoll. It sleeps between ticks.
func (p *Port) watch(stop, done chan struct{}, linkEvery time.Duration) {
	defer close(done)
	var linkTick <-chan time.Time
	if linkEvery > 0 {
		t := time.NewTicker(linkEvery)
		defer t.Stop()
		linkTick = t.C
	}
	ct := time.NewTicker(counterPoll)
	defer ct.Stop()
	mt := time.NewTicker(vfMsgPoll)
	defer mt.Stop()
	for {
		select {
		case <-stop:
			return
		case <-mt.C:
			p.lock()
			if p.started {
				p.serveVFMessagesLocked()
			}
			p.unlock()
		case <-linkTick:
			p.lock()
			if p.started {
				p.pollLinkLocked()
			}
			p.unlock()
		case <-ct.C:
			p.lock()
			p.accumulateLocked()
			p.unlock()
		}
	}
}

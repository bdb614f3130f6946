package enetc

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/mii"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim/simdma"
)

// fakeDev is a minimal stand-in for the device, written here from the
// reference so the driver's own logic can be tested (and fuzzed, and timed)
// without the device model: registers in a map, a TX engine that consumes
// BDs on every TBPIR write, an RX side the test drives BD by BD, an
// always-ready MDIO controller with one PHY, and a CBDR that completes at
// once. It checks nothing about the driver; the model does that.
type fakeDev struct {
	t      testing.TB
	size   int
	regs   regFile
	iommu  *simdma.IOMMU
	phy    int // PHY address, -1 none
	link   bool
	wire   [][]byte
	keep   bool // keep transmitted frames in wire
	txSent int
	rxPI   map[int]uint32 // per RX ring: next BD the device fills
	// stall stops the TX engine (TBCIR does not advance).
	stall bool
	// ciOverride, when >= 0, is what TBCIR reads (a bogus index).
	ciOverride int64
	mdioCtl    uint32
	mdioData   uint32
	mdioCfg    uint32
	doorbells  int
	// fastTx completes TX BDs on a doorbell without reading them (the
	// driver-only benchmark's device).
	fastTx bool
}

// fakeSpace is the one address space of every fake device, as two ENETCs
// of one VFIO container share one: a buffer of one port's pool can be sent
// from another's TX ring.
var fakeSpace = simdma.NewIOMMU(false)

func newFakeDev(t testing.TB, pf bool) (*fakeDev, *driver.Device) {
	f := &fakeDev{t: t, regs: make(regFile, 0x40000/4), iommu: fakeSpace.Share(), phy: 3, link: true,
		rxPI: map[int]uint32{}, ciOverride: -1, keep: true}
	f.size = 0x40000
	id := uint16(pciDevicePF)
	if !pf {
		f.size = 0x10000
		id = pciDeviceVF
		f.phy = -1
	}
	f.regs[(regSICAPR0)/4] = 8 | 8<<16
	f.regs[(regSIPCAPR0)/4] = sipcapr0_RSS
	f.regs[(regSIRSSCAPR)/4] = 1 // 64 buckets
	f.regs[(regPCAPR0)/4] = 8<<24 | 8<<16
	if !pf {
		f.regs[regSIPMAR0/4], f.regs[regSIPMAR1/4] = 0xe1000002, 0x0101 // set by the PF, as on a board
	}
	d := &driver.Device{
		Spec: driver.Spec{Raw: "fake:enetc"}, Backend: "fake", Bus: "pci",
		VendorID: pciVendorFreescale, DeviceID: id, Regions: []driver.Regs{f}, Mapper: f.iommu,
	}
	return f, d
}

// regFile holds the 32-bit registers, indexed by byte offset / 4.
type regFile []uint32

func (f *fakeDev) Size() int  { return f.size }
func (f *fakeDev) Err() error { return nil }
func (f *fakeDev) Read64(off uint32) uint64 {
	return uint64(f.Read32(off)) | uint64(f.Read32(off+4))<<32
}

func (f *fakeDev) Read32(off uint32) uint32 {
	if int(off) >= f.size {
		f.t.Errorf("read of %#x outside the %#x-byte BAR", off, f.size)
		return ^uint32(0)
	}
	if off >= bdrBase && off < bdrBase+maxRings*bdrStride && (off-bdrBase)%bdrStride == regTBCIR && f.ciOverride >= 0 {
		return uint32(f.ciOverride)
	}
	switch off {
	case regEMDIO + regMDIO_CFG:
		return f.mdioCfg
	case regEMDIO + regMDIO_DATA:
		return f.mdioData
	}
	return f.regs[(off)/4]
}

func (f *fakeDev) Write32(off uint32, v uint32) {
	if int(off) >= f.size {
		f.t.Errorf("write of %#x outside the %#x-byte BAR", off, f.size)
		return
	}
	f.regs[(off)/4] = v
	switch {
	case off == regSICBDRPIR:
		f.regs[(regSICBDRCIR)/4] = v // the control ring completes at once
	case off == regEMDIO+regMDIO_CTL:
		f.mdioCtl = v
		if v&mdio_ctl_READ != 0 {
			f.mdioRead()
		}
	case off == regEMDIO+regMDIO_CFG:
		f.mdioCfg = v &^ (mdio_cfg_BSY | mdio_cfg_RD_ER)
	case off >= bdrBase && off < bdrBase+maxRings*bdrStride:
		rel := (off - bdrBase) % bdrStride
		ring := int((off - bdrBase) / bdrStride)
		if rel == regTBPIR {
			f.doorbells++
			if f.fastTx {
				f.regs[(off-regTBPIR+regTBCIR)/4] = v
			} else if !f.stall {
				f.runTx(ring)
			}
		}
		if rel == bdrTypeRx+regRBPIR {
			f.rxPI[ring] = v
		}
	}
}

func (f *fakeDev) mdioRead() {
	phy := int(f.mdioCtl>>mdio_ctl_PORT) & 31
	reg := f.mdioCtl & mdio_ctl_DEVAD
	if phy != f.phy {
		f.mdioCfg |= mdio_cfg_RD_ER
		f.mdioData = 0xFFFF
		return
	}
	var v uint32
	switch reg {
	case mii.PHYID1:
		v = 0x0141
	case mii.PHYID2:
		v = 0x0DD0
	case mii.BMCR:
		v = mii.BMCR_ANENABLE
	case mii.BMSR:
		v = mii.BMSR_ESTATUS // a gigabit PHY
		if f.link {
			v |= mii.BMSR_LINK | mii.BMSR_ANCOMPLETE // negotiation completes with the link
		}
	case mii.CTRL1000:
		v = mii.CTRL1000_1000FULL
	case mii.STAT1000:
		v = mii.STAT1000_LP_1000FULL
	}
	f.mdioData = v
}

func (f *fakeDev) ringIOVA(base uint32) uint64 {
	return uint64(f.regs[(base+regTBBAR0)/4]) | uint64(f.regs[(base+regTBBAR1)/4])<<32
}

// runTx consumes TX BDs from TBCIR up to TBPIR, gathering frames.
func (f *fakeDev) runTx(ring int) {
	base := txRingReg(ring, 0)
	n := f.regs[(base+regTBLENR)/4]
	pi := f.regs[(base+regTBPIR)/4]
	ci := f.regs[(base+regTBCIR)/4]
	iova := f.ringIOVA(base)
	var frame []byte
	for ci != pi {
		bd := f.iommu.Slice(iova+uint64(ci)*bdSize, bdSize, false)
		if bd == nil {
			f.t.Errorf("TX ring %d: BD %d not mapped", ring, ci)
			return
		}
		addr := binary.LittleEndian.Uint64(bd)
		l := binary.LittleEndian.Uint16(bd[8:])
		data := f.iommu.Slice(addr, int(l), false)
		if data == nil {
			f.t.Errorf("TX ring %d: BD %d buffer %#x+%d not mapped", ring, ci, addr, l)
			return
		}
		frame = append(frame, data...)
		if bd[15]&txbd_FLAGS_F != 0 {
			if f.keep {
				f.wire = append(f.wire, frame)
			}
			f.txSent++
			frame = nil
		}
		ci = (ci + 1) % n
	}
	f.regs[(base+regTBCIR)/4] = ci
}

// rxBD describes one write-back the test wants the device to make.
type fakeWB struct {
	data    []byte // frame bytes for this BD's buffer
	bufLen  uint16 // written into buf_len (normally len(data))
	status  uint32 // lstatus (R, F, error, flags)
	hash    uint32
	parse   uint16
	noWrite bool // leave the BD untouched (not written back)
}

// writeBack writes BDs at the device's RX producer index of ring and
// advances it. It refuses to run past RBCIR (the device never fills the BD
// at the consumer index).
func (f *fakeDev) writeBack(ring int, wbs ...fakeWB) bool {
	base := rxRingReg(ring, 0)
	n := f.regs[(base+regRBLENR)/4]
	ci := f.regs[(base+regRBCIR)/4]
	pi := f.rxPI[ring]
	iova := uint64(f.regs[(base+regRBBAR0)/4]) | uint64(f.regs[(base+regRBBAR1)/4])<<32
	bsz := int(f.regs[(base+regRBBSR)/4])
	for _, wb := range wbs {
		if (pi+1)%n == ci || pi == ci {
			return false
		}
		if wb.noWrite {
			pi = (pi + 1) % n
			continue
		}
		bd := f.iommu.Slice(iova+uint64(pi)*bdSize, bdSize, true)
		addr := binary.LittleEndian.Uint64(bd)
		if len(wb.data) > 0 {
			if len(wb.data) > bsz {
				f.t.Fatalf("fake: %d bytes exceed RBBSR %d", len(wb.data), bsz)
			}
			if !f.iommu.Write(addr, wb.data) {
				f.t.Fatalf("fake: RX buffer %#x not mapped", addr)
			}
		}
		binary.LittleEndian.PutUint16(bd[0:], 0)
		binary.LittleEndian.PutUint16(bd[2:], wb.parse)
		binary.LittleEndian.PutUint32(bd[4:], wb.hash)
		binary.LittleEndian.PutUint16(bd[8:], wb.bufLen)
		f.iommu.Store32(iova+uint64(pi)*bdSize+12, wb.status)
		pi = (pi + 1) % n
	}
	f.rxPI[ring] = pi
	return true
}

// receive writes a good frame into as many BDs as it needs.
func (f *fakeDev) receive(ring int, frame []byte) bool {
	bsz := int(f.regs[(rxRingReg(ring, regRBBSR))/4])
	var wbs []fakeWB
	for off := 0; off < len(frame); off += bsz {
		end := min(off+bsz, len(frame))
		st := uint32(rxbd_LSTATUS_R)
		if end == len(frame) {
			st |= rxbd_LSTATUS_F
		}
		wbs = append(wbs, fakeWB{data: frame[off:end], bufLen: uint16(end - off), status: st})
	}
	return f.writeBack(ring, wbs...)
}

func fakeFrame(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	copy(b, []byte{0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00})
	return b
}

func mustNew(t testing.TB, d *driver.Device, cfg driver.Config) *Port {
	t.Helper()
	p, err := New(d, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { finalCheck(t, p) })
	if err := p.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return p
}

// finalCheck runs after every test that brought a port up, whether or not
// the test closed it: every buffer of every RX pool must be back (the
// pool's in-flight count zero), and the port ends closed.
func finalCheck(t testing.TB, p *Port) {
	if err := p.Stop(); err != nil {
		t.Logf("Stop after the test: %v", err)
	}
	for i, q := range p.rx {
		if n := q.pool.InFlight(); n != 0 {
			t.Errorf("RX queue %d: %d buffers still in flight after the test", i, n)
		}
	}
	_ = p.Close() // a no-op when the test closed it
}

func closeClean(t testing.TB, p *Port) {
	t.Helper()
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	for i, q := range p.rx {
		if n := q.pool.InFlight(); n != 0 {
			t.Errorf("RX queue %d: %d buffers in flight after Stop", i, n)
		}
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func frameBytes(pk *pool.Packet) []byte {
	var b []byte
	for s := pk; s != nil; s = s.Next() {
		b = append(b, s.Data()...)
	}
	return b
}

func (f *fakeDev) String() string { return fmt.Sprintf("fakeDev(%#x bytes)", f.size) }

package model

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/sim/simdma"
)

// tdrv is a minimal driver written in the test from docs/hardware-fec.md, to drive the
// model as a real driver would: rings in uncached memory, buffers in cached
// memory with sync calls, descriptors in the byte order ECR.DBSWP selects.
type tdrv struct {
	t     testing.TB
	d     *Device
	mmu   *simdma.IOMMU
	ring  *dma.Region // RX rings at ringOff(q,rx), TX rings after
	buf   *dma.Region // RX buffers then TX buffers
	enh   bool
	le    bool // descriptors little-endian (ECR.DBSWP set)
	nrx   int
	ntx   int
	rxPos [3]int
	txPos [3]int
}

const (
	tBufSize = 2048
	tRingMax = 64
)

type tOpts struct {
	soc      string
	enh      bool
	noDBSWP  bool // program ECR without DBSWP
	writeLE  bool // with noDBSWP: write descriptors little-endian anyway
	shift16  bool
	engine   bool
	nrx, ntx int
	mrbr     uint32
	maxFL    uint32
	prom     bool
	loop     bool
	noStart  bool
	speed    uint32 // ECR.SPEED set unless 100
}

func newTDrv(t testing.TB, o tOpts) *tdrv {
	t.Helper()
	if o.nrx == 0 {
		o.nrx = 8
	}
	if o.ntx == 0 {
		o.ntx = 8
	}
	prof, ok := LookupProfile(o.soc)
	if !ok {
		t.Fatalf("no profile %q", o.soc)
	}
	mmu := simdma.NewIOMMU(prof.NonCoherent)
	d, err := New(Config{Name: "fec0", SoC: o.soc, MAC: [6]byte{2, 0, 0, 0, 0, 1}, IOMMU: mmu, Engine: o.engine})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := dma.NewRegion(make([]byte, 6*tRingMax*enhancedBDSize), mmu, dma.Options{Attr: dma.Attr{Uncached: true, Contiguous: true, Name: "rings"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := dma.NewRegion(make([]byte, 6*tRingMax*tBufSize), mmu, dma.Options{Attr: dma.Attr{Name: "buffers"}, NonCoherent: prof.NonCoherent}, nil)
	if err != nil {
		t.Fatal(err)
	}
	td := &tdrv{t: t, d: d, mmu: mmu, ring: ring, buf: buf, enh: o.enh, le: !o.noDBSWP || o.writeLE, nrx: o.nrx, ntx: o.ntx}
	if o.engine {
		if err := d.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Stop)
	}
	td.bringUp(o)
	return td
}

func (td *tdrv) dsize() int {
	if td.enh {
		return enhancedBDSize
	}
	return legacyBDSize
}

// rxBD/txBD are the offsets of BD i of ring q inside td.ring.
func (td *tdrv) rxBD(q, i int) int  { return (q*tRingMax + i) * td.dsize() }
func (td *tdrv) txBD(q, i int) int  { return ((3+q)*tRingMax + i) * td.dsize() }
func (td *tdrv) rxBuf(q, i int) int { return (q*tRingMax + i) * tBufSize }
func (td *tdrv) txBuf(q, i int) int { return ((3+q)*tRingMax + i) * tBufSize }

func (td *tdrv) word(off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&td.ring.Bytes()[off]))
}

// setW0 publishes status and length of the BD at off in one 32-bit store.
func (td *tdrv) setW0(off int, sc, length uint16) {
	v := uint32(sc)<<16 | uint32(length)
	atomic.StoreUint32(td.word(off), td.order(v))
}

func (td *tdrv) w0(off int) (sc, length uint16) {
	v := td.order(atomic.LoadUint32(td.word(off)))
	return uint16(v >> 16), uint16(v)
}

func (td *tdrv) setWord(off int, v uint32) { atomic.StoreUint32(td.word(off), td.order(v)) }
func (td *tdrv) getWord(off int) uint32    { return td.order(atomic.LoadUint32(td.word(off))) }

// order converts between the CPU's (little-endian host) view of a word and
// the word value in the chosen descriptor byte order.
func (td *tdrv) order(v uint32) uint32 {
	if td.le {
		return v
	}
	return v>>24 | v>>8&0xFF00 | v<<8&0xFF0000 | v<<24
}

func (td *tdrv) bringUp(o tOpts) {
	d := td.d
	d.Write32(regECR, ecr_RESET)
	d.Write32(regEIMR, 0)
	d.Write32(regEIR, 0xFFFFFFFF)
	d.Write32(regPALR, 0x02000000)
	d.Write32(regPAUR, 0x00010000)
	d.Write32(regMMFR, 0)
	d.Write32(regMSCR, 0x1A)
	d.Write32(regEIR, eir_MII)
	rings := d.prof.rings()
	for q := 0; q < rings; q++ {
		for i := 0; i < td.nrx; i++ {
			td.initRxBD(q, i)
		}
		for i := 0; i < td.ntx; i++ {
			off := td.txBD(q, i)
			td.setWord(off+bdAddr, 0)
			sc := uint16(0)
			if i == td.ntx-1 {
				sc = bd_W
			}
			td.setW0(off, sc, 0)
		}
	}
	mrbr := o.mrbr
	if mrbr == 0 {
		mrbr = 1984
	}
	d.Write32(regRDSR, uint32(td.ring.IOVAAt(td.rxBD(0, 0))))
	d.Write32(regTDSR, uint32(td.ring.IOVAAt(td.txBD(0, 0))))
	d.Write32(regMRBR, mrbr)
	if rings > 1 {
		d.Write32(regRDSR1, uint32(td.ring.IOVAAt(td.rxBD(1, 0))))
		d.Write32(regTDSR1, uint32(td.ring.IOVAAt(td.txBD(1, 0))))
		d.Write32(regMRBR1, mrbr)
		d.Write32(regRDSR2, uint32(td.ring.IOVAAt(td.rxBD(2, 0))))
		d.Write32(regTDSR2, uint32(td.ring.IOVAAt(td.txBD(2, 0))))
		d.Write32(regMRBR2, mrbr)
	}
	if o.shift16 {
		d.Write32(regRACC, racc_SHIFT16)
	}
	maxFL := o.maxFL
	if maxFL == 0 {
		maxFL = 1984
	}
	d.Write32(regFTRL, 0x3FFF)
	d.Write32(regTFWR, 0x100)
	rcr := maxFL<<16 | 1<<2
	if o.prom {
		rcr |= rcr_PROM
	}
	if o.loop {
		rcr |= rcr_LOOP
	}
	if o.speed != 100 {
		rcr |= rcr_RGMII_EN // 1000 Mb/s runs over RGMII (linkOK)
	}
	d.Write32(regRCR, rcr)
	d.Write32(regTCR, 1<<2)
	d.Write32(regMIBC, 0)
	ecr := uint32(ecr_ETHEREN)
	if !o.noDBSWP {
		ecr |= ecr_DBSWP
	}
	if o.enh {
		ecr |= ecr_EN1588
	}
	if o.speed != 100 {
		ecr |= ecr_SPEED
	}
	if o.noStart {
		return
	}
	d.Write32(regECR, ecr)
	for q := 0; q < rings; q++ {
		d.Write32([3]uint32{regRDAR, regRDAR1, regRDAR2}[q], 0)
	}
}

func (td *tdrv) initRxBD(q, i int) {
	off := td.rxBD(q, i)
	td.setWord(off+bdAddr, uint32(td.buf.IOVAAt(td.rxBuf(q, i))))
	if td.enh {
		td.setWord(off+bdESC, rxbd_INT)
		td.setWord(off+bdProt, 0)
		td.setWord(off+bdBDU, 0)
	}
	sc := uint16(rxbd_E)
	if i == td.nrx-1 {
		sc |= bd_W
	}
	td.setW0(off, sc, 0)
}

// send queues one frame per BD on ring q (one doorbell for all) and
// returns the BD offsets used.
func (td *tdrv) send(q int, frames ...[]byte) []int {
	var used []int
	for _, f := range frames {
		i := td.txPos[q]
		off := td.txBD(q, i)
		b := td.txBuf(q, i)
		copy(td.buf.Bytes()[b:], f)
		td.buf.SyncForDevice(b, len(f))
		td.setWord(off+bdAddr, uint32(td.buf.IOVAAt(b)))
		if td.enh {
			td.setWord(off+bdESC, txbd_INT)
			td.setWord(off+bdBDU, 0)
		}
		sc := uint16(txbd_R | bd_L | txbd_TC)
		if i == td.ntx-1 {
			sc |= bd_W
		}
		td.setW0(off, sc, uint16(len(f)))
		used = append(used, off)
		td.txPos[q] = (i + 1) % td.ntx
	}
	dma.DoorbellBarrier()
	td.d.Write32([3]uint32{regTDAR, regTDAR1, regTDAR2}[q], 0)
	return used
}

// rxFrame is one received BD as the driver sees it.
type rxFrame struct {
	sc, length uint16
	esc, bdu   uint32
	data       []byte
}

// recv takes the next filled BD of ring q (ok=false when E is still set),
// copies its bytes out, re-arms it and writes RDAR.
func (td *tdrv) recv(q int) (rxFrame, bool) {
	i := td.rxPos[q]
	off := td.rxBD(q, i)
	sc, length := td.w0(off)
	if sc&rxbd_E != 0 {
		return rxFrame{}, false
	}
	f := rxFrame{sc: sc, length: length}
	if td.enh {
		f.esc, f.bdu = td.getWord(off+bdESC), td.getWord(off+bdBDU)
	}
	n := int(length)
	if n > tBufSize {
		n = tBufSize
	}
	b := td.rxBuf(q, i)
	td.buf.SyncForCPU(b, n)
	f.data = append([]byte(nil), td.buf.Bytes()[b:b+n]...)
	td.initRxBD(q, i)
	td.rxPos[q] = (i + 1) % td.nrx
	td.d.Write32([3]uint32{regRDAR, regRDAR1, regRDAR2}[q], 0)
	return f, true
}

// capture is a wire that keeps copies of the frames it carries.
type capture struct {
	mu     sync.Mutex
	frames [][]byte
}

func (c *capture) Transmit(f []byte) {
	c.mu.Lock()
	c.frames = append(c.frames, append([]byte(nil), f...))
	c.mu.Unlock()
}

func (c *capture) get() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.frames...)
}

// testFrame is an Ethernet frame to dst with a payload of n bytes that
// encode seq.
func testFrame(dst [6]byte, n int, seq int) []byte {
	f := make([]byte, 14+n)
	copy(f, dst[:])
	copy(f[6:], []byte{2, 0, 0, 0, 0, 9})
	binary.BigEndian.PutUint16(f[12:], 0x88B5)
	for i := 14; i < len(f); i++ {
		f[i] = byte(seq + i)
	}
	return f
}

var ourMAC = [6]byte{2, 0, 0, 0, 0, 1}

func mustEqual(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got % x\nwant % x", what, got, want)
	}
}

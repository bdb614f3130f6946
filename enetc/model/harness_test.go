package model

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/sim/simdma"
)

// The harness plays a minimal driver written in the test from
// docs/hardware-enetc.md: BD rings and buffers in simdma.IOMMU-mapped memory, bring-up
// per §9, TX per §4.5, RX per §4.3/§4.4.

type mem struct {
	b    []byte
	iova uint64
}

type harness struct {
	t  testing.TB
	io *simdma.IOMMU
	d  *Device
	w  *capture

	tx [MaxRings]txSide
	rx [MaxRings]rxSide
}

type txSide struct {
	ring, bufs mem
	l          uint32
	next       uint32 // next_to_use
	bufSize    int
}

type rxSide struct {
	ring, bufs mem
	l          uint32
	bs         int
	next       uint32 // next_to_clean
	bdsz       int
}

// capture is a wire that keeps copies of what it is given.
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

func newHarness(t testing.TB, cfg Config) *harness {
	t.Helper()
	io := simdma.NewIOMMU(false)
	cfg.IOMMU = io
	if cfg.MAC == ([6]byte{}) {
		cfg.MAC = [6]byte{0x02, 0, 0, 0xe1, 0, 1}
	}
	h := &harness{t: t, io: io, d: New(cfg), w: &capture{}}
	h.d.SetWire(h.w)
	return h
}

func (h *harness) alloc(n int, name string) mem {
	h.t.Helper()
	b := make([]byte, n)
	m, err := h.io.Map(b, dma.Attr{Name: name, Contiguous: true})
	if err != nil {
		h.t.Fatal(err)
	}
	return mem{b: b, iova: m.IOVA}
}

// up brings the port up as §9 says: RX FIFO erratum, max frame, MAC
// enables, promiscuous port, port and SI enables.
func (h *harness) up() {
	d := h.d
	if d.PF() {
		d.Write32(regPM0_RX_FIFO, 1)
		d.Write32(regPM0_MAXFRM, 9600)
		d.Write32(regPM0_CMD_CFG, pm_cmd_cfg_PHY_TX_EN|pm_cmd_cfg_TXP|pm_cmd_cfg_PROMIS|pm_cmd_cfg_TX_EN|pm_cmd_cfg_RX_EN)
		d.Write32(regPSIPMR, psipmr_UP0|psipmr_MP0)
		d.Write32(regPMR, pmr_EN)
	}
	d.Write32(regSICAR0, 0x2B2B6727)
	d.Write32(regSIMR, simr_EN)
}

func (h *harness) setupTx(n int, l uint32) {
	rb := uint32(n) * RingStride
	s := &h.tx[n]
	s.ring = h.alloc(int(l)*BDSize, "txbd")
	s.bufSize = 16384
	s.bufs = h.alloc(int(l)*s.bufSize, "txbuf")
	s.l = l
	d := h.d
	d.Write32(regTBBAR0+rb, uint32(s.ring.iova))
	d.Write32(regTBBAR1+rb, uint32(s.ring.iova>>32))
	d.Write32(regTBLENR+rb, l)
	s.next = d.Read32(regTBPIR + rb) // adopt the hardware's indices (erratum)
	d.Write32(regTBIER+rb, 0)
	d.Write32(regTBMR+rb, tbmr_EN)
}

// send queues frames on TX ring n, each split into segs pieces, and rings
// the doorbell once.
func (h *harness) send(n int, segs int, frames ...[]byte) {
	s := &h.tx[n]
	for _, f := range frames {
		parts := split(f, segs)
		for i, p := range parts {
			slot := s.next
			buf := s.bufs.b[int(slot)*s.bufSize:]
			copy(buf, p)
			bd := s.ring.b[slot*BDSize : slot*BDSize+BDSize]
			binary.LittleEndian.PutUint64(bd[0:], s.bufs.iova+uint64(slot)*uint64(s.bufSize))
			binary.LittleEndian.PutUint16(bd[8:], uint16(len(p)))
			fl := uint16(0)
			if i == 0 {
				fl = uint16(len(f))
			}
			binary.LittleEndian.PutUint16(bd[10:], fl)
			bd[12], bd[13], bd[14], bd[15] = 0, 0, 0, 0
			if i == len(parts)-1 {
				bd[15] = TxFlagF
			}
			s.next = (s.next + 1) % s.l
		}
	}
	h.d.Write32(regTBPIR+uint32(n)*RingStride, s.next)
}

func split(f []byte, n int) [][]byte {
	if n <= 1 || len(f) < n {
		return [][]byte{f}
	}
	var out [][]byte
	step := (len(f) + n - 1) / n
	for len(f) > 0 {
		k := min(step, len(f))
		out = append(out, f[:k])
		f = f[k:]
	}
	return out
}

// setupRx programs RX ring n with l BDs of buffer size bs and posts
// buffers to all but one BD (Linux: RBPIR = 0, RBCIR = 1, then refill).
func (h *harness) setupRx(n int, l uint32, bs int, mr uint32) {
	rb := uint32(n) * RingStride
	s := &h.rx[n]
	s.bdsz = BDSize
	if mr&rbmr_BDS != 0 {
		s.bdsz = BDSizeExt
	}
	s.ring = h.alloc(int(l)*s.bdsz, "rxbd")
	s.bufs = h.alloc(int(l)*bs, "rxbuf")
	s.l, s.bs, s.next = l, bs, 0
	d := h.d
	d.Write32(regRBBAR0+rb, uint32(s.ring.iova))
	d.Write32(regRBBAR1+rb, uint32(s.ring.iova>>32))
	d.Write32(regRBLENR+rb, l)
	d.Write32(regRBBSR+rb, uint32(bs))
	d.Write32(regRBPIR+rb, 0)
	d.Write32(regRBCIR+rb, 1)
	for i := uint32(0); i < l-1; i++ {
		h.post(n, i)
	}
	d.Write32(regRBCIR+rb, l-1)
	d.Write32(regRBIER+rb, 0)
	d.Write32(regRBMR+rb, mr|rbmr_EN)
}

func (h *harness) post(n int, slot uint32) {
	s := &h.rx[n]
	bd := s.ring.b[int(slot)*s.bdsz:]
	binary.LittleEndian.PutUint64(bd[0:], s.bufs.iova+uint64(slot)*uint64(s.bs))
	binary.LittleEndian.PutUint32(bd[8:], 0)
	binary.LittleEndian.PutUint32(bd[12:], 0)
}

// rxBD is one written-back RX BD.
type rxBD struct {
	csum, parse uint16
	hash        uint32
	bufLen      uint16
	vlan        uint16
	flags       uint16
	err         uint8
	status      uint8
	tstamp      uint32 // extended BDs: the extension's timestamp
	data        []byte
}

func (h *harness) bdAt(n int, slot uint32) (rxBD, bool) {
	s := &h.rx[n]
	bdIOVA := s.ring.iova + uint64(slot)*uint64(s.bdsz)
	ls, ok := h.io.Load32(bdIOVA + 12)
	if !ok {
		h.t.Fatalf("RX BD %d of ring %d not readable", slot, n)
	}
	if ls == 0 {
		return rxBD{}, false
	}
	bd := s.ring.b[int(slot)*s.bdsz:]
	b := rxBD{
		csum: binary.LittleEndian.Uint16(bd[0:]), parse: binary.LittleEndian.Uint16(bd[2:]),
		hash: binary.LittleEndian.Uint32(bd[4:]), bufLen: binary.LittleEndian.Uint16(bd[8:]),
		vlan: binary.LittleEndian.Uint16(bd[10:]), flags: uint16(ls), err: uint8(ls >> 16), status: uint8(ls >> 24),
	}
	if s.bdsz == BDSizeExt {
		b.tstamp = binary.LittleEndian.Uint32(bd[16:])
	}
	if int(b.bufLen) <= s.bs {
		b.data = s.bufs.b[int(slot)*s.bs : int(slot)*s.bs+int(b.bufLen)]
	}
	return b, true
}

// recv takes the next frame from RX ring n (all its BDs), reposts the
// buffers and returns the BDs; ok false when nothing is ready.
func (h *harness) recv(n int) ([]rxBD, bool) {
	s := &h.rx[n]
	var bds []rxBD
	slot := s.next
	for {
		b, ok := h.bdAt(n, slot)
		if !ok {
			if len(bds) > 0 {
				h.t.Fatalf("ring %d: frame's BD %d not ready after %d BDs", n, slot, len(bds))
			}
			return nil, false
		}
		bds = append(bds, b)
		slot = (slot + 1) % s.l
		if b.status&0x80 != 0 || len(bds) > int(s.l) {
			break
		}
	}
	// Refill as many BDs as were consumed, at next_to_use (= RBCIR), and
	// hand them over by moving RBCIR past them.
	ci := h.d.Read32(regRBCIR + uint32(n)*RingStride)
	for i := 0; i < len(bds); i++ {
		h.post(n, (ci+uint32(i))%s.l)
	}
	ci = (ci + uint32(len(bds))) % s.l
	s.next = slot
	h.d.Write32(regRBCIR+uint32(n)*RingStride, ci)
	return bds, true
}

// frameOf joins the data of a frame's BDs.
func frameOf(bds []rxBD) []byte {
	var f []byte
	for _, b := range bds {
		f = append(f, b.data...)
	}
	return f
}

func (h *harness) noModelErrors() {
	h.t.Helper()
	if e := h.d.ModelErrors(); len(e) != 0 {
		h.t.Fatalf("model errors: %q", e)
	}
	if f := h.io.Faults(); len(f) != 0 {
		h.t.Fatalf("DMA faults: %v", f)
	}
}

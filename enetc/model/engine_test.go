package model

import (
	"bytes"
	"encoding/binary"
	"sync"
	"testing"
	"time"
)

// cable hands every frame one port transmits to the other's receive side.
type cable struct{ to *Device }

func (c cable) Transmit(f []byte) { c.to.Receive(f) }

// sendFree queues one frame on TX ring 0 if a BD is free (keeping one
// gap, as §4.1 says) and rings the doorbell; it reports whether it did.
func (h *harness) sendFree(f []byte) bool {
	s := &h.tx[0]
	ci := h.d.Read32(regTBCIR)
	if ci >= s.l {
		return false
	}
	if (ci+s.l-s.next-1)%s.l == 0 { // free BDs between PI and CI, minus the gap
		return false
	}
	slot := s.next
	copy(s.bufs.b[int(slot)*s.bufSize:], f)
	bd := s.ring.b[slot*BDSize : slot*BDSize+BDSize]
	binary.LittleEndian.PutUint64(bd[0:], s.bufs.iova+uint64(slot)*uint64(s.bufSize))
	binary.LittleEndian.PutUint16(bd[8:], uint16(len(f)))
	binary.LittleEndian.PutUint16(bd[10:], uint16(len(f)))
	bd[12], bd[13], bd[14], bd[15] = 0, 0, 0, TxFlagF
	s.next = (s.next + 1) % s.l
	h.d.Write32(regTBPIR, s.next)
	return true
}

func TestEngineModeTwoPorts(t *testing.T) {
	t.Parallel()
	const frames = 3000
	a := newHarness(t, Config{Name: "a", PF: true, Engine: true})
	b := newHarness(t, Config{Name: "b", PF: true, Engine: true})
	a.d.SetWire(cable{b.d})
	b.d.SetWire(cable{a.d})
	for _, h := range []*harness{a, b} {
		h.up()
		h.setupTx(0, 64)
		h.setupRx(0, 128, 2048, 0)
		if err := h.d.Start(); err != nil {
			t.Fatal(err)
		}
	}
	defer a.d.Stop()
	defer b.d.Stop()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // A's TX queue owner
		defer wg.Done()
		for i := 0; i < frames; {
			if a.sendFree(udp4(uint16(i), 7, 64+i%200)) {
				i++
			}
		}
	}()
	got := make(chan int, 1)
	bad := make(chan string, 1)
	go func() { // B's RX queue owner
		defer wg.Done()
		n := 0
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			bds, ok := b.recvNoFatal(0)
			if !ok {
				s := b.d.Stats()
				if s.RxFrames+s.NoBufferDrops == frames && a.d.Read32(regTBCIR) == a.d.Read32(regTBPIR) && n == int(s.RxFrames) {
					break
				}
				continue
			}
			if len(bds) != 1 || bds[0].status != 0xC0 || len(bds[0].data) < 64 {
				select {
				case bad <- "bad BD":
				default:
				}
			}
			n++
		}
		got <- n
	}()
	wg.Wait()
	n := <-got
	select {
	case m := <-bad:
		t.Fatal(m)
	default:
	}
	sa, sb := a.d.Stats(), b.d.Stats()
	if sa.TxFrames != frames {
		t.Fatalf("A sent %d of %d", sa.TxFrames, frames)
	}
	if uint64(n) != sb.RxFrames || sb.RxFrames+sb.NoBufferDrops != frames || n == 0 {
		t.Fatalf("B: driver saw %d, model delivered %d, dropped %d, of %d", n, sb.RxFrames, sb.NoBufferDrops, frames)
	}
	if b.d.Read32(regRBDCR) != uint32(sb.NoBufferDrops) {
		t.Errorf("RBDCR %d, NoBufferDrops %d", b.d.Read32(regRBDCR), sb.NoBufferDrops)
	}
	a.noModelErrors()
	b.noModelErrors()
}

// recvNoFatal is recv for goroutines other than the test's.
func (h *harness) recvNoFatal(n int) ([]rxBD, bool) {
	s := &h.rx[n]
	b, ok := h.bdAtNoFatal(n, s.next)
	if !ok || b.status&0x80 == 0 {
		return nil, false
	}
	return h.recv(n)
}

func (h *harness) bdAtNoFatal(n int, slot uint32) (rxBD, bool) {
	s := &h.rx[n]
	ls, _ := h.io.Load32(s.ring.iova + uint64(slot)*uint64(s.bdsz) + 12)
	if ls == 0 {
		return rxBD{}, false
	}
	return rxBD{status: uint8(ls >> 24)}, true
}

func TestEngineStartStop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	if err := h.d.Start(); err == nil {
		t.Fatal("Start in synchronous mode succeeded")
	}
	e := newHarness(t, Config{PF: true, Engine: true})
	if err := e.d.Start(); err != nil {
		t.Fatal(err)
	}
	if err := e.d.Start(); err == nil {
		t.Fatal("second Start succeeded")
	}
	e.d.Stop()
	e.d.Stop()
	if err := e.d.Start(); err != nil {
		t.Fatal("restart:", err)
	}
	e.d.Reset() // waits for the engine's round
	e.d.Stop()
}

// listSource yields its frames once.
type listSource struct {
	frames   [][]byte
	lossless bool
}

func (s *listSource) Next(dst []byte) (int, bool) {
	if len(s.frames) == 0 {
		return 0, false
	}
	n := copy(dst, s.frames[0])
	s.frames = s.frames[1:]
	return n, true
}

func (s *listSource) Lossless() bool { return s.lossless }

func TestPumpSources(t *testing.T) {
	t.Parallel()
	for _, lossless := range []bool{false, true} {
		h := newHarness(t, Config{PF: true})
		h.up()
		h.setupRx(0, 16, 2048, 0) // 14 frames fit (never PI onto CI, one BD unposted)
		src := &listSource{lossless: lossless}
		for i := 0; i < 20; i++ {
			src.frames = append(src.frames, sized(64+i))
		}
		h.d.AddSource(src)
		n := h.d.Pump()
		s := h.d.Stats()
		if lossless {
			if n != 14 || len(src.frames) != 5 || s.NoBufferDrops != 0 { // one more waits in the model
				t.Fatalf("lossless: pulled %d, left %d, dropped %d", n, len(src.frames), s.NoBufferDrops)
			}
			if h.d.RxRoom() != 0 {
				t.Fatalf("RxRoom %d with the ring full", h.d.RxRoom())
			}
			// Each refill (RBCIR write) pumps the waiting frames in.
			for i := 0; i < 20; i++ {
				bds, ok := h.recv(0)
				if !ok || !bytes.Equal(frameOf(bds), sized(64+i)) {
					t.Fatalf("frame %d missing or different", i)
				}
			}
			if s := h.d.Stats(); s.RxFrames != 20 || s.NoBufferDrops != 0 || len(src.frames) != 0 {
				t.Fatalf("delivered %d, dropped %d, left %d", s.RxFrames, s.NoBufferDrops, len(src.frames))
			}
		} else if n != 20 || s.RxFrames != 14 || s.NoBufferDrops != 6 {
			t.Fatalf("lossy: pulled %d, delivered %d, dropped %d", n, s.RxFrames, s.NoBufferDrops)
		}
	}
}

func TestVF(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: false, TxRings: 2, RxRings: 2})
	h.up()
	h.setupTx(0, 16)
	h.setupRx(0, 16, 2048, 0)
	h.send(0, 1, sized(64))
	if len(h.w.get()) != 1 {
		t.Fatal("VF did not transmit")
	}
	if !h.d.Receive(sized(80)) {
		t.Fatal("VF did not receive")
	}
	if h.d.Read32(regSICAPR0) != 2|2<<16 || h.d.Read64(regSIRFRM) != 1 || h.d.Read64(regSITFRM) != 1 {
		t.Errorf("SICAPR0 %#x SIRFRM %d SITFRM %d", h.d.Read32(regSICAPR0), h.d.Read64(regSIRFRM), h.d.Read64(regSITFRM))
	}
	if h.d.Err() != nil {
		t.Errorf("VF bring-up touched outside its BAR: %v", h.d.Err())
	}
	h.noModelErrors()
}

func TestMMIOCostCounted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, MMIOCost: time.Microsecond})
	for i := 0; i < 10; i++ {
		h.d.Read32(regSIMR)
	}
	h.d.Write32(regSICAR0, 1)
	if s := h.d.Stats(); s.RegReads != 10 || s.RegWrites != 1 {
		t.Fatalf("reads %d writes %d", s.RegReads, s.RegWrites)
	}
}

// In synchronous mode a TX doorbell and a link change may come from two
// goroutines: every frame must leave exactly once, in order.
func TestSyncTxDoorbellAndLinkFromTwoGoroutines(t *testing.T) {
	t.Parallel()
	const frames = 2000
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupTx(0, 64)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < frames; {
			if h.sendFree(udp4(uint16(i), 7, 50)) { // padded: gathered in the ring's scratch
				i++
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			h.d.SetLink(false)
			h.d.SetLink(true)
		}
	}()
	wg.Wait()
	h.d.SetLink(true)
	got := h.w.get()
	if len(got) != frames {
		t.Fatalf("%d frames on the wire, want %d", len(got), frames)
	}
	for i, f := range got {
		if !bytes.Equal(f, pad(udp4(uint16(i), 7, 50))) {
			t.Fatalf("frame %d out of order or damaged", i)
		}
	}
	h.noModelErrors()
}

package fec

import (
	"fmt"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/gate"
	"github.com/gopmd/gopmd/pool"
)

// restartMAC reprograms a running MAC for link l (a new speed or duplex)
// or for a new TX FIFO mode, in the order the reference gives (§5.6):
//
//  1. keep bursts off the rings (the gate, as Stop does); what the MAC
//     already sent is left for the queue's own Reclaim (the control path
//     touches no queue counter a lock-free Pending reads);
//  2. graceful transmit stop: TCR.GTS, wait for EIR.GRA (the frame on the
//     wire is finished, the frames behind it stay queued);
//  3. disable the MAC (ECR.ETHEREN = 0): receive stops, the DMA finishes
//     the descriptor it is on and goes idle (RDAR/TDAR read 0), and the
//     descriptor pointers rewind to RDSR/TDSR;
//  4. turn each ring so that the BD the MAC would have used next becomes
//     the ring's first: frames received and not yet polled stay for the
//     application, frames queued and not yet sent go out after the
//     restart, nothing is dropped and no buffer changes hands;
//  5. program ECR.SPEED, RCR.RMII_10T/DRT, TCR.FDEN (with GTS clear) and
//     TFWR while the MAC is disabled, as the reference asks for TCR.FDEN;
//  6. enable the MAC and ring RDAR, and TDAR if the link is up (the MAC
//     does not sense the link: frames it fetched now would go nowhere;
//     they wait on the ring for the restart at link up).
//
// ctl is held and the port is started. Each wait is bounded by
// Config.StopTimeout, and a wait that runs out leaves the port consistent
// for the next call to finish the job (the caller counts the failure):
//
//   - a burst does not leave (step 1), or the PHY's link is up and GRA
//     does not come (step 2: a frame is still on the wire): GTS is
//     cleared again and the MAC runs on with its old bits, rings untouched;
//   - the DMA does not go idle (step 3): the rings are not turned, for the
//     DMA may still write the descriptor it was on; the MAC stays
//     disabled and the gate closed (macHeld) and the next call waits for
//     idle again before it turns the rings and enables the MAC. Bursts
//     return 0 meanwhile and take no frame: nothing is lost.
func (p *Port) restartMAC(l driver.Link) error {
	r := p.regs
	deadline := time.Now().Add(p.cfg.StopTimeout)
	if !p.macHeld {
		p.gate.Close(gate.Stopped)
		if !gate.WaitIdle(p.bursts(), deadline) {
			p.gate.Open(gate.Stopped)
			return fmt.Errorf("a queue goroutine stayed inside a burst for %v; the MAC keeps its old speed and duplex until the next link poll", p.cfg.StopTimeout)
		}
		r.Write32(regEIR, eir_GRA) // a GRA left over from a try that gave up must not count for this one
		r.Write32(regTCR, r.Read32(regTCR)|tcr_GTS)
		// With the link down nothing is on the wire and GRA may never come
		// (Stop does the same); the MAC is then disabled at once.
		if p.phyLink.Up {
			for r.Read32(regEIR)&eir_GRA == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Microsecond)
			}
			if r.Read32(regEIR)&eir_GRA == 0 {
				r.Write32(regTCR, p.tcr()) // GTS clear, the old duplex: TX goes on
				p.gate.Open(gate.Stopped)
				return fmt.Errorf("graceful transmit stop (TCR.GTS) not complete (EIR.GRA) after %v; the MAC keeps its old speed and duplex until the next link poll", p.cfg.StopTimeout)
			}
		}
		r.Write32(regEIR, eir_GRA)
		r.Write32(regECR, p.ecr()&^ecr_ETHEREN)
		p.macHeld = true
	}
	if !p.dmaIdle(deadline) {
		return fmt.Errorf("DMA still active (RDAR/TDAR) %v after ECR.ETHEREN was cleared; the MAC stays disabled, bursts return 0, and the next link poll waits again", p.cfg.StopTimeout)
	}
	for _, q := range p.rx {
		rebaseRx(q)
	}
	for _, q := range p.tx {
		rebaseTx(q)
	}
	p.restarts.Add(1)
	p.macLink = l
	if p.prof.has(qENETMAC) {
		r.Write32(regTFWR, p.tfwr())
	}
	r.Write32(regRCR, p.rcr())
	r.Write32(regTCR, p.tcr())
	r.Write32(regECR, p.ecr())
	for i, q := range p.rx {
		if q.posted > 0 {
			r.Write32(regRDARn[i], dar_ACTIVE)
		}
	}
	for i, q := range p.tx {
		if q.inFlight > 0 && l.Up { // down: the MAC would send them into nothing; they wait
			r.Write32(regTDARn[i], dar_ACTIVE)
		}
	}
	p.macHeld = false
	if !l.Up {
		p.gate.Close(gate.LinkDown) // before bursts run again: none queues a frame for the dead link
	}
	p.gate.Open(gate.Stopped)
	return r.Err()
}

// dmaIdle waits until deadline for every ring's RDAR/TDAR to read 0
// (§4.3), as Stop waits after it disables the MAC, and reports whether
// they did.
func (p *Port) dmaIdle(deadline time.Time) bool {
	r := p.regs
	for {
		busy := false
		for i := range p.rx {
			busy = busy || r.Read32(regRDARn[i])&dar_ACTIVE != 0
		}
		for i := range p.tx {
			busy = busy || r.Read32(regTDARn[i])&dar_ACTIVE != 0
		}
		if !busy {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(10 * time.Microsecond)
	}
}

// rebaseRx turns a stopped RX ring so that the first BD the MAC still
// owns (E set) is slot 0, where the re-enabled MAC starts; the frames
// before it, completed and not yet polled, come just before the wrap.
func rebaseRx(q *rxQueue) {
	f, i := q.ntu, q.ntc
	for k := 0; k < q.posted; k++ {
		if st, _ := sc(q.ring.status(i)); st&rxbd_E != 0 {
			f = i
			break
		}
		i = q.next(i)
	}
	n := q.ring.size
	rotateRing(&q.ring, q.bufs, f, rxbd_W)
	q.ntc, q.ntu = (q.ntc-f+n)%n, (q.ntu-f+n)%n
}

// rebaseTx turns a stopped TX ring so that the first BD still queued for
// the MAC (R set) is slot 0; BDs before it wait for Reclaim.
func rebaseTx(q *txQueue) {
	f, i := q.ntu, q.ntc
	for k := 0; k < q.inFlight; k++ {
		if st, _ := sc(q.ring.status(i)); st&txbd_R != 0 {
			f = i
			break
		}
		i = q.next(i)
	}
	n := q.ring.size
	rotateRing(&q.ring, q.bufs, f, txbd_W)
	if f != 0 {
		// The driver's copies of the words 0 and the bursts' ends move
		// with their BDs.
		pend := make([]uint32, n)
		for i := range pend {
			pend[i] = q.pend[(i+f)%n]
		}
		copy(q.pend, pend)
		for h := q.mHead; h != q.mTail; h = (h + 1) % len(q.marks) {
			q.marks[h].end = (q.marks[h].end - f + n) % n
		}
	}
	q.ntc, q.ntu = (q.ntc-f+n)%n, (q.ntu-f+n)%n
}

// rotateRing moves BD slot f (every word of it, and the buffer parked at
// it) to slot 0 and the rest after it in ring order, with the wrap bit
// on the last slot only. The MAC must be disabled.
func rotateRing(r *bdRing, bufs []*pool.Packet, f int, wrap uint32) {
	n, st := r.size, r.stride
	if f == 0 {
		return
	}
	words := make([]uint32, n*st)
	for i := 0; i < n; i++ {
		for k := 0; k < st; k++ {
			words[i*st+k] = r.word(i, k)
		}
	}
	moved := make([]*pool.Packet, n)
	for i := 0; i < n; i++ {
		src := (i + f) % n
		for k := 0; k < st; k++ {
			if k != wSC {
				r.set(i, k, words[src*st+k])
			}
		}
		w := words[src*st+wSC] &^ (wrap << 16)
		if i == n-1 {
			w |= wrap << 16
		}
		r.publish(i, w)
		moved[i] = bufs[src]
	}
	copy(bufs, moved)
}

// tfwr is the TX FIFO watermark for the MTU (§2.8): store and forward
// while a whole frame fits the TX FIFO, else (jumbo frames, only on parts
// that take them) cut-through from the watermark Linux uses.
func (p *Port) tfwr() uint32 {
	if p.cutThrough() {
		return tfwrCutThrough
	}
	return tfwr_STRFWD
}

// cutThrough says frames of the current MTU are too long for the TX FIFO
// to hold (§4.1): transmission must start before the frame is in.
func (p *Port) cutThrough() bool {
	return p.mtu+ethHdr+vlanLen+fcsLen > storeFwdMax
}

package model

import "math/bits"

// The simulation's receive machinery, which the silicon has no counterpart
// of: the pump that pulls frames from attached sources, the staging memory
// they are pulled into, and the batching of counters and data copies that
// lets a delivery run at host speed. rx.go is what the silicon does with
// each frame.

// pumpBatch bounds how many frames one Pump (or engine round) pulls from
// one source, so an endless generator cannot starve the TX side.
const pumpBatch = 256

// Pump pulls frames from the attached sources and delivers them (a
// lossless source's frame only once its ring has room: it waits in the
// source's slot until then), at most 256 per source. It
// returns how many frames were pulled. Synchronous mode; in engine mode the
// engine pumps.
//
// In synchronous mode every RBCIR write pumps too, so a driver that only
// refills its ring keeps frames from sources coming; a pump already running
// in another goroutine makes the second one return 0.
func (d *Device) Pump() int {
	if d.engine {
		d.rxMu.Lock()
		n := d.pump(pumpBatch)
		d.rxMu.Unlock()
		return n
	}
	if !d.pumping.CompareAndSwap(false, true) {
		return 0 // another goroutine is pumping
	}
	n := d.pump(pumpBatch)
	d.pumping.Store(false)
	return n
}

// pump delivers up to batch frames from each source and publishes their
// write-backs. The caller serialises it with every other delivery.
//
// Frames are pulled a stage at a time into the model's own staging memory
// and then delivered back to back: the copies into the driver's buffers
// (whose cache lines the driver's core last wrote) then follow one another
// with no locked instruction in between (a source's atomic counter, say),
// so the CPU overlaps their cache misses instead of waiting out each one.
func (d *Device) pump(batch int) int {
	total := 0
	for _, s := range *d.srcs.Load() {
		total += d.pumpSource(s, batch)
	}
	d.rxFlush()
	return total
}

// Staging of pulled frames (pump).
const (
	// stageFrames bounds the frames of one stage.
	stageFrames = 32
	// stageBytes is the staging memory; a frame is pulled only while a
	// whole txScratch (the longest frame a source may write) still fits.
	stageBytes = 64 << 10
)

// stagedFrame is a pulled frame waiting in the staging memory.
type stagedFrame struct{ off, n int }

// pumpSource pulls up to batch frames from one source: a lossless source's
// frame only once its ring has room (it waits in the source's slot until
// then).
func (d *Device) pumpSource(s *srcEntry, batch int) int {
	total := 0
	var room rxRoom
	if s.lossless {
		d.roomNow(&room)
		if s.pendN != 0 {
			// A frame pulled earlier waits for room.
			if !room.take(s.pendN) {
				return 0
			}
			d.deliver(s.pend[:s.pendN])
			d.runCopies() // before s.pend is written again
			s.pendN = 0
			total++
		}
	}
	k, off := 0, 0
	for total+k < batch {
		if k == stageFrames || off+txScratch > len(d.stage) {
			d.deliverStage(k)
			total += k
			k, off = 0, 0
		}
		n, ok := s.s.Next(d.stage[off : off+txScratch])
		if !ok {
			break
		}
		n = max(min(n, txScratch), 1)
		if s.lossless && !room.take(n) {
			// No room once the staged frames are in: the frame waits in the
			// source's slot until buffers come back.
			copy(s.pend, d.stage[off:off+n])
			s.pendN = n
			break
		}
		d.staged[k].off, d.staged[k].n = off, n
		k++
		off += (n + 63) &^ 63 // each frame on cache lines of its own
	}
	d.deliverStage(k)
	return total + k
}

// deliverStage delivers the first k staged frames in order.
func (d *Device) deliverStage(k int) {
	d.staging = true // copies may wait for runCopies
	for _, f := range d.staged[:k] {
		d.deliver(d.stage[f.off : f.off+f.n])
	}
	d.staging = false
	d.runCopies() // before the staging memory is written again
}

// rxRoom is what a lossless source may still deliver: the free BDs of
// every ring its frames may go to (ring 0, or the rings of the RSS table),
// taken once per pump and then counted down frame by frame.
type rxRoom struct {
	rings uint32 // candidate rings; 0: the port cannot receive now
	free  [MaxRings]int
	bs    [MaxRings]int
}

// roomNow fills r from the registers and the rings' indices, counting the
// write-backs of the current batch as filled.
func (d *Device) roomNow(r *rxRoom) {
	r.rings = 0
	if !d.carrier() || !d.rxAllowed() || d.fifoLock.Load() {
		return
	}
	rings := uint32(1)
	if d.get(regSIMR)&simr_RSSE != 0 {
		rings = d.rssRings.Load()
	}
	if rings &= 1<<d.nRx - 1; rings == 0 {
		rings = 1 // a table naming only rings the SI lacks sends to ring 0 (deliver)
	}
	for m := rings; m != 0; m &= m - 1 {
		n := bits.TrailingZeros32(m)
		rb := uint32(n) * RingStride
		l := d.get(regRBLENR+rb) &^ (RingLenAlign - 1)
		bs := int(d.get(regRBBSR+rb) & rbbsr_MASK)
		pi, ci := d.rx[n].pi.Load(), d.rx[n].ci.Load()
		if o := &d.rxd[n]; o.open {
			pi = o.pi // ahead of RBPIR by the batch's unpublished write-backs
		}
		if d.get(regRBMR+rb)&rbmr_EN == 0 || l == 0 || bs == 0 || pi >= l || ci >= l {
			return
		}
		r.free[n], r.bs[n] = int(owned(pi, ci, l)), bs
	}
	r.rings = rings
}

// take reports whether a frame of size bytes finds its BDs on every
// candidate ring, and if so counts them as used.
func (r *rxRoom) take(size int) bool {
	if r.rings == 0 {
		return false
	}
	for m := r.rings; m != 0; m &= m - 1 {
		n := bits.TrailingZeros32(m)
		if r.free[n] < bdsFor(size, r.bs[n]) {
			return false
		}
	}
	for m := r.rings; m != 0; m &= m - 1 {
		n := bits.TrailingZeros32(m)
		r.free[n] -= bdsFor(size, r.bs[n])
	}
	return true
}

// rxCounts are the per-frame counters of a delivery batch, added to the
// shared atomics once per batch (rxFlush) instead of a dozen atomic adds
// per frame.
type rxCounts struct {
	n                     uint64 // frames counted since the last flush
	reoct, rfrm, rerr     uint64
	rvlan                 uint64
	cast                  [3]uint64 // RUCA, RMCA, RBCA (good frames)
	hist                  [7]uint64 // R64..R1523X
	siFrames, siBytes     uint64
	siUC, siMC, errFrames uint64
}

// rxFlush publishes the batch: every ring's pending write-backs (status
// words last), then the batch's counters. Every delivery path calls it
// before it lets go of the receive side.
func (d *Device) rxFlush() {
	d.runCopies()
	for m := d.rxOpenRings; m != 0; m &= m - 1 {
		d.rxPublish(bits.TrailingZeros32(m))
	}
	c := &d.rxc
	if c.n == 0 {
		return
	}
	m := &d.mac
	if c.reoct != 0 {
		m[cREOCT].Add(c.reoct)
	}
	if c.rfrm != 0 {
		m[cRFRM].Add(c.rfrm)
	}
	if c.rerr != 0 {
		m[cRERR].Add(c.rerr)
		m[cRPKT].Add(c.rerr) // RPKT reads as RFRM plus the bad frames counted here
	}
	if c.rvlan != 0 {
		m[cRVLAN].Add(c.rvlan)
	}
	for i, v := range c.cast {
		if v != 0 {
			m[cRUCA+i].Add(v)
		}
	}
	for i, v := range c.hist {
		if v != 0 {
			m[cR64+i].Add(v)
		}
	}
	if c.siFrames != 0 {
		d.si[sRFRM].Add(c.siFrames)
		d.si[sROCT].Add(c.siBytes)
	}
	if c.siUC != 0 {
		d.si[sRUCA].Add(c.siUC)
	}
	if c.siMC != 0 {
		d.si[sRMCA].Add(c.siMC)
	}
	if c.errFrames != 0 {
		d.st.rxErrFrames.Add(c.errFrames)
	}
	*c = rxCounts{}
}

// rxCopy is a frame's data waiting to be copied into a posted buffer.
type rxCopy struct{ dst, src []byte }

// rxCopies bounds the copies held back.
const rxCopies = 64

// runCopies copies the frames' data into their buffers, back to back: the
// buffers' cache lines were last written by the driver's core, and with
// nothing between the copies the CPU fetches them together instead of one
// after the other. Every write-back is published after it (rxPublish), and
// every delivery path runs it before the frames it copies from change.
func (d *Device) runCopies() {
	for i := range d.copies[:d.nCopies] {
		c := &d.copies[i]
		copy(c.dst, c.src)
		c.dst, c.src = nil, nil
	}
	d.nCopies = 0
}

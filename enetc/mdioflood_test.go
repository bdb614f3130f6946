package enetc_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/pool"
)

// framesBy is how many minimum-size frames 2.5 Gb/s brings in d: one per
// 672 bits (64 bytes, 8 of preamble, 12 of inter-frame gap) at 0.4 ns, that
// is one per 268.8 ns.
func framesBy(d time.Duration) int { return int(d.Nanoseconds() * 10 / 2688) }

// TestLinkPollsCostNoFrame floods a started SGMII port at 2.5 Gb/s frame
// rate while the link is polled and counts the frames the model could not
// place: there must be none. A poll of an SGMII port with in-band AN and a
// gigabit PHY is 5 PHY reads (7 below gigabit) and 3 PCS reads, each one
// MDIO frame.
//
// Time is the model's (model.Clock), not the wall's: every MDIO frame keeps
// its controller busy for 25.6 µs of it, and the wire brings one frame per
// 268.8 ns of it. This goroutine is both the wire and the RX worker: it
// moves model time on only while an MDIO frame is in flight and no MDIO
// register access is under way (an access takes no model time), at most to
// that frame's end and at most half a burst's worth at a time, brings the
// frames that time holds, then empties the ring unless the driver holds it
// off. The worker stands for one that outruns line rate whenever the
// driver lets it run; what the test measures is how long the driver holds
// it off, in frames. Held off
// for one MDIO register access at a time (Linux's unit, enetc_port_rd_mdio)
// the ring never holds more than one MDIO frame's 95 frames and a burst;
// held off for a whole poll (eight MDIO frames, 761 frames) a 512-BD ring
// overflows, as it would at 2.5 Gb/s on silicon.
func TestLinkPollsCostNoFrame(t *testing.T) {
	t.Parallel()
	const polls = 20
	s := openSim(t, "phy-mode=sgmii", driver.Config{})
	m := s.model
	clock := model.NewClock()
	m.SetClock(clock)
	frame := make([]byte, 60) // 64 with the FCS the MAC adds
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x88, 0xB5})
	m0 := m.Stats()

	var wg sync.WaitGroup
	done := make(chan struct{})
	var up, tries int
	wg.Add(1)
	go func() { // the link watcher's work, until polls polls found the link
		defer wg.Done()
		defer close(done)
		for ; up < polls && tries < 10*polls; tries++ {
			if s.port.UpdateLink().Up {
				up++
			}
		}
	}()

	rx := s.port.RxQueue(0)
	buf := make([]*pool.Packet, 32)
	var sent, got int
	worker := func() {
		if end, busy := m.MDIOBusyUntil(); busy && !m.MDIOAccessing() {
			step := min(end-clock.Now(), time.Duration(len(buf)/2)*2688/10) // half a burst's worth
			clock.Advance(step)
			for due := framesBy(clock.Now()); sent < due; sent++ {
				m.Port().Receive(frame)
			}
		}
		for n := len(buf); n == len(buf); { // all the ring holds, unless held off
			n = rx.RxBurst(buf)
			got += n
			pool.FreeBulk(buf[:n])
		}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			worker()
		}
	}
	wg.Wait()
	for i := 0; i < 1000 && got < sent; i++ {
		worker()
	}

	ms := m.Stats()
	if up != polls {
		t.Errorf("%d of %d link polls found the link up", up, tries)
	}
	if n := ms.MDIOFrames - m0.MDIOFrames; n < 8*polls {
		t.Errorf("the model ran %d MDIO frames in %d polls, want at least %d", n, polls, 8*polls)
	}
	if sent < 95*8*polls {
		t.Errorf("the wire brought %d frames in %d polls, want at least %d", sent, polls, 95*8*polls)
	}
	if d := ms.NoBufferDrops - m0.NoBufferDrops; d != 0 {
		t.Errorf("%d of %d frames dropped for want of a buffer while the link was polled", d, sent)
	}
	// A poll fails when this goroutine, the clock, is descheduled for
	// longer than the driver's 10 ms MDIO busy-wait (wall time, a loaded
	// host): the driver then takes the link for down and disables the
	// MAC's receive side until the next poll, whose frames the model counts
	// as such (one that meets the receive side just as the driver
	// disables it counts as refused by the SI). Every frame is received
	// or counted by cause.
	off := ms.RxMACDisabled - m0.RxMACDisabled
	other := ms.RxLinkDown + ms.RxSIDisabled + ms.RxFiltered + ms.RxFIFOLocked + ms.RxRunts + ms.RxRingDisabled -
		(m0.RxLinkDown + m0.RxSIDisabled + m0.RxFiltered + m0.RxFIFOLocked + m0.RxRunts + m0.RxRingDisabled)
	if uint64(got)+off+other != uint64(sent) {
		t.Errorf("received %d of %d frames, %d refused while the link was taken for down, %d counted by another cause: %d not accounted for", got, sent, off, other, uint64(sent)-uint64(got)-off-other)
	}
	t.Logf("%d frames at 2.5 Gb/s over %v of model time, %d polls (%d found the link down), %d MDIO frames: %d received, %d dropped for want of a buffer, %d with the link taken for down",
		sent, clock.Now(), tries, tries-up, ms.MDIOFrames-m0.MDIOFrames, got, ms.NoBufferDrops-m0.NoBufferDrops, off)
	s.close(false)
}

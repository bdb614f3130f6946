package model

import (
	"sync"
	"time"
)

// RX interrupts and MSI-X (docs/hardware-enetc.md §2.1, §2.2, §4.6).
//
// The ENETC signals interrupts as MSI-X messages: SIMSIRRV(n) names the
// MSI-X table entry RX ring n's interrupt uses. The model sends a message
// by calling the function SetMSI installs with that entry; what the
// message becomes (an eventfd behind VFIO) is the caller's.
//
// Per RX ring n: completed frames are counted against RBICR0 (ICEN set:
// ICPT frames, 0 counting as 1; ICEN clear: every frame) and the RBICR1
// timer (ICEN set and RBICR1 non-zero: that many cycles of the ENETC
// clock after the first frame counted, at Config.ClockHz, 400 MHz by
// default, the rate Linux assumes on the LS1028A). When either is reached
// the ring's detect bit (SIRXIDR bit n) is set; a message is sent when the
// bit is set while RBIER.RXTIE is, and when RXTIE is enabled while the bit
// is still set (the reference is silent on the second; without it a frame
// between a driver's detect clear and its enable would be lost, as Linux's
// NAPI re-enable relies on). The detect bit is write-1-to-clear; while it
// stays set, further frames send no message.

// RX ring interrupt register fields (§2.2).
const (
	rbier_RXTIE       = 1 << 0
	rbicr0_ICEN       = 1 << 31
	rbicr0_ICPT_MASK  = 0x1FF
	defaultENETCClock = 400_000_000
)

// msiState is the interrupt side of the device.
type msiState struct {
	mu    sync.Mutex
	fn    func(vector int)
	clock int64
	held  [MaxRings]int
	timer [MaxRings]*time.Timer
	gen   [MaxRings]uint64
}

// SetMSI installs fn as the receiver of the device's MSI-X messages: it is
// called with the table entry of each message, with the model's interrupt
// lock held, from the goroutine that caused it (the DMA engine, a
// register write, a coalescing timer); it must not call back into the
// model. nil removes it.
func (d *Device) SetMSI(fn func(vector int)) {
	d.msi.mu.Lock()
	d.msi.fn = fn
	d.msi.mu.Unlock()
}

func rxRingOff(reg uint32, n int) uint32 { return reg + uint32(n)*RingStride }

// rxFramesDone counts frames RX ring n completed (rxPublish).
func (d *Device) rxFramesDone(n, frames int) {
	icr0 := d.get(rxRingOff(regRBICR0, n))
	if d.get(rxRingOff(regRBIER, n)) == 0 && d.get(regSIRXIDR)&(1<<n) != 0 {
		return // detect pending and masked: nothing to count towards
	}
	d.msi.mu.Lock()
	defer d.msi.mu.Unlock()
	threshold := 1
	var cycles uint32
	if icr0&rbicr0_ICEN != 0 {
		threshold = max(int(icr0&rbicr0_ICPT_MASK), 1)
		cycles = d.get(rxRingOff(regRBICR1, n))
	}
	d.msi.held[n] += frames
	switch {
	case d.msi.held[n] >= threshold:
		d.detectLocked(n)
	case d.msi.held[n] == frames && cycles != 0:
		d.startTimerLocked(n, cycles)
	}
}

// detectLocked sets ring n's detect bit and sends its message if enabled.
func (d *Device) detectLocked(n int) {
	d.msi.held[n] = 0
	d.msi.gen[n]++
	if t := d.msi.timer[n]; t != nil {
		t.Stop()
		d.msi.timer[n] = nil
	}
	bit := uint32(1) << n
	if d.regs[regSIRXIDR>>2].Or(bit)&bit != 0 {
		return // already pending: no new message
	}
	if d.get(rxRingOff(regRBIER, n))&rbier_RXTIE != 0 {
		d.sendLocked(n)
	}
}

func (d *Device) sendLocked(n int) {
	d.st.msis.Add(1)
	if d.msi.fn != nil {
		d.msi.fn(int(d.get(regSIMSIRRV + 4*uint32(n))))
	}
}

func (d *Device) startTimerLocked(n int, cycles uint32) {
	clk := d.msi.clock
	if clk <= 0 {
		clk = defaultENETCClock
	}
	gen := d.msi.gen[n]
	d.msi.timer[n] = time.AfterFunc(time.Duration(int64(cycles)*int64(time.Second)/clk), func() {
		d.msi.mu.Lock()
		defer d.msi.mu.Unlock()
		if d.msi.gen[n] == gen && d.msi.held[n] > 0 {
			d.detectLocked(n)
		}
	})
}

// rbierWritten sends ring n's message when RXTIE is enabled with its
// detect bit still set.
func (d *Device) rbierWritten(n int, v uint32) {
	if v&rbier_RXTIE == 0 || d.get(regSIRXIDR)&(1<<n) == 0 {
		return
	}
	d.msi.mu.Lock()
	d.sendLocked(n)
	d.msi.mu.Unlock()
}

// resetMSI voids the counters and timers (function reset).
func (d *Device) resetMSI() {
	d.msi.mu.Lock()
	for n := range d.msi.held {
		d.msi.held[n] = 0
		d.msi.gen[n]++
		if t := d.msi.timer[n]; t != nil {
			t.Stop()
			d.msi.timer[n] = nil
		}
	}
	d.msi.mu.Unlock()
}

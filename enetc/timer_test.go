package enetc_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/sim"
)

var timerSeq struct {
	sync.Mutex
	n int
}

// openTimer opens a simulated ENETC timer on a manual timeline (model time
// moves only by Advance) with the given extra options.
func openTimer(t *testing.T, opts string) (driver.Clock, *model.Timer, string) {
	t.Helper()
	timerSeq.Lock()
	timerSeq.n++
	name := fmt.Sprintf("enetc-timer%d", 900+timerSeq.n)
	timerSeq.Unlock()
	spec := "sim:" + name + "?timeline=manual&chip=" + testChip(t)
	if opts != "" {
		spec += "&" + opts
	}
	c, err := driver.OpenClock(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	m := sim.ENETCTimerModel(name)
	if m == nil {
		t.Fatalf("no model behind %s", spec)
	}
	return c, m, spec
}

func now(t *testing.T, c driver.Clock) driver.Time {
	t.Helper()
	v, err := c.Now()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const sec = driver.Time(time.Second)

func TestTimerSetNowStep(t *testing.T) {
	c, m, _ := openTimer(t, "")
	if err := c.Set(1000 * sec); err != nil {
		t.Fatal(err)
	}
	if got := now(t, c); got != 1000*sec {
		t.Fatalf("Now right after Set(1000 s) = %v, want 1000.000000000 (model time did not move)", got)
	}
	// 400 MHz reference, TMR_ADD 2^31: a 5 ns tick every two cycles, so one
	// second of model time is exactly one second of clock.
	m.Advance(time.Second)
	if got := now(t, c); got != 1001*sec {
		t.Fatalf("Now one model second later = %v, want 1001.000000000", got)
	}
	if err := c.Step(1500 * time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if got, want := now(t, c), 1001*sec+driver.Time(1500*time.Microsecond); got != want {
		t.Fatalf("after Step(+1.5ms) Now = %v, want %v", got, want)
	}
	if err := c.Step(-2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := now(t, c), 999*sec+driver.Time(1500*time.Microsecond); got != want {
		t.Fatalf("after Step(-2s) Now = %v, want %v", got, want)
	}
	// Step moves TMR_OFF; Set clears it, so the time is what Set says.
	if err := c.Set(5 * sec); err != nil {
		t.Fatal(err)
	}
	m.Advance(250 * time.Millisecond)
	if got, want := now(t, c), 5*sec+driver.Time(250*time.Millisecond); got != want {
		t.Fatalf("after Set(5s) and 250 ms Now = %v, want %v", got, want)
	}
	if err := c.Set(-1); err == nil {
		t.Fatal("Set to a time before the epoch was taken")
	}
}

func TestTimerAdjFreqAgainstModelTime(t *testing.T) {
	// The oscillator runs 50 ppm fast: the clock gains 50 µs per second.
	c, m, _ := openTimer(t, "freq-error=50000")
	if err := c.Set(10 * sec); err != nil {
		t.Fatal(err)
	}
	m.Advance(time.Second)
	gained := now(t, c) - 11*sec
	if d := gained - driver.Time(50*time.Microsecond); d < -5 || d > 5 {
		t.Fatalf("uncorrected, one model second gained %d ns, want 50000 ±5 (one tick)", gained)
	}
	// AdjFreq(-50 ppm) cancels it: TMR_ADD's resolution is 2^-31 of the
	// nominal addend (0.47 ppb), so the residue is under a tick per second.
	if err := c.AdjFreq(-50000); err != nil {
		t.Fatal(err)
	}
	f, err := c.Freq()
	if err != nil {
		t.Fatal(err)
	}
	if f > -49999 || f < -50001 {
		t.Fatalf("Freq after AdjFreq(-50000) = %g ppb", f)
	}
	start := now(t, c)
	m.Advance(10 * time.Second)
	elapsed := now(t, c) - start
	// (1+50e-6)(1-50e-6) = 1 - 2.5e-9: 25 ns short over 10 s, ± a tick.
	if d := elapsed - 10*sec; d < -35 || d > 5 {
		t.Fatalf("corrected, ten model seconds are %v on the clock (off by %d ns), want 10 s -25 ns ±10", elapsed, d)
	}
	// Beyond the timer's range: refused, nothing changes.
	if err := c.AdjFreq(2e9); err == nil || !strings.Contains(err.Error(), "ppb") {
		t.Fatalf("AdjFreq(2e9) = %v, want a range error", err)
	}
	if f2, _ := c.Freq(); f2 != f {
		t.Fatalf("a refused AdjFreq changed Freq from %g to %g", f, f2)
	}
	if err := c.AdjFreq(0); err != nil {
		t.Fatal(err)
	}
	if f, _ := c.Freq(); f != 0 {
		t.Fatalf("Freq after AdjFreq(0) = %g", f)
	}
}

func TestTimerPeriodicOutput(t *testing.T) {
	// 100 ppm fast: a clock second is 1/(1+1e-4) model seconds.
	c, m, _ := openTimer(t, "freq-error=100000")
	po, ok := c.(driver.PeriodicOutput)
	if !ok || po.PerOutChannels() != 3 {
		t.Fatalf("the ENETC timer offers no three periodic outputs")
	}
	if err := c.Set(100*sec + 200*driver.Time(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	m.Pulses() // forget any
	t0 := m.Timeline().Now()
	// Start 0: the next whole second at least half a second away (101 s).
	if err := po.SetPerOut(0, 0, time.Second); err != nil {
		t.Fatal(err)
	}
	m.Advance(3 * time.Second) // the clock reaches ~103.2003 s
	p := m.Pulses()
	if len(p) != 3 {
		t.Fatalf("pulses in 3 s = %v, want 3 (at 101, 102, 103 s)", p)
	}
	for i, q := range p {
		want := uint64(101+i) * 1e9
		if q.FIPER != 1 || q.Clock != want {
			t.Fatalf("pulse %d = %+v, want FIPER1 at clock %d", i, q, want)
		}
		// Model time: (clock - 100.2 s) / (1 + 1e-4) after t0, to a tick.
		clockNS := float64(want) - 100.2e9
		wantMT := t0 + int64(clockNS/1.0001)
		if d := q.ModelTime - wantMT; d < -10 || d > 10 {
			t.Fatalf("pulse %d at model time %d, want %d ±10 ns", i, q.ModelTime, wantMT)
		}
	}
	// A second channel with its own start and period: the FIPERs share
	// alarm 1, so both run from the new start.
	start := now(t, c) + 2*sec
	start -= start % sec
	start += 500 * driver.Time(time.Millisecond)
	if err := po.SetPerOut(1, start, 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	m.Pulses()
	m.Advance(3 * time.Second) // past start + 0.5 s
	var got1, got2 []uint64
	for _, q := range m.Pulses() {
		switch q.FIPER {
		case 1:
			got1 = append(got1, q.Clock)
		case 2:
			got2 = append(got2, q.Clock)
		default:
			t.Fatalf("a pulse on FIPER%d, which was never started", q.FIPER)
		}
	}
	if len(got2) < 3 || got2[0] != uint64(start) {
		t.Fatalf("FIPER2 pulses %v, want the first at %d", got2, start)
	}
	for i := 1; i < len(got2); i++ {
		if got2[i]-got2[i-1] != 250e6 {
			t.Fatalf("FIPER2 pulses %v are not 250 ms apart", got2)
		}
	}
	if len(got1) == 0 || got1[0] != uint64(start) {
		t.Fatalf("FIPER1 pulses %v, want them realigned to %d", got1, start)
	}
	// Stopped channels pulse no more.
	if err := po.SetPerOut(0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := po.SetPerOut(1, 0, 0); err != nil {
		t.Fatal(err)
	}
	m.Pulses()
	m.Advance(3 * time.Second)
	if p := m.Pulses(); len(p) != 0 {
		t.Fatalf("stopped outputs pulsed: %v", p)
	}
	// What the hardware cannot do is refused, naming the channel.
	for _, tc := range []struct {
		ch     int
		start  driver.Time
		period time.Duration
		want   string
	}{
		{3, 0, time.Second, "no periodic output 3"},
		{0, 0, 7 * time.Nanosecond, "multiple of the 5ns tick"},
		{0, 1, time.Second, "not in the future"},
	} {
		if err := po.SetPerOut(tc.ch, tc.start, tc.period); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetPerOut(%d, %v, %v) = %v, want an error saying %q", tc.ch, tc.start, tc.period, err, tc.want)
		}
	}
}

func TestPortClockIsItsChipsTimer(t *testing.T) {
	sp := openSim(t, "chip="+testChip(t), driver.Config{})
	if _, err := driver.ClockOf(sp.port); !errors.Is(err, driver.ErrNoClock) || !strings.Contains(err.Error(), "sim:enetc-timerN") {
		t.Fatalf("ClockOf a port whose chip's timer is not open = %v, want ErrNoClock saying how to open it", err)
	}
	c, m, _ := openTimer(t, "")
	pc, err := driver.ClockOf(sp.port)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Set(42 * sec); err != nil {
		t.Fatal(err)
	}
	m.Advance(time.Millisecond)
	if a, b := now(t, c), now(t, pc); a != b || a != 42*sec+driver.Time(time.Millisecond) {
		t.Fatalf("the port's clock reads %v, its chip's timer %v: want one clock at 42.001 s", b, a)
	}
	if m2 := sp.model.Chip().Timer(); m2 != m {
		t.Fatal("the port's model is not attached to the chip's timer model")
	}
	// The port does not own the clock: closing the port's handle leaves it.
	if err := pc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Now(); err != nil {
		t.Fatalf("the timer after the port's clock handle closed: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Now(); !errors.Is(err, driver.ErrClosed) {
		t.Fatalf("Now on a closed timer = %v, want ErrClosed", err)
	}
	if _, err := driver.ClockOf(sp.port); !errors.Is(err, driver.ErrNoClock) {
		t.Fatalf("ClockOf after the timer closed = %v, want ErrNoClock", err)
	}
	// Another port, on a chip with no timer, never sees this one.
	other := openSim(t, "chip="+testChip(t)+"-other", driver.Config{})
	openTimer(t, "")
	if _, err := driver.ClockOf(other.port); !errors.Is(err, driver.ErrNoClock) {
		t.Fatalf("ClockOf a port on another chip = %v, want ErrNoClock", err)
	}
}

func TestTimerOpenErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"sim:enetc-timer990?ref-clock=5", "ref-clock"},
		{"sim:enetc-timer991?freq-error=x", "freq-error"},
		{"sim:enetc-timer992?timeline=sundial", "timeline"},
		{"sim:enetc-timer993?queues=2", "unknown option for a clock"},
	} {
		if c, err := driver.OpenClock(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			if c != nil {
				c.Close()
			}
			t.Errorf("OpenClock(%s) = %v, want an error naming %s", tc.spec, err, tc.want)
		}
	}
	// One timer per chip.
	_, _, _ = openTimer(t, "")
	if c, err := driver.OpenClock("sim:enetc-timer994?timeline=manual&chip=" + testChip(t)); err == nil {
		c.Close()
		t.Fatal("a second timer on one chip opened")
	}
	// A port is not a clock.
	sp := openSim(t, "chip="+testChip(t)+"-p", driver.Config{})
	_ = sp
	if c, err := driver.OpenClock("sim:enetc995?chip=" + testChip(t) + "-q"); !errors.Is(err, driver.ErrNoClock) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("OpenClock on a port = %v, want ErrNoClock", err)
	}
}

func TestTimerNowAllocatesNothing(t *testing.T) {
	c, m, _ := openTimer(t, "")
	if n := testing.AllocsPerRun(100, func() {
		m.Advance(time.Microsecond)
		if _, err := c.Now(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Now allocates %g times per call", n)
	}
}

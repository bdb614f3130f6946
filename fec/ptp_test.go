package fec_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec/model"
)

const sec = driver.Time(time.Second)

func portClock(t *testing.T, opts string) (driver.Clock, *model.Device, driver.Port) {
	t.Helper()
	p, m := openSim(t, opts)
	c, err := driver.ClockOf(p)
	if err != nil {
		t.Fatal(err)
	}
	return c, m, p
}

func clockNow(t *testing.T, c driver.Clock) driver.Time {
	t.Helper()
	v, err := c.Now()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// advance moves model time in steps of at most step, reading the clock
// after each as the driver's keeper would: the counter wraps every 2^31 ns.
func advance(t *testing.T, c driver.Clock, m *model.Device, d, step time.Duration) {
	t.Helper()
	for d > 0 {
		s := min(d, step)
		m.AdvanceTime(s)
		clockNow(t, c)
		d -= s
	}
}

func TestPTPSetNowStep(t *testing.T) {
	c, m, _ := portClock(t, "timeline=manual")
	if err := c.Set(1000 * sec); err != nil {
		t.Fatal(err)
	}
	if got := clockNow(t, c); got != 1000*sec {
		t.Fatalf("Now right after Set(1000 s) = %v", got)
	}
	// 100 MHz, ATINC.INC 10: one model second is one clock second; five of
	// them cross two wraps of the 31-bit counter.
	advance(t, c, m, 5*time.Second, time.Second)
	if got := clockNow(t, c); got != 1005*sec {
		t.Fatalf("five model seconds later Now = %v, want 1005.000000000", got)
	}
	if err := c.Step(1500 * time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if got, want := clockNow(t, c), 1005*sec+driver.Time(1500*time.Microsecond); got != want {
		t.Fatalf("after Step(+1.5ms) Now = %v, want %v", got, want)
	}
	if err := c.Step(-10 * time.Second); err != nil {
		t.Fatal(err)
	}
	m.AdvanceTime(time.Second)
	if got, want := clockNow(t, c), 996*sec+driver.Time(1500*time.Microsecond); got != want {
		t.Fatalf("after Step(-10s) and a second Now = %v, want %v", got, want)
	}
}

func TestPTPAdjFreqAgainstModelTime(t *testing.T) {
	for _, ppm := range []int64{50, -50} {
		t.Run(fmt.Sprintf("%+dppm", ppm), func(t *testing.T) {
			c, m, _ := portClock(t, fmt.Sprintf("timeline=manual&freq-error=%d", ppm*1000))
			if err := c.Set(10 * sec); err != nil {
				t.Fatal(err)
			}
			m.AdvanceTime(time.Second)
			gained := clockNow(t, c) - 11*sec
			if d := gained - driver.Time(ppm*1000); d < -10 || d > 10 {
				t.Fatalf("uncorrected, one model second gained %d ns, want %d ±10", gained, ppm*1000)
			}
			// Cancel it: INC_CORR 10∓1 instead of 10 on every 2000th cycle.
			adj := float64(-ppm * 1000)
			if err := c.AdjFreq(adj); err != nil {
				t.Fatal(err)
			}
			if f, err := c.Freq(); err != nil || f != adj {
				t.Fatalf("Freq after AdjFreq(%g) = %g, %v", adj, f, err)
			}
			start := clockNow(t, c)
			advance(t, c, m, 10*time.Second, time.Second)
			elapsed := clockNow(t, c) - start
			// (1+e)(1-e) = 1 - 2.5e-9: 25 ns short over ten seconds.
			if d := elapsed - 10*sec; d < -45 || d > -5 {
				t.Fatalf("corrected, ten model seconds are %v on the clock (off by %d ns), want -25 ns ±20", elapsed, d)
			}
		})
	}
	c, _, _ := portClock(t, "timeline=manual")
	if err := c.AdjFreq(20); err != nil {
		t.Fatal(err)
	}
	if f, _ := c.Freq(); f < 19.9 || f > 20.1 {
		t.Fatalf("Freq after AdjFreq(20) = %g", f)
	}
	if err := c.AdjFreq(0); err != nil {
		t.Fatal(err)
	}
	if f, _ := c.Freq(); f != 0 {
		t.Fatalf("Freq after AdjFreq(0) = %g", f)
	}
	if err := c.AdjFreq(5e8); err == nil {
		t.Fatal("AdjFreq(50%) was taken")
	}
}

func TestPTPKeepsTimeAcrossRestart(t *testing.T) {
	// The i.MX6UL resets with ECR.RESET, which wipes the timer; the
	// i.MX8MP with ECR = 0, which leaves it running.
	for _, opts := range []string{"soc=imx6ul&ptp-clock=100000000", "soc=imx8mp"} {
		t.Run(opts, func(t *testing.T) { keepsTimeAcrossRestart(t, opts) })
	}
}

func keepsTimeAcrossRestart(t *testing.T, opts string) {
	c, m, p := portClock(t, "timeline=manual&"+opts)
	if err := c.Set(500 * sec); err != nil {
		t.Fatal(err)
	}
	if err := c.AdjFreq(1000); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil { // a MAC reset: the timer's registers are wiped
		t.Fatal(err)
	}
	// Restored at the saved time plus the host time the reset took; model
	// time did not move, so only that host time is added (bounded loosely:
	// the machine may be loaded).
	got := clockNow(t, c)
	if got < 500*sec || got > 510*sec {
		t.Fatalf("after a restart Now = %v, want 500 s plus the reset's duration", got)
	}
	before := clockNow(t, c)
	m.AdvanceTime(time.Second)
	if d := clockNow(t, c) - before - sec; d < 990 || d > 1010 {
		t.Fatalf("after a restart one model second is %v on the clock, want 1.000001000 (the 1000 ppb adjustment kept)", sec+d)
	}
	if f, _ := c.Freq(); f < 999 || f > 1001 {
		t.Fatalf("Freq after restart = %g, want the 1000 ppb set before", f)
	}
}

func TestPTPPeriodicOutput(t *testing.T) {
	c, m, _ := portClock(t, "timeline=manual")
	po, ok := c.(driver.PeriodicOutput)
	if !ok || po.PerOutChannels() != 4 {
		t.Fatal("the FEC clock offers no four periodic outputs")
	}
	if err := c.Set(100*sec + 200*driver.Time(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	m.PTPPulses()
	t0 := m.Timeline().Now()
	// Start 0: the next whole second at least a second away, 102 s.
	if err := po.SetPerOut(0, 0, time.Second); err != nil {
		t.Fatal(err)
	}
	advance(t, c, m, 4*time.Second, 500*time.Millisecond) // to 104.2 s
	p := m.PTPPulses()
	if len(p) != 3 {
		t.Fatalf("pulses = %+v, want three (102, 103, 104 s)", p)
	}
	for i, q := range p {
		want := t0 + int64(1800*time.Millisecond) + int64(i)*int64(time.Second)
		if q.Channel != 0 || q.Mode != 0xf || q.ModelTime < want-10 || q.ModelTime > want+10 {
			t.Fatalf("pulse %d = %+v, want channel 0, high pulse, at model time %d ±10 ns", i, q, want)
		}
	}
	// A step keeps the train's phase on the new time: the next pulse is at
	// the next whole second of the stepped clock.
	if err := c.Step(300 * time.Millisecond); err != nil { // 104.5 s
		t.Fatal(err)
	}
	t1 := m.Timeline().Now()
	advance(t, c, m, 2*time.Second, 500*time.Millisecond) // to 106.5 s
	p = m.PTPPulses()
	if len(p) != 2 {
		t.Fatalf("pulses after the step = %+v, want two (105, 106 s)", p)
	}
	if want := t1 + int64(500*time.Millisecond); p[0].ModelTime < want-10 || p[0].ModelTime > want+10 {
		t.Fatalf("first pulse after the step at model time %d, want %d", p[0].ModelTime, want)
	}
	if err := po.SetPerOut(0, 0, 0); err != nil {
		t.Fatal(err)
	}
	advance(t, c, m, 3*time.Second, 500*time.Millisecond)
	if p := m.PTPPulses(); len(p) != 0 {
		t.Fatalf("a stopped output pulsed: %+v", p)
	}
	for _, tc := range []struct {
		ch     int
		start  driver.Time
		period time.Duration
		want   string
	}{
		{4, 0, time.Second, "no periodic output 4"},
		{0, 0, 100 * time.Millisecond, "from 500ms"},
		{0, 0, 2 * time.Second, "from 500ms"},
		{1, sec, time.Second, "not in the future"},
	} {
		if err := po.SetPerOut(tc.ch, tc.start, tc.period); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetPerOut(%d, %v, %v) = %v, want an error saying %q", tc.ch, tc.start, tc.period, err, tc.want)
		}
	}
}

func TestPTPClockRates(t *testing.T) {
	// The i.MX6Q's timer clock rate is the board's: without ptp-clock= the
	// driver says what to give.
	p, _ := openSim(t, "soc=imx6q")
	if _, err := driver.ClockOf(p); err == nil || !strings.Contains(err.Error(), "ptp-clock=") {
		t.Fatalf("ClockOf an i.MX6Q port without ptp-clock= = %v, want an error asking for it", err)
	}
	c, m, _ := portClock(t, "soc=imx6q&ptp-clock=125000000&timeline=manual")
	if err := c.Set(sec); err != nil {
		t.Fatal(err)
	}
	m.AdvanceTime(time.Second)
	if got := clockNow(t, c); got != 2*sec {
		t.Fatalf("at 125 MHz (INC 8) one model second reads %v on the clock", got-sec)
	}
	if _, err := driver.Open("sim:fec299?ptp-clock=3000000"); err == nil || !strings.Contains(err.Error(), "ptp-clock") {
		t.Fatalf("open with ptp-clock=3000000 = %v, want an error naming ptp-clock", err)
	}
}

func TestPTPClockClosedWithPort(t *testing.T) {
	p, _ := openSim(t, "timeline=manual")
	c, err := driver.ClockOf(p)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := driver.ClockOf(p)
	if c2 != c {
		t.Fatal("a port's clock is not one clock")
	}
	if err := c.Close(); err != nil { // the port owns it: nothing happens
		t.Fatal(err)
	}
	if _, err := c.Now(); err != nil {
		t.Fatalf("Now after the handle's Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Now(); !errors.Is(err, driver.ErrClosed) {
		t.Fatalf("Now after the port closed = %v, want ErrClosed", err)
	}
	if _, err := driver.ClockOf(p); !errors.Is(err, driver.ErrClosed) {
		t.Fatalf("ClockOf a closed port = %v, want ErrClosed", err)
	}
}

func TestPTPNowAllocatesNothing(t *testing.T) {
	c, m, _ := portClock(t, "timeline=manual")
	po := c.(driver.PeriodicOutput)
	if err := po.SetPerOut(0, 0, time.Second); err != nil { // Now services it too
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		m.AdvanceTime(10 * time.Millisecond)
		if _, err := c.Now(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Now allocates %g times per call", n)
	}
}

package metrics_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/metrics"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
	"github.com/gopmd/gopmd/tap"
)

// attachTwin is a TAP twin of port p on one end of a socket pair (no
// kernel TAP needed), with one frame for p's MAC already sent up.
func attachTwin(t *testing.T, p driver.Port, name string) *tap.Twin {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	tw, err := tap.Attach(fds[0], tap.Config{Name: name, MAC: p.MAC(), Pool: p.RxQueue(0).Pool(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tw.Close(0) })
	f := make([]byte, 60)
	copy(f, p.MAC())
	copy(f[6:], []byte{2, 0, 0, 0, 0, 9, 0x08, 0x00})
	pk := p.RxQueue(0).Pool().Alloc()
	copy(pk.Append(len(f)), f)
	if kept := tw.Up([]*driver.Packet{pk}); kept != 0 {
		pool.FreeBulk([]*driver.Packet{pk})
		t.Fatalf("the twin left a frame for the port's MAC to the application")
	}
	return tw
}

// family returns the gathered family name.
func family(t *testing.T, g prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	t.Fatalf("no family %s", name)
	return nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestLint runs Prometheus's linter (promlint, what promtool check metrics
// and testutil.CollectAndLint run) over every
// series: an ENETC and a FEC port, each in a Collector of its own in one
// registry, and a TAP twin. The device counters are typed right: levels
// (link_up, link_speed_mbps, maxima) are gauges, the rest counters.
func TestLint(t *testing.T) {
	e, f := open(t, "enetc80"), open(t, "fec80")
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(metrics.For(e)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(metrics.For(f)); err != nil {
		t.Fatalf("a second Collector for another port: %v", err)
	}
	if err := reg.Register(metrics.Taps(attachTwin(t, e, "gopmd80"))); err != nil {
		t.Fatal(err)
	}
	// testutil.GatherAndLint without its diff library: the same linter.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}

	values := family(t, reg, "gopmd_device_value")
	if values.GetType() != dto.MetricType_GAUGE {
		t.Errorf("gopmd_device_value is a %s", values.GetType())
	}
	gauges := map[string]bool{}
	for _, m := range values.GetMetric() {
		gauges[label(m, "port")+" "+label(m, "stat")] = true
	}
	for _, want := range []string{e.Info().Name + " link_up", e.Info().Name + " link_speed_mbps", e.Info().Name + " drv_tx0_mdio_wait_max_ns"} {
		if !gauges[want] {
			t.Errorf("gopmd_device_value lacks %s", want)
		}
	}
	totals := family(t, reg, "gopmd_device_stat_total")
	ports := map[string]int{}
	for _, m := range totals.GetMetric() {
		ports[label(m, "port")]++
		if st := label(m, "stat"); driver.HWGauge(st) || strings.Contains(st, "link") {
			t.Errorf("level %s exported as a counter", st)
		}
	}
	if ports[e.Info().Name] == 0 || ports[f.Info().Name] == 0 {
		t.Errorf("device counters by port: %v, want both %s and %s", ports, e.Info().Name, f.Info().Name)
	}
	up := family(t, reg, "gopmd_tap_frames_total")
	var upFrames float64 = -1
	for _, m := range up.GetMetric() {
		if label(m, "tap") == "gopmd80" && label(m, "dir") == "up" {
			upFrames = m.GetCounter().GetValue()
		}
	}
	if upFrames != 1 {
		t.Errorf(`gopmd_tap_frames_total{dir="up",tap="gopmd80"} = %v, want 1`, upFrames)
	}
}

// TestSamePortTwice: a port in two Collectors of one registry is reported
// at scrape (the same series twice), not silently summed or dropped.
func TestSamePortTwice(t *testing.T) {
	p := open(t, "fec87")
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.For(p))
	reg.MustRegister(metrics.For(p))
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "collected before") {
		t.Fatalf("Gather with a port in two Collectors: %v, want a duplicate-series error", err)
	}
}

// TestPoolEventsLive: a pool's events follow the frames that pass, scrape
// after scrape, though a forwarding loop's frees keep its cache full and it
// never refills.
func TestPoolEventsLive(t *testing.T) {
	const frames = 8192
	p, err := driver.Open("sim:fec88?link-poll=0&gen=1&gen-count=8192")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.For(p))
	allocs := func() (n float64) {
		for _, m := range family(t, reg, "gopmd_pool_events_total").GetMetric() {
			if ev := label(m, "event"); ev == "alloc_fast" || ev == "alloc_slow" {
				n += m.GetCounter().GetValue()
			}
		}
		return n
	}
	before := allocs()
	burst := make([]*pool.Packet, 32)
	rx := p.RxQueue(0)
	got := 0
	for i := 0; i < 100*frames && got < frames; i++ {
		n := rx.RxBurst(burst)
		rx.Pool().RecycleBulk(burst[:n]) // the owner's frees: straight back to its cache
		got += n
	}
	if got != frames {
		t.Fatalf("received %d of %d frames", got, frames)
	}
	// The pool publishes its owner's counts every 64 bulk allocations:
	// at most 64 bursts of 32 can be missing.
	if after := allocs(); after-before < frames-64*32 {
		t.Fatalf("pool allocations in the scrape went from %v to %v while %d frames passed", before, after, frames)
	}
	_ = sim.FECModel // the sim: scheme
}

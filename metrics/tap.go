package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gopmd/gopmd/tap"
)

// TapCollector is a prometheus.Collector for TAP twins (package tap), the
// exception path between ports and the kernel: frames and bytes each way
// and drops by cause, labelled by the TAP's name (tap="gopmd0"). Like
// Collector it is unchecked, so several share a registry.
type TapCollector struct {
	twins func() []*tap.Twin

	frames, bytes, drops *prometheus.Desc
	copies, taken, noBuf *prometheus.Desc
}

// NewTaps returns a TapCollector for the twins twins returns at each
// scrape (nil entries are skipped). twins must be safe to call from the
// scraping goroutine; a twin must stay open while it is returned.
func NewTaps(twins func() []*tap.Twin) *TapCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("gopmd_tap_"+name, help, append([]string{"tap"}, labels...), nil)
	}
	return &TapCollector{twins: twins,
		frames: d("frames_total", "Frames through a TAP twin: dir=up written to the kernel, dir=down read from it and sent by the port.", "dir"),
		bytes:  d("bytes_total", "Bytes through a TAP twin.", "dir"),
		drops:  d("drops_total", "Frames the exception path lost, by cause.", "cause"),
		copies: d("up_copies_total", "Part of the frames up that were copies of frames also left to the application."),
		taken:  d("taken_total", "Frames taken from the application's bursts (written up or dropped on the way)."),
		noBuf:  d("down_no_buffer_total", "Reads put off because every TAP buffer was on the TX ring (the frames waited in the kernel)."),
	}
}

// Taps is NewTaps for a fixed set of twins.
func Taps(twins ...*tap.Twin) *TapCollector {
	ts := append([]*tap.Twin(nil), twins...)
	return NewTaps(func() []*tap.Twin { return ts })
}

// Describe implements prometheus.Collector; it sends nothing (unchecked).
func (c *TapCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *TapCollector) Collect(ch chan<- prometheus.Metric) {
	cnt := func(d *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	for _, tw := range c.twins() {
		if tw == nil {
			continue
		}
		name := tw.Name()
		s := tw.Stats()
		cnt(c.frames, s.UpFrames, name, "up")
		cnt(c.frames, s.DownFrames, name, "down")
		cnt(c.bytes, s.UpBytes, name, "up")
		cnt(c.bytes, s.DownBytes, name, "down")
		cnt(c.copies, s.UpCopies, name)
		cnt(c.taken, s.Taken, name)
		cnt(c.noBuf, s.DownNoBuffer, name)
		for cause := tap.Cause(0); cause < tap.NumCauses; cause++ {
			cnt(c.drops, s.Drops[cause], name, cause.String())
		}
	}
}

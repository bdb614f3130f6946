package main

import (
	"net/http"

	"github.com/gopmd/gopmd/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// collector exposes l2fwd's own counters, per lane summed by RX port and
// labelled by the port's name (its spec, as package metrics labels it),
// read when Prometheus scrapes (the workers never touch it). The ports',
// queues', pools' and TAP twins' counters come from package metrics.
type collector struct {
	a *app

	handled, refused, noBounce *prometheus.Desc
}

func newCollector(a *app) *collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("gopmd_"+name, help, labels, nil)
	}
	return &collector{a: a,
		handled:  d("l2fwd_handled_total", "Frames l2fwd handed to TX (fwd, tx) or consumed (drop, pass), by RX port.", "port"),
		refused:  d("l2fwd_tx_refused_total", "Frames a TX queue did not take, freed and counted, by RX port.", "port"),
		noBounce: d("l2fwd_no_bounce_total", "Frames dropped for want of a bounce buffer between DMA domains, by RX port.", "port"),
	}
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.handled, c.refused, c.noBounce} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	cnt := func(d *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	ports := c.a.livePorts()
	n := len(ports)
	handled, refused, noBounce := make([]uint64, n), make([]uint64, n), make([]uint64, n)
	for _, l := range c.a.lanes {
		if l.rxPort < n {
			handled[l.rxPort] += l.handled.Load()
			refused[l.rxPort] += l.txRefused.Load()
			noBounce[l.rxPort] += l.bounceShort.Load()
		}
	}
	for i, p := range ports {
		if p == nil {
			continue // closed: its series go with the port's own
		}
		port := p.Info().Name
		cnt(c.handled, handled[i], port)
		cnt(c.refused, refused[i], port)
		cnt(c.noBounce, noBounce[i], port)
	}
}

// serveMetrics serves /metrics (and /regs, the running ports' registers)
// on addr until the returned stop is called, with package metrics' limits
// (timeouts, connection cap).
func serveMetrics(addr string, a *app) (stop func(), err error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(metrics.New(a.livePorts)); err != nil {
		return nil, err
	}
	if err := reg.Register(newCollector(a)); err != nil {
		return nil, err
	}
	if len(a.twins) > 0 {
		twins := append(a.twins[:0:0], a.twins...)
		if err := reg.Register(metrics.Taps(twins...)); err != nil {
			return nil, err
		}
	}
	ln, err := listenMetrics(addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/regs", regsHandler(a, isLoopback(ln.Addr())))
	a.metricsAddr = ln.Addr().String()
	return metrics.ServeListener(ln, mux), nil
}

package main

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// collector exposes every port, queue, pool and lane counter, read when
// Prometheus scrapes (the workers never touch it).
type collector struct {
	a *app

	portPkts, portBytes, portDrops    *prometheus.Desc
	queuePkts, queueBytes, queueDrops *prometheus.Desc
	hw                                *prometheus.Desc
	poolStat, poolSize                *prometheus.Desc
	handled, refused, busy, noBounce  *prometheus.Desc
	retries, recovered                *prometheus.Desc
}

func newCollector(a *app) *collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("gopmd_"+name, help, labels, nil)
	}
	return &collector{a: a,
		portPkts:   d("port_packets_total", "Frames received (dir=rx) or sent (dir=tx) by a port.", "port", "dir"),
		portBytes:  d("port_bytes_total", "Bytes received or sent by a port.", "port", "dir"),
		portDrops:  d("port_drops_total", "Frames a port lost or refused, by cause.", "port", "dir", "cause"),
		queuePkts:  d("queue_packets_total", "Frames through one queue.", "port", "dir", "queue"),
		queueBytes: d("queue_bytes_total", "Bytes through one queue.", "port", "dir", "queue"),
		queueDrops: d("queue_drops_total", "Frames one queue lost or refused, by cause.", "port", "dir", "queue", "cause"),
		hw:         d("port_hw_counter", "A device counter by the reference manual's name.", "port", "counter"),
		poolStat:   d("pool_events_total", "Page-pool events of an RX queue's pool (kernel page_pool terms).", "port", "queue", "event"),
		poolSize:   d("pool_buffers", "Buffers in an RX queue's pool.", "port", "queue"),
		handled:    d("l2fwd_handled_total", "Frames l2fwd handed to TX (fwd, tx) or consumed (drop, pass), by RX port.", "port"),
		refused:    d("l2fwd_tx_refused_total", "Frames a TX queue did not take, freed and counted, by RX port.", "port"),
		busy:       d("l2fwd_tx_refused_busy_total", "Part of l2fwd_tx_refused_total refused while the TX ring had room (MDIO transaction, link poll, stop), by RX port.", "port"),
		retries:    d("l2fwd_tx_busy_retries_total", "Bursts offered again because the TX queue was busy with room in its ring, by RX port.", "port"),
		recovered:  d("l2fwd_tx_busy_recovered_total", "Frames that got through on such a retry, by RX port.", "port"),
		noBounce:   d("l2fwd_no_bounce_total", "Frames dropped for want of a bounce buffer between DMA domains, by RX port.", "port"),
	}
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.portPkts, c.portBytes, c.portDrops, c.queuePkts, c.queueBytes, c.queueDrops, c.hw, c.poolStat, c.poolSize, c.handled, c.refused, c.busy, c.noBounce, c.retries, c.recovered} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	cnt := func(d *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	drops := func(d *prometheus.Desc, q driver.QueueStats, l ...string) {
		for cause := driver.Cause(0); cause < driver.NumCauses; cause++ {
			cnt(d, q.Drops[cause], append(l, cause.String())...)
		}
	}
	ports := c.a.livePorts()
	for i, p := range ports {
		port := strconv.Itoa(i)
		st := p.Stats()
		for _, x := range []struct {
			dir string
			q   driver.QueueStats
			qs  []driver.QueueStats
		}{{"rx", st.Rx, st.RxQueues}, {"tx", st.Tx, st.TxQueues}} {
			cnt(c.portPkts, x.q.Packets, port, x.dir)
			cnt(c.portBytes, x.q.Bytes, port, x.dir)
			drops(c.portDrops, x.q, port, x.dir)
			for qi, qs := range x.qs {
				q := strconv.Itoa(qi)
				cnt(c.queuePkts, qs.Packets, port, x.dir, q)
				cnt(c.queueBytes, qs.Bytes, port, x.dir, q)
				drops(c.queueDrops, qs, port, x.dir, q)
			}
		}
		for name, v := range st.HW {
			ch <- prometheus.MustNewConstMetric(c.hw, prometheus.CounterValue, float64(v), port, name)
		}
		for qi := 0; qi < p.Info().RxQueues; qi++ {
			pl := p.RxQueue(qi).Pool()
			if pl == nil {
				continue
			}
			q := strconv.Itoa(qi)
			ps := pl.Stats()
			for _, e := range []struct {
				n string
				v uint64
			}{{"alloc_fast", ps.AllocFast}, {"alloc_slow", ps.AllocSlow}, {"alloc_empty", ps.AllocEmpty},
				{"alloc_refill", ps.AllocRefill}, {"recycle_cached", ps.RecycleCached},
				{"recycle_cache_full", ps.RecycleCacheFull}, {"recycle_ring", ps.RecycleRing},
				{"recycle_ring_full", ps.RecycleRingFull}, {"refused_foreign", ps.RefusedForeign},
				{"refused_double", ps.RefusedDouble}} {
				cnt(c.poolStat, e.v, port, q, e.n)
			}
			ch <- prometheus.MustNewConstMetric(c.poolSize, prometheus.GaugeValue, float64(pl.Count()), port, q)
		}
	}
	n := len(ports)
	handled, refused, busy, noBounce := make([]uint64, n), make([]uint64, n), make([]uint64, n), make([]uint64, n)
	retries, recovered := make([]uint64, n), make([]uint64, n)
	for _, l := range c.a.lanes {
		if l.rxPort < n {
			handled[l.rxPort] += l.handled.Load()
			refused[l.rxPort] += l.txRefused.Load()
			busy[l.rxPort] += l.txBusy.Load()
			retries[l.rxPort] += l.txRetried.Load()
			recovered[l.rxPort] += l.txRecovered.Load()
			noBounce[l.rxPort] += l.bounceShort.Load()
		}
	}
	for i := range ports {
		port := strconv.Itoa(i)
		cnt(c.handled, handled[i], port)
		cnt(c.refused, refused[i], port)
		cnt(c.busy, busy[i], port)
		cnt(c.retries, retries[i], port)
		cnt(c.recovered, recovered[i], port)
		cnt(c.noBounce, noBounce[i], port)
	}
}

// serveMetrics serves /metrics (and /regs, the running ports' registers)
// on addr until the returned stop is called.
func serveMetrics(addr string, a *app) (stop func(), err error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(newCollector(a)); err != nil {
		return nil, err
	}
	if len(a.twins) > 0 {
		if err := reg.Register(newTapCollector(a)); err != nil {
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
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	a.metricsAddr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = srv.Shutdown(ctx)
		cancel()
	}, nil
}

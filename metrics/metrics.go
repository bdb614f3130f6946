// Package metrics exports the counters of a set of gopmd ports to
// Prometheus: per port and per queue frames, bytes and drops by cause, the
// device's own counters, and each RX pool's page-pool events and size. It
// is what l2fwd --metrics serves; an appliance exports the same series
// with one call:
//
//	stop, err := metrics.Serve("127.0.0.1:9100", portA, portB)
//
// or registers a Collector on its own registry. Counters are read when
// Prometheus scrapes (Port.Stats, Pool.Stats), never by the data path.
// Ports are labelled by their position in the set: port="0", "1", ...
package metrics

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gopmd/gopmd/driver"
)

// Collector is a prometheus.Collector for a set of ports.
type Collector struct {
	ports func() []driver.Port

	portPkts, portBytes, portDrops    *prometheus.Desc
	queuePkts, queueBytes, queueDrops *prometheus.Desc
	hw                                *prometheus.Desc
	poolStat, poolSize                *prometheus.Desc
}

// New returns a Collector for the ports ports returns at each scrape (a
// set that changes, such as ports closed one by one, stays labelled by
// position). ports must be safe to call from the scraping goroutine.
func New(ports func() []driver.Port) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("gopmd_"+name, help, labels, nil)
	}
	return &Collector{ports: ports,
		portPkts:   d("port_packets_total", "Frames received (dir=rx) or sent (dir=tx) by a port.", "port", "dir"),
		portBytes:  d("port_bytes_total", "Bytes received or sent by a port.", "port", "dir"),
		portDrops:  d("port_drops_total", "Frames a port lost or refused, by cause.", "port", "dir", "cause"),
		queuePkts:  d("queue_packets_total", "Frames through one queue.", "port", "dir", "queue"),
		queueBytes: d("queue_bytes_total", "Bytes through one queue.", "port", "dir", "queue"),
		queueDrops: d("queue_drops_total", "Frames one queue lost or refused, by cause.", "port", "dir", "queue", "cause"),
		hw:         d("port_hw_counter", "A device counter by the reference manual's name.", "port", "counter"),
		poolStat:   d("pool_events_total", "Page-pool events of an RX queue's pool (kernel page_pool terms).", "port", "queue", "event"),
		poolSize:   d("pool_buffers", "Buffers in an RX queue's pool.", "port", "queue"),
	}
}

// For is New for a fixed set of ports.
func For(ports ...driver.Port) *Collector {
	ps := append([]driver.Port(nil), ports...)
	return New(func() []driver.Port { return ps })
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.portPkts, c.portBytes, c.portDrops, c.queuePkts, c.queueBytes, c.queueDrops, c.hw, c.poolStat, c.poolSize} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	cnt := func(d *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	drops := func(d *prometheus.Desc, q driver.QueueStats, l ...string) {
		for cause := driver.Cause(0); cause < driver.NumCauses; cause++ {
			cnt(d, q.Drops[cause], append(l, cause.String())...)
		}
	}
	for i, p := range c.ports() {
		if p == nil {
			continue
		}
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
			rq := p.RxQueue(qi)
			if rq == nil {
				continue
			}
			pl := rq.Pool()
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
}

// Handler is an http.Handler serving the ports' metrics in the Prometheus
// text format, from a registry of its own.
func Handler(ports ...driver.Port) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(For(ports...))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// Serve listens on addr ("127.0.0.1:9100"; port 0 picks a free one) and
// serves the ports' metrics on /metrics until stop is called. It returns
// the address actually bound. The counters carry no secrets, but the
// listener is reachable by whoever reaches addr: bind to loopback unless
// the scraper is elsewhere.
func Serve(addr string, ports ...driver.Port) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(ports...))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = srv.Shutdown(ctx)
		cancel()
	}, nil
}

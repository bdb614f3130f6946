// Package metrics exports the counters of a set of gopmd ports to
// Prometheus: per port and per queue frames, bytes and drops by cause, the
// device's own counters, each RX pool's page-pool events and size, and the
// counters of TAP twins. It is what l2fwd --metrics serves; an appliance
// exports the same series with one call:
//
//	addr, stop, err := metrics.Serve("127.0.0.1:9100", portA, portB)
//
// or registers a Collector (and a TapCollector) on its own registry. Every
// value is read when Prometheus scrapes (Port.Stats, Pool.Stats,
// Twin.Stats), never by the data path. A port is labelled by its name, the
// spec it was opened with (port="pci:0000:00:00.0", port="sim:fec0"), so a
// series keeps its identity when the set of ports changes. The series pass
// Prometheus's linter (promtool check metrics).
package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gopmd/gopmd/driver"
)

// Collector is a prometheus.Collector for a set of ports. It is unchecked
// (it describes no series up front): several Collectors, each for its own
// ports, share a registry; a port in two of them is an error at scrape
// (the same series twice), which the registry reports.
type Collector struct {
	ports func() []driver.Port

	portPkts, portBytes, portDrops    *prometheus.Desc
	queuePkts, queueBytes, queueDrops *prometheus.Desc
	hwTotal, hwValue                  *prometheus.Desc
	poolStat, poolSize                *prometheus.Desc
}

// New returns a Collector for the ports ports returns at each scrape (nil
// entries, such as ports already closed, are skipped). ports must be safe
// to call from the scraping goroutine.
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
		hwTotal:    d("device_stat_total", "A device counter, by the driver's name for it (the reference manual's, or ethtool's as listed in driver.HWStatNames).", "port", "stat"),
		hwValue:    d("device_value", "A device value that can go down (link_up, link_speed_mbps, a maximum), by the driver's name for it.", "port", "stat"),
		poolStat:   d("pool_events_total", "Page-pool events of an RX queue's pool (kernel page_pool terms).", "port", "queue", "event"),
		poolSize:   d("pool_buffers", "Buffers in an RX queue's pool.", "port", "queue"),
	}
}

// For is New for a fixed set of ports.
func For(ports ...driver.Port) *Collector {
	ps := append([]driver.Port(nil), ports...)
	return New(func() []driver.Port { return ps })
}

// Describe implements prometheus.Collector. It sends nothing: the
// Collector is unchecked, so that Collectors for different ports can share
// a registry (their series have the same names and label names).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

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
	for _, p := range c.ports() {
		if p == nil {
			continue
		}
		port := p.Info().Name
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
			if driver.HWGauge(name) {
				ch <- prometheus.MustNewConstMetric(c.hwValue, prometheus.GaugeValue, float64(v), port, name)
			} else {
				cnt(c.hwTotal, v, port, name)
			}
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

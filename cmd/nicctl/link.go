package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/gopmd/gopmd/driver"
)

func init() {
	register(&command{
		name: "link", args: "DEV", min: 1, max: 1,
		summary: "link state, speed, duplex",
		run:     func(e *env, a []string) (any, error) { return linkCmd(e, a[0]) },
	})
	var (
		watch    bool
		interval time.Duration
		count    int
		from     string
	)
	register(&command{
		name: "stats", args: "DEV", min: 1, max: 1,
		summary: "MAC and per-queue counters; rates with --watch",
		flags: func(fs *flag.FlagSet) func() error {
			fs.BoolVar(&watch, "watch", false, "sample every --interval and print rates until interrupted")
			fs.DurationVar(&interval, "interval", time.Second, "sampling `PERIOD` for --watch")
			fs.IntVar(&count, "count", 0, "with --watch, stop after `N` samples (0: until interrupted)")
			telemetryFlag(fs, &from)
			return func() error {
				if interval <= 0 {
					return badInput("--interval %s: give a positive duration such as 1s or 500ms", interval)
				}
				if count < 0 {
					return badInput("--count %d: give 0 (until interrupted) or more", count)
				}
				return nil
			}
		},
		run: func(e *env, a []string) (any, error) {
			if from != "" {
				return statsTelemetry(e, a[0], from, watch, interval, count)
			}
			return statsCmd(e, a[0], watch, interval, count)
		},
	})
}

// linkResult is a port's link state.
type linkResult struct {
	Dev string `json:"dev"`
	linkInfo
}

func (r *linkResult) text(w io.Writer) {
	fmt.Fprintf(w, "%s: %s\n", r.Dev, driver.Link{Up: r.Up, SpeedMbps: r.SpeedMbps, FullDuplex: r.FullDuplex})
}

func linkCmd(e *env, dev string) (any, error) {
	p, _, err := openPort(e, dev, driver.Config{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return &linkResult{Dev: dev, linkInfo: *linkOf(currentLink(p))}, nil
}

// queueCounters is one queue's counters in the stats output.
type queueCounters struct {
	Packets uint64            `json:"packets"`
	Bytes   uint64            `json:"bytes"`
	Drops   map[string]uint64 `json:"drops,omitempty"`
}

func countersOf(q driver.QueueStats) queueCounters {
	c := queueCounters{Packets: q.Packets, Bytes: q.Bytes}
	for i, n := range q.Drops {
		if n != 0 {
			if c.Drops == nil {
				c.Drops = map[string]uint64{}
			}
			c.Drops[driver.Cause(i).String()] = n
		}
	}
	return c
}

// statsResult is one sample of a port's counters; with --watch, Rates
// holds per-second rates since the previous sample.
type statsResult struct {
	Dev      string            `json:"dev"`
	Time     time.Time         `json:"time"`
	Rx       queueCounters     `json:"rx"`
	Tx       queueCounters     `json:"tx"`
	RxQueues []queueCounters   `json:"rx_queues"`
	TxQueues []queueCounters   `json:"tx_queues"`
	HW       map[string]uint64 `json:"hw"`
	Rates    map[string]uint64 `json:"rates,omitempty"`
	// Source names the process and socket the counters were read from
	// (--telemetry); empty when nicctl opened the port.
	Source string `json:"source,omitempty"`
}

func (r *statsResult) text(w io.Writer) {
	if r.Source != "" {
		fmt.Fprintf(w, "%s, read from %s\n", r.Dev, r.Source)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "queue\trx packets\trx bytes\trx drops\ttx packets\ttx bytes\ttx drops\t\n")
	row := func(name string, rx, tx queueCounters) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, rx.Packets, rx.Bytes, sum(rx.Drops), tx.Packets, tx.Bytes, sum(tx.Drops))
	}
	n := max(len(r.RxQueues), len(r.TxQueues))
	for i := 0; i < n; i++ {
		var rx, tx queueCounters
		if i < len(r.RxQueues) {
			rx = r.RxQueues[i]
		}
		if i < len(r.TxQueues) {
			tx = r.TxQueues[i]
		}
		row(fmt.Sprint(i), rx, tx)
	}
	row("total", r.Rx, r.Tx)
	tw.Flush()
	for _, d := range []struct {
		dir string
		m   map[string]uint64
	}{{"rx", r.Rx.Drops}, {"tx", r.Tx.Drops}} {
		for _, k := range sortedKeys(d.m) {
			fmt.Fprintf(w, "%s drops, %s: %d\n", d.dir, k, d.m[k])
		}
	}
	fmt.Fprintf(w, "device counters:\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, k := range sortedKeys(r.HW) {
		if r.Rates != nil {
			fmt.Fprintf(tw, "  %s\t%d\t%d/s\n", k, r.HW[k], r.Rates[k])
		} else {
			fmt.Fprintf(tw, "  %s\t%d\n", k, r.HW[k])
		}
	}
	tw.Flush()
}

func sum(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

func sortedKeys(m map[string]uint64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sample(dev string, p driver.Port, now time.Time) *statsResult {
	return sampleOf(dev, p.Stats(), now)
}

// sampleOf is the sample of counters s.
func sampleOf(dev string, s driver.PortStats, now time.Time) *statsResult {
	r := &statsResult{Dev: dev, Time: now, Rx: countersOf(s.Rx), Tx: countersOf(s.Tx), HW: s.HW,
		RxQueues: []queueCounters{}, TxQueues: []queueCounters{}}
	if r.HW == nil {
		r.HW = map[string]uint64{}
	}
	for _, q := range s.RxQueues {
		r.RxQueues = append(r.RxQueues, countersOf(q))
	}
	for _, q := range s.TxQueues {
		r.TxQueues = append(r.TxQueues, countersOf(q))
	}
	return r
}

// rates computes per-second rates of every counter between two samples
// (queue totals as rx_packets, rx_bytes, tx_packets, tx_bytes).
func rates(prev, cur *statsResult) map[string]uint64 {
	dt := cur.Time.Sub(prev.Time).Seconds()
	out := map[string]uint64{}
	per := func(a, b uint64) uint64 {
		if b < a || dt <= 0 {
			return 0 // a counter that went back (reset, 32-bit wrap handled by the driver)
		}
		return uint64(float64(b-a) / dt)
	}
	for k, v := range cur.HW {
		out[k] = per(prev.HW[k], v)
	}
	out["rx_packets"] = per(prev.Rx.Packets, cur.Rx.Packets)
	out["rx_bytes"] = per(prev.Rx.Bytes, cur.Rx.Bytes)
	out["tx_packets"] = per(prev.Tx.Packets, cur.Tx.Packets)
	out["tx_bytes"] = per(prev.Tx.Bytes, cur.Tx.Bytes)
	return out
}

// interrupted returns a channel closed on Ctrl-C or SIGTERM (or the
// test's interrupt), and a function to stop listening.
func (e *env) interrupted() (<-chan struct{}, func()) {
	if e.interrupt != nil {
		return e.interrupt, func() {}
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		select {
		case <-c:
			close(done)
		case <-stop:
		}
	}()
	return done, func() { signal.Stop(c); close(stop) }
}

func statsCmd(e *env, dev string, watch bool, interval time.Duration, count int) (any, error) {
	p, _, err := openPort(e, dev, driver.Config{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", dev, err)
	}
	return watchStats(e, watch, interval, count, func() (*statsResult, error) {
		return sample(dev, p, e.now()), nil
	})
}

// watchStats prints what read returns: once (returned, for the caller to
// print), or with watch every interval until count samples or an
// interrupt, each with its rates since the one before (one JSON object a
// line with --json, for jq and friends).
func watchStats(e *env, watch bool, interval time.Duration, count int, read func() (*statsResult, error)) (any, error) {
	prev, err := read()
	if err != nil {
		return nil, err
	}
	if !watch {
		return prev, nil
	}
	stop, release := e.interrupted()
	defer release()
	t := time.NewTicker(interval)
	defer t.Stop()
	for n := 0; count == 0 || n < count; n++ {
		select {
		case <-stop:
			return nil, nil
		case <-t.C:
		}
		cur, err := read()
		if err != nil {
			return nil, err
		}
		cur.Rates = rates(prev, cur)
		if e.json {
			b, err := json.Marshal(cur)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(e.stdout, "%s\n", b)
		} else {
			cur.text(e.stdout)
			fmt.Fprintln(e.stdout, strings.Repeat("-", 40))
		}
		prev = cur
	}
	return nil, nil
}

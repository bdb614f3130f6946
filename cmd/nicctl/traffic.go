package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim"
)

// burst is how many frames one RxBurst or TxBurst call moves.
const burst = 32

// fcsLen is the Ethernet FCS: part of --size (the wire size), not of the
// frames in memory nor of the bytes counted.
const fcsLen = 4

func init() {
	var (
		size, count int
		rate        string
	)
	register(&command{
		name: "pktgen", args: "DEV", min: 1, max: 1,
		summary: "transmit test frames: --size, --count, --rate",
		flags: func(fs *flag.FlagSet) func() error {
			fs.IntVar(&size, "size", 64, "frame size on the wire in `BYTES`, FCS included (64 to 9600)")
			fs.IntVar(&count, "count", 1000, "frames to send, `N` (0: until interrupted)")
			fs.StringVar(&rate, "rate", "max", "frames per second: max, or a number with k/M suffix (`RATE`, e.g. 100k)")
			return func() error {
				if size < 64 || size > 9600 {
					return badInput("--size %d: give 64 to 9600 bytes (the wire size, FCS included)", size)
				}
				if count < 0 {
					return badInput("--count %d: give 0 (until interrupted) or more", count)
				}
				if _, err := sim.ParseRate(rate); err != nil {
					return badInput("--rate %q: %v", rate, err)
				}
				return nil
			}
		},
		run: func(e *env, a []string) (any, error) {
			r, _ := sim.ParseRate(rate)
			return pktgenCmd(e, a[0], size, count, r)
		},
	})
	var (
		bsize    int
		duration time.Duration
		interval time.Duration
		to       string
	)
	register(&command{
		name: "bench", args: "DEV drop|tx|pass|redirect", min: 2, max: 2,
		summary: "receive and drop, bounce, pass or redirect, printing xdp-bench's columns (rx/s, err,drop/s, xmit/s)",
		flags: func(fs *flag.FlagSet) func() error {
			fs.IntVar(&bsize, "size", 64, "on sim, the generator's frame size in `BYTES`, FCS included")
			fs.DurationVar(&duration, "duration", 5*time.Second, "run for `D` (0: until interrupted)")
			fs.DurationVar(&interval, "interval", time.Second, "print a line every `PERIOD`")
			fs.StringVar(&to, "to", "", "redirect target `DEV2` (default on sim: a second model port with a counting sink)")
			return func() error {
				if bsize < 64 || bsize > 9600 {
					return badInput("--size %d: give 64 to 9600 bytes", bsize)
				}
				if duration < 0 || interval <= 0 {
					return badInput("--duration must be 0 or positive and --interval positive (got %s and %s)", duration, interval)
				}
				return nil
			}
		},
		run: func(e *env, a []string) (any, error) { return benchCmd(e, a[0], a[1], to, bsize, duration, interval) },
	})
}

// pktgenResult is what pktgen sent.
type pktgenResult struct {
	Dev  string `json:"dev"`
	Size int    `json:"size"`
	Sent uint64 `json:"sent"`
	// Bytes counts the frames sent without their FCS, as Linux's
	// rtnl_link_stats64 tx_bytes (ip -s link, ethtool) and gopmd's
	// drivers count them: 1000 frames of --size 64 are 60 000 bytes.
	Bytes   uint64  `json:"bytes"`
	Refused uint64  `json:"refused"` // TxBurst took fewer than offered (ring full)
	Seconds float64 `json:"seconds"`
	PPS     float64 `json:"pps"`
	Mbps    float64 `json:"mbps"` // Bytes per second in Mb/s (no FCS, preamble or gap)
	// DriverBytes is the driver's count of the bytes sent (the port's TX
	// queues), which l2fwd and nicctl stats show: the same as Bytes.
	DriverBytes uint64 `json:"driver_bytes"`
	// Delivered and DeliveredBytes are what the sim port's counting sink
	// saw (sink=1).
	Delivered      *uint64 `json:"delivered,omitempty"`
	DeliveredBytes *uint64 `json:"delivered_bytes,omitempty"`
}

func (r *pktgenResult) text(w io.Writer) {
	fmt.Fprintf(w, "%s: sent %d frames of %d bytes on the wire (%d bytes without FCS, as ip -s link counts them) in %.3fs: %s pps, %.1f Mb/s of frame bytes; %d offers refused (TX ring full)\n",
		r.Dev, r.Sent, r.Size, r.Bytes, r.Seconds, commas(uint64(r.PPS)), r.Mbps, r.Refused)
	if r.Delivered != nil {
		fmt.Fprintf(w, "sink: %d frames (%d bytes) arrived\n", *r.Delivered, *r.DeliveredBytes)
	}
}

// commas formats n with thousands separators, as xdp-bench does.
func commas(n uint64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func pktgenCmd(e *env, dev string, size, count int, rate float64) (any, error) {
	p, sp, err := openPort(e, dev, driver.Config{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if max := p.Info().MTU + 18; size-4 > max {
		return nil, badInput("--size %d: frames of more than %d bytes need a larger MTU (the port has %d)", size, max+4, p.Info().MTU)
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", dev, err)
	}
	if l := currentLink(p); !l.Up {
		return nil, fmt.Errorf("%s: link is down: frames cannot leave (check nicctl link %s and nicctl phy %s)", dev, dev, dev)
	}
	stop, release := e.interrupted()
	defer release()
	pl, tx := p.RxQueue(0).Pool(), p.TxQueue(0)
	frame := testFrame(size-fcsLen, p.MAC(), 0)
	r := &pktgenResult{Dev: dev, Size: size}
	pkts := make([]*driver.Packet, burst)
	begin := time.Now()
loop:
	for count == 0 || r.Sent < uint64(count) {
		select {
		case <-stop:
			break loop
		default:
		}
		n := burst
		if count > 0 {
			n = min(n, count-int(r.Sent))
		}
		if rate > 0 {
			// Pace: send only what the rate allows by now.
			due := uint64(time.Since(begin).Seconds()*rate) + 1
			if due <= r.Sent {
				time.Sleep(time.Duration(float64(time.Second) / rate))
				continue
			}
			n = min(n, int(due-r.Sent))
		}
		got := pl.AllocBulk(pkts[:n])
		for _, pk := range pkts[:got] {
			if err := fill(pk, frame); err != nil {
				return nil, err
			}
		}
		sent := tx.TxBurst(pkts[:got])
		for _, pk := range pkts[sent:got] {
			pk.Free()
		}
		if sent < n {
			r.Refused++
			tx.Reclaim()
		}
		r.Sent += uint64(sent)
	}
	for i := 0; i < 1000 && tx.Pending() > 0; i++ {
		tx.Reclaim()
		time.Sleep(100 * time.Microsecond)
	}
	r.Seconds = time.Since(begin).Seconds()
	r.Bytes = r.Sent * uint64(size-fcsLen)
	if r.Seconds > 0 {
		r.PPS = float64(r.Sent) / r.Seconds
		r.Mbps = float64(r.Bytes*8) / r.Seconds / 1e6
	}
	r.DriverBytes = p.Stats().Tx.Bytes
	if s := sim.SinkOf(sp.Name); s != nil {
		st := s.Stats()
		r.Delivered, r.DeliveredBytes = &st.Frames, &st.Bytes
	}
	return r, nil
}

// benchSample is one xdp-bench line.
type benchSample struct {
	Seconds   float64 `json:"seconds"`
	RxPPS     uint64  `json:"rx_pps"`
	ErrDropPS uint64  `json:"err_drop_pps"`
	XmitPPS   uint64  `json:"xmit_pps"`
}

// benchResult is a whole bench run.
type benchResult struct {
	Dev     string        `json:"dev"`
	Mode    string        `json:"mode"`
	Target  string        `json:"target,omitempty"`
	Driver  string        `json:"driver"`
	Seconds float64       `json:"seconds"`
	Rx      uint64        `json:"rx"`
	ErrDrop uint64        `json:"err_drop"`
	Xmit    uint64        `json:"xmit"`
	Samples []benchSample `json:"samples"`
	Summary benchSample   `json:"summary"`
}

// text prints the summary line; the per-interval lines went out as the
// run went.
func (r *benchResult) text(w io.Writer) { fmt.Fprintln(w, benchLine("Summary", r.Mode, r.Summary)) }

// benchLine formats a line with xdp-bench's columns: rx/s and err,drop/s,
// and xmit/s for the modes that transmit.
func benchLine(label, mode string, s benchSample) string {
	l := fmt.Sprintf("%-10s %15s rx/s %15s err,drop/s", label, commas(s.RxPPS), commas(s.ErrDropPS))
	if mode == "tx" || mode == "redirect" {
		l += fmt.Sprintf(" %15s xmit/s", commas(s.XmitPPS))
	}
	return l
}

var benchVerbs = map[string]string{"drop": "Dropping", "pass": "Passing", "tx": "Hairpinning (XDP_TX)", "redirect": "Redirecting"}

// simFed adds the built-in generator to a sim spec that has no traffic
// source, so bench has frames to work on.
func simFed(sp driver.Spec, size int) string {
	for _, k := range []string{"gen", "peer", "pcap-in", "afpacket"} {
		if sp.Options.Has(k) {
			return sp.Raw
		}
	}
	s := withOption(sp, "gen", "1")
	sp2, _ := driver.ParseSpec(s)
	s = withOption(sp2, "gen-size", fmt.Sprint(size))
	if !sp.Options.Has("mode") {
		sp3, _ := driver.ParseSpec(s)
		s = withOption(sp3, "mode", "engine")
	}
	return s
}

func benchCmd(e *env, dev, mode, to string, size int, duration, interval time.Duration) (any, error) {
	act, err := driver.ParseAction(mode)
	if err != nil {
		return nil, badInput("unknown bench mode %q: use drop, tx, pass or redirect", mode)
	}
	sp, err := parseDev(dev)
	if err != nil {
		return nil, err
	}
	open := dev
	if sp.Scheme == "sim" {
		open = simFed(sp, size)
	}
	if act == driver.Redirect && to == "" {
		if sp.Scheme != "sim" {
			return nil, badInput("bench redirect needs --to DEV2, the port to send the frames out of")
		}
		kind := strings.TrimRight(sp.Name, "0123456789")
		to = fmt.Sprintf("sim:%s%d?sink=1", kind, 200)
	}
	p, _, err := openPort(e, open, driver.Config{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out := p
	if act == driver.Redirect {
		if out, _, err = openPort(e, to, driver.Config{}); err != nil {
			return nil, fmt.Errorf("--to: %w", err)
		}
		defer out.Close()
		if err := out.Start(); err != nil {
			return nil, fmt.Errorf("%s: start: %w", to, err)
		}
	} else if to != "" {
		return nil, badInput("--to is for bench redirect only")
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", dev, err)
	}
	r := &benchResult{Dev: dev, Mode: mode, Driver: p.Info().Driver, Samples: []benchSample{}}
	if act == driver.Redirect {
		r.Target = to
	}
	if !e.json {
		fmt.Fprintf(e.stdout, "%s packets on %s (driver %s)", benchVerbs[mode], dev, r.Driver)
		if r.Target != "" {
			fmt.Fprintf(e.stdout, " to %s", r.Target)
		}
		fmt.Fprintln(e.stdout)
	}
	stop, release := e.interrupted()
	defer release()
	rxq, txq := p.RxQueue(0), out.TxQueue(0)
	pkts := make([]*driver.Packet, burst)
	// Every reading of the clock goes through e.now: the interval lines
	// and the run's end follow it, so a test's clock decides how many
	// lines a run prints, however loaded the machine.
	begin := e.now()
	next := begin.Add(interval)
	var last struct{ rx, drop, xmit uint64 }
	lastT := begin
	var sink byte
	rxDrops := func() uint64 { return p.Stats().Rx.TotalDrops() }
	drops0 := rxDrops()
	for {
		now := e.now()
		if duration > 0 && now.Sub(begin) >= duration {
			break
		}
		select {
		case <-stop:
			duration = now.Sub(begin)
		default:
		}
		if !now.Before(next) {
			r.ErrDrop += rxDrops() - drops0
			drops0 = rxDrops()
			dt := now.Sub(lastT).Seconds()
			s := benchSample{Seconds: now.Sub(begin).Seconds(),
				RxPPS: uint64(float64(r.Rx-last.rx) / dt), ErrDropPS: uint64(float64(r.ErrDrop-last.drop) / dt), XmitPPS: uint64(float64(r.Xmit-last.xmit) / dt)}
			r.Samples = append(r.Samples, s)
			if !e.json {
				fmt.Fprintln(e.stdout, benchLine(dev, mode, s))
			}
			last.rx, last.drop, last.xmit, lastT = r.Rx, r.ErrDrop, r.Xmit, now
			next = next.Add(interval)
		}
		n := rxq.RxBurst(pkts)
		if n == 0 {
			txq.Reclaim()
			continue
		}
		r.Rx += uint64(n)
		switch act {
		case driver.Drop:
			for _, pk := range pkts[:n] {
				rxq.Pool().Recycle(pk)
			}
		case driver.Pass:
			for _, pk := range pkts[:n] {
				sink ^= pk.Data()[0] // the application reads the frame
				pk.Free()
			}
		case driver.Tx, driver.Redirect:
			sent := txq.TxBurst(pkts[:n])
			r.Xmit += uint64(sent)
			for _, pk := range pkts[sent:n] {
				pk.Free()
				r.ErrDrop++
			}
		}
	}
	_ = sink
	r.ErrDrop += rxDrops() - drops0
	r.Seconds = e.now().Sub(begin).Seconds()
	if r.Seconds > 0 {
		r.Summary = benchSample{Seconds: r.Seconds, RxPPS: uint64(float64(r.Rx) / r.Seconds),
			ErrDropPS: uint64(float64(r.ErrDrop) / r.Seconds), XmitPPS: uint64(float64(r.Xmit) / r.Seconds)}
	}
	return r, nil
}

package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim"
)

// portSnap is one port's counters at one moment.
type portSnap struct {
	stats           driver.PortStats
	handled         uint64 // frames the forwarder handed to TX or consumed
	hBytes          uint64
	txRefused       uint64
	noBounce        uint64
	poolUse         int // buffers out of the RX pools (approximate)
	poolSize        int
	ipv4, ipv6, arp uint64
}

// snapshot reads every port's counters and the lanes' own.
func (a *app) snapshot() []portSnap {
	s := make([]portSnap, len(a.ports))
	for i, p := range a.ports {
		s[i].stats = p.Stats()
		info := p.Info()
		for q := 0; q < info.RxQueues; q++ {
			pl := p.RxQueue(q).Pool()
			if pl == nil {
				continue
			}
			st := pl.Stats()
			out := int64(st.AllocFast+st.AllocSlow) - int64(st.RecycleCached+st.RecycleCacheFull+st.RecycleRing)
			if out < 0 {
				out = 0
			}
			s[i].poolUse += int(out)
			s[i].poolSize += pl.Count()
		}
	}
	for _, l := range a.lanes {
		ps := &s[l.rxPort]
		ps.handled += l.handled.Load()
		ps.hBytes += l.handledBytes.Load()
		ps.txRefused += l.txRefused.Load()
		ps.noBounce += l.bounceShort.Load()
		ps.ipv4 += l.ipv4.Load()
		ps.ipv6 += l.ipv6.Load()
		ps.arp += l.arp.Load()
	}
	return s
}

func (a *app) printTableHeader() {
	if a.o.statsInterval == 0 {
		return
	}
	fmt.Fprintf(a.table, "l2fwd: %d ports, mode %s, burst %d, %d queue(s) per port, %d worker(s) for %d RX queue(s), MAC updating %v; Mbps count frame bytes (no FCS, preamble or gap)\n",
		len(a.ports), a.o.mode, a.o.burst, a.o.queues, len(a.workers()), len(a.lanes), a.o.macUpdating && a.o.mode == modeFwd)
}

func rate(d uint64, dt time.Duration) float64 {
	if dt <= 0 {
		return 0
	}
	return float64(d) / dt.Seconds()
}

// dropText lists the non-zero drop causes of a QueueStats delta.
func dropText(cur, prev driver.QueueStats) string {
	var parts []string
	for c := driver.Cause(0); c < driver.NumCauses; c++ {
		if d := cur.Drops[c] - prev.Drops[c]; d != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", c, d))
		}
	}
	return strings.Join(parts, ",")
}

// printTable prints one interval: per port rx/tx pps and Mbps (frame bytes,
// without preamble and gap), drops by cause, and pool use.
func (a *app) printTable(prev, cur []portSnap, dt time.Duration) {
	w := a.table
	fmt.Fprintf(w, "%-4s %12s %9s %12s %9s %10s %11s  %s\n", "port", "rx pps", "rx Mbps", "tx pps", "tx Mbps", "refused/s", "pool use", "drops (this interval)")
	var trx, ttx float64
	for i := range cur {
		c, p := cur[i], prev[i]
		rxp := rate(c.stats.Rx.Packets-p.stats.Rx.Packets, dt)
		rxb := rate(c.stats.Rx.Bytes-p.stats.Rx.Bytes, dt) * 8 / 1e6
		txp := rate(c.stats.Tx.Packets-p.stats.Tx.Packets, dt)
		txb := rate(c.stats.Tx.Bytes-p.stats.Tx.Bytes, dt) * 8 / 1e6
		ref := rate(c.txRefused-p.txRefused, dt)
		trx += rxp
		ttx += txp
		drops := []string{}
		if d := dropText(c.stats.Rx, p.stats.Rx); d != "" {
			drops = append(drops, "rx:"+d)
		}
		if d := dropText(c.stats.Tx, p.stats.Tx); d != "" {
			drops = append(drops, "tx:"+d)
		}
		fmt.Fprintf(w, "%-4d %12.0f %9.1f %12.0f %9.1f %10.0f %5d/%-5d  %s\n", i, rxp, rxb, txp, txb, ref, c.poolUse, c.poolSize, strings.Join(drops, " "))
	}
	fmt.Fprintf(w, "%-4s %12.0f %9s %12.0f\n", "all", trx, "", ttx)
}

// queueJSON is a QueueStats in the summary.
type queueJSON struct {
	Packets uint64            `json:"packets"`
	Bytes   uint64            `json:"bytes"`
	Drops   map[string]uint64 `json:"drops"`
}

func queueOut(q driver.QueueStats) queueJSON {
	j := queueJSON{Packets: q.Packets, Bytes: q.Bytes, Drops: map[string]uint64{}}
	for c := driver.Cause(0); c < driver.NumCauses; c++ {
		if q.Drops[c] != 0 {
			j.Drops[c.String()] = q.Drops[c]
		}
	}
	return j
}

// portJSON is one port in the summary.
type portJSON struct {
	Port   int       `json:"port"`
	Spec   string    `json:"spec"`
	MAC    string    `json:"mac"`
	TxPort int       `json:"tx_port"`
	Rx     queueJSON `json:"rx"`
	Tx     queueJSON `json:"tx"`
	// Handled: frames the forwarder sent on (fwd, tx) or consumed (drop, pass).
	Handled      uint64 `json:"handled"`
	HandledBytes uint64 `json:"handled_bytes"`
	TxRefused    uint64 `json:"tx_refused"`
	// NoBounce: frames dropped for want of a bounce buffer (ports in two
	// DMA domains only).
	NoBounce  uint64              `json:"no_bounce,omitempty"`
	Copied    bool                `json:"copied,omitempty"`
	Pass      map[string]uint64   `json:"pass,omitempty"`
	Generator *sim.GeneratorStats `json:"generator,omitempty"`
	Sink      *sim.SinkStats      `json:"sink,omitempty"`
	AFPacket  *sim.AFPacketStats  `json:"afpacket,omitempty"`
	// Cable: the direction this port transmits into (sim cables only).
	Cable *sim.CableStats `json:"cable,omitempty"`
}

// summaryJSON is the final summary (--json prints it as one object).
type summaryJSON struct {
	Mode        string     `json:"mode"`
	Burst       int        `json:"burst"`
	Queues      int        `json:"queues"`
	Workers     int        `json:"workers"`
	MACUpdating bool       `json:"mac_updating"`
	Seconds     float64    `json:"seconds"`
	Ports       []portJSON `json:"ports"`
	// Packets is the total handled; Mpps its rate over the run.
	Packets uint64  `json:"packets"`
	Bytes   uint64  `json:"bytes"`
	Mpps    float64 `json:"mpps"`
	Dropped uint64  `json:"dropped"`
	Capture *struct {
		File     string `json:"file"`
		Frames   uint64 `json:"frames"`
		Overflow uint64 `json:"overflow"`
	} `json:"capture,omitempty"`
	LeakCheck struct {
		OK    bool     `json:"ok"`
		Leaks []string `json:"leaks"`
	} `json:"leak_check"`
	Errors []string `json:"errors"`
}

func (a *app) summary(final []portSnap, leaks []string, errs []error) summaryJSON {
	s := summaryJSON{Mode: a.o.mode.String(), Burst: a.o.burst, Queues: a.o.queues,
		Workers: len(a.workers()), MACUpdating: a.o.macUpdating && a.o.mode == modeFwd,
		Seconds: a.end.Sub(a.start).Seconds(), Errors: []string{}}
	txOf := map[int]int{}
	for _, l := range a.lanes {
		txOf[l.rxPort] = l.txPort
	}
	for i, f := range final {
		pj := portJSON{Port: i, Spec: a.specs[i], TxPort: txOf[i], Rx: queueOut(f.stats.Rx), Tx: queueOut(f.stats.Tx),
			Handled: f.handled, HandledBytes: f.hBytes, TxRefused: f.txRefused, NoBounce: f.noBounce}
		for _, l := range a.lanes {
			if l.rxPort == i && l.bounce != nil {
				pj.Copied = true
			}
		}
		if i < len(a.macs) {
			pj.MAC = a.macs[i]
		}
		if a.o.mode == modePass {
			pj.Pass = map[string]uint64{"ipv4": f.ipv4, "ipv6": f.ipv6, "arp": f.arp}
		}
		if i < len(a.gens) && a.gens[i] != nil {
			st := a.gens[i].Stats()
			pj.Generator = &st
		}
		if i < len(a.afps) && a.afps[i] != nil {
			st := a.afps[i].Stats()
			pj.AFPacket = &st
			s.Dropped += st.RxDropped + st.RxTooBig + st.KernelDrops + st.TxErrors
		}
		if i < len(a.cables) && a.cables[i] != nil {
			ab, ba := a.cables[i].Stats()
			if x, _ := a.cables[i].Ends(); x != trimSim(a.specs[i]) {
				ab = ba
			}
			pj.Cable = &ab
			s.Dropped += ab.Unplugged + ab.Full + ab.TooBig
		}
		if i < len(a.sinks) && a.sinks[i] != nil {
			st := a.sinks[i].Stats()
			pj.Sink = &st
		}
		s.Ports = append(s.Ports, pj)
		s.Packets += f.handled
		s.Bytes += f.hBytes
		s.Dropped += f.txRefused + f.noBounce + f.stats.Rx.TotalDrops() + f.stats.Tx.TotalDrops()
	}
	if s.Seconds > 0 {
		s.Mpps = float64(s.Packets) / s.Seconds / 1e6
	}
	if a.cap != nil {
		s.Capture = &struct {
			File     string `json:"file"`
			Frames   uint64 `json:"frames"`
			Overflow uint64 `json:"overflow"`
		}{a.o.capture, a.cap.w.Frames(), a.cap.overflow()}
	}
	s.LeakCheck.OK = len(leaks) == 0
	s.LeakCheck.Leaks = append([]string{}, leaks...)
	for _, e := range errs {
		s.Errors = append(s.Errors, oneLine(e.Error()))
	}
	return s
}

func (a *app) printJSON(s summaryJSON) {
	b, err := json.Marshal(s)
	if err != nil { // cannot happen with these types
		b = []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	fmt.Fprintf(a.stdout, "%s\n", b)
}

func (a *app) printSummary(s summaryJSON) {
	w := a.stdout
	fmt.Fprintf(w, "\nsummary: mode %s, burst %d, %.2f s, %d frames handled (%.3f Mpps), %d dropped\n", s.Mode, s.Burst, s.Seconds, s.Packets, s.Mpps, s.Dropped)
	for _, p := range s.Ports {
		fmt.Fprintf(w, "port %d %s\n", p.Port, p.Spec)
		fmt.Fprintf(w, "  rx %d frames %d bytes, drops %s\n", p.Rx.Packets, p.Rx.Bytes, dropsText(p.Rx.Drops))
		fmt.Fprintf(w, "  tx %d frames %d bytes, drops %s\n", p.Tx.Packets, p.Tx.Bytes, dropsText(p.Tx.Drops))
		fmt.Fprintf(w, "  handled %d frames (to port %d), refused by TX %d\n", p.Handled, p.TxPort, p.TxRefused)
		if p.Copied {
			fmt.Fprintf(w, "  copied into port %d's DMA domain (the devices share no IOMMU domain); %d dropped for want of a bounce buffer\n", p.TxPort, p.NoBounce)
		}
		if p.Generator != nil {
			fmt.Fprintf(w, "  generator sent %d frames\n", p.Generator.Frames)
		}
		if p.Sink != nil {
			fmt.Fprintf(w, "  sink got %d frames: lost %d, duplicated %d, reordered %d, unstamped %d\n", p.Sink.Frames, p.Sink.Lost, p.Sink.Duplicates, p.Sink.Reordered, p.Sink.Other)
		}
		if x := p.AFPacket; x != nil {
			fmt.Fprintf(w, "  afpacket: %d frames in, %d out; lost: %d in the kernel (socket buffer full), %d queue full, %d too big, %d send errors\n",
				x.RxFrames, x.TxFrames, x.KernelDrops, x.RxDropped, x.RxTooBig, x.TxErrors)
		}
		if c := p.Cable; c != nil {
			fmt.Fprintf(w, "  cable out: %d frames carried; lost: %d ring full, %d too big, %d peer not open\n", c.Frames, c.Full, c.TooBig, c.Unplugged)
		}
		if p.Pass != nil {
			fmt.Fprintf(w, "  application saw ipv4 %d, ipv6 %d, arp %d\n", p.Pass["ipv4"], p.Pass["ipv6"], p.Pass["arp"])
		}
	}
	if s.Capture != nil {
		fmt.Fprintf(w, "capture %s: %d frames written, %d copies dropped (ring full)\n", s.Capture.File, s.Capture.Frames, s.Capture.Overflow)
	}
	if s.LeakCheck.OK {
		fmt.Fprintln(w, "leak check: every buffer came back")
	} else {
		fmt.Fprintf(w, "leak check: FAILED (%d pools)\n", len(s.LeakCheck.Leaks))
	}
}

func dropsText(m map[string]uint64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

// trimSim is a sim spec's device name ("sim:enetc0?x=1" -> "enetc0").
func trimSim(spec string) string {
	s, err := driver.ParseSpec(spec)
	if err != nil {
		return ""
	}
	return s.Name
}

package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/tap"
)

// portSnap is one port's counters at one moment.
type portSnap struct {
	stats           driver.PortStats
	handled         uint64 // frames the forwarder handed to TX or consumed
	toTx            uint64 // frames the lanes handed to this port's TX (fwd, tx)
	hBytes          uint64
	txRefused       uint64 // frames this port received that their TX port refused
	outRefused      uint64 // frames this port's TX refused (from any RX port)
	noBounce        uint64
	wire            []loss // losses around this port (simport.go)
	poolUse         int    // buffers out of the RX pools (approximate)
	poolSize        int
	ipv4, ipv6, arp uint64
	tap             tap.Stats // --tap: the port's twin
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
		r := l.txRefused.Load()
		ps.txRefused += r
		if l.txPort >= 0 {
			s[l.txPort].outRefused += r
			if a.o.mode == modeFwd || a.o.mode == modeTx {
				s[l.txPort].toTx += l.handled.Load() // what its TX queue took
			}
		}
		ps.noBounce += l.bounceShort.Load()
		ps.ipv4 += l.ipv4.Load()
		ps.ipv6 += l.ipv6.Load()
		ps.arp += l.arp.Load()
	}
	for i := range s {
		if i < len(a.around) {
			s[i].wire = a.around[i].losses()
		}
		if i < len(a.twins) {
			s[i].tap = a.twins[i].Stats()
		}
	}
	return s
}

// drops is every frame lost at or through port p, by cause: the driver's
// counters, TX refusals of this port, bounce shortages of frames it
// received, and the losses around it (simulated wires).
func (p portSnap) drops() []loss {
	var d []loss
	for c := driver.Cause(0); c < driver.NumCauses; c++ {
		d = append(d, loss{"rx:" + c.String(), p.stats.Rx.Drops[c]})
	}
	for c := driver.Cause(0); c < driver.NumCauses; c++ {
		d = append(d, loss{"tx:" + c.String(), p.stats.Tx.Drops[c]})
	}
	d = append(d, loss{"tx:refused", p.outRefused}, loss{"no_bounce", p.noBounce})
	d = append(d, tapDrops(p.tap)...)
	return append(d, p.wire...)
}

// dropDelta lists the causes that grew from prev to cur, and their sum.
func dropDelta(prev, cur portSnap) (string, uint64) {
	pd, cd := prev.drops(), cur.drops()
	var parts []string
	var sum uint64
	for i := range cd {
		if i < len(pd) && cd[i].n != pd[i].n {
			v := cd[i].n - pd[i].n
			sum += v
			parts = append(parts, fmt.Sprintf("%s=%d", cd[i].name, v))
		}
	}
	return strings.Join(parts, " "), sum
}

// tableWidth is the widest line l2fwd's header lines take: they wrap at
// word boundaries to fit a terminal of 100 columns.
const tableWidth = 100

// headerEvery is how many table rows may pass before the column header
// is printed again (it is printed with the first table, then once every
// headerEvery rows or more, at the start of a table).
const headerEvery = 20

// columnHeader is the stats table's column header.
var columnHeader = fmt.Sprintf("%-4s %11s %9s %11s %9s %11s %10s  %s", "port", "rx pps", "rx Mbps", "tx pps", "tx Mbps", "pool use", "dropped/s", "drops by cause")

// printTableHeader says once, before the first table, what runs and what
// the table's columns and causes mean.
func (a *app) printTableHeader() {
	if a.o.statsInterval == 0 {
		return
	}
	for _, para := range []string{
		fmt.Sprintf("%d ports, mode %s, burst %d, %d queue(s) per port, MAC updating %v.",
			len(a.ports), a.o.mode, a.o.burst, a.o.queues, a.o.macUpdating && a.o.mode == modeFwd),
		a.workerNote() + ".",
		"Rates are per second over each interval; Mbps count frame bytes (no FCS, preamble or gap). " +
			"Drops by cause: rx: and tx: the driver's counters; tx:refused the TX queue did not take them " +
			"(its ring was full, or the port was stopping); no_bounce; cable: and afpacket: the simulated wires; tap: the " +
			"exception path (--tap).",
	} {
		for _, l := range wrap(para, "l2fwd: ", "       ", tableWidth) {
			fmt.Fprintln(a.table, l)
		}
	}
}

// wrap breaks text at spaces into lines of at most width bytes, the first
// starting with first and the others with rest; a word longer than a line
// stands on a line of its own.
func wrap(text, first, rest string, width int) []string {
	var lines []string
	line := first
	empty := true
	for _, w := range strings.Fields(text) {
		if !empty && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	return append(lines, line)
}

func rate(d uint64, dt time.Duration) float64 {
	if dt <= 0 {
		return 0
	}
	return float64(d) / dt.Seconds()
}

// printTable prints one interval, as DPDK's l2fwd does once per period:
// per port rx/tx pps and Mbps (frame bytes, without preamble and gap),
// pool use, drops by cause; then the totals since the start.
func (a *app) printTable(prev, cur []portSnap, dt time.Duration) {
	w := a.table
	if a.tableRows == 0 || a.tableRows >= headerEvery {
		fmt.Fprintln(w, columnHeader)
		a.tableRows = 0
	}
	a.tableRows += len(cur) + 1 + len(a.tapNames)
	var trx, ttx, trxb, ttxb, tdrop float64
	var totRx, totTx, totDrop uint64
	for i := range cur {
		c, p := cur[i], prev[i]
		rxp := rate(c.stats.Rx.Packets-p.stats.Rx.Packets, dt)
		rxb := rate(c.stats.Rx.Bytes-p.stats.Rx.Bytes, dt) * 8 / 1e6
		txp := rate(c.stats.Tx.Packets-p.stats.Tx.Packets, dt)
		txb := rate(c.stats.Tx.Bytes-p.stats.Tx.Bytes, dt) * 8 / 1e6
		causes, nd := dropDelta(p, c)
		dr := rate(nd, dt)
		trx, ttx, trxb, ttxb, tdrop = trx+rxp, ttx+txp, trxb+rxb, ttxb+txb, tdrop+dr
		totRx += c.stats.Rx.Packets
		totTx += c.stats.Tx.Packets
		for _, d := range c.drops() {
			totDrop += d.n
		}
		use := fmt.Sprintf("%d/%d", c.poolUse, c.poolSize)
		fmt.Fprintf(w, "%-4d %11.0f %9.1f %11.0f %9.1f %11s %10.0f  %s\n", i, rxp, rxb, txp, txb, use, dr, causes)
		a.printTapRow(i, p, c, dt)
	}
	fmt.Fprintf(w, "%-4s %11.0f %9.1f %11.0f %9.1f %11s %10.0f  since start: rx %d, tx %d, dropped %d\n", "all", trx, trxb, ttx, ttxb, "", tdrop, totRx, totTx, totDrop)
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
	// TxRefused: frames of this port's that the TX port did not take
	// (its ring was full, or the port was stopping): freed, not retried.
	TxRefused uint64 `json:"tx_refused"`
	// NoBounce: frames dropped for want of a bounce buffer (ports in two
	// DMA domains only).
	NoBounce uint64            `json:"no_bounce,omitempty"`
	Copied   bool              `json:"copied,omitempty"`
	Pass     map[string]uint64 `json:"pass,omitempty"`
	// The port's simulated wires, when it has some (simport.go).
	wiringJSON
	// Tap: the port's TAP twin (--tap).
	Tap *tapJSON `json:"tap,omitempty"`
}

// summaryJSON is the final summary (--json prints it as one object).
type summaryJSON struct {
	Mode    string `json:"mode"`
	Burst   int    `json:"burst"`
	Queues  int    `json:"queues"`
	Workers int    `json:"workers"`
	// RxMode is --rx-mode; Sleeps counts the adaptive workers' sleeps on
	// an RX interrupt. WorkerCPU is the CPU time the worker threads used
	// (getrusage RUSAGE_THREAD), ProcessCPU the whole process's over the
	// same run (simulated devices' engines included), both in seconds.
	RxMode      string     `json:"rx_mode"`
	Sleeps      uint64     `json:"sleeps"`
	WorkerCPU   float64    `json:"worker_cpu_seconds"`
	ProcessCPU  float64    `json:"process_cpu_seconds"`
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
	// Accounting: per port, whether every frame is received or counted
	// by cause (see balance).
	Accounting struct {
		OK         bool     `json:"ok"`
		Unbalanced []string `json:"unbalanced"`
	} `json:"accounting"`
	LeakCheck struct {
		OK    bool     `json:"ok"`
		Leaks []string `json:"leaks"`
	} `json:"leak_check"`
	Errors []string `json:"errors"`
}

func (a *app) summary(final []portSnap, leaks []string, errs []error) summaryJSON {
	s := summaryJSON{Mode: a.o.mode.String(), Burst: a.o.burst, Queues: a.o.queues,
		Workers: a.nWorkers, MACUpdating: a.o.macUpdating && a.o.mode == modeFwd,
		Seconds: a.end.Sub(a.start).Seconds(), Errors: []string{}, RxMode: a.o.rxMode,
		ProcessCPU: float64(a.processCPU) / 1e9}
	for _, w := range a.ws {
		s.Sleeps += w.sleeps.Load()
		if c := w.cpu.Load(); c > 0 {
			s.WorkerCPU += float64(c) / 1e9
		}
	}
	txOf := map[int]int{}
	for _, l := range a.lanes {
		txOf[l.rxPort] = l.txPort
	}
	for i, f := range final {
		pj := portJSON{Port: i, Spec: a.specs[i], TxPort: txOf[i], Rx: queueOut(f.stats.Rx), Tx: queueOut(f.stats.Tx),
			Handled: f.handled, HandledBytes: f.hBytes, TxRefused: f.txRefused,
			NoBounce: f.noBounce}
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
		if i < len(a.around) {
			a.around[i].report(&pj)
		}
		if i < len(a.tapNames) {
			pj.Tap = tapOut(a.tapNames[i], f.tap)
		}
		s.Ports = append(s.Ports, pj)
		s.Packets += f.handled
		s.Bytes += f.hBytes
		for _, d := range f.drops() {
			s.Dropped += d.n
		}
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
	s.Accounting.Unbalanced = append([]string{}, a.balance(final)...)
	s.Accounting.OK = len(s.Accounting.Unbalanced) == 0
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
	if s.RxMode == rxModeAdaptive && s.Seconds > 0 {
		fmt.Fprintf(w, "rx-mode adaptive: %d sleeps on RX interrupts; workers used %.3f s of CPU (%.1f%% of a core), the process %.3f s\n",
			s.Sleeps, s.WorkerCPU, 100*s.WorkerCPU/s.Seconds, s.ProcessCPU)
	}
	for _, p := range s.Ports {
		fmt.Fprintf(w, "port %d %s\n", p.Port, p.Spec)
		fmt.Fprintf(w, "  rx %d frames %d bytes, drops %s\n", p.Rx.Packets, p.Rx.Bytes, dropsText(p.Rx.Drops))
		fmt.Fprintf(w, "  tx %d frames %d bytes, drops %s\n", p.Tx.Packets, p.Tx.Bytes, dropsText(p.Tx.Drops))
		switch {
		case p.TxPort < 0:
			fmt.Fprintf(w, "  handled %d frames\n", p.Handled)
		case p.TxRefused == 0:
			fmt.Fprintf(w, "  handled %d frames (to port %d), none refused by its TX\n", p.Handled, p.TxPort)
		default:
			fmt.Fprintf(w, "  handled %d frames (to port %d); port %d's TX refused %d more (its ring full, or the port stopping)\n",
				p.Handled, p.TxPort, p.TxPort, p.TxRefused)
		}
		if p.Copied {
			fmt.Fprintf(w, "  copied into port %d's DMA domain (the devices share no IOMMU domain); %d dropped for want of a bounce buffer\n", p.TxPort, p.NoBounce)
		}
		for _, l := range wiringLines(p) {
			fmt.Fprintf(w, "  %s\n", l)
		}
		if x := p.Tap; x != nil {
			if x.Gone {
				fmt.Fprintf(w, "  tap %s: GONE: the interface was deleted while l2fwd ran; frames for the host since then are drops up_gone\n", x.Name)
			}
			fmt.Fprintf(w, "  tap %s: %d frames up (%d of them copies of forwarded broadcasts), %d taken from forwarding; %d down; drops %s; %d reads put off for want of a buffer\n",
				x.Name, x.Up, x.UpCopies, x.Taken, x.Down, dropsText(x.Drops), x.DownNoBuffer)
		}
		if p.Pass != nil {
			fmt.Fprintf(w, "  application saw ipv4 %d, ipv6 %d, arp %d\n", p.Pass["ipv4"], p.Pass["ipv6"], p.Pass["arp"])
		}
	}
	if s.Capture != nil {
		fmt.Fprintf(w, "capture %s: %d frames written, %d copies dropped (ring full)\n", s.Capture.File, s.Capture.Frames, s.Capture.Overflow)
	}
	if s.Accounting.OK {
		fmt.Fprintln(w, "accounting: every frame of every port was received or counted by cause")
	} else {
		fmt.Fprintf(w, "accounting: FAILED (%d)\n", len(s.Accounting.Unbalanced))
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

// rxLost is the frames a port's driver counts as dropped on receive, by
// every cause but no_mem, which counts RX ring slots a refill left empty,
// not frames (a frame that then finds no buffer is counted in no_buffer).
func rxLost(q driver.QueueStats) uint64 {
	return q.TotalDrops() - q.Drops[driver.CauseNoMem]
}

// balance checks l2fwd's accounting identities per port at the end of a
// run and describes each one that does not hold:
//
//	produced by the port's inputs = received + dropped on receive by cause
//	received = handed on (sent to TX or consumed) + refused by TX + no bounce buffer
//	           + taken up to the port's TAP twin (--tap)
//	handed to the port's TX (by the lanes, and down from its TAP twin)
//	         = sent + dropped on transmit by cause
//
// The first is checked where the inputs are known (simulated ports); the
// others everywhere. The last holds once the port is stopped: a frame
// counts as sent when the device is done with it.
func (a *app) balance(final []portSnap) []string {
	var out []string
	for i, f := range final {
		rx, lost := f.stats.Rx.Packets, rxLost(f.stats.Rx)
		if i < len(a.around) {
			if produced, known := a.around[i].produced(); known && produced != rx+lost {
				out = append(out, fmt.Sprintf("port %d (%s): its inputs produced %d frames, it received %d and counted %d dropped on receive: %s", i, a.specs[i], produced, rx, lost, diff(produced, rx+lost)))
			}
		}
		if out2 := f.handled + f.txRefused + f.noBounce + f.tap.Taken; rx != out2 {
			out = append(out, fmt.Sprintf("port %d (%s): it received %d frames, l2fwd handed on %d, its TX port refused %d, %d found no bounce buffer, %d went up to its TAP twin: %s", i, a.specs[i], rx, f.handled, f.txRefused, f.noBounce, f.tap.Taken, diff(rx, out2)))
		}
		tx := f.stats.Tx
		if in, done := f.toTx+f.tap.DownFrames, tx.Packets+tx.TotalDrops(); in != done {
			out = append(out, fmt.Sprintf("port %d (%s): l2fwd handed %d frames to its TX (%d down from its TAP twin), it sent %d and counted %d dropped on transmit (%s): %s", i, a.specs[i], in, f.tap.DownFrames, tx.Packets, tx.TotalDrops(), dropsOf(tx), diff(in, done)))
		}
	}
	return out
}

// dropsOf names a queue's non-zero drop counters ("link_down=3"), "none"
// for none.
func dropsOf(q driver.QueueStats) string {
	var b strings.Builder
	for c, n := range q.Drops {
		if n != 0 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s=%d", driver.Cause(c), n)
		}
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// diff says how far two counts are apart.
func diff(want, got uint64) string {
	if want > got {
		return fmt.Sprintf("%d frames unaccounted for", want-got)
	}
	return fmt.Sprintf("%d frames counted twice", got-want)
}

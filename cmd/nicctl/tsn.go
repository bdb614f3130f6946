package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gopmd/gopmd/driver"
)

func init() {
	var clock string
	register(&command{
		name: "tsn", args: "DEV show|tc|gates|cbs|preempt|stream [ARGS]...", min: 2, max: -1,
		summary: "traffic classes, gate lists, shapers, preemption, stream filters (as tc mqprio, taprio, cbs, ethtool --set-mm and tc flower's gate and police)",
		flags: func(fs *flag.FlagSet) func() error {
			fs.StringVar(&clock, "clock", "", "the chip clock `SPEC` gate base times are read from, opened if the port's clock is not (ENETC: default pci:0000:00:00.4, or sim:enetc-timer0 with the port's chip= for a sim port)")
			return nil
		},
		run: func(e *env, a []string) (any, error) { return tsnCmd(e, a[0], clock, a[1:]) },
	})
}

// tsnOp is one section of the command line: "show", "tc ...", "gates
// ...", "cbs ...".
type tsnOp struct {
	cmd   string
	tcMap driver.TCMap
	gates driver.GateList
	off   bool // gates off
	tc    int
	kbps  int64
	mm    driver.PreemptConfig
	strm  driver.Stream
}

var tsnCmds = map[string]bool{"show": true, "tc": true, "gates": true, "cbs": true, "preempt": true, "stream": true}

// parseTSNOps splits args into sections at the command words and parses
// each with tc's grammar.
func parseTSNOps(args []string) ([]tsnOp, error) {
	var ops []tsnOp
	for i := 0; i < len(args); {
		cmd := args[i]
		if !tsnCmds[cmd] {
			return nil, badInput("tsn: unknown command %q (commands: show; tc num_tc N map P0..P15 queues C@O...; gates base-time NS cycle-time NS [cycle-time-extension NS] sched-entry S MASK NS... | gates off; cbs tc N idleslope KBPS; preempt [pmac-enabled|tx-enabled|verify-enabled on|off] [verify-time MS] [tx-min-frag-size 60|124|188|252] [fp E|P...]; stream chain N dst_mac MAC [vlan_id V] action gate [base-time NS] sched-entry open|close NS... [action police rate RATE burst BYTES [mtu BYTES]])", cmd)
		}
		j := i + 1
		for j < len(args) && (!tsnCmds[args[j]] || cmd == "cbs" && args[j] == "tc" && j == i+1) {
			j++ // "cbs tc N": that tc is the shaper's class, not a section
		}
		op, err := parseTSNOp(cmd, args[i+1:j])
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		i = j
	}
	return ops, nil
}

func parseTSNOp(cmd string, a []string) (tsnOp, error) {
	op := tsnOp{cmd: cmd}
	num := func(what, s string, lo, hi int64) (int64, error) {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil || v < lo || v > hi {
			return 0, badInput("tsn %s: %s %q: give a whole number from %d to %d", cmd, what, s, lo, hi)
		}
		return v, nil
	}
	switch cmd {
	case "show":
		if len(a) != 0 {
			return op, badInput("tsn show: takes no arguments (got %q)", strings.Join(a, " "))
		}
	case "tc":
		// mqprio: num_tc N map P0 ... P15 queues COUNT@OFFSET ...
		m := &op.tcMap
		for i := 0; i < len(a); i++ {
			switch a[i] {
			case "num_tc":
				if i+1 >= len(a) {
					return op, badInput("tsn tc: num_tc needs a count")
				}
				i++
				v, err := num("num_tc", a[i], 0, 16)
				if err != nil {
					return op, err
				}
				m.NumTC = int(v)
			case "map":
				k := 0
				for i+1 < len(a) && k < driver.MaxPrio {
					v, err := strconv.Atoi(a[i+1])
					if err != nil {
						break
					}
					if v < 0 || v > 15 {
						return op, badInput("tsn tc: map entry %d: class %d (give 0-15)", k, v)
					}
					m.PrioTC[k] = uint8(v)
					k++
					i++
				}
				if k == 0 {
					return op, badInput("tsn tc: map needs one traffic class per priority, from priority 0 up")
				}
			case "queues":
				for i+1 < len(a) && strings.Contains(a[i+1], "@") {
					i++
					c, o, _ := strings.Cut(a[i], "@")
					cn, err1 := strconv.Atoi(c)
					on, err2 := strconv.Atoi(o)
					if err1 != nil || err2 != nil {
						return op, badInput("tsn tc: queues %q: give COUNT@OFFSET such as 1@0", a[i])
					}
					m.Queues = append(m.Queues, driver.QueueRange{Count: cn, Offset: on})
				}
			default:
				return op, badInput("tsn tc: unknown word %q (num_tc, map, queues)", a[i])
			}
		}
	case "gates":
		if len(a) == 1 && a[0] == "off" {
			op.off = true
			return op, nil
		}
		g := &op.gates
		for i := 0; i < len(a); i++ {
			need := func(n int) error {
				if i+n >= len(a) {
					return badInput("tsn gates: %s needs %d value(s)", a[i], n)
				}
				return nil
			}
			switch a[i] {
			case "base-time":
				if err := need(1); err != nil {
					return op, err
				}
				v, err := num("base-time", a[i+1], 0, 1<<62)
				if err != nil {
					return op, err
				}
				g.BaseTime, i = driver.Time(v), i+1
			case "cycle-time", "cycle-time-extension":
				if err := need(1); err != nil {
					return op, err
				}
				v, err := num(a[i], a[i+1], 0, 1<<40)
				if err != nil {
					return op, err
				}
				if a[i] == "cycle-time" {
					g.CycleTime = time.Duration(v)
				} else {
					g.CycleTimeExtension = time.Duration(v)
				}
				i++
			case "sched-entry":
				if err := need(3); err != nil {
					return op, err
				}
				if a[i+1] != "S" {
					return op, badInput("tsn gates: sched-entry %s: only S (set gates) entries; H and R (hold, release) need frame preemption", a[i+1])
				}
				mask, err := strconv.ParseUint(strings.TrimPrefix(a[i+2], "0x"), 16, 8)
				if err != nil {
					return op, badInput("tsn gates: sched-entry gate mask %q: give a hex mask of 8 classes such as 01 or 0x82", a[i+2])
				}
				iv, err := num("sched-entry interval", a[i+3], 1, 1<<40)
				if err != nil {
					return op, err
				}
				g.Entries = append(g.Entries, driver.GateEntry{Gates: uint8(mask), Interval: time.Duration(iv)})
				i += 3
			default:
				return op, badInput("tsn gates: unknown word %q (base-time, cycle-time, cycle-time-extension, sched-entry; or off)", a[i])
			}
		}
		if len(g.Entries) == 0 {
			return op, badInput("tsn gates: give at least one sched-entry S MASK INTERVAL, or off")
		}
	case "cbs":
		op.tc = -1
		idle := false
		for i := 0; i < len(a); i++ {
			if i+1 >= len(a) {
				return op, badInput("tsn cbs: %s needs a value", a[i])
			}
			switch a[i] {
			case "tc":
				v, err := num("tc", a[i+1], 0, 15)
				if err != nil {
					return op, err
				}
				op.tc = int(v)
			case "idleslope":
				v, err := num("idleslope (kbit/s)", a[i+1], 0, 1<<40)
				if err != nil {
					return op, err
				}
				op.kbps, idle = v, true
			case "sendslope", "hicredit", "locredit":
				return op, badInput("tsn cbs: %s: the hardware's driver derives it from idleslope and the link speed, as Linux's offload does; give tc and idleslope only", a[i])
			default:
				return op, badInput("tsn cbs: unknown word %q (tc, idleslope)", a[i])
			}
			i++
		}
		if op.tc < 0 || !idle {
			return op, badInput("tsn cbs: give tc N idleslope KBPS (idleslope 0 takes the shaper off)")
		}
	case "stream":
		var err error
		op.strm, err = parseStream(a)
		return op, err
	case "preempt":
		// ethtool --set-mm's words, and mqprio's fp per class.
		c := &op.mm
		c.Enabled, c.Verify = true, true
		pmac, tx := true, true
		onOff := func(w, v string) (bool, error) {
			switch v {
			case "on":
				return true, nil
			case "off":
				return false, nil
			}
			return false, badInput("tsn preempt: %s %q: give on or off", w, v)
		}
		for i := 0; i < len(a); i++ {
			w := a[i]
			if w == "fp" {
				tc := 0
				for i+1 < len(a) && (a[i+1] == "E" || a[i+1] == "P") {
					i++
					if a[i] == "P" {
						c.PreemptableTCs |= 1 << tc
					}
					tc++
				}
				if tc == 0 || tc > 8 {
					return op, badInput("tsn preempt: fp takes E (express) or P (preemptable) for each traffic class from 0, up to 8")
				}
				continue
			}
			if i+1 >= len(a) {
				return op, badInput("tsn preempt: %s needs a value", w)
			}
			v := a[i+1]
			i++
			var err error
			switch w {
			case "pmac-enabled":
				pmac, err = onOff(w, v)
			case "tx-enabled":
				tx, err = onOff(w, v)
			case "verify-enabled":
				c.Verify, err = onOff(w, v)
			case "verify-time":
				var ms int64
				ms, err = num("verify-time (ms)", v, 1, 1<<20)
				c.VerifyTime = time.Duration(ms) * time.Millisecond
			case "tx-min-frag-size":
				var n int64
				n, err = num("tx-min-frag-size", v, 60, 252)
				if err == nil && (n+4)%64 != 0 {
					err = badInput("tsn preempt: tx-min-frag-size %d: give 60, 124, 188 or 252", n)
				}
				c.AddFragSize = int((n+4)/64 - 1)
			default:
				err = badInput("tsn preempt: unknown word %q (pmac-enabled, tx-enabled, verify-enabled, verify-time, tx-min-frag-size, fp)", w)
			}
			if err != nil {
				return op, err
			}
		}
		if pmac != tx {
			return op, badInput("tsn preempt: pmac-enabled %v and tx-enabled %v: gopmd turns the pMAC and preemption on and off together; give both the same", pmac, tx)
		}
		c.Enabled = pmac
	}
	return op, nil
}

// tsnResult is what the port holds after the command: its capabilities
// and state.
type tsnResult struct {
	Dev     string       `json:"dev"`
	Applied []string     `json:"applied,omitempty"`
	Caps    tsnCapsJSON  `json:"caps"`
	State   tsnStateJSON `json:"state"`
	Preempt *preemptJSON `json:"preempt,omitempty"`
	Streams []streamJSON `json:"streams,omitempty"`
}

type tsnStateJSON struct {
	NumTC   int                 `json:"num_tc"`
	Map     []int               `json:"map,omitempty"`
	Queues  []driver.QueueRange `json:"queues,omitempty"`
	Gating  bool                `json:"gating"`
	Gates   *gatesJSON          `json:"gates,omitempty"`
	CBS     []cbsJSON           `json:"cbs,omitempty"`
	TCMapTx string              `json:"mqprio"`
}

type tsnCapsJSON struct {
	TrafficClasses int   `json:"traffic_classes"`
	MaxGateEntries int   `json:"max_gate_entries"`
	MaxIntervalNS  int64 `json:"max_interval_ns"`
	CBS            bool  `json:"cbs"`
	CBSClasses     []int `json:"cbs_classes,omitempty"`
}

type cbsJSON struct {
	TC            int   `json:"tc"`
	IdleSlopeKbps int64 `json:"idleslope_kbps"`
	Percent       int   `json:"percent"`
}

type gatesJSON struct {
	BaseTime           int64           `json:"base_time_ns"`
	CycleTime          int64           `json:"cycle_time_ns"`
	CycleTimeExtension int64           `json:"cycle_time_extension_ns"`
	FirstCycle         int64           `json:"first_cycle_ns"`
	Entries            []gateEntryJSON `json:"entries"`
}

type gateEntryJSON struct {
	Cmd      string `json:"cmd"`
	GateMask uint8  `json:"gatemask"`
	Interval int64  `json:"interval_ns"`
}

func (r *tsnResult) text(w io.Writer) {
	c := r.Caps
	fmt.Fprintf(w, "%s: %d traffic classes", r.Dev, c.TrafficClasses)
	if c.MaxGateEntries > 0 {
		fmt.Fprintf(w, ", gate lists of up to %d entries", c.MaxGateEntries)
	} else {
		fmt.Fprint(w, ", no time gating")
	}
	if c.CBS {
		fmt.Fprintf(w, ", cbs on classes %s", intsText(c.CBSClasses))
	}
	fmt.Fprintln(w)
	s := r.State
	fmt.Fprintf(w, "tc %s\n", s.TCMapTx)
	if g := s.Gates; s.Gating && g != nil {
		fmt.Fprintf(w, "gates base-time %d cycle-time %d cycle-time-extension %d (first cycle at %s)\n",
			g.BaseTime, g.CycleTime, g.CycleTimeExtension, driver.Time(g.FirstCycle))
		for i, e := range g.Entries {
			fmt.Fprintf(w, "\tindex %d cmd %s gatemask %#x interval %d\n", i, e.Cmd, e.GateMask, e.Interval)
		}
	} else {
		fmt.Fprintln(w, "gates off")
	}
	if len(s.CBS) == 0 {
		fmt.Fprintln(w, "cbs off")
	}
	for _, b := range s.CBS {
		fmt.Fprintf(w, "cbs tc %d idleslope %d (%d%% of the link)\n", b.TC, b.IdleSlopeKbps, b.Percent)
	}
	if m := r.Preempt; m != nil {
		fmt.Fprintf(w, "preempt pmac-enabled %s tx-enabled %s verify-status %s verify-time %d tx-min-frag-size %d active %s fp %s\n",
			onOff(m.Enabled), onOff(m.Enabled), m.VerifyStatus, m.VerifyTimeMS, m.TxMinFragSize, onOff(m.Active), strings.Join(m.FP, " "))
		fmt.Fprintf(w, "\tfragments tx %d rx %d, reassembled %d, assembly errors %d, SMD errors %d, holds %d\n",
			m.FragmentsTx, m.FragmentsRx, m.AssemblyOK, m.AssemblyErrors, m.SMDErrors, m.Holds)
	}
	streamsText(w, r.Streams)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func intsText(v []int) string {
	if len(v) == 0 {
		return "none (set a map)"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// tsnClockSpec is the chip clock to open for a port's gate list when
// --clock is not given: the LS1028A's timer function, or a sim timer on
// the port's simulated chip.
func tsnClockSpec(sp driver.Spec) string {
	if sp.Scheme != "sim" {
		return "pci:0000:00:00.4"
	}
	if c := sp.Options.Get("chip"); c != "" {
		return "sim:enetc-timer0?chip=" + c
	}
	return "sim:enetc-timer0"
}

func tsnCmd(e *env, dev, clockSpec string, args []string) (any, error) {
	ops, err := parseTSNOps(args)
	if err != nil {
		return nil, err
	}
	p, sp, err := openPort(e, dev, driver.Config{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	ts, err := driver.TSNOf(p)
	if err != nil {
		return nil, err
	}
	if err := p.Start(); err != nil { // shapers are shares of the link's speed
		return nil, err
	}
	r := &tsnResult{Dev: dev}
	var streams []driver.Stream // set by this command, in order
	for _, op := range ops {
		switch op.cmd {
		case "tc":
			err = ts.SetTCMap(op.tcMap)
		case "gates":
			if op.off {
				err = ts.SetGateList(driver.GateList{})
				break
			}
			err = ts.SetGateList(op.gates)
			if errors.Is(err, driver.ErrNoClock) {
				spec := clockSpec
				if spec == "" {
					spec = tsnClockSpec(sp)
				}
				c, cerr := driver.OpenClock(spec)
				if cerr != nil {
					return nil, fmt.Errorf("%s: gate base times are the chip clock's, and opening %s failed: %w (give its spec with --clock)", dev, spec, cerr)
				}
				defer c.Close()
				if err = ts.SetGateList(op.gates); errors.Is(err, driver.ErrNoClock) {
					err = fmt.Errorf("%w (%s is open but is not this port's chip's timer: give that with --clock)", err, spec)
				}
			}
		case "cbs":
			err = ts.SetCBS(op.tc, op.kbps)
		case "preempt":
			var pr driver.Preemption
			if pr, err = driver.PreemptionOf(p); err != nil {
				return nil, err // names the port
			}
			err = pr.SetPreemption(op.mm)
		case "stream":
			var sf driver.StreamFilter
			if sf, err = driver.StreamFilterOf(p); err != nil {
				return nil, err // names the port
			}
			err = sf.SetStream(op.strm)
			if errors.Is(err, driver.ErrNoClock) {
				spec := clockSpec
				if spec == "" {
					spec = tsnClockSpec(sp)
				}
				c, cerr := driver.OpenClock(spec)
				if cerr != nil {
					return nil, fmt.Errorf("%s: stream gate base times are the chip clock's, and opening %s failed: %w (give its spec with --clock)", dev, spec, cerr)
				}
				defer c.Close()
				if err = sf.SetStream(op.strm); errors.Is(err, driver.ErrNoClock) {
					err = fmt.Errorf("%w (%s is open but is not this port's chip's timer: give that with --clock)", err, spec)
				}
			}
			if err == nil {
				streams = append(streams, op.strm)
			}
		}
		if err != nil {
			// The driver names the operation; the device is named here.
			return nil, fmt.Errorf("%s: %w", dev, err)
		}
		if op.cmd != "show" {
			r.Applied = append(r.Applied, op.cmd)
		}
	}
	c := ts.TSNCaps()
	r.Caps = tsnCapsJSON{TrafficClasses: c.TrafficClasses, MaxGateEntries: c.MaxGateEntries, MaxIntervalNS: int64(c.MaxInterval), CBS: c.CBS, CBSClasses: c.CBSClasses}
	st, err := ts.TSNState()
	if err != nil {
		return nil, err
	}
	r.State = stateJSON(st)
	if pr, err := driver.PreemptionOf(p); err == nil {
		ps, err := pr.PreemptState()
		if err != nil {
			return nil, err
		}
		r.Preempt = &preemptJSON{Supported: ps.Supported, Enabled: ps.Enabled, Active: ps.Active, VerifyStatus: ps.VerifyStatus,
			VerifyTimeMS: int64(ps.VerifyTime / time.Millisecond), TxMinFragSize: 64*(1+ps.AddFragSize) - 4,
			AssemblyErrors: ps.AssemblyErrors, SMDErrors: ps.SMDErrors, AssemblyOK: ps.AssemblyOK,
			FragmentsRx: ps.FragmentsRx, FragmentsTx: ps.FragmentsTx, Holds: ps.Holds}
		for tc := 0; tc < r.Caps.TrafficClasses; tc++ {
			r.Preempt.FP = append(r.Preempt.FP, map[bool]string{false: "E", true: "P"}[ps.PreemptableTCs&(1<<tc) != 0])
		}
	}
	if len(streams) > 0 {
		sf, err := driver.StreamFilterOf(p)
		if err != nil {
			return nil, err
		}
		for _, s := range streams {
			st, err := sf.StreamStats(s.Handle)
			if err != nil {
				return nil, err
			}
			r.Streams = append(r.Streams, streamOf(s, st))
		}
	}
	return r, nil
}

// preemptJSON is ethtool --show-mm's answer with the classes' fp.
type preemptJSON struct {
	Supported      bool     `json:"supported"`
	Enabled        bool     `json:"enabled"`
	Active         bool     `json:"active"`
	VerifyStatus   string   `json:"verify_status"`
	VerifyTimeMS   int64    `json:"verify_time_ms"`
	TxMinFragSize  int      `json:"tx_min_frag_size"`
	FP             []string `json:"fp"`
	AssemblyErrors uint64   `json:"assembly_errors"`
	SMDErrors      uint64   `json:"smd_errors"`
	AssemblyOK     uint64   `json:"assembly_ok"`
	FragmentsRx    uint64   `json:"fragments_rx"`
	FragmentsTx    uint64   `json:"fragments_tx"`
	Holds          uint64   `json:"holds"`
}

func stateJSON(st driver.TSNState) tsnStateJSON {
	j := tsnStateJSON{NumTC: st.TCMap.NumTC, Queues: st.TCMap.Queues, Gating: st.Gating, TCMapTx: st.TCMap.String()}
	for _, b := range st.CBS {
		j.CBS = append(j.CBS, cbsJSON{TC: b.TC, IdleSlopeKbps: b.IdleSlopeKbps, Percent: b.Percent})
	}
	if st.TCMap.NumTC != 0 {
		for _, tc := range st.TCMap.PrioTC {
			j.Map = append(j.Map, int(tc))
		}
	}
	if st.Gating {
		g := &gatesJSON{BaseTime: int64(st.Gates.BaseTime), CycleTime: int64(st.Gates.Cycle()),
			CycleTimeExtension: int64(st.Gates.CycleTimeExtension), FirstCycle: int64(st.GateStart)}
		for _, e := range st.Gates.Entries {
			g.Entries = append(g.Entries, gateEntryJSON{Cmd: "S", GateMask: e.Gates, Interval: int64(e.Interval)})
		}
		j.Gates = g
	}
	return j
}

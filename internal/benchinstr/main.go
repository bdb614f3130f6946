// Command benchinstr counts the instructions gopmd spends per packet on its
// hot paths, per package, under valgrind's callgrind. scripts/bench-instr
// runs it; see that script for how to use it.
//
// Each measurement runs one benchmark twice, at two packet counts (b.N),
// with -test.benchtime=Nx. Set-up, tear-down and everything else a run does
// once cancel out in the difference; what is left, divided by the
// difference in packets, is the cost of one packet. Every instruction is
// charged to the package of the function it executes in (an inlined call
// counts for the function it was inlined into, as the CPU sees it).
// Instruction counts are deterministic, so the figures are compared with
// the budgets file and any excess fails the run: a regression gate, not a
// timed test.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A measurement is one benchmark and the columns whose sum is its headline
// figure ("path").
type measurement struct {
	Name  string   // as in the budgets file and the table
	Pkg   string   // go package with the benchmark
	Bench string   // -test.bench pattern matching exactly one benchmark
	Path  []string // categories summed into "path"
	What  string
	// Must names a metric the benchmark reports that must be above zero
	// (a forward that forwards nothing would measure the wrong path).
	Must string
}

var measurements = []measurement{
	{"pool-alloc-free", "./pool", "^BenchmarkAllocFree$", []string{"pool", "harness"},
		"pool: owner Alloc + Recycle of one buffer, the whole loop", ""},
	{"pool-alloc-free-bulk32", "./pool", "^BenchmarkAllocFreeBulk32$", []string{"pool", "harness"},
		"pool: AllocBulk 32 + RecycleBulk 32, per buffer, the whole loop", ""},
	{"syncpool-get-put", "./pool", "^BenchmarkSyncPool$", []string{"pool", "harness", "runtime", "other"},
		"for comparison: sync.Pool Get + Put of the same headers, the whole loop", ""},
	{"enetc-fwd-2048", "./enetc", "^BenchmarkForwardDriverOnly$/^split-2048$", []string{"enetc", "pool", "dma", "driver"},
		"ENETC forward, driver + pool, 2048-byte buffers (default), stand-in device", "doorbells/pkt"},
	{"enetc-fwd-4096", "./enetc", "^BenchmarkForwardDriverOnly$/^whole-4096$", []string{"enetc", "pool", "dma", "driver"},
		"ENETC forward, driver + pool, 4096-byte buffers, stand-in device", "doorbells/pkt"},
	{"fec-fwd-bulk", "./bench", "^BenchmarkFECForward$", []string{"fec", "pool", "dma", "driver", "cache"},
		"FEC forward, driver + pool + cache maintenance, bulk doorbells, no MMIO cost, i.MX8MP model (non-coherent)", "tx-doorbells/pkt"},
	// The seed's whole-path form (informational, no budget): the ENETC
	// forward with its model, recycling, against the same forward plus a
	// fresh Go buffer and a map/unmap per packet on a non-coherent
	// simulated IOMMU. Callgrind counts user-space instructions only: the
	// mmap/munmap system calls of that map are not in the figure.
	{"enetc-fwd-model-recycle", "./bench", "^BenchmarkENETCForwardMapping$/^recycle$", columns,
		"for comparison: ENETC forward with the model, whole path, recycling (the seed's form)", "Mpps"},
	{"enetc-fwd-model-map", "./bench", "^BenchmarkENETCForwardMapping$/^map-per-packet$", columns,
		"for comparison: the same plus a fresh Go buffer and a non-coherent sim map/unmap per packet (system calls not counted)", "Mpps"},
}

// columns is the table's column order; every category a symbol can fall in.
var columns = []string{"enetc", "fec", "pool", "dma", "cache", "driver", "model", "harness", "runtime", "other"}

const modulePrefix = "github.com/gopmd/gopmd/"

// category maps a Go symbol to a table column.
func category(sym string, testFuncs map[string]bool) string {
	if testFuncs[sym] {
		return "harness"
	}
	pkg := symbolPackage(sym)
	switch {
	case pkg == "":
		return "runtime" // assembly helpers without a package (gogo, aeshashbody)
	case strings.HasPrefix(pkg, modulePrefix):
		rel := strings.TrimPrefix(pkg, modulePrefix)
		switch rel {
		case "enetc", "fec", "pool", "dma", "driver":
			return rel
		case "bench":
			return "harness"
		}
		if strings.HasPrefix(rel, "enetc/model") || strings.HasPrefix(rel, "fec/model") || rel == "sim" || strings.HasPrefix(rel, "sim/") {
			return "model"
		}
		return "other"
	case pkg == "testing" || strings.HasPrefix(pkg, "testing/"):
		return "harness"
	case pkg == "runtime" || strings.HasPrefix(pkg, "runtime/") || strings.HasPrefix(pkg, "internal/") ||
		pkg == "sync/atomic" || pkg == "type:" || strings.HasPrefix(pkg, "go:"):
		return "runtime"
	}
	return "other"
}

// symbolPackage is the import path of a Go symbol such as
// "github.com/gopmd/gopmd/pool.(*Pool).Alloc" or "runtime.mcall".
func symbolPackage(sym string) string {
	if strings.HasPrefix(sym, "type:") {
		return "type:"
	}
	if strings.HasPrefix(sym, "go:") {
		return "go:"
	}
	end := len(sym)
	if i := strings.IndexAny(sym, "[("); i >= 0 {
		end = i // generic arguments and receivers may hold '/' and '.'
	}
	head := sym[:end]
	slash := strings.LastIndex(head, "/")
	dot := strings.Index(head[slash+1:], ".")
	if dot < 0 {
		return ""
	}
	return sym[:slash+1+dot]
}

// profile is what a callgrind output file says per function: its own
// instructions, its source file, and the inclusive cost of its calls.
type profile struct {
	self  map[string]int64
	file  map[string]string           // the function's own file (fl=)
	calls map[string]map[string]int64 // caller -> callee -> inclusive instructions
	total int64
}

// recursionSuffix is what callgrind appends to a function's name for a
// deeper recursion level ("f'2"), which it also records when a stack
// growth restarts a function: one function either way, for the columns.
var recursionSuffix = regexp.MustCompile(`'[0-9]+$`)

// parseCallgrind reads a callgrind output file (format: valgrind's
// callgrind manual, "Callgrind Format Specification"): fn= names the
// function that cost lines that follow belong to; a calls= line makes the
// next cost line the inclusive cost of a call to cfn=, not the caller's
// own; names may be compressed to "(id)" after their first use.
func parseCallgrind(r io.Reader) (*profile, error) {
	p := &profile{self: map[string]int64{}, file: map[string]string{}, calls: map[string]map[string]int64{}}
	names := map[string]map[string]string{"fl": {}, "fn": {}}
	resolve := func(kind, v string) string {
		v = strings.TrimSpace(v)
		if !strings.HasPrefix(v, "(") {
			return v
		}
		i := strings.Index(v, ")")
		if i < 0 {
			return v
		}
		id, name := v[:i+1], strings.TrimSpace(v[i+1:])
		if name != "" {
			if kind == "fn" {
				name = recursionSuffix.ReplaceAllString(name, "")
			}
			names[kind][id] = name
			return name
		}
		return names[kind][id]
	}
	var fn, fl, cfn string
	inCall := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		ln := sc.Text()
		if ln == "" {
			continue
		}
		c := ln[0]
		switch {
		case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*':
			f := strings.Fields(ln)
			if len(f) < 2 {
				inCall = false
				continue
			}
			ir, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("cost line %q: %v", ln, err)
			}
			if inCall {
				m := p.calls[fn]
				if m == nil {
					m = map[string]int64{}
					p.calls[fn] = m
				}
				m[cfn] += ir
				inCall = false
			} else {
				p.self[fn] += ir
			}
		case strings.HasPrefix(ln, "fl="):
			fl = resolve("fl", ln[3:])
		case strings.HasPrefix(ln, "fi="), strings.HasPrefix(ln, "fe="):
			resolve("fl", ln[3:]) // inlined code's file: names only
		case strings.HasPrefix(ln, "cfl="), strings.HasPrefix(ln, "cfi="):
			resolve("fl", ln[4:])
		case strings.HasPrefix(ln, "fn="):
			fn = resolve("fn", ln[3:])
			if _, ok := p.file[fn]; !ok {
				p.file[fn] = fl
			}
		case strings.HasPrefix(ln, "cfn="):
			cfn = resolve("fn", ln[4:])
		case strings.HasPrefix(ln, "calls="):
			inCall = true
		case strings.HasPrefix(ln, "totals:"), strings.HasPrefix(ln, "summary:"):
			f := strings.Fields(ln)
			if len(f) >= 2 {
				t, err := strconv.ParseInt(f[1], 10, 64)
				if err == nil {
					p.total = t
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if p.total == 0 {
		return nil, fmt.Errorf("no totals: or summary: line")
	}
	return p, nil
}

// The simulated IOMMU (dma/sim*.go) is the simulated devices' bus: its
// cost is the model's, except its clean and invalidate, which stand in for
// the cache maintenance a non-coherent SoC pays on the driver's side: they
// and what they call (the copies, in the runtime's memmove) make the
// "cache" column.
var cacheSyncers = map[string]bool{
	modulePrefix + "dma.(*SimIOMMU).SyncForDevice":      true,
	modulePrefix + "dma.(*SimIOMMU).SyncForCPU":         true,
	modulePrefix + "dma.(*SimIOMMU).SyncSpansForDevice": true,
	modulePrefix + "dma.(*SimIOMMU).SyncSpansForCPU":    true,
	modulePrefix + "dma.(*SimIOMMU).entry":              true,
	modulePrefix + "dma.lineSpan":                       true,
	modulePrefix + "dma.copySpans":                      true,
}

func simBusFile(file string) bool {
	return strings.HasSuffix(file, "dma/simiommu.go") || strings.HasSuffix(file, "dma/simfast.go")
}

// byCategory sums a run's instructions per column: each function's own
// instructions, by its package.
func byCategory(p *profile) map[string]int64 {
	testFuncs := map[string]bool{}
	cat := func(fn string) string {
		switch {
		case cacheSyncers[fn]:
			return "cache"
		case simBusFile(p.file[fn]):
			return "model"
		}
		return category(fn, testFuncs)
	}
	for fn, f := range p.file {
		if strings.HasSuffix(f, "_test.go") {
			testFuncs[fn] = true
		}
	}
	sums := map[string]int64{}
	for fn, ir := range p.self {
		sums[cat(fn)] += ir
	}
	// Calls out of the cache maintenance (the copies, in the runtime) are
	// its cost. Only calls into the runtime: callgrind may record an edge
	// from a syncer to its own caller when a stack growth restarts a
	// function (morestack jumps back to its start), with the caller's
	// whole inclusive cost, in one run and not the other.
	for fn := range cacheSyncers {
		for callee, ir := range p.calls[fn] {
			if c := cat(callee); c == "runtime" {
				sums[c] -= ir
				sums["cache"] += ir
			}
		}
	}
	return sums
}

type result struct {
	Name     string             `json:"name"`
	What     string             `json:"what"`
	Package  string             `json:"package"`
	Bench    string             `json:"bench"`
	PerPkt   map[string]float64 `json:"per_packet"` // instructions per packet, by column
	Path     float64            `json:"path"`       // sum of the headline columns
	PathPkgs []string           `json:"path_packages"`
	Total    float64            `json:"total"`
	N1       int                `json:"n1"`
	N2       int                `json:"n2"`
	Budgets  []budgetCheck      `json:"budgets,omitempty"`
}

type budgetCheck struct {
	Figure   string  `json:"figure"`
	Max      float64 `json:"max"`
	Measured float64 `json:"measured"`
	OK       bool    `json:"ok"`
}

type budget struct {
	name, figure string
	max          float64
	line         int
}

func readBudgets(path string) ([]budget, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []budget
	for i, ln := range strings.Split(string(b), "\n") {
		if j := strings.Index(ln, "#"); j >= 0 {
			ln = ln[:j]
		}
		f := strings.Fields(ln)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: want \"measurement figure max\", got %q", path, i+1, strings.TrimSpace(ln))
		}
		max, err := strconv.ParseFloat(f[2], 64)
		if err != nil || max <= 0 {
			return nil, fmt.Errorf("%s:%d: budget %q is not a positive number of instructions", path, i+1, f[2])
		}
		known := false
		for _, m := range measurements {
			known = known || m.Name == f[0]
		}
		if !known {
			return nil, fmt.Errorf("%s:%d: no measurement named %q (have: %s)", path, i+1, f[0], names())
		}
		if !validFigure(f[1]) {
			return nil, fmt.Errorf("%s:%d: figure %q is not path, total or a column (%s)", path, i+1, f[1], strings.Join(columns, ", "))
		}
		out = append(out, budget{f[0], f[1], max, i + 1})
	}
	return out, nil
}

func validFigure(f string) bool {
	if f == "path" || f == "total" {
		return true
	}
	for _, c := range columns {
		if c == f {
			return true
		}
	}
	return false
}

func names() string {
	var s []string
	for _, m := range measurements {
		s = append(s, m.Name)
	}
	return strings.Join(s, ", ")
}

func (r *result) figure(f string) float64 {
	switch f {
	case "path":
		return r.Path
	case "total":
		return r.Total
	}
	return r.PerPkt[f]
}

func main() {
	var (
		jsonOut  = flag.Bool("json", false, "print the results as JSON instead of a table")
		n1       = flag.Int("n1", 50000, "packets in the first run")
		n2       = flag.Int("n2", 100000, "packets in the second run")
		only     = flag.String("only", "", "comma-separated measurements to run (default all: "+names()+")")
		budgets  = flag.String("budgets", "scripts/instr-budgets", "budgets file; empty to skip the check")
		keep     = flag.String("keep", "", "directory to keep the test binaries and callgrind files in (default: a temporary one, removed)")
		valgrind = flag.String("valgrind", "valgrind", "valgrind command")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: scripts/bench-instr [flags]\n\nInstructions per packet, per package, under callgrind. Flags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		fail("unexpected argument %q (flags only; see --help)", flag.Arg(0))
	}
	if *n1 < 1 || *n2 <= *n1 {
		fail("packet counts --n1 %d and --n2 %d: need 0 < n1 < n2", *n1, *n2)
	}
	sel := measurements
	if *only != "" {
		sel = nil
		for _, n := range strings.Split(*only, ",") {
			found := false
			for _, m := range measurements {
				if m.Name == n {
					sel = append(sel, m)
					found = true
				}
			}
			if !found {
				fail("--only: no measurement named %q (have: %s)", n, names())
			}
		}
	}
	var bud []budget
	if *budgets != "" {
		var err error
		if bud, err = readBudgets(*budgets); err != nil {
			fail("budgets: %v", err)
		}
	}
	if _, err := exec.LookPath(*valgrind); err != nil {
		fail("%s not found: install valgrind (scripts/bench-instr does it when run as root, or apt-get install valgrind)", *valgrind)
	}
	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "bench-instr-")
		if err != nil {
			fail("%v", err)
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fail("%v", err)
	}

	built := map[string]string{}
	var results []*result
	for _, m := range sel {
		bin, ok := built[m.Pkg]
		if !ok {
			bin = filepath.Join(dir, strings.ReplaceAll(strings.Trim(m.Pkg, "./"), "/", "_")+".test")
			logf("building %s", m.Pkg)
			if out, err := exec.Command("go", "test", "-c", "-o", bin, m.Pkg).CombinedOutput(); err != nil {
				fail("go test -c %s: %v\n%s", m.Pkg, err, out)
			}
			built[m.Pkg] = bin
		}
		var sums [2]map[string]int64
		var totals [2]int64
		for i, n := range []int{*n1, *n2} {
			logf("%s: %d packets under callgrind", m.Name, n)
			cats, total, err := callgrind(*valgrind, bin, m, n, filepath.Join(dir, fmt.Sprintf("%s.%d.callgrind", m.Name, n)))
			if err != nil {
				fail("%s: %v", m.Name, err)
			}
			sums[i], totals[i] = cats, total
		}
		dn := float64(*n2 - *n1)
		r := &result{Name: m.Name, What: m.What, Package: m.Pkg, Bench: m.Bench, PerPkt: map[string]float64{},
			PathPkgs: m.Path, N1: *n1, N2: *n2, Total: round1(float64(totals[1]-totals[0]) / dn)}
		for _, c := range columns {
			r.PerPkt[c] = round1(float64(sums[1][c]-sums[0][c]) / dn)
		}
		var s int64
		for _, c := range m.Path {
			s += sums[1][c] - sums[0][c]
		}
		r.Path = round1(float64(s) / dn)
		results = append(results, r)
	}

	failed := 0
	var msgs []string
	for _, r := range results {
		for _, b := range bud {
			if b.name != r.Name {
				continue
			}
			v := r.figure(b.figure)
			c := budgetCheck{Figure: b.figure, Max: b.max, Measured: v, OK: v <= b.max}
			r.Budgets = append(r.Budgets, c)
			if !c.OK {
				failed++
				msgs = append(msgs, fmt.Sprintf("%s: %s is %.1f instructions per packet, over its budget of %.0f (%s line %d): find what added the instructions (callgrind files: --keep DIR), or raise the budget in the same commit and say why", r.Name, b.figure, v, b.max, *budgets, b.line))
			}
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"unit": "instructions per packet", "results": results, "over_budget": failed}); err != nil {
			fail("%v", err)
		}
	} else {
		printTable(os.Stdout, results)
	}
	for _, s := range msgs {
		fmt.Fprintln(os.Stderr, "bench-instr: OVER BUDGET:", s)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

// callgrind runs one benchmark at n packets and returns its instructions
// by column and in total.
func callgrind(valgrind, bin string, m measurement, n int, out string) (map[string]int64, int64, error) {
	cmd := exec.Command(valgrind, "--tool=callgrind", "--callgrind-out-file="+out, bin,
		"-test.run=^$", "-test.bench="+m.Bench, fmt.Sprintf("-test.benchtime=%dx", n), "-test.count=1")
	// One P and no async preemption (callgrind trips on the signals) and no
	// RDTSCP (valgrind's CPU does not decode it); no GC during the loop.
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GOGC=off", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
	cmd.Dir = filepath.Dir(bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("%s under callgrind: %v\n%s%s", filepath.Base(bin), err, tail(stdout.String()), tail(stderr.String()))
	}
	if !strings.Contains(stdout.String(), "\nPASS") && !strings.HasPrefix(stdout.String(), "PASS") {
		return nil, 0, fmt.Errorf("benchmark %s did not pass:\n%s", m.Bench, tail(stdout.String()))
	}
	ran := regexp.MustCompile(`(?m)^Benchmark\S*\s+`+strconv.Itoa(n)+`\s.*$`).FindAllString(stdout.String(), -1)
	if len(ran) != 1 {
		return nil, 0, fmt.Errorf("pattern %s ran %d benchmarks at %d iterations, want exactly 1:\n%s", m.Bench, len(ran), n, tail(stdout.String()))
	}
	if m.Must != "" && !metricPositive(ran[0], m.Must) {
		return nil, 0, fmt.Errorf("benchmark %s reports no %s above 0, so it does not run the path it should measure:\n%s", m.Bench, m.Must, ran[0])
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	p, err := parseCallgrind(bufio.NewReader(f))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", out, err)
	}
	return byCategory(p), p.total, nil
}

// metricPositive reports whether a benchmark result line has "value unit"
// with the given unit and a value above zero.
func metricPositive(line, unit string) bool {
	f := strings.Fields(line)
	for i := 1; i < len(f); i++ {
		if f[i] == unit {
			v, err := strconv.ParseFloat(f[i-1], 64)
			return err == nil && v > 0
		}
	}
	return false
}

func printTable(w io.Writer, rs []*result) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "instructions per packet (callgrind, difference of %d and %d packets)\n\n", rs[0].N1, rs[0].N2)
	fmt.Fprintf(w, "%-24s %8s", "measurement", "path")
	for _, c := range columns {
		fmt.Fprintf(w, " %8s", c)
	}
	fmt.Fprintf(w, " %8s  %s\n", "total", "budget")
	for _, r := range rs {
		fmt.Fprintf(w, "%-24s %8.1f", r.Name, r.Path)
		for _, c := range columns {
			fmt.Fprintf(w, " %8.1f", r.PerPkt[c])
		}
		var bs []string
		for _, b := range r.Budgets {
			st := "ok"
			if !b.OK {
				st = "OVER"
			}
			bs = append(bs, fmt.Sprintf("%s<=%.0f %s", b.Figure, b.Max, st))
		}
		fmt.Fprintf(w, " %8.1f  %s\n", r.Total, strings.Join(bs, ", "))
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		fmt.Fprintf(w, "%-24s %s; path = %s\n", r.Name, r.What, strings.Join(r.PathPkgs, "+"))
	}
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n") + "\n"
}

func logf(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench-instr: "+format+"\n", a...) }

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench-instr: "+format+"\n", a...)
	os.Exit(2)
}

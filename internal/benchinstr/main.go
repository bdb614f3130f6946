// Command benchinstr counts the instructions gopmd spends per packet on its
// hot paths, per package: on amd64 under valgrind's callgrind, on arm64
// under qemu-aarch64 with a counting TCG plugin (arm64.go). scripts/bench-instr
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
	"sort"
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
	{"pool-raw-bulk32", "./pool", "^BenchmarkAllocRawFreeBulk32$", []string{"pool", "harness"},
		"pool: AllocBulkRaw 32 (a driver's refill: no reset) + RecycleBulk 32, per buffer, the whole loop", ""},
	// The same loop over the lowest-store header layout (internal/poolfloor),
	// with the pool's checks and without them: where the pool's bulk
	// figure could go, and what its checks cost. Comparisons: no budget.
	{"pool-floor-bulk32", "./internal/poolfloor", "^BenchmarkBulk32$", []string{"other", "harness"},
		"for comparison: the bulk loop over the lowest-store header layout, the pool's checks kept (internal/poolfloor)", ""},
	{"pool-floor-unchecked-bulk32", "./internal/poolfloor", "^BenchmarkBulk32Unchecked$", []string{"other", "harness"},
		"for comparison: the same, the return without the address proof and the read-back", ""},
	{"syncpool-get-put", "./pool", "^BenchmarkSyncPool$", []string{"pool", "harness", "runtime", "other"},
		"for comparison: sync.Pool Get + Put of the same headers, the whole loop", ""},
	// The drop loop on the non-coherent simulated IOMMU: alloc, write 64
	// bytes, free, the free syncing the dirtied 64 bytes in both. The
	// simulated cache's copy (column cache) is outside path, as in
	// fec-fwd-bulk; the mutex of the no-recycle free list is column other.
	{"pool-drop-recycle", "./pool", "^BenchmarkDropLoop$/^recycle$", []string{"pool", "dma", "harness", "runtime", "other"},
		"pool: Alloc, 64-byte write, Recycle on non-coherent memory (sync of the 64 dirtied bytes), the whole loop but the simulated cache copy", ""},
	{"pool-drop-no-recycle", "./pool", "^BenchmarkDropLoop$/^no-recycle$", []string{"pool", "dma", "harness", "runtime", "other"},
		"for comparison: the same with a mutex-locked free list and the same 64-byte sync", ""},
	{"pool-drop-fresh-go-buffer", "./pool", "^BenchmarkDropLoop$/^fresh-go-buffer$", []string{"pool", "dma", "harness", "runtime", "other"},
		"for comparison: a new 2 KiB Go buffer per packet, 64-byte write, left to the garbage collector (run with the GC on)", ""},
	{"enetc-fwd-2048", "./enetc", "^BenchmarkForwardDriverOnly$/^split-2048$", []string{"enetc", "pool", "dma", "driver"},
		"ENETC forward, driver + pool, 2048-byte buffers (default), stand-in device", "doorbells/pkt"},
	{"enetc-fwd-4096", "./enetc", "^BenchmarkForwardDriverOnly$/^whole-4096$", []string{"enetc", "pool", "dma", "driver"},
		"ENETC forward, driver + pool, 4096-byte buffers, stand-in device", "doorbells/pkt"},
	// The i.MX8MP model is non-coherent, so the simulated IOMMU keeps a
	// device copy of the buffers and copies cache lines between the copies
	// where a clean or invalidate would act (column cache, on both
	// architectures). That copy is the simulator's, never part of "path".
	// On arm64 the Region also issues the real DC CVAC/CIVAC lines and
	// DSBs (dma/cache_arm64.go, column dma); amd64 has no such work.
	{"fec-fwd-bulk", "./bench", "^BenchmarkFECForward$", []string{"fec", "pool", "dma", "driver"},
		"FEC forward, driver + pool + dma (on arm64 the real DC CVAC/CIVAC maintenance), bulk doorbells, no MMIO cost, i.MX8MP model (non-coherent: its simulated cache copies are column cache, outside path)", "tx-doorbells/pkt"},
	// mvpp2's whole-path form (informational, no budget; Linux's mvpp2
	// measured 2.13x when its page_pool began recycling): the ENETC
	// forward with its model, recycling, against the same forward plus a
	// fresh Go buffer and a map/unmap per packet on a non-coherent
	// simulated IOMMU. Callgrind counts user-space instructions only: the
	// mmap/munmap system calls of that map are not in the figure.
	{"enetc-fwd-model-recycle", "./bench", "^BenchmarkENETCForwardMapping$/^recycle$", columns,
		"for comparison: ENETC forward with the model, whole path, recycling (as mvpp2's 2.13x was measured)", "Mpps"},
	{"enetc-fwd-model-map", "./bench", "^BenchmarkENETCForwardMapping$/^map-per-packet$", columns,
		"for comparison: the same plus a fresh Go buffer and a non-coherent sim map/unmap per packet (system calls not counted)", "Mpps"},
	// l2fwd's whole forward, the code a user runs: lane.poll in fwd mode
	// with the MAC update, two simulated ENETC ports in synchronous mode
	// (the generator and the models are column model, outside path).
	// Its path adds l2fwd's own code (column l2fwd) to driver + pool.
	{"l2fwd-fwd", "./cmd/l2fwd", "^BenchmarkL2fwdForward$", []string{"enetc", "pool", "dma", "driver", "l2fwd"},
		"l2fwd's whole forward: lane.poll in fwd mode with the MAC update, ENETC driver + pool + l2fwd's loop, two synchronous simulated ENETC ports", "fwd/pkt"},
	// l2fwd's poll of an idle lane, as its workers poll between bursts
	// (on AF_XDP ports dozens of times per burst): RxBurst on an empty
	// ENETC ring and l2fwd's idle bookkeeping, the pump taken away as on a
	// port with its own engine: per poll, not per packet.
	{"l2fwd-empty-poll", "./cmd/l2fwd", "^BenchmarkL2fwdEmptyPoll$", []string{"enetc", "pool", "dma", "driver", "l2fwd"},
		"l2fwd's empty poll: lane.poll on an idle fwd lane, ENETC RxBurst + l2fwd's idle bookkeeping, per poll", ""},
	// The AF_XDP driver on the host's kernel: RxBurst of a full burst on
	// one xdp: port, TxBurst on another over a shared UMEM (umem=), two
	// veth pairs in native mode. The sender (an AF_PACKET socket) and the
	// kernel's work in the system calls are outside path (callgrind counts
	// user-space instructions only): the driver's own work per forwarded
	// frame, the figure to set beside DPDK's net_af_xdp's
	// (scripts/race-afxdp --callgrind).
	{"xdp-fwd", "./xdp", "^BenchmarkForward$", []string{"xdp", "pool", "dma", "driver"},
		"AF_XDP forward, driver + pool, RxBurst + TxBurst over a shared UMEM, two veth pairs (root, amd64 only)", "fwd/pkt"},
	// One RxBurst on an idle xdp: port and the TX pending check, as l2fwd
	// polls between bursts: per poll, not per packet.
	{"xdp-empty-poll", "./xdp", "^BenchmarkEmptyPoll$", []string{"xdp", "pool", "dma", "driver"},
		"AF_XDP empty poll: RxBurst on an idle queue and the TX pending check, per poll (root, amd64 only)", ""},
}

// onKernel are the measurements that run on the host's kernel (veth
// pairs, XDP programs, AF_XDP sockets): counted on amd64 only (qemu-user
// has no bpf system call) and only as root; elsewhere they are left out,
// and the run says so.
var onKernel = map[string]bool{
	"xdp-fwd":        true,
	"xdp-empty-poll": true,
}

// allocating are the baselines that allocate per packet: they run with the
// garbage collector on, as such code runs, so their figure includes the
// collection their garbage causes (with GOGC=off it hid most of it). Every
// other measurement allocates nothing in its loop and runs with GOGC=off,
// so that no collection of the set-up's garbage lands in one of the two
// runs and not the other.
var allocating = map[string]bool{
	"enetc-fwd-model-map":       true,
	"pool-drop-fresh-go-buffer": true,
}

// gcEnv is the GOGC setting m's benchmark runs with (see allocating).
func gcEnv(m measurement) string {
	if allocating[m.Name] {
		return "GOGC=100"
	}
	return "GOGC=off"
}

// columns is the table's column order; every category a symbol can fall in.
var columns = []string{"enetc", "fec", "xdp", "pool", "dma", "cache", "driver", "l2fwd", "model", "harness", "runtime", "other"}

const modulePrefix = "github.com/gopmd/gopmd/"

// category maps a Go symbol to a table column.
func category(sym string, testFuncs map[string]bool) string {
	if testFuncs[sym] {
		return "harness"
	}
	if sym == unknownFunc {
		return "other"
	}
	pkg := symbolPackage(sym)
	switch {
	case pkg == "":
		return "runtime" // assembly helpers without a package (gogo, aeshashbody)
	case strings.HasPrefix(pkg, modulePrefix):
		rel := strings.TrimPrefix(pkg, modulePrefix)
		switch rel {
		case "enetc", "fec", "xdp", "pool", "dma", "driver":
			return rel
		case "bench":
			return "harness"
		case "cmd/l2fwd":
			return "l2fwd" // the forwarder's own loop (its _test.go code is harness)
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

// The simulated IOMMU (package sim/simdma) is the simulated devices' bus:
// its cost is the model's (by its package), except its clean and
// invalidate, which stand in for the cache maintenance a non-coherent SoC
// pays on the driver's side: they and what they call (the copies, in the
// runtime's memmove) make the "cache" column.
var cacheSyncers = map[string]bool{
	simdmaPrefix + "(*IOMMU).SyncForDevice":      true,
	simdmaPrefix + "(*IOMMU).SyncForCPU":         true,
	simdmaPrefix + "(*IOMMU).SyncSpansForDevice": true,
	simdmaPrefix + "(*IOMMU).SyncSpansForCPU":    true,
	simdmaPrefix + "(*IOMMU).entry":              true,
	simdmaPrefix + "lineSpan":                    true,
	simdmaPrefix + "copySpans":                   true,
}

const simdmaPrefix = modulePrefix + "sim/simdma."

// functionColumn is the column a function of p falls in: the simulated
// cache's syncers are cache; a function in a _test.go file is the harness;
// else its package's (the rest of the simulated IOMMU is the model's bus).
func functionColumn(p *profile, fn string) string {
	switch f := p.file[fn]; {
	case cacheSyncers[fn]:
		return "cache"
	case strings.HasSuffix(f, "_test.go"):
		return "harness"
	}
	return category(fn, nil)
}

// byCategory sums a run's instructions per column: each function's own
// instructions, by its package.
func byCategory(p *profile) map[string]int64 {
	cat := func(fn string) string { return functionColumn(p, fn) }
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
	Arch     string             `json:"arch"` // amd64 (callgrind) or arm64 (qemu-aarch64 and the counting plugin)
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
	Top      []funcCost         `json:"top,omitempty"` // --top: the costliest functions
}

// funcCost is one function's own instructions per packet.
type funcCost struct {
	Func   string  `json:"func"`
	Column string  `json:"column"`
	PerPkt float64 `json:"per_packet"`
}

type budgetCheck struct {
	Figure   string  `json:"figure"`
	Max      float64 `json:"max"`
	Measured float64 `json:"measured"`
	OK       bool    `json:"ok"`
}

type budget struct {
	name, arch, figure string
	max                float64
	line               int
}

// arches are the architectures bench-instr counts on.
var arches = []string{"amd64", "arm64"}

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
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: want \"measurement arch figure max\", got %q", path, i+1, strings.TrimSpace(ln))
		}
		name, arch, fig := f[0], f[1], f[2]
		known := false
		for _, m := range measurements {
			known = known || m.Name == name
		}
		if !known {
			return nil, fmt.Errorf("%s:%d: no measurement named %q (have: %s)", path, i+1, name, names())
		}
		if arch != "amd64" && arch != "arm64" {
			return nil, fmt.Errorf("%s:%d: arch %q is not amd64 or arm64", path, i+1, arch)
		}
		if !validFigure(fig) {
			return nil, fmt.Errorf("%s:%d: figure %q is not path, total or a column (%s)", path, i+1, fig, strings.Join(columns, ", "))
		}
		max, err := strconv.ParseFloat(f[3], 64)
		if err != nil || max <= 0 {
			return nil, fmt.Errorf("%s:%d: budget %q is not a positive number of instructions", path, i+1, f[3])
		}
		for _, o := range out {
			if o.name == name && o.arch == arch && o.figure == fig {
				return nil, fmt.Errorf("%s:%d: a second budget for %s %s %s (the first: line %d)", path, i+1, name, arch, fig, o.line)
			}
		}
		out = append(out, budget{name, arch, fig, max, i + 1})
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
		arch     = flag.String("arch", "both", "where to count: amd64 (callgrind), arm64 (qemu-aarch64 and the counting plugin) or both")
		n1       = flag.Int("n1", 50000, "packets in the first run")
		n2       = flag.Int("n2", 100000, "packets in the second run")
		only     = flag.String("only", "", "comma-separated measurements to run (default all: "+names()+")")
		budgets  = flag.String("budgets", "scripts/instr-budgets", "budgets file; empty to skip the check")
		keep     = flag.String("keep", "", "directory to keep the test binaries and counts in (default: a temporary one, removed)")
		top      = flag.Int("top", 0, "also list each measurement's N costliest functions, own instructions per packet")
		valgrind = flag.String("valgrind", "valgrind", "valgrind command (amd64)")
		qemu     = flag.String("qemu", "qemu-aarch64", "qemu-user command that loads TCG plugins (arm64; Debian's qemu-user, not qemu-user-static)")
		cpu      = flag.String("cpu", "cortex-a72", "CPU qemu emulates (arm64): the LS1028A's core")
		plugin   = flag.String("plugin", "", "the counting plugin, built from internal/benchinstr/tcgplugin/count.c (arm64; scripts/bench-instr builds it)")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: scripts/bench-instr [flags]\n\nInstructions per packet, per package, under callgrind (amd64) and qemu-aarch64 (arm64). Flags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		fail("unexpected argument %q (flags only; see --help)", flag.Arg(0))
	}
	if *n1 < 1 || *n2 <= *n1 {
		fail("packet counts --n1 %d and --n2 %d: need 0 < n1 < n2", *n1, *n2)
	}
	var archSel []string
	switch *arch {
	case "both":
		archSel = arches
	case "amd64", "arm64":
		archSel = []string{*arch}
	default:
		fail("--arch %q: want amd64, arm64 or both", *arch)
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
	a64 := arm64Config{qemu: *qemu, cpu: *cpu, plugin: *plugin}
	for _, a := range archSel {
		switch a {
		case "amd64":
			if _, err := exec.LookPath(*valgrind); err != nil {
				fail("%s not found: install valgrind (scripts/bench-instr does it when run as root, or apt-get install valgrind), or count on arm64 only (--arch arm64)", *valgrind)
			}
		case "arm64":
			if _, err := exec.LookPath(*qemu); err != nil {
				fail("%s not found: install Debian's qemu-user (scripts/bench-instr does it when run as root; qemu-user-static cannot load plugins), or count on amd64 only (--arch amd64)", *qemu)
			}
			if *plugin == "" {
				fail("--plugin: no counting plugin given; run scripts/bench-instr, which builds it, or build internal/benchinstr/tcgplugin/count.c with cc -shared -fPIC and name it")
			}
			if _, err := os.Stat(*plugin); err != nil {
				fail("--plugin: %v", err)
			}
		}
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

	var results []*result
	for _, a := range archSel {
		built := map[string]string{}
		syms := map[string]*symtab{}
		for _, m := range sel {
			if onKernel[m.Name] && (a != "amd64" || os.Geteuid() != 0) {
				logf("%s: left out on %s: it needs the host's kernel as root (veth pairs, XDP, AF_XDP; qemu-user has no bpf system call)", m.Name, a)
				continue
			}
			bin, ok := built[m.Pkg]
			if !ok {
				bin = filepath.Join(dir, a+"_"+strings.ReplaceAll(strings.Trim(m.Pkg, "./"), "/", "_")+".test")
				logf("building %s for %s", m.Pkg, a)
				cmd := exec.Command("go", "test", "-c", "-o", bin, m.Pkg)
				cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+a, "CGO_ENABLED=0")
				if out, err := cmd.CombinedOutput(); err != nil {
					fail("GOARCH=%s go test -c %s: %v\n%s", a, m.Pkg, err, out)
				}
				built[m.Pkg] = bin
				if a == "arm64" {
					s, err := loadSymbols(bin)
					if err != nil {
						fail("%v", err)
					}
					syms[bin] = s
				}
			}
			var profs [2]*profile
			for i, n := range []int{*n1, *n2} {
				var (
					p   *profile
					err error
				)
				if a == "amd64" {
					logf("%s: %d packets under callgrind", m.Name, n)
					p, err = callgrind(*valgrind, bin, m, n, filepath.Join(dir, fmt.Sprintf("%s.%d.callgrind", m.Name, n)))
				} else {
					logf("%s: %d packets under %s -cpu %s", m.Name, n, *qemu, *cpu)
					p, err = qemuCount(a64, bin, syms[bin], m, n, filepath.Join(dir, fmt.Sprintf("%s.%d.tbcounts", m.Name, n)))
				}
				if err != nil {
					fail("%s on %s: %v", m.Name, a, err)
				}
				profs[i] = p
			}
			r := perPacket(m, a, [2]map[string]int64{byCategory(profs[0]), byCategory(profs[1])},
				[2]int64{profs[0].total, profs[1].total}, *n1, *n2)
			r.Top = topFunctions(profs, *n2-*n1, *top)
			results = append(results, r)
		}
	}

	failed := 0
	var msgs []string
	for _, r := range results {
		for _, b := range bud {
			if b.name != r.Name || b.arch != r.Arch {
				continue
			}
			v := r.figure(b.figure)
			c := budgetCheck{Figure: b.figure, Max: b.max, Measured: v, OK: v <= b.max}
			r.Budgets = append(r.Budgets, c)
			if !c.OK {
				failed++
				msgs = append(msgs, fmt.Sprintf("%s on %s: %s is %.1f instructions per packet, over its budget of %.0f (%s line %d): find what added the instructions (the counts: --keep DIR, --top N), or raise the budget in the same commit and say why", r.Name, r.Arch, b.figure, v, b.max, *budgets, b.line))
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

// perPacket turns the two runs' sums into instructions per packet: the
// difference over the difference in packets.
func perPacket(m measurement, arch string, sums [2]map[string]int64, totals [2]int64, n1, n2 int) *result {
	dn := float64(n2 - n1)
	r := &result{Name: m.Name, Arch: arch, What: m.What, Package: m.Pkg, Bench: m.Bench, PerPkt: map[string]float64{},
		PathPkgs: m.Path, N1: n1, N2: n2, Total: round1(float64(totals[1]-totals[0]) / dn)}
	for _, c := range columns {
		r.PerPkt[c] = round1(float64(sums[1][c]-sums[0][c]) / dn)
	}
	var s int64
	for _, c := range m.Path {
		s += sums[1][c] - sums[0][c]
	}
	r.Path = round1(float64(s) / dn)
	return r
}

// topFunctions lists the n functions with the most own instructions per
// packet (the difference of the two runs over dn packets).
func topFunctions(profs [2]*profile, dn, n int) []funcCost {
	if n <= 0 {
		return nil
	}
	var out []funcCost
	for fn, ir := range profs[1].self {
		d := float64(ir-profs[0].self[fn]) / float64(dn)
		if math.Abs(d) >= 0.05 {
			out = append(out, funcCost{fn, functionColumn(profs[1], fn), round1(d)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PerPkt != out[j].PerPkt {
			return out[i].PerPkt > out[j].PerPkt
		}
		return out[i].Func < out[j].Func
	})
	return out[:min(n, len(out))]
}

// benchArgs are the test binary's flags that run m's benchmark once at n
// iterations (packets).
func benchArgs(m measurement, n int) []string {
	return []string{"-test.run=^$", "-test.bench=" + m.Bench, fmt.Sprintf("-test.benchtime=%dx", n), "-test.count=1"}
}

// callgrind runs one benchmark at n packets and returns its profile.
func callgrind(valgrind, bin string, m measurement, n int, out string) (*profile, error) {
	cmd := exec.Command(valgrind, append([]string{"--tool=callgrind", "--callgrind-out-file=" + out, bin}, benchArgs(m, n)...)...)
	// One P and no async preemption (callgrind trips on the signals) and no
	// RDTSCP (valgrind's CPU does not decode it); no GC during the loop
	// but for the allocating baselines.
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", gcEnv(m), "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
	cmd.Dir = filepath.Dir(bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s under callgrind: %v\n%s%s", filepath.Base(bin), err, tail(stdout.String()), tail(stderr.String()))
	}
	if err := checkBenchOutput(stdout.String(), m, n); err != nil {
		return nil, err
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := parseCallgrind(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", out, err)
	}
	return p, nil
}

// checkBenchOutput checks that the run passed, ran exactly one benchmark
// at n iterations, and that it reports its Must metric above zero.
func checkBenchOutput(stdout string, m measurement, n int) error {
	if !strings.Contains(stdout, "\nPASS") && !strings.HasPrefix(stdout, "PASS") {
		return fmt.Errorf("benchmark %s did not pass:\n%s", m.Bench, tail(stdout))
	}
	ran := regexp.MustCompile(`(?m)^Benchmark\S*\s+`+strconv.Itoa(n)+`\s.*$`).FindAllString(stdout, -1)
	if len(ran) != 1 {
		return fmt.Errorf("pattern %s ran %d benchmarks at %d iterations, want exactly 1:\n%s", m.Bench, len(ran), n, tail(stdout))
	}
	if m.Must != "" && !metricPositive(ran[0], m.Must) {
		return fmt.Errorf("benchmark %s reports no %s above 0, so it does not run the path it should measure:\n%s", m.Bench, m.Must, ran[0])
	}
	return nil
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

// counter names how each architecture's figures were counted.
var counter = map[string]string{
	"amd64": "callgrind",
	"arm64": "qemu-aarch64 and the counting plugin",
}

func printTable(w io.Writer, rs []*result) {
	if len(rs) == 0 {
		return
	}
	var archs []string
	for _, a := range arches {
		for _, r := range rs {
			if r.Arch == a {
				archs = append(archs, a)
				break
			}
		}
	}
	for _, a := range archs {
		var first *result
		for _, r := range rs {
			if r.Arch == a {
				first = r
				break
			}
		}
		fmt.Fprintf(w, "%s: instructions per packet (%s, difference of %d and %d packets)\n\n", a, counter[a], first.N1, first.N2)
		fmt.Fprintf(w, "%-24s %8s", "measurement", "path")
		for _, c := range columns {
			fmt.Fprintf(w, " %8s", c)
		}
		fmt.Fprintf(w, " %8s  %s\n", "total", "budget")
		for _, r := range rs {
			if r.Arch != a {
				continue
			}
			fmt.Fprintf(w, "%-24s %8.1f", r.Name, r.Path)
			for _, c := range columns {
				fmt.Fprintf(w, " %8.1f", r.PerPkt[c])
			}
			fmt.Fprintf(w, " %8.1f  %s\n", r.Total, budgetText(r))
		}
		fmt.Fprintln(w)
		for _, r := range rs {
			if r.Arch != a || len(r.Top) == 0 {
				continue
			}
			fmt.Fprintf(w, "%s on %s, own instructions per packet:\n", r.Name, a)
			for _, f := range r.Top {
				fmt.Fprintf(w, "  %8.1f  %-8s %s\n", f.PerPkt, f.Column, f.Func)
			}
			fmt.Fprintln(w)
		}
	}
	if len(archs) > 1 {
		fmt.Fprintf(w, "path side by side\n\n%-24s", "measurement")
		for _, a := range archs {
			fmt.Fprintf(w, " %8s %-16s", a, "budget")
		}
		fmt.Fprintln(w)
		for _, m := range measurements {
			var row []*result
			for _, a := range archs {
				var found *result
				for _, r := range rs {
					if r.Name == m.Name && r.Arch == a {
						found = r
					}
				}
				row = append(row, found)
			}
			if row[0] == nil && row[1] == nil {
				continue
			}
			fmt.Fprintf(w, "%-24s", m.Name)
			for _, r := range row {
				if r == nil {
					fmt.Fprintf(w, " %8s %-16s", "-", "")
					continue
				}
				fmt.Fprintf(w, " %8.1f %-16s", r.Path, budgetText(r))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Name] {
			seen[r.Name] = true
			fmt.Fprintf(w, "%-24s %s; path = %s\n", r.Name, r.What, strings.Join(r.PathPkgs, "+"))
		}
	}
}

func budgetText(r *result) string {
	var bs []string
	for _, b := range r.Budgets {
		st := "ok"
		if !b.OK {
			st = "OVER"
		}
		bs = append(bs, fmt.Sprintf("%s<=%.0f %s", b.Figure, b.Max, st))
	}
	return strings.Join(bs, ", ")
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

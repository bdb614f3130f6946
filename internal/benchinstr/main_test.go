package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A callgrind file in the compressed form valgrind writes: names given once
// with an id, then the id alone; a calls= line makes the next cost line an
// inclusive call cost, not the caller's own.
const sample = `version: 1
creator: callgrind-3.19.0
events: Ir
fl=(1) pool/pool.go
fn=(1) github.com/gopmd/gopmd/pool.(*Pool).Alloc
10 30
+1 5
fl=(2) pool/bench_test.go
fn=(2) github.com/gopmd/gopmd/pool.BenchmarkAllocFree
5 7
fi=(1)
12 3
fe=(2)
cfl=(1)
cfn=(1)
calls=1 10
6 35
fl=(3) sim/simdma/iommu.go
fn=(3) github.com/gopmd/gopmd/sim/simdma.(*IOMMU).SyncForDevice
300 20
cfl=(4) /usr/local/go/src/runtime/memmove_amd64.s
cfn=(4) runtime.memmove
calls=2 1
301 40
fn=(5) github.com/gopmd/gopmd/sim/simdma.(*IOMMU).Load32
264 9
fl=(4)
fn=(4)
1 100
fl=(6) enetc/rx.go
fn=(6) github.com/gopmd/gopmd/enetc.(*rxQueue).RxBurst
1 50
fl=(7) /usr/local/go/src/testing/benchmark.go
fn=(7) testing.(*B).runN
1 4
totals: 283
`

func TestParseAndAttribute(t *testing.T) {
	p, err := parseCallgrind(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if p.total != 283 {
		t.Errorf("total %d, want 283", p.total)
	}
	got := byCategory(p)
	want := map[string]int64{
		"pool":    35, // Alloc's own lines; the call from the benchmark is not counted twice
		"harness": 14, // the benchmark's 7 + its inlined 3 + testing's 4
		"cache":   60, // the sync's 20 and the 40 of memmove it called
		"model":   9,  // Load32: the simulated IOMMU is the device's bus
		"runtime": 60, // memmove's 100 less the 40 the sync called
		"enetc":   50,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d instructions, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

func TestSymbolPackage(t *testing.T) {
	for sym, want := range map[string]string{
		"github.com/gopmd/gopmd/pool.(*Pool).Alloc":          "github.com/gopmd/gopmd/pool",
		"github.com/gopmd/gopmd/enetc/model.(*Device).rxDMA": "github.com/gopmd/gopmd/enetc/model",
		"runtime.mcall":                      "runtime",
		"sync/atomic.(*Uint64).Add":          "sync/atomic",
		"hash/crc32.slicingUpdate":           "hash/crc32",
		"type:.eq.[2]interface {}":           "type:",
		"gogo":                               "",
		"slices.Sort[go.shape.[]uint32/x.y]": "slices",
	} {
		if got := symbolPackage(sym); got != want {
			t.Errorf("symbolPackage(%q) = %q, want %q", sym, got, want)
		}
	}
}

func TestBudgetsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		f := filepath.Join(dir, "b")
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	b, err := readBudgets(write("# c\npool-alloc-free amd64 path 40 # goal 30\n\nenetc-fwd-2048 arm64 enetc 100\n"))
	if err != nil || len(b) != 2 || b[0].max != 40 || b[0].arch != "amd64" || b[1].arch != "arm64" || b[1].figure != "enetc" || b[1].line != 4 {
		t.Fatalf("got %+v, %v", b, err)
	}
	for in, msg := range map[string]string{
		"nosuch amd64 path 4\n":                                        `no measurement named "nosuch"`,
		"pool-alloc-free amd64 cpu 4\n":                                `figure "cpu"`,
		"pool-alloc-free amd64 path x\n":                               `budget "x"`,
		"pool-alloc-free riscv path 4\n":                               `arch "riscv"`,
		"pool-alloc-free path 4\n":                                     "want",
		"pool-alloc-free amd64 path 4\npool-alloc-free amd64 path 5\n": "a second budget",
	} {
		if _, err := readBudgets(write(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want one containing %q", in, err, msg)
		}
	}
	// The same measurement may have a budget per architecture.
	if _, err := readBudgets(write("pool-alloc-free amd64 path 4\npool-alloc-free arm64 path 5\n")); err != nil {
		t.Error(err)
	}
	// The file in the repository parses, and gates every measurement it
	// gates on one architecture on the other too, but for those that run
	// on the host's kernel, counted on amd64 only (onKernel).
	rb, err := readBudgets("../../scripts/instr-budgets")
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]map[string]bool{}
	for _, b := range rb {
		if per[b.name] == nil {
			per[b.name] = map[string]bool{}
		}
		per[b.name][b.arch] = true
	}
	for name, a := range per {
		if onKernel[name] {
			if a["arm64"] {
				t.Errorf("scripts/instr-budgets: %s runs on the host's kernel, counted on amd64 only, and has an arm64 budget", name)
			}
			continue
		}
		if !a["amd64"] || !a["arm64"] {
			t.Errorf("scripts/instr-budgets: %s has a budget on %v only", name, a)
		}
	}
}

func TestMetricPositive(t *testing.T) {
	line := "BenchmarkForwardDriverOnly/split-2048 \t 100000\t 34.72 ns/op\t 0.03125 doorbells/pkt\t 0 allocs/op"
	if !metricPositive(line, "doorbells/pkt") {
		t.Error("0.03125 doorbells/pkt not seen as positive")
	}
	if metricPositive(strings.Replace(line, "0.03125", "0", 1), "doorbells/pkt") {
		t.Error("0 doorbells/pkt seen as positive")
	}
	if metricPositive(line, "tx-doorbells/pkt") {
		t.Error("a missing metric seen as positive")
	}
}

// A function callgrind names again with a recursion level ("f'2", also
// what a restart after stack growth looks like) is the same function: its
// instructions, and the copies it calls, stay in its column; and an edge
// from a cache syncer back to its caller, with the caller's inclusive
// cost, moves nothing into cache.
const sampleRecursion = `version: 1
events: Ir
fl=(1) dma/region.go
fn=(1) github.com/gopmd/gopmd/dma.(*Region).SyncSpansForCPU
10 15
fl=(2) sim/simdma/iommu.go
fn=(2) github.com/gopmd/gopmd/sim/simdma.(*IOMMU).SyncSpansForCPU
20 30
cfl=(1)
cfn=(1)
calls=1 10
21 500
fn=(3) github.com/gopmd/gopmd/sim/simdma.(*IOMMU).SyncSpansForCPU'2
22 10
cfl=(4) /usr/local/go/src/runtime/memmove_amd64.s
cfn=(4) runtime.memmove
calls=1 1
23 25
fl=(4)
fn=(4)
1 40
totals: 95
`

func TestRecursionLevelsAndCallerEdges(t *testing.T) {
	p, err := parseCallgrind(strings.NewReader(sampleRecursion))
	if err != nil {
		t.Fatal(err)
	}
	got := byCategory(p)
	want := map[string]int64{
		"dma":     15, // Region's own, none of the bogus edge's 500
		"cache":   65, // the syncer's 30 and 10 ('2 is the same function), the 25 of memmove it called
		"runtime": 15, // memmove's 40 less the 25
		"model":   0,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d instructions, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

// Every allocating baseline names a measurement, so none runs with the GC
// off by a typo.
func TestAllocatingAreMeasurements(t *testing.T) {
	names := map[string]bool{}
	for _, m := range measurements {
		names[m.Name] = true
	}
	for n := range allocating {
		if !names[n] {
			t.Errorf("allocating names %q, which is no measurement", n)
		}
	}
	if gcEnv(measurement{Name: "enetc-fwd-model-map"}) != "GOGC=100" || gcEnv(measurement{Name: "enetc-fwd-2048"}) != "GOGC=off" {
		t.Error("gcEnv: the allocating baselines run with the GC on, the rest with it off")
	}
}

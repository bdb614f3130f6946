package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseTBCounts(t *testing.T) {
	got, err := parseTBCounts(strings.NewReader("400000 3 10\n40000c 2 7\n400000 3 5\nend\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []tbCount{{0x400000, 3, 10}, {0x40000c, 2, 7}, {0x400000, 3, 5}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i+1, got[i], want[i])
		}
	}
	for in, msg := range map[string]string{
		"400000 3 10\n":            `no closing "end"`, // cut short
		"":                         `no closing "end"`,
		"400000 3\nend\n":          "want \"address instructions count\"",
		"zz 3 10\nend\n":           "not a hex address",
		"400000 0 10\nend\n":       "non-zero instruction count",
		"400000 3 -1\nend\n":       "execution count",
		"400000 3 1\nend\n1 1 1\n": `text after the closing "end"`,
	} {
		if _, err := parseTBCounts(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want one containing %q", in, err, msg)
		}
	}
}

// A small binary's worth of functions, in the order a linker lays them
// out, with a gap between two of them.
func fixtureSymtab() *symtab {
	return newSymtab([]funcRange{
		{0x1100, 0x1140, modulePrefix + "pool.(*Pool).Alloc", "/src/pool/pool.go"},
		{0x1000, 0x1100, "runtime.memmove", "/go/src/runtime/memmove_arm64.s"},
		{0x1140, 0x1180, modulePrefix + "pool.BenchmarkAllocFree", "/src/pool/bench_test.go"},
		{0x1200, 0x1240, modulePrefix + "sim/simdma.copySpans", "/src/sim/simdma/iommu.go"},
		{0x1240, 0x1280, modulePrefix + "sim/simdma.(*IOMMU).Load32", "/src/sim/simdma/iommu.go"},
		{0x1280, 0x12c0, modulePrefix + "dma.cacheCleanLines.abi0", "/src/dma/barrier_arm64.s"},
		{0x12c0, 0x1300, modulePrefix + "enetc.(*rxQueue).singles", "/src/enetc/rx.go"},
		{0x1300, 0x1340, "hash/crc32.ieeeUpdate", "/go/src/hash/crc32/crc32.go"},
		{0x1300, 0x1310, "hash/crc32.alias", "/go/src/hash/crc32/crc32.go"}, // inside the one before: dropped
	})
}

func TestAttribute(t *testing.T) {
	s := fixtureSymtab()
	blocks := []tbCount{
		{0x1100, 4, 10},  // Alloc: 40
		{0x1138, 4, 3},   // Alloc's last two instructions fall through into the benchmark: 6 + 6
		{0x1170, 6, 2},   // the benchmark's last 4, then 2 in the gap (0x1180-0x1200): 8 + 4
		{0x1200, 2, 100}, // the simulated cache's copy: 200
		{0x1240, 1, 9},   // the simulated IOMMU's bus: 9
		{0x1280, 5, 7},   // the real cache maintenance: 35
		{0x12c0, 3, 11},  // 33
		{0x1000, 2, 50},  // runtime: 100
		{0x1300, 4, 1},   // crc32 (the alias inside it does not steal its first instructions): 4
		{0x2000, 3, 2},   // past every symbol: 6
	}
	p := attribute(blocks, s, arm64InsnBytes)
	if p.total != 40+12+12+200+9+35+33+100+4+6 {
		t.Errorf("total %d, want %d", p.total, 40+12+12+200+9+35+33+100+4+6)
	}
	if got := p.self[modulePrefix+"pool.(*Pool).Alloc"]; got != 46 {
		t.Errorf("Alloc: %d instructions, want 46 (a block is split where its function ends)", got)
	}
	if got := p.self["hash/crc32.ieeeUpdate"]; got != 4 {
		t.Errorf("ieeeUpdate: %d instructions, want 4", got)
	}
	got := byCategory(p)
	want := map[string]int64{
		"pool":    46,
		"harness": 14, // the benchmark, by its _test.go file
		"cache":   200,
		"model":   9,
		"dma":     35,
		"enetc":   33,
		"runtime": 100,
		"other":   4 + 4 + 6, // crc32, and code outside every symbol
		"fec":     0,
		"driver":  0,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d instructions, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

// loadSymbols reads a real arm64 test binary: the functions' names are the
// ones go tool nm prints, their files come from the line table, so the
// test function is the harness and the package's own function is not.
func TestLoadSymbolsArm64(t *testing.T) {
	skipBuilds(t, "builds an arm64 test binary")
	bin := filepath.Join(t.TempDir(), "attr.test")
	cmd := exec.Command("go", "test", "-c", "-o", bin, "./testdata/attr")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	s, err := loadSymbols(bin)
	if err != nil {
		t.Fatal(err)
	}
	const pkg = modulePrefix + "internal/benchinstr/testdata/attr"
	var work, bench *funcRange
	for i := range s.funcs {
		switch s.funcs[i].name {
		case pkg + ".Work":
			work = &s.funcs[i]
		case pkg + ".BenchmarkWork":
			bench = &s.funcs[i]
		}
	}
	if work == nil || bench == nil {
		t.Fatalf("Work %v, BenchmarkWork %v: not both in the symbol table", work, bench)
	}
	if !strings.HasSuffix(work.file, "testdata/attr/attr.go") || !strings.HasSuffix(bench.file, "testdata/attr/attr_test.go") {
		t.Errorf("files: Work in %q, BenchmarkWork in %q", work.file, bench.file)
	}
	// Go's nm agrees on Work's address.
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ln := range strings.Split(string(out), "\n") {
		f := strings.Fields(ln)
		if len(f) == 3 && f[2] == pkg+".Work" {
			found = true
			if a, err := strconv.ParseUint(f[0], 16, 64); err != nil || a != work.lo {
				t.Errorf("Work at %#x, go tool nm says %s", work.lo, f[0])
			}
		}
	}
	if !found {
		t.Fatal("go tool nm does not list Work")
	}
	p := attribute([]tbCount{
		{work.lo, uint64(work.hi-work.lo) / arm64InsnBytes, 3},
		{bench.lo, 2, 5},
	}, s, arm64InsnBytes)
	got := byCategory(p)
	if n := int64(work.hi-work.lo) / arm64InsnBytes * 3; got["other"] != n || got["harness"] != 10 {
		t.Errorf("Work's %d instructions in other, the benchmark's 10 in harness: got %v", n, got)
	}
}

// The plugin, the parser and the attribution together, on a function whose
// instruction count is known exactly: spin(n) executes 2n+2 instructions.
// Needs qemu-aarch64 (Debian's qemu-user) and cc, which scripts/install-deps
// installs; skips without them.
func TestPluginCountsExactly(t *testing.T) {
	skipBuilds(t, "builds the plugin and an arm64 binary, runs qemu")
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("no qemu-aarch64 (Debian's qemu-user; scripts/install-deps installs it)")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no cc (scripts/install-deps installs gcc)")
	}
	dir := t.TempDir()
	so := filepath.Join(dir, "libcount.so")
	if out, err := exec.Command(cc, "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror",
		"-o", so, "tcgplugin/count.c").CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "spin")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/spin")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s, err := loadSymbols(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []uint64{1, 1000, 123457} {
		out := filepath.Join(dir, fmt.Sprintf("counts.%d", n))
		run := exec.Command(qemu, "-cpu", "cortex-a72", "-plugin", so+",out="+out, bin, strconv.FormatUint(n, 10))
		run.Env = append(os.Environ(), "GOMAXPROCS=1")
		if b, err := run.CombinedOutput(); err != nil {
			t.Fatalf("spin %d under qemu: %v\n%s", n, err, b)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseTBCounts(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		p := attribute(blocks, s, arm64InsnBytes)
		if got, want := p.self["main.spin.abi0"], int64(2*n+2); got != want {
			t.Errorf("spin(%d): %d instructions counted, want %d", n, got, want)
		}
		if p.total < int64(2*n+2) {
			t.Errorf("spin(%d): total %d, below spin's own", n, p.total)
		}
	}
}

// skipBuilds skips a test that builds binaries with the host's toolchain
// in -short mode and when the test itself runs under an emulator (the
// arm64 and armv7 passes of scripts/test-all), where the host pass has
// already covered it.
func skipBuilds(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip(what)
	}
	if e := os.Getenv("GOPMD_EMULATOR"); e != "" {
		t.Skipf("%s; the native pass runs it, not this one under %s", what, e)
	}
}

package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"debug/gosym"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The arm64 counts come from qemu-user (Debian's dynamically linked
// qemu-aarch64: the static build cannot load plugins) with the project's
// TCG plugin, internal/benchinstr/tcgplugin/count.c, which
// scripts/bench-instr builds. The plugin writes, per translated block, its
// start address, its number of instructions and how often it was entered;
// attribute charges each instruction to the function of the test binary
// whose symbol covers its address, and byCategory sorts the functions into
// columns as it does callgrind's.

// arm64InsnBytes is the width of every AArch64 instruction (A64 has no
// other encoding), so a block's i-th instruction is at start + 4i.
const arm64InsnBytes = 4

// unknownFunc names code outside every symbol of the binary (the vDSO,
// QEMU's signal return trampoline): column other.
const unknownFunc = "(unknown)"

// tbCount is one line of the plugin's output: one translation of a block.
type tbCount struct {
	vaddr, insns, count uint64
}

// parseTBCounts reads the plugin's output: "ADDR INSNS COUNT" lines (ADDR
// in hex, the others decimal) and a closing "end" line, which the plugin
// writes last, so a file without it was cut short (a guest that died
// before QEMU's exit handlers ran).
func parseTBCounts(r io.Reader) ([]tbCount, error) {
	var out []tbCount
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		ln := strings.TrimSpace(sc.Text())
		if ln == "end" {
			if sc.Scan() {
				return nil, fmt.Errorf("line %d: text after the closing \"end\"", line+1)
			}
			return out, sc.Err()
		}
		f := strings.Fields(ln)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want \"address instructions count\", got %q", line, ln)
		}
		a, err1 := strconv.ParseUint(f[0], 16, 64)
		n, err2 := strconv.ParseUint(f[1], 10, 64)
		c, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || n == 0 {
			return nil, fmt.Errorf("line %d: %q is not a hex address, a non-zero instruction count and an execution count", line, ln)
		}
		out = append(out, tbCount{a, n, c})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("no closing \"end\" line after %d lines: the plugin's output is cut short (did the guest exit normally?)", line)
}

// funcRange is one function of the binary: [lo, hi), its symbol name and
// the source file it is defined in.
type funcRange struct {
	lo, hi     uint64
	name, file string
}

// symtab is a binary's functions, sorted by address, without overlaps.
type symtab struct{ funcs []funcRange }

// loadSymbols reads a Go binary's ELF symbol table (the names go tool nm
// prints) for the functions' address ranges, and its pclntab for the file
// each function is in (a function in a _test.go file is the harness).
func loadSymbols(path string) (*symtab, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: ELF symbol table: %v (built with -ldflags=-s?)", path, err)
	}
	files := map[uint64]string{}
	if pcln, text := f.Section(".gopclntab"), f.Section(".text"); pcln != nil && text != nil {
		data, err := pcln.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: .gopclntab: %v", path, err)
		}
		t, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
		if err != nil {
			return nil, fmt.Errorf("%s: Go line table: %v", path, err)
		}
		for _, fn := range t.Funcs {
			file, _, _ := t.PCToLine(fn.Entry)
			files[fn.Entry] = file
		}
	}
	var fr []funcRange
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
			continue
		}
		fr = append(fr, funcRange{s.Value, s.Value + s.Size, s.Name, files[s.Value]})
	}
	if len(fr) == 0 {
		return nil, fmt.Errorf("%s: no function symbols", path)
	}
	return newSymtab(fr), nil
}

// newSymtab sorts the functions by address; of two that overlap, the one
// that starts first keeps the shared addresses.
func newSymtab(fr []funcRange) *symtab {
	sort.SliceStable(fr, func(i, j int) bool { return fr[i].lo < fr[j].lo })
	out := fr[:0]
	for _, f := range fr {
		if n := len(out); n > 0 && f.lo < out[n-1].hi {
			if f.hi <= out[n-1].hi {
				continue
			}
			f.lo = out[n-1].hi
		}
		out = append(out, f)
	}
	return &symtab{out}
}

// find returns the index of the function that holds pc, or of the first
// function above pc and false.
func (s *symtab) find(pc uint64) (int, bool) {
	i := sort.Search(len(s.funcs), func(i int) bool { return s.funcs[i].hi > pc })
	return i, i < len(s.funcs) && s.funcs[i].lo <= pc
}

// attribute charges every executed instruction of every block to the
// function that holds it. A block lies inside one function but for code
// that falls through into the next symbol, so it is split at function
// boundaries. The result is a profile as parseCallgrind's, without calls:
// a function's own instructions only.
func attribute(blocks []tbCount, s *symtab, insnBytes uint64) *profile {
	p := &profile{self: map[string]int64{}, file: map[string]string{}, calls: map[string]map[string]int64{}}
	for _, b := range blocks {
		pc, left := b.vaddr, b.insns
		for left > 0 {
			i, ok := s.find(pc)
			var n uint64
			name, file := unknownFunc, ""
			switch {
			case ok:
				f := s.funcs[i]
				name, file = f.name, f.file
				n = min(left, (f.hi-pc+insnBytes-1)/insnBytes)
			case i < len(s.funcs):
				n = min(left, (s.funcs[i].lo-pc+insnBytes-1)/insnBytes)
			default:
				n = left
			}
			p.self[name] += int64(n * b.count)
			if _, seen := p.file[name]; !seen {
				p.file[name] = file
			}
			pc += n * insnBytes
			left -= n
		}
		p.total += int64(b.insns * b.count)
	}
	return p
}

// qemuCount runs one benchmark at n packets under qemu-aarch64 with the
// counting plugin and returns its profile: instructions per function.
func qemuCount(cfg arm64Config, bin string, syms *symtab, m measurement, n int, out string) (*profile, error) {
	args := []string{"-cpu", cfg.cpu, "-plugin", cfg.plugin + ",out=" + out, bin}
	cmd := exec.Command(cfg.qemu, append(args, benchArgs(m, n)...)...)
	// One P, as under callgrind: the benchmark's loop runs on one thread,
	// which the plugin's inline (non-atomic) counters need; no GC during
	// the loop but for the allocating baselines (gcEnv); no async
	// preemption signals.
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", gcEnv(m), "GODEBUG=asyncpreemptoff=1")
	cmd.Dir = filepath.Dir(bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s under %s: %v\n%s%s", filepath.Base(bin), cfg.qemu, err, tail(stdout.String()), tail(stderr.String()))
	}
	if err := checkBenchOutput(stdout.String(), m, n); err != nil {
		return nil, err
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, fmt.Errorf("the plugin wrote no counts: %v\n%s", err, tail(stderr.String()))
	}
	defer f.Close()
	blocks, err := parseTBCounts(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", out, err)
	}
	return attribute(blocks, syms, arm64InsnBytes), nil
}

// arm64Config is how to run the arm64 counts.
type arm64Config struct {
	qemu, cpu, plugin string
}

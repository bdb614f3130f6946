package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gopmd/gopmd/internal/version"
	"github.com/gopmd/gopmd/pci"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1 // the command ran and failed
	exitUsage  = 2 // bad input
)

// usageError is bad input: an unknown command or flag, a wrong number of
// arguments, a value out of range. It exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// badInput builds a usageError; the message names the problem and the fix.
func badInput(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// env is what every command runs with: its output streams, the common
// flags and the system view.
type env struct {
	stdout, stderr io.Writer
	json           bool
	force          bool
	dryRun         bool
	unsafeNoIOMMU  bool
	sys            pci.Sys
	// interrupt is closed when the user asks a long-running command
	// (stats --watch, bench, pktgen) to stop; nil never fires.
	interrupt <-chan struct{}
	now       func() time.Time
	// sysWrite, if set, makes nicctl's own sysfs writes instead of
	// sysWrite (tests play the kernel with it, each with its own).
	sysWrite func(s pci.Sys, path, value string) error
}

// texter is a result that prints itself for people; --json prints the
// result itself with encoding/json instead.
type texter interface {
	text(w io.Writer)
}

// command is one subcommand.
type command struct {
	name    string
	args    string // synopsis of the positional arguments
	summary string
	// min and max bound the positional arguments (max -1: no bound).
	min, max int
	// force: the command can write registers, behind --force.
	force bool
	// forceHelp, when set, is the command's own meaning of --force.
	forceHelp string
	// dryRun: the command takes --dry-run.
	dryRun bool
	// flags adds the command's own flags; the returned function runs
	// after parsing and may check them.
	flags func(fs *flag.FlagSet) func() error
	// run does the work and returns what to print. A non-nil result is
	// printed even when err is not nil (a self-test that failed).
	run func(e *env, args []string) (any, error)
	// mu: one run at a time, since flags binds the command's own flags to
	// variables the command shares across runs (tests run commands
	// concurrently; the program runs one).
	mu sync.Mutex
}

// commands is the command table, in help order.
var commands []*command

// order is the help order; commands register from init in file order.
var order = []string{"list", "bind", "unbind", "sriov", "info", "regs", "mdio", "phy", "link", "clock", "tsn", "stats", "rings", "selftest", "pktgen", "bench"}

func register(c *command) {
	commands = append(commands, c)
	rank := func(n string) int {
		for i, o := range order {
			if o == n {
				return i
			}
		}
		return len(order)
	}
	sort.SliceStable(commands, func(i, j int) bool { return rank(commands[i].name) < rank(commands[j].name) })
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// oneLine folds a multi-line error into one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func commandNames() string {
	var n []string
	for _, c := range commands {
		n = append(n, c.name)
	}
	return strings.Join(n, ", ")
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: nicctl [--root DIR] COMMAND [flags] [ARGS]\n       nicctl --version\n\n")
	fmt.Fprintf(w, "DEV is a device spec: 0000:00:00.0, pci:0000:00:00.0, uio:/dev/uio0,\nplatform:30be0000.ethernet, sim:enetc0, sim:fec0?soc=imx8mp.\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %-40s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintf(w, "\nEvery command takes --json. 'nicctl COMMAND -h' shows its flags.\n")
}

// parseInterspersed parses flags wherever they appear among the
// positional arguments ("regs sim:enetc0 --json" as well as
// "regs --json sim:enetc0"); "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		// A negative number is an argument, not a flag ("clock DEV adj -0.5"):
		// no flag name starts with a digit.
		if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && (args[0][1] >= '0' && args[0][1] <= '9' || args[0][1] == '.') {
			pos = append(pos, args[0])
			args = args[1:]
			continue
		}
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// run is nicctl: it parses the command line, runs one command and returns
// the exit status. Errors go to stderr as one line.
func run(args []string, stdout, stderr io.Writer) int {
	return runEnv(&env{stdout: stdout, stderr: stderr, now: time.Now}, args)
}

func runEnv(e *env, args []string) int {
	top := flag.NewFlagSet("nicctl", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	root := top.String("root", "", "read sysfs, /dev and the device tree under `DIR` (an offline or fake tree)")
	showVersion := top.Bool("version", false, "print the version and exit")
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(e.stdout)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "nicctl: %s (see nicctl help)\n", oneLine(err.Error()))
		return exitUsage
	}
	if *showVersion {
		fmt.Fprint(e.stdout, version.String("nicctl"))
		return exitOK
	}
	rest := top.Args()
	if len(rest) == 0 {
		fmt.Fprintf(e.stderr, "nicctl: no command given (commands: %s; see nicctl help)\n", commandNames())
		return exitUsage
	}
	name := rest[0]
	if name == "help" {
		if len(rest) > 1 {
			if c := lookup(rest[1]); c != nil {
				c.mu.Lock()
				defer c.mu.Unlock()
				commandUsage(e.stdout, c, nil)
				return exitOK
			}
		}
		usage(e.stdout)
		return exitOK
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(e.stderr, "nicctl: unknown command %q (commands: %s)\n", name, commandNames())
		return exitUsage
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fs, check := commandFlags(e, c, root)
	pos, err := parseInterspersed(fs, rest[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			commandUsage(e.stdout, c, fs)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "nicctl %s: %s (see nicctl %s -h)\n", c.name, oneLine(err.Error()), c.name)
		return exitUsage
	}
	if *root != "" {
		if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
			fmt.Fprintf(e.stderr, "nicctl %s: --root %s: not a directory (give the top of a sysfs/dev/device-tree tree, or drop --root)\n", c.name, *root)
			return exitUsage
		}
	}
	e.sys = pci.Sys{Root: *root}
	if len(pos) < c.min || (c.max >= 0 && len(pos) > c.max) {
		fmt.Fprintf(e.stderr, "nicctl %s: %s (usage: nicctl %s %s)\n", c.name, argCountProblem(c, pos), c.name, c.args)
		return exitUsage
	}
	if err := check(); err != nil {
		return report(e, c, err)
	}
	res, err := c.run(e, pos)
	if res != nil {
		if perr := e.print(res); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return report(e, c, err)
	}
	return exitOK
}

// commandFlags builds a command's flag set: the common flags (--json,
// --root, --unsafe-noiommu, and --force where the command writes) and its
// own. The returned function checks the command's flags after parsing.
func commandFlags(e *env, c *command, root *string) (*flag.FlagSet, func() error) {
	fs := flag.NewFlagSet("nicctl "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&e.json, "json", false, "print the result as JSON")
	fs.StringVar(root, "root", *root, "read sysfs, /dev and the device tree under `DIR`")
	fs.BoolVar(&e.unsafeNoIOMMU, "unsafe-noiommu", false, "allow device access without an IOMMU (UIO, /dev/mem, VFIO no-IOMMU): the device can DMA anywhere")
	switch {
	case c.forceHelp != "":
		fs.BoolVar(&e.force, "force", false, c.forceHelp)
	case c.force:
		fs.BoolVar(&e.force, "force", false, "allow register writes (they change the device)")
	}
	if c.dryRun {
		fs.BoolVar(&e.dryRun, "dry-run", false, "show the sysfs writes without making them")
	}
	check := func() error { return nil }
	if c.flags != nil {
		if f := c.flags(fs); f != nil {
			check = f
		}
	}
	return fs, check
}

func argCountProblem(c *command, pos []string) string {
	switch {
	case len(pos) < c.min && len(pos) == 0:
		return "missing arguments"
	case len(pos) < c.min:
		return fmt.Sprintf("missing arguments after %q", strings.Join(pos, " "))
	default:
		return fmt.Sprintf("unexpected argument %q", pos[c.max])
	}
}

// report prints err as one line and returns the exit status it means.
func report(e *env, c *command, err error) int {
	fmt.Fprintf(e.stderr, "nicctl %s: %s\n", c.name, oneLine(err.Error()))
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailed
}

func commandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: nicctl %s %s\n\n%s\n", c.name, c.args, c.summary)
	if fs == nil {
		root := ""
		fs, _ = commandFlags(&env{}, c, &root)
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	if len(names) > 0 {
		fmt.Fprintf(w, "\nFlags:\n")
	}
	for _, n := range names {
		f := fs.Lookup(n)
		arg, help := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s %s\n      %s\n", n, arg, help)
	}
}

// print writes a result: JSON with --json, else its text form.
func (e *env) print(res any) error {
	if e.json {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return fmt.Errorf("encode JSON: %w", err)
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	if t, ok := res.(texter); ok {
		t.text(e.stdout)
		return nil
	}
	_, err := fmt.Fprintf(e.stdout, "%v\n", res)
	return err
}

// marshalJSON is json.Marshal, for results whose JSON form is not their
// own layout.
func marshalJSON(v any) ([]byte, error) { return json.Marshal(v) }

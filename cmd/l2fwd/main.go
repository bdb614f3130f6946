// Command l2fwd forwards Ethernet frames between ports driven by gopmd, as
// DPDK's l2fwd does, with the xdp-bench modes (drop, tx, pass) besides.
//
//	l2fwd [flags] [SPEC...]
//	l2fwd --version
//
// Ports are device specs (0000:01:00.0, sim:enetc0?pcap-in=in.pcap, ...).
// Consecutive ports are paired (0↔1, 2↔3, an odd last port forwards to
// itself). With no SPEC it runs two simulated ENETC ports, each fed by the
// built-in generator (64-byte frames at the highest rate the forwarder
// takes) and drained by a counting sink.
//
// It prints a stats table every --stats-interval and a summary at the end
// (--json: one JSON object on stdout). It stops on Ctrl-C, SIGTERM or
// SIGHUP, after --duration, or with --until-done once finite inputs
// (pcap-in, gen-count) are sent and forwarded. At the end it checks per
// port that every frame was received or counted by cause. Exit status: 0
// on a clean run, 1 when buffers leaked, a port or a pcap-in replay failed
// while running, an input could not finish, a port's frames do not add up
// or the CPU profile could not be written in full; 2 for bad flags, specs
// or a port that cannot be opened.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc" // the ENETC driver
	_ "github.com/gopmd/gopmd/fec"   // the FEC/ENET driver
	"github.com/gopmd/gopmd/internal/safefile"
	"github.com/gopmd/gopmd/internal/version"
	_ "github.com/gopmd/gopmd/pci" // the pci (VFIO), uio and platform schemes
	_ "github.com/gopmd/gopmd/xdp" // the xdp scheme: AF_XDP on a kernel interface
	// The sim: scheme comes with simport.go, l2fwd's seam to the simulator.
)

// defaultSpecs are the ports used when none are given: synchronous models,
// which each worker pumps before it polls (no engine goroutine competing
// for the CPU with workers that never yield).
var defaultSpecs = []string{"sim:enetc0?gen=1&sink=1", "sim:enetc1?gen=1&sink=1"}

// minStatsInterval is the shortest --stats-interval: each table reads
// every port's counters and prints a line per port, and faster than ten
// tables a second nobody reads them.
const minStatsInterval = 100 * time.Millisecond

// options are the parsed command line.
type options struct {
	duration      time.Duration
	json          bool
	queues        int
	burst         int
	ringSize      int
	macUpdating   bool
	mode          mode
	statsInterval time.Duration
	capture       string
	unsafeNoIOMMU bool
	metrics       string
	metricsAny    bool
	telemetry     string
	workers       int
	cpuProfile    string
	force         bool
	untilDone     bool
	version       bool
	rxMode        string
	rxIdle        int
	specs         []string
	tapOptions
}

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// boolVar is a flag that sets *p to val when given (--mac-updating and
// --no-mac-updating share one variable).
type boolVar struct {
	p   *bool
	val bool
}

func (b boolVar) String() string {
	if b.p == nil {
		return ""
	}
	return strconv.FormatBool(*b.p == b.val)
}
func (b boolVar) IsBoolFlag() bool { return true }
func (b boolVar) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.p = v == b.val
	return nil
}

func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("l2fwd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (0: run until Ctrl-C or SIGTERM)")
	fs.BoolVar(&o.json, "json", false, "print the final summary as one JSON object on stdout (the stats table goes to stderr)")
	fs.IntVar(&o.queues, "queues", 1, "RX and TX queues per port, one worker each")
	fs.IntVar(&o.burst, "burst", 32, "frames per RxBurst/TxBurst (1-256)")
	fs.IntVar(&o.ringSize, "ring-size", 512, "RX and TX descriptors per queue")
	o.macUpdating = true
	fs.Var(boolVar{&o.macUpdating, true}, "mac-updating", "fwd mode: set destination 02:00:00:00:00:<TX port> and source to the TX port's MAC (default on)")
	fs.Var(boolVar{&o.macUpdating, false}, "no-mac-updating", "fwd mode: forward frames unchanged")
	fs.Func("mode", "fwd (to the paired port), drop (recycle at once), tx (back out of the same port, MACs swapped) or pass (to the application, then freed)", func(s string) error {
		for i, n := range modeNames {
			if n == s {
				o.mode = mode(i)
				return nil
			}
		}
		return fmt.Errorf("unknown mode %q: use fwd, drop, tx or pass", s)
	})
	fs.DurationVar(&o.statsInterval, "stats-interval", time.Second, "print the stats table this often, 100ms or more (0: only the summary)")
	fs.StringVar(&o.capture, "capture", "", "write copies of forwarded frames into this capture file, pcapng if it ends in .pcapng (overflow is counted, never waited for)")
	fs.BoolVar(&o.unsafeNoIOMMU, "unsafe-noiommu", false, "allow devices without an IOMMU (UIO, VFIO no-IOMMU): the NIC can then DMA anywhere")
	fs.StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics on this address (loopback only unless --metrics-any), e.g. 127.0.0.1:9464 or :9464")
	fs.BoolVar(&o.metricsAny, "metrics-any", false, "allow --metrics on a non-loopback address")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines, each locked to an OS thread (0: one per RX queue, at most GOMAXPROCS-1)")
	fs.BoolVar(&o.untilDone, "until-done", false, "stop by itself once every pcap-in file and every gen-count generator has been sent in full and every frame forwarded (all sources must end: sim ports with pcap-in, gen-count, peer or nothing)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	fs.StringVar(&o.rxMode, "rx-mode", rxModePoll, "how a worker waits for frames: poll (busy-poll, a core per worker at any load) or adaptive (poll while frames come; after --rx-idle empty polls arm the RX interrupts, look once more and sleep until a frame fires one: an idle forwarder costs next to no CPU; needs devices with RX interrupts: ENETC through VFIO, FEC through UIO/platform, sim ports in mode=engine, xdp: ports)")
	fs.Func("rx-idle", fmt.Sprintf("--rx-mode adaptive: empty rounds of polls before a worker sleeps (1-1000000, default %d)", defaultRxIdle), parseRxIdle(o))
	addTapFlags(fs, o)
	addTelemetryFlag(fs, o)
	fs.BoolVar(&o.force, "force", false, "let --capture and --cpuprofile replace an existing regular file (a symbolic link is never followed)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	return fs
}

// parseArgs parses flags and specs in any order.
func parseArgs(args []string) (*options, error) {
	o := &options{}
	fs := newFlagSet(o)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err.Error() + " (run l2fwd -h for the flags)"}
		}
		if fs.NArg() == 0 {
			break
		}
		o.specs = append(o.specs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if o.version {
		return o, nil
	}
	switch {
	case o.burst < 1 || o.burst > maxBurst:
		return nil, &usageError{fmt.Sprintf("--burst %d out of range: use 1 to %d", o.burst, maxBurst)}
	case o.queues < 1 || o.queues > 64:
		return nil, &usageError{fmt.Sprintf("--queues %d out of range: use 1 to 64", o.queues)}
	case o.ringSize < 8 || o.ringSize > 65536:
		return nil, &usageError{fmt.Sprintf("--ring-size %d out of range: use 8 to 65536 descriptors", o.ringSize)}
	case o.duration < 0:
		return nil, &usageError{"--duration is negative: give a positive duration such as 10s, or 0 to run until stopped"}
	case o.statsInterval < 0:
		return nil, &usageError{"--stats-interval is negative: give a duration such as 1s, or 0 for no table"}
	case o.statsInterval > 0 && o.statsInterval < minStatsInterval:
		return nil, &usageError{fmt.Sprintf("--stats-interval %v is too short: a table is printed each interval and counts are read from every port; give %v or more (1s is the default), or 0 for no table", o.statsInterval, minStatsInterval)}
	case o.workers < 0:
		return nil, &usageError{"--workers is negative: give a worker count, or 0 for one per port queue"}
	case o.capture != "" && (o.mode == modeDrop || o.mode == modePass):
		return nil, &usageError{fmt.Sprintf("--capture copies forwarded frames, and --mode %s forwards none: use --mode fwd or tx, or drop --capture", o.mode)}
	}
	if o.metrics != "" {
		addr, err := metricsAddr(o.metrics, o.metricsAny)
		if err != nil {
			return nil, &usageError{err.Error()}
		}
		o.metrics = addr
	}
	if len(o.specs) == 0 {
		o.specs = append([]string(nil), defaultSpecs...)
	}
	for _, s := range o.specs {
		if _, err := driver.ParseSpec(s); err != nil {
			return nil, &usageError{err.Error()}
		}
	}
	if err := checkTapOptions(o); err != nil {
		return nil, err
	}
	if err := checkRxMode(o); err != nil {
		return nil, err
	}
	if o.untilDone {
		if err := checkUntilDone(o.specs); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// checkUntilDone refuses --until-done when a port's input never ends: a
// real device, a generator without gen-count, an AF_PACKET socket. At
// least one port must have an input that ends (pcap-in, gen-count).
func checkUntilDone(specs []string) error {
	finite := 0
	for i, raw := range specs {
		s, _ := driver.ParseSpec(raw)
		f, endless := inputEnds(s)
		if endless != "" {
			return &usageError{fmt.Sprintf("--until-done: port %d (%s) never runs dry: %s; give it pcap-in= or gen-count=, or stop with --duration or Ctrl-C instead", i, raw, endless)}
		}
		if f {
			finite++
		}
	}
	if finite == 0 {
		return &usageError{"--until-done: no port has an input that ends; give one pcap-in=FILE or gen=1&gen-count=N, or stop with --duration or Ctrl-C instead"}
	}
	return nil
}

// metricsAddr checks a --metrics address: a bare port binds to loopback,
// and anything but loopback needs --metrics-any.
func metricsAddr(a string, any bool) (string, error) {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return "", fmt.Errorf("--metrics %q: %v (give host:port such as 127.0.0.1:9464, or :9464 for loopback)", a, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("--metrics %q: port %q is not a number from 0 to 65535", a, port)
	}
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port), nil
	}
	if any {
		return a, nil
	}
	if host == "localhost" {
		return a, nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return a, nil
	}
	return "", fmt.Errorf("--metrics %q is not a loopback address: counters would be visible to the network; use 127.0.0.1:%s, or add --metrics-any to expose them on purpose", a, port)
}

var usageText = `usage: l2fwd [flags] [SPEC...]

Forwards frames between ports: 0<->1, 2<->3, an odd last port to itself.
SPEC is a device: 0000:01:00.0 or pci:0000:01:00.0 (VFIO), uio:/dev/uio0,
platform:NODE, sim:enetcN, sim:fecN, with options after '?', e.g.
  sim:enetc0?gen=1&sink=1            generator in, counting sink out
  sim:enetc0?pcap-in=in.pcap&pcap-out=out.pcap
  sim:enetc0?afpacket=veth0          a real Linux interface
With no SPEC: ` + strings.Join(defaultSpecs, " ") + `

Workers: one goroutine per RX queue, each locked to an OS thread, polling
without pause, but at most GOMAXPROCS-1 of them: one CPU stays for the
link watchers, metrics and engine-mode device models, so a worker may poll
several queues in turn. Synchronous sim ports joined by a cable (peer=) are
polled by one worker together, as the cable delivers on the sender's
goroutine. --workers N sets the count outright. The stats header says how
many run and why.

TX refusals: what a TX queue does not take (its ring is full, or the port
is stopping) is freed and counted on the TX port as tx:refused, never
offered again. An ENETC MDIO register access (the link poll, once a
second) refuses nothing: the TX burst waits for it (ERR050089).

Link changes: once every port has started, each change of a port's link
that its driver sees (the link watcher polls every link-poll=, default 1 s)
is logged on stderr as it happens: "l2fwd: port 1 (SPEC): link down (was
up 1000 Mb/s full duplex)".

Accounting: at the end, per port, frames produced by the inputs must equal
frames received plus receive drops by cause, and frames received must
equal frames handed on plus TX refusals (and bounce or TAP counts); a port
that does not balance is named and l2fwd exits 1.

Exception path (--tap): each port gets a TAP interface (gopmd0, gopmd1,
...; --tap-name) with the port's MAC and MTU. Frames to the port's MAC
and those --tap-rules names go up to the kernel instead of being
forwarded, broadcasts and IPv6 neighbour discovery to group addresses
(neighbour solicitations to solicited-node groups) are copied up and
forwarded, other multicast is forwarded only, and what the kernel
sends out of the TAP goes out of the port. Give the TAP an address (ip
addr add 192.0.2.1/24 dev gopmd0) and the appliance answers ARP, ping,
SSH on its data port, over IPv4 and IPv6. Counted per port under "tap".

Stopping: Ctrl-C, SIGTERM, SIGHUP (the terminal closed), --duration, or
--until-done once every pcap-in file and gen-count generator has been
sent and forwarded. Exit status 0, 1 when buffers leaked, a port or
pcap-in failed, an input could not finish, a port's frames do not add up
or the CPU profile could not be written, 2 for bad input.

flags:
`

func main() {
	// SIGHUP (the terminal or SSH session went away) stops l2fwd as SIGTERM
	// does: the summary is printed and the capture and profile flushed.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

// run is l2fwd; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageText)
		fs := newFlagSet(&options{})
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "l2fwd: %s\n", oneLine(err.Error()))
		return 2
	}
	if o.version {
		fmt.Fprint(stdout, version.String("l2fwd"))
		return 0
	}
	if o.cpuProfile == "" {
		return forward(ctx, o, stdout, stderr)
	}
	f, err := createProfile(o.cpuProfile, safefile.Options{Overwrite: o.force, OverwriteHint: "--force"})
	if err != nil {
		fmt.Fprintf(stderr, "l2fwd: --cpuprofile: %v\n", err)
		return 2
	}
	pw := &profileWriter{f: f}
	if err := pprof.StartCPUProfile(pw); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "l2fwd: --cpuprofile: %v\n", err)
		return 2
	}
	code := forward(ctx, o, stdout, stderr)
	pprof.StopCPUProfile() // returns once every write is done
	if err := pw.finish(); err != nil {
		fmt.Fprintf(stderr, "l2fwd: --cpuprofile %s: %s: the profile is incomplete; free space or give another path\n", o.cpuProfile, oneLine(err.Error()))
		return max(code, 1)
	}
	return code
}

// createProfile creates the --cpuprofile file; tests replace it.
var createProfile = safefile.Create

// profileWriter is the --cpuprofile file as the profiler writes it: the
// profiler ignores write errors, so it keeps the first one.
type profileWriter struct {
	f   *os.File
	n   int64
	err error
}

func (w *profileWriter) Write(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.f.Write(b)
	w.n += int64(n)
	if err != nil {
		w.err = err
	}
	return n, err
}

// finish syncs and closes the file and says what went wrong on the way:
// a failed write, sync or close, or a profile with no bytes at all.
func (w *profileWriter) finish() error {
	err := w.err
	if err == nil && w.n == 0 {
		err = errors.New("the profiler wrote nothing")
	}
	if serr := w.f.Sync(); err == nil && serr != nil && !errors.Is(serr, syscall.EINVAL) {
		err = serr
	}
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// oneLine keeps an error message on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

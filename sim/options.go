package sim

import (
	"fmt"
	"io"
	"strings"

	fecmodel "github.com/gopmd/gopmd/fec/model"
)

//go:generate go run ./internal/optionsdoc ../docs/sim-options.md

// Option is one spec option of a simulated port: the table below is the
// one place they are defined. The options each model accepts
// (enetcOptions, fecOptions, attachOptions) and the reference
// docs/sim-options.md are made from it; TestOptionsReference fails when
// the checked-in reference differs from it (go generate ./sim writes it).
type Option struct {
	// Name is the key, as in sim:enetc0?Name=Value.
	Name string
	// Group is who takes it: "model" (every simulated device), "enetc",
	// "fec", "enetc-timer" (the 1588 timer function, which takes only its
	// own) or "wiring" (what the port is connected to; every device).
	Group string
	// Value is what it takes, Default what applies without it.
	Value, Default string
	// Doc says what it does.
	Doc string
}

// Options are the spec options of simulated ports, by group.
var Options = []Option{
	{"mode", "model", "`sync` or `engine`", "`sync`",
		"`sync`: a doorbell write processes the rings on the writer's goroutine, deterministic; the port's sources are pulled by whoever drives it (l2fwd does, before each poll). `engine`: a DMA-engine goroutine does it (every engine-mode ENETC shares one; each FEC has its own); it sleeps while there is nothing to do."},
	{"mmio-cost", "model", "a duration from 0 to 1ms, such as `100ns`", "0",
		"Time each register access takes (a busy wait), to stand for a bus slower than memory."},
	{"link", "model", "`up` or `down`", "`up`",
		"The link state the device's PHY starts with (with `afpacket`, it then follows the interface's carrier)."},

	{"vf", "enetc", "`1` or `0`", "`0`",
		"`1`: a virtual function (PCI device 0xef00) instead of a physical one (0xe100)."},
	{"pf", "enetc", "the name of an open `sim:enetcN` PF, with `vf=1`", "none",
		"The VF is one of that PF's two VFs: its messages go to that PF, whose PSIPMAR0/1(n) holds its MAC."},
	{"chip", "enetc", "up to 32 letters, digits, `-` or `_`", "one chip for every `sim:enetcN`",
		"The simulated LS1028A the function belongs to: the functions of one chip share erratum ERR050089, as on silicon."},
	{"wiring", "enetc", "`sgmii`, `2500base-x`, `rgmii` or `internal` (PF only)", "not modelled",
		"How the port is wired to the board: frames pass only while the MAC's interface (PM0_IF_MODE) and, for SGMII and 2500BASE-X, the PCS are programmed for it."},
	{"speed", "enetc", "`10`, `100` or `1000`", "`1000`",
		"The speed in Mb/s the PHY resolves."},
	{"of-node", "enetc", "a directory", "none",
		"Presented as the function's device-tree node, for the driver's `phy-mode` lookup."},

	{"soc", "fec", "one of " + strings.Join(quoted(fecmodel.Profiles()), ", "), "`" + fecmodel.DefaultSoC + "`",
		"The SoC whose ENET the model is: its errata, descriptor formats, queues and top speed."},
	{"speed", "fec", "`10`, `100` or `1000`", "the part's top speed",
		"The link partner's top speed in Mb/s, which the PHY resolves unless the driver leaves it out of the PHY's advertisement (as over RMII)."},
	{"phy-addr", "fec", "0 to 31", "0",
		"The PHY's MDIO address."},
	{"shared-phy", "fec", "MDIO addresses 0 to 31, separated by commas", "none",
		"Further PHYs answering on the same MDIO bus, as another ENET's PHY does on a shared bus."},
	{"irq-lines", "fec", "1 to the number of the part's interrupt lines", "every line, as vfio-platform delivers them",
		"The device tree's first N interrupts reach user space: `1` as uio_pdrv_genirq delivers only the first. Interrupt i is the MAC line the tree lists i-th."},

	{"ptp-clock", "fec", "8000000 to 1000000000 (Hz)", "100 MHz",
		"The rate of the clock that drives the ENET's 1588 timer; the driver reads the same option (the part's device tree gives it to Linux)."},
	{"freq-error", "fec", "-1000000 to 1000000 (ppb)", "0",
		"How far the 1588 timer's clock runs off its nominal rate."},
	{"timeline", "fec", "`wall` or `manual`", "`wall`",
		"The model time the 1588 timer counts: `wall` follows the host's clock; `manual` moves only when a test advances it."},

	{"chip", "enetc-timer", "up to 32 letters, digits, `-` or `_`", "one chip for every `sim:enetcN`",
		"The simulated LS1028A whose 1588 timer function this is: it becomes the clock of that chip's `sim:enetcN` ports (same `chip=`)."},
	{"ref-clock", "enetc-timer", "100000001 to 1000000000 (Hz)", "400 MHz",
		"The timer's reference clock; the driver reads the same option, as the board's device tree gives it to Linux."},
	{"freq-error", "enetc-timer", "-1000000 to 1000000 (ppb)", "0",
		"How far the timer's reference clock runs off its nominal rate."},
	{"timeline", "enetc-timer", "`wall` or `manual`", "`wall`",
		"The model time the timer counts: `wall` follows the host's clock; `manual` moves only when a test advances it."},

	{"peer", "wiring", "`sim:NAME`, another simulated port", "none",
		"A cable to that port: open both, the second to open completes it. Between two `sync` ports a frame crosses on the sender's goroutine; otherwise through a ring the receiver pulls. Not with `sink`, `afpacket` or `pcap-out`."},
	{"pcap-in", "wiring", "a pcap or pcapng file", "none",
		"Replays the capture into the port's receive side (the format is told by its magic number). A frame shorter than 60 bytes is padded, as the sending MAC did; a damaged record ends the replay with an error naming it."},
	{"pcap-speed", "wiring", "`max` or `file`, with `pcap-in`", "`max`",
		"`max`: as fast as the port posts receive buffers, losing nothing. `file`: at the capture's own timing; the port drops (and counts) what it has no buffer for."},
	{"pcap-out", "wiring", "a file name", "none",
		"Writes every frame the port transmits to a new capture file. An existing file is refused (see `pcap-overwrite`), a symbolic link is never followed, and the file a `pcap-in` replays is refused under any name."},
	{"pcap-overwrite", "wiring", "`1` or `0`, with `pcap-out`", "`0`",
		"`1`: `pcap-out` may replace an existing regular file."},
	{"pcap-format", "wiring", "`pcap` or `pcapng`, with `pcap-out`", "`pcapng` for a `.pcapng` name, `pcap` otherwise",
		"The format `pcap-out` writes (classic pcap with nanosecond timestamps, or pcapng)."},
	{"afpacket", "wiring", "a Linux interface name", "none",
		"Joins the port to the interface through an AF_PACKET socket (root or CAP_NET_RAW; the interface goes promiscuous while the port is open). The interface's carrier is the port's link: the PHY's link goes down when the carrier does, and frames sent meanwhile are counted (`afpacket:link_down`)."},
	{"gen", "wiring", "`1` or `0`", "`0` (any `gen-*` option turns it on)",
		"A generator of Ethernet/IPv4/UDP frames into the port's receive side, each stamped with its flow and sequence number for a `sink`."},
	{"gen-size", "wiring", fmt.Sprintf("%d to %d bytes", GenMinSize, GenMaxSize), fmt.Sprint(GenMinSize),
		"Frame size on the wire, FCS included."},
	{"gen-flows", "wiring", fmt.Sprintf("1 to %d", GenMaxFlows), "1",
		"Distinct flows, sent round robin. With the RSS key the ENETC driver programs (the Microsoft specification's), their hashes fall in buckets 0, 1, 2, ... in turn, so however few they are they spread evenly over a port's receive queues."},
	{"gen-rate", "wiring", "`max` or a frame rate from 1 to 1G, such as `1M`, `250k`, `1500`", "`max`",
		"`max`: as fast as the port takes frames, losing none. A rate: frames per second whatever the port does (it drops and counts what it has no buffer for)."},
	{"gen-count", "wiring", "a number of frames", "0 (no end)",
		"The generator stops after that many frames."},
	{"sink", "wiring", "`1` or `0`", "`0`",
		"Counts every frame the port transmits and checks the generator's stamps: lost, duplicated and reordered frames per flow."},
}

func quoted(l []string) []string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = "`" + s + "`"
	}
	return q
}

// optionNames are the names of the options of the groups given, in table
// order.
func optionNames(groups ...string) []string {
	var n []string
	for _, o := range Options {
		for _, g := range groups {
			if o.Group == g {
				n = append(n, o.Name)
			}
		}
	}
	return n
}

// WiringOptions are the options that connect a port to something (peer
// first), which every simulated device takes.
func WiringOptions() []string { return optionNames("wiring") }

// WriteReference writes the options reference (docs/sim-options.md).
func WriteReference(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`# Simulated device options

<!-- Made by go generate ./sim from the table in sim/options.go; edit that, not this. -->

A simulated device is opened by a spec such as ` + "`sim:enetc0`" + ` or ` + "`sim:fec1`" + `;
options follow in URL query form: ` + "`sim:enetc0?mode=engine&gen-rate=1M&sink=1`" + `.
An option a device does not take is an error, as is a value it does not
accept. The drivers' own options (` + "`queues=`" + `, ` + "`rx-ring=`" + `, ` + "`link-poll=`" + `, ...) apply
too.
`)
	for _, g := range []struct{ group, title, intro string }{
		{"model", "Every simulated device", "`sim:enetcN` and `sim:fecN` both take these."},
		{"enetc", "`sim:enetcN`: the ENETC of the LS1028A", ""},
		{"fec", "`sim:fecN`: the FEC/ENET of i.MX SoCs", ""},
		{"enetc-timer", "`sim:enetc-timerN`: the LS1028A's 1588 timer function", "A timer takes these and no others: it has no wire."},
		{"wiring", "What a port is connected to", "Every simulated device takes these. Without any, the port transmits into a counting discard and receives nothing."},
	} {
		fmt.Fprintf(&b, "\n## %s\n\n", g.title)
		if g.intro != "" {
			b.WriteString(g.intro + "\n\n")
		}
		b.WriteString("| option | value | default | what it does |\n|---|---|---|---|\n")
		for _, o := range Options {
			if o.Group == g.group {
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", o.Name, o.Value, o.Default, o.Doc)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

package driver

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TSN is implemented by ports that schedule transmission by traffic class
// (IEEE 802.1Q): the mapping of priorities to traffic classes and of
// traffic classes to TX queues (Linux's mqprio), time-aware gate control
// lists (802.1Qbv, Linux's taprio offload) and credit-based shapers
// (802.1Qav, Linux's cbs offload). Assert it on a Port, or use TSNOf.
//
// The driver never chooses a queue per packet: a frame's traffic class is
// the class of the TX queue it is sent on. TCMap.Queue names the queue for
// a priority, so the application picks it once per flow; TxBurst costs the
// same with or without TSN. The calls are set-up calls, for the port's
// control goroutine.
type TSN interface {
	// TSNCaps is what the port's scheduler offers.
	TSNCaps() TSNCaps
	// SetTCMap sets the priority to traffic class to TX queue mapping.
	// The zero TCMap puts every queue back in traffic class 0.
	SetTCMap(m TCMap) error
	// SetGateList loads a gate control list and turns time gating on; the
	// zero GateList (no entries) turns it off, every gate open. Base
	// times are times of the port's hardware clock (ClockOf).
	SetGateList(g GateList) error
	// SetCBS gives traffic class tc a credit-based shaper with the given
	// idle slope in kbit/s (tc cbs's idleslope); 0 takes it off, or, where
	// the hardware always shapes the class (the FEC's AVB rings), gives it
	// its default back. The hardware holds the idle slope at its own
	// resolution: TSNState says what it took.
	SetCBS(tc int, idleSlopeKbps int64) error
	// TSNState is the configuration in effect, as the hardware holds it.
	TSNState() (TSNState, error)
}

// ErrNoTSN is wrapped when a port schedules no traffic classes.
var ErrNoTSN = errors.New("no traffic scheduling")

// TSNOf returns p's scheduler, or an error wrapping ErrNoTSN naming the
// port and its driver.
func TSNOf(p Port) (TSN, error) {
	t, ok := p.(TSN)
	if !ok {
		return nil, fmt.Errorf("%s: %w: the %s driver offers no traffic classes", p.Info().Name, ErrNoTSN, p.Info().Driver)
	}
	return t, nil
}

// TSNCaps is what a port's scheduler offers.
type TSNCaps struct {
	// TrafficClasses is how many traffic classes the port has.
	TrafficClasses int
	// MaxGateEntries is the longest gate control list the hardware takes
	// (0: no time gating).
	MaxGateEntries int
	// MaxInterval is the longest gate interval and cycle time.
	MaxInterval time.Duration
	// CBS reports credit-based shapers; CBSClasses are the classes that
	// may have one, given the TCMap in effect.
	CBS        bool
	CBSClasses []int
}

// MaxPrio is the number of frame priorities a TCMap maps (the 4-bit
// skb priority range of mqprio's map).
const MaxPrio = 16

// TCMap maps priorities to traffic classes and traffic classes to TX
// queues, as tc mqprio's "num_tc N map P0 P1 ... queues C@O ...".
type TCMap struct {
	// NumTC is how many traffic classes are in use (0: the mapping is off,
	// every queue in class 0).
	NumTC int
	// PrioTC is the traffic class of each priority.
	PrioTC [MaxPrio]uint8
	// Queues are the TX queues of each traffic class, NumTC of them.
	Queues []QueueRange
}

// QueueRange is Count TX queues from Offset on (mqprio's "Count@Offset").
type QueueRange struct {
	Count, Offset int
}

// Queue is the first TX queue of priority prio's traffic class, or -1 if
// the map has none for it.
func (m TCMap) Queue(prio int) int {
	if prio < 0 || prio >= MaxPrio {
		return -1
	}
	if m.NumTC == 0 {
		return 0
	}
	tc := int(m.PrioTC[prio])
	if tc >= len(m.Queues) {
		return -1
	}
	return m.Queues[tc].Offset
}

// ClassOfQueue is the traffic class TX queue q belongs to (0 when the map
// is off or names no class for it).
func (m TCMap) ClassOfQueue(q int) int {
	for tc, r := range m.Queues {
		if q >= r.Offset && q < r.Offset+r.Count {
			return tc
		}
	}
	return 0
}

// Check reports what is wrong with m for a port of txQueues TX queues and
// classes traffic classes, naming the field.
func (m TCMap) Check(txQueues, classes int) error {
	if m.NumTC == 0 {
		if len(m.Queues) != 0 {
			return errors.New("traffic class map: queues given with num_tc 0")
		}
		return nil
	}
	if m.NumTC < 0 || m.NumTC > classes {
		return fmt.Errorf("traffic class map: num_tc %d: the port has %d traffic classes", m.NumTC, classes)
	}
	for p, tc := range m.PrioTC {
		if int(tc) >= m.NumTC {
			return fmt.Errorf("traffic class map: priority %d maps to class %d, past num_tc %d", p, tc, m.NumTC)
		}
	}
	if len(m.Queues) != m.NumTC {
		return fmt.Errorf("traffic class map: %d queue ranges for num_tc %d: give one Count@Offset per class", len(m.Queues), m.NumTC)
	}
	used := make([]int, txQueues)
	for tc, r := range m.Queues {
		if r.Count < 1 || r.Offset < 0 || r.Offset+r.Count > txQueues {
			return fmt.Errorf("traffic class map: class %d queues %d@%d: the port has TX queues 0-%d", tc, r.Count, r.Offset, txQueues-1)
		}
		for q := r.Offset; q < r.Offset+r.Count; q++ {
			if used[q] != 0 {
				return fmt.Errorf("traffic class map: TX queue %d is in class %d and class %d", q, used[q]-1, tc)
			}
			used[q] = tc + 1
		}
	}
	return nil
}

// String formats m as tc mqprio's arguments: "num_tc 2 map 0 0 1 ... queues 1@0 1@1".
func (m TCMap) String() string {
	if m.NumTC == 0 {
		return "num_tc 0"
	}
	var b strings.Builder
	b.WriteString("num_tc " + strconv.Itoa(m.NumTC) + " map")
	for _, tc := range m.PrioTC {
		b.WriteString(" " + strconv.Itoa(int(tc)))
	}
	b.WriteString(" queues")
	for _, r := range m.Queues {
		b.WriteString(" " + strconv.Itoa(r.Count) + "@" + strconv.Itoa(r.Offset))
	}
	return b.String()
}

// GateList is an 802.1Qbv gate control list as tc taprio gives it.
type GateList struct {
	// BaseTime is when the first cycle starts, in the port's clock. A base
	// time already past starts the list at the next cycle boundary,
	// BaseTime + N*CycleTime (802.1Q's SetCycleStartTime).
	BaseTime Time
	// CycleTime is the length of one cycle; 0 makes it the sum of the
	// intervals.
	CycleTime time.Duration
	// CycleTimeExtension is how long the last cycle of a list being
	// replaced may stretch rather than be cut short.
	CycleTimeExtension time.Duration
	// Entries are run in order, each cycle.
	Entries []GateEntry
}

// GateEntry is one "sched-entry S <gates> <interval>": for Interval,
// traffic class tc may send when bit tc of Gates is set.
type GateEntry struct {
	Gates    uint8
	Interval time.Duration
}

// Cycle is the cycle time in effect: CycleTime, or the sum of the
// intervals when it is 0 (see cycleOf).
func (g GateList) Cycle() time.Duration { return cycleOf(g.CycleTime, g.Entries) }

func (e GateEntry) interval() time.Duration { return e.Interval }

// cycleOf is the cycle time in effect of a gate list (GateList,
// StreamGate): cycleTime, or the sum of the entries' intervals when it is
// 0. The sum saturates at the largest (and smallest) Duration instead of
// wrapping, so a list whose intervals add up past it has the longest
// cycle, which Check refuses, never a short or negative one.
func cycleOf[E interface{ interval() time.Duration }](cycleTime time.Duration, entries []E) time.Duration {
	if cycleTime != 0 {
		return cycleTime
	}
	var s time.Duration
	for _, e := range entries {
		v := e.interval()
		switch {
		case v > 0 && s > math.MaxInt64-v:
			s = math.MaxInt64
		case v < 0 && s < math.MinInt64-v:
			s = math.MinInt64
		default:
			s += v
		}
	}
	return s
}

// Check reports what is wrong with g for hardware that takes at most
// maxEntries entries and intervals and cycles up to maxInterval, naming the
// entry or field.
func (g GateList) Check(maxEntries int, maxInterval time.Duration) error {
	if len(g.Entries) == 0 {
		return errors.New("gate list: no sched-entry given (the zero list turns gating off)")
	}
	if len(g.Entries) > maxEntries {
		return fmt.Errorf("gate list: %d entries; the hardware takes at most %d", len(g.Entries), maxEntries)
	}
	for i, e := range g.Entries {
		if e.Interval <= 0 || e.Interval > maxInterval {
			return fmt.Errorf("gate list: entry %d: interval %d ns: give 1 to %d ns", i, int64(e.Interval), int64(maxInterval))
		}
	}
	sum := cycleOf(0, g.Entries)
	if g.CycleTime < 0 || g.CycleTimeExtension < 0 {
		return errors.New("gate list: negative cycle-time or cycle-time-extension")
	}
	if g.CycleTime != 0 && g.CycleTime < sum {
		return fmt.Errorf("gate list: cycle-time %d ns is shorter than the entries' %d ns: lengthen it or give 0 (the sum)", int64(g.CycleTime), int64(sum))
	}
	if c := g.Cycle(); c > maxInterval {
		return fmt.Errorf("gate list: cycle time %d ns; the hardware takes at most %d ns", int64(c), int64(maxInterval))
	}
	if g.CycleTimeExtension > maxInterval {
		return fmt.Errorf("gate list: cycle-time-extension %d ns; the hardware takes at most %d ns", int64(g.CycleTimeExtension), int64(maxInterval))
	}
	return nil
}

// CycleStart is when the list, loaded at time now, starts its first cycle:
// BaseTime if that is not past, else the first BaseTime + N*Cycle() after
// now.
func (g GateList) CycleStart(now Time) Time {
	c := Time(g.Cycle())
	if g.BaseTime >= now || c <= 0 {
		return g.BaseTime
	}
	n := (now-g.BaseTime)/c + 1
	return g.BaseTime + n*c
}

// CBSState is one traffic class's credit-based shaper as the hardware
// holds it.
type CBSState struct {
	TC int
	// IdleSlopeKbps is the idle slope the hardware's setting gives at the
	// current link speed.
	IdleSlopeKbps int64
	// Percent is the share of the port's rate the hardware holds.
	Percent int
}

// TSNState is a port's scheduling configuration in effect.
type TSNState struct {
	TCMap TCMap
	// Gating reports a gate list in effect; Gates is it, GateStart when
	// its first cycle started (or starts).
	Gating    bool
	Gates     GateList
	GateStart Time
	// CBS lists the classes with a shaper.
	CBS []CBSState
}

// Preemption is implemented by ports with frame preemption (IEEE 802.1Qbu
// and 802.3br's MAC merge sublayer: an express MAC and a preemptable MAC,
// the pMAC), set up as ethtool --set-mm and mqprio's fp set it: a frame of
// a preemptable traffic class may be cut into fragments for an express
// frame to pass, once the link partner has answered the verify handshake
// (or verification is off). Use PreemptionOf.
type Preemption interface {
	// SetPreemption applies c; an option the hardware cannot take is an
	// error naming it, and nothing changes.
	SetPreemption(c PreemptConfig) error
	// PreemptState is the MAC merge state and counters as the hardware
	// holds them.
	PreemptState() (PreemptState, error)
}

// PreemptionOf returns p's frame preemption, or an error wrapping
// ErrNoTSN naming the port and its driver.
func PreemptionOf(p Port) (Preemption, error) {
	t, ok := p.(Preemption)
	if !ok {
		return nil, fmt.Errorf("%s: %w: the %s driver offers no frame preemption", p.Info().Name, ErrNoTSN, p.Info().Driver)
	}
	return t, nil
}

// PreemptConfig is ethtool --set-mm's settings and the preemptable classes.
type PreemptConfig struct {
	// Enabled turns the MAC merge sublayer on (pmac-enabled and
	// tx-enabled).
	Enabled bool
	// Verify runs the verify handshake before preempting (verify-enabled).
	Verify bool
	// VerifyTime is the wait between verify attempts (verify-time).
	VerifyTime time.Duration
	// AddFragSize is the link partner's minimum non-final fragment, in
	// 64-byte steps beyond the first 64 (tx-min-frag-size (n+1)*64-4).
	AddFragSize int
	// PreemptableTCs has bit tc set for each preemptable traffic class.
	PreemptableTCs uint8
}

// Verify states (ethtool's verify-status).
const (
	VerifyDisabled  = "disabled"
	VerifyInitial   = "initial"
	VerifyVerifying = "verifying"
	VerifySucceeded = "succeeded"
	VerifyFailed    = "failed"
	VerifyUnknown   = "unknown"
)

// PreemptState is ethtool --show-mm's answer.
type PreemptState struct {
	Supported, Enabled bool
	// Active: frames of preemptable classes may be preempted now.
	Active         bool
	VerifyStatus   string
	VerifyTime     time.Duration
	AddFragSize    int
	PreemptableTCs uint8
	// The MAC merge counters (802.3's aMACMerge*): reassembly errors,
	// SMD errors, frames reassembled, fragments received and sent beyond
	// each frame's first, holds.
	AssemblyErrors, SMDErrors, AssemblyOK, FragmentsRx, FragmentsTx, Holds uint64
}

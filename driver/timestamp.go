package driver

import (
	"strings"
)

// Hardware timestamps: the time a frame crossed the MAC, read from the
// port's clock (ClockOf) by the device itself and handed over in its
// descriptors. A port takes them when it is opened with the spec option
// timestamps=rx, timestamps=tx or timestamps=rx,tx (ParseTimestamps);
// without it the RX and TX paths are the plain ones, untouched, and the
// calls below panic with *TimestampsOff.
//
// The times are Time values of the port's clock: a two-step PTP
// implementation compares them with that clock's Now and steers it with
// Step and AdjFreq.

// RxTimestamper is an RX queue that reports when each frame arrived.
type RxTimestamper interface {
	// RxBurstStamped is RxBurst that also writes, for each frame
	// pkts[i] it returns, the hardware receive time into stamps[i]: when
	// the frame's start reached the MAC, in the port's clock; 0 for a
	// frame the device wrote back without a stamp (ENETC: TSTMP clear,
	// docs/hardware-enetc.md §12.5). It takes at most min(len(pkts),
	// len(stamps)) frames, on the queue's own goroutine as RxBurst. It is
	// a separate path from RxBurst (frame by frame, not the one-BD fast
	// loop): a port polls one or the other. (An ENETC queue takes both in
	// turn: on a port opened with timestamps=rx its RxBurst is this path
	// with the stamps dropped.)
	RxBurstStamped(pkts []*Packet, stamps []Time) int
}

// TxStamp is the transmit time of a frame queued with TxStamped.
type TxStamp struct {
	// ID is the caller's id given to TxStamped.
	ID uint64
	// Time is when the frame's start left the MAC, in the port's clock;
	// 0 when Lost.
	Time Time
	// Lost: the frame was not sent (the device reported an error, or the
	// port stopped with it queued); it is counted by cause in the queue's
	// stats as any other frame.
	Lost bool
}

// TxTimestamper is a TX queue that timestamps frames on request, for
// two-step PTP: the frame goes out as sent, and its transmit time is
// reported once the device is done with it, read from the descriptor it
// wrote back (no syscall, no interrupt).
type TxTimestamper interface {
	// TxStamped queues one frame, as TxBurst does with a burst of one, and
	// asks the device for the time it leaves. It reports false, and keeps
	// nothing, when the ring has no room, when the queue already holds a
	// ring's worth of requests and stamps not taken, or when the port is
	// stopped or closed (the caller still holds p); a frame TxBurst would
	// refuse, or one sent while the link is down, is taken, counted and
	// freed as TxBurst does, and its stamp is reported Lost.
	TxStamped(p *Packet, id uint64) bool
	// TxTimestamps moves the stamps of requested frames the device is done
	// with into dst, oldest first, and returns how many. It reclaims the
	// ring as Reclaim does. A queue holds as many stamps as its ring has
	// descriptors; they wait for the caller, none is dropped. It returns 0
	// while the port is stopped or closed; the stamps of frames a Stop
	// took off the ring (Lost) come after the next Start.
	TxTimestamps(dst []TxStamp) int
}

// Timestamps says which hardware timestamps a port takes.
type Timestamps uint8

const (
	// TimestampRx: RxBurstStamped reports receive times.
	TimestampRx Timestamps = 1 << iota
	// TimestampTx: TxStamped and TxTimestamps report transmit times.
	TimestampTx
)

// String is the option's value: "rx", "tx", "rx,tx" or "off".
func (t Timestamps) String() string {
	switch t {
	case TimestampRx:
		return "rx"
	case TimestampTx:
		return "tx"
	case TimestampRx | TimestampTx:
		return "rx,tx"
	}
	return "off"
}

// ParseTimestamps parses the value of the spec option timestamps=: rx,
// tx, rx,tx (in either order) or off.
func ParseTimestamps(v string) (Timestamps, error) {
	if v == "off" {
		return 0, nil
	}
	var t Timestamps
	for _, f := range strings.Split(v, ",") {
		switch f {
		case "rx":
			t |= TimestampRx
		case "tx":
			t |= TimestampTx
		default:
			return 0, BadOption("timestamps", v, "not a list of timestamp directions", "rx, tx, rx,tx or off")
		}
	}
	return t, nil
}

// TimestampsOff is the panic value of RxBurstStamped, TxStamped or
// TxTimestamps on a queue whose port was not opened with those timestamps
// on: a program error, like ConcurrentUse.
type TimestampsOff struct {
	Port string // the port's name
	Call string // "RxBurstStamped", "TxStamped", "TxTimestamps"
	Want string // the option that turns it on
}

func (e *TimestampsOff) Error() string {
	return e.Port + ": " + e.Call + " on a port opened without " + e.Want + ": add it to the port's spec"
}

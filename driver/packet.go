package driver

import "github.com/gopmd/gopmd/pool"

// Packet is the header of one packet buffer (see pool.Packet): data window,
// segments, receive port and queue, flags and RSS hash. It lives in its
// pool's header array; Free recycles it.
type Packet = pool.Packet

// Action is what an application does with a received frame: the userspace
// counterparts of the kernel drivers' XDP verdicts.
type Action uint8

const (
	// Drop recycles the buffer at once (XDP_DROP).
	Drop Action = iota
	// Pass hands the frame to the application, which frees it (XDP_PASS).
	Pass
	// Tx sends the frame back out of the port it came in on, in place (XDP_TX).
	Tx
	// Redirect queues the frame on another port's TX queue, flushed once
	// per poll (XDP_REDIRECT).
	Redirect
)

var actionNames = [...]string{"drop", "pass", "tx", "redirect"}

// String is the verdict's name: "drop", "pass", "tx" or "redirect".
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "action(" + itoa(int(a)) + ")"
}

// ParseAction parses "drop", "pass", "tx" or "redirect".
func ParseAction(s string) (Action, error) {
	for i, n := range actionNames {
		if n == s {
			return Action(i), nil
		}
	}
	return 0, &SpecError{Spec: s, Reason: "unknown action; use drop, pass, tx or redirect"}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}

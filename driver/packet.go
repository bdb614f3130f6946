package driver

import (
	"strconv"

	"github.com/gopmd/gopmd/pool"
)

// Packet is the header of one packet buffer (see pool.Packet): data window,
// segments, receive port and queue, and what the device reported of a
// received frame (RxMeta: parse summary, stripped VLAN tag, flags, RSS hash,
// decoded when read). It lives in its pool's header array; Free recycles it.
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
	return "action(" + strconv.Itoa(int(a)) + ")"
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

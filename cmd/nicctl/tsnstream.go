package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gopmd/gopmd/driver"
)

// parseStream parses a "stream" section in tc flower's words with its gate
// and police actions:
//
//	stream chain N dst_mac MAC [vlan_id V] action gate [base-time NS]
//	    [cycle-time NS] sched-entry open|close NS [-1 -1]...
//	    [action police rate RATE burst BYTES [mtu BYTES]]
//
// vlan_id 0 is untagged frames only; no vlan_id, any.
func parseStream(a []string) (driver.Stream, error) {
	s := driver.Stream{Handle: -1, VID: driver.VLANAny}
	bad := func(f string, v ...any) (driver.Stream, error) {
		return s, badInput("tsn stream: "+f, v...)
	}
	num := func(w, v string, lo, hi int64) (int64, error) {
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil || n < lo || n > hi {
			return 0, badInput("tsn stream: %s %q: give a whole number from %d to %d", w, v, lo, hi)
		}
		return n, nil
	}
	var m *driver.Meter
	mac := false
	for i := 0; i < len(a); i++ {
		w := a[i]
		switch w {
		case "action", "gate", "police", "protocol", "802.1Q", "flower", "skip_sw":
			continue // the words that only say what follows
		case "sched-entry":
			if i+2 >= len(a) || a[i+1] != "open" && a[i+1] != "close" {
				return bad("sched-entry needs open|close and an interval in ns")
			}
			iv, err := num("sched-entry interval", a[i+2], 1, 1<<32-1)
			if err != nil {
				return s, err
			}
			s.Gate.Entries = append(s.Gate.Entries, driver.StreamGateEntry{Open: a[i+1] == "open", Interval: time.Duration(iv)})
			i += 2
			for k := 0; k < 2 && i+1 < len(a); k++ { // internal priority, max octets
				if _, err := strconv.Atoi(a[i+1]); err != nil {
					break
				}
				if a[i+1] != "-1" {
					return bad("sched-entry %s: an internal priority or octet limit per entry is not offered: give -1 -1 or leave them out", a[i+1])
				}
				i++
			}
			continue
		}
		if i+1 >= len(a) {
			return bad("%s needs a value", w)
		}
		v := a[i+1]
		i++
		var err error
		var n int64
		switch w {
		case "chain":
			n, err = num("chain", v, 0, 1<<16)
			s.Handle = int(n)
		case "dst_mac":
			hw, perr := net.ParseMAC(v)
			if perr != nil || len(hw) != 6 {
				return bad("dst_mac %q: give a MAC such as 00:04:9f:05:f4:ab", v)
			}
			s.DMAC, mac = [6]byte(hw), true
		case "vlan_id":
			n, err = num("vlan_id", v, 0, 4095)
			s.VID = int(n)
		case "base-time":
			n, err = num("base-time", v, 0, 1<<62)
			s.Gate.BaseTime = driver.Time(n)
		case "cycle-time":
			n, err = num("cycle-time", v, 1, 1<<32-1)
			s.Gate.CycleTime = time.Duration(n)
		case "rate":
			if m == nil {
				m = &driver.Meter{}
			}
			m.CIRBytes, err = rateBytes(v)
		case "burst":
			if m == nil {
				m = &driver.Meter{}
			}
			n, err = num("burst (bytes)", v, 1, 1<<32-1)
			m.CBSBytes = n
		case "mtu":
			n, err = num("mtu (bytes)", v, 1, 65535)
			s.MaxSDU = int(n)
		case "peakrate", "index", "cycle-time-ext", "clockid", "priority", "src_mac":
			return bad("%s: not offered (chain, dst_mac, vlan_id; gate base-time, cycle-time, sched-entry; police rate, burst, mtu)", w)
		default:
			return bad("unknown word %q (chain, dst_mac, vlan_id; action gate base-time, cycle-time, sched-entry; action police rate, burst, mtu)", w)
		}
		if err != nil {
			return s, err
		}
	}
	if s.Handle < 0 || !mac {
		return bad("give chain N and dst_mac MAC: a stream is its chain and destination MAC")
	}
	if m != nil && (m.CIRBytes == 0 || m.CBSBytes == 0) {
		return bad("police needs rate and burst (mtu alone: give a rate and burst too)")
	}
	s.Meter = m
	return s, nil
}

// rateBytes is tc's rate (bare bits per second, or with bit, kbit, mbit,
// gbit, or bps, kbps, mbps for bytes) in bytes per second.
func rateBytes(v string) (int64, error) {
	units := []struct {
		suf string
		mul float64 // bytes per second per unit
	}{{"kbit", 1000.0 / 8}, {"mbit", 1e6 / 8}, {"gbit", 1e9 / 8}, {"bit", 1.0 / 8}, {"kbps", 1000}, {"mbps", 1e6}, {"bps", 1}}
	mul, num := 1.0/8, v
	for _, u := range units {
		if strings.HasSuffix(strings.ToLower(v), u.suf) {
			mul, num = u.mul, v[:len(v)-len(u.suf)]
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= 0 || f*mul > 1<<40 {
		return 0, badInput("tsn stream: rate %q: give a rate such as 10mbit, 500kbit or 1000000 (bit/s)", v)
	}
	return int64(f * mul), nil
}

// streamJSON is one stream and its counters.
type streamJSON struct {
	Chain      int    `json:"chain"`
	DstMAC     string `json:"dst_mac"`
	VlanID     int    `json:"vlan_id"`
	GateOpenNS int64  `json:"gate_open_ns"`
	CycleNS    int64  `json:"cycle_ns"`
	MaxSDU     int    `json:"mtu,omitempty"`
	RateBps    int64  `json:"rate_bytes_ps,omitempty"`
	Burst      int64  `json:"burst,omitempty"`
	Matching   uint64 `json:"matching"`
	Passing    uint64 `json:"passing"`
	SDUDrops   uint64 `json:"sdu_drops"`
	GateDrops  uint64 `json:"gate_drops"`
	MeterDrops uint64 `json:"meter_drops"`
}

func streamOf(s driver.Stream, st driver.StreamStats) streamJSON {
	j := streamJSON{Chain: s.Handle, DstMAC: net.HardwareAddr(s.DMAC[:]).String(), VlanID: s.VID, CycleNS: int64(s.Gate.Cycle()), MaxSDU: s.MaxSDU,
		Matching: st.Matching, Passing: st.Passing, SDUDrops: st.SDUDrops, GateDrops: st.GateDrops, MeterDrops: st.MeterDrops}
	for _, e := range s.Gate.Entries {
		if e.Open {
			j.GateOpenNS += int64(e.Interval)
		}
	}
	if m := s.Meter; m != nil {
		j.RateBps, j.Burst = m.CIRBytes, m.CBSBytes
	}
	return j
}

func streamsText(w io.Writer, ss []streamJSON) {
	for _, s := range ss {
		vlan := map[int]string{driver.VLANAny: "any", driver.VLANUntagged: "untagged"}[s.VlanID]
		if vlan == "" {
			vlan = strconv.Itoa(s.VlanID)
		}
		fmt.Fprintf(w, "stream chain %d dst_mac %s vlan_id %s: gate open %d of %d ns", s.Chain, s.DstMAC, vlan, s.GateOpenNS, s.CycleNS)
		if s.MaxSDU > 0 {
			fmt.Fprintf(w, ", mtu %d", s.MaxSDU)
		}
		if s.RateBps > 0 {
			fmt.Fprintf(w, ", police %d B/s burst %d", s.RateBps, s.Burst)
		}
		fmt.Fprintf(w, "\n\tmatching %d passing %d, drops: sdu %d gate %d meter %d\n", s.Matching, s.Passing, s.SDUDrops, s.GateDrops, s.MeterDrops)
	}
}

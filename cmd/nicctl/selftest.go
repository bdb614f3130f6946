package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/mii"
	"github.com/gopmd/gopmd/sim"
)

func init() {
	var (
		frames   int
		loopback string
		timeout  time.Duration
	)
	register(&command{
		name: "selftest", args: "DEV", min: 1, max: 1, force: true,
		summary: "loopback self-test: send a pattern, check it comes back, check the counters; PASS/FAIL per step",
		flags: func(fs *flag.FlagSet) func() error {
			fs.IntVar(&frames, "frames", 32, "send `N` pattern frames each way")
			fs.StringVar(&loopback, "loopback", "", "`HOW` the frames come back: cable (sim: a second model port on a cable; the default there), mac (sim: the MAC's own loopback, ENETC PM0_CMD_CFG.XGLP or FEC RCR.LOOP; needs --force), phy (the PHY's BMCR loopback, restored after; needs --force; the default on hardware), external (a loopback plug or a looped cable; nothing is written)")
			fs.DurationVar(&timeout, "timeout", time.Second, "how long to wait for the frames to come back")
			return func() error {
				if frames < 1 || frames > 256 {
					return badInput("--frames %d: give 1 to 256", frames)
				}
				switch loopback {
				case "", "cable", "mac", "phy", "external":
				default:
					return badInput("--loopback %q: use cable, mac, phy or external", loopback)
				}
				if timeout <= 0 {
					return badInput("--timeout %s: give a positive duration", timeout)
				}
				return nil
			}
		},
		run: func(e *env, a []string) (any, error) { return selftestCmd(e, a[0], loopback, frames, timeout) },
	})
}

// step is one self-test step.
type step struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
}

type selftestResult struct {
	Dev      string `json:"dev"`
	Loopback string `json:"loopback"`
	Peer     string `json:"peer,omitempty"`
	Steps    []step `json:"steps"`
	Pass     bool   `json:"pass"`
}

func (r *selftestResult) text(w io.Writer) {
	how := r.Loopback
	if r.Peer != "" {
		how += " to " + r.Peer
	}
	fmt.Fprintf(w, "selftest %s (loopback: %s)\n", r.Dev, how)
	for _, s := range r.Steps {
		v := "FAIL"
		if s.Pass {
			v = "PASS"
		}
		if s.Detail != "" {
			fmt.Fprintf(w, "%s  %s: %s\n", v, s.Name, s.Detail)
		} else {
			fmt.Fprintf(w, "%s  %s\n", v, s.Name)
		}
	}
	if r.Pass {
		fmt.Fprintln(w, "RESULT: PASS")
	} else {
		fmt.Fprintln(w, "RESULT: FAIL")
	}
}

func (r *selftestResult) add(name string, pass bool, format string, a ...any) bool {
	r.Steps = append(r.Steps, step{Name: name, Pass: pass, Detail: fmt.Sprintf(format, a...)})
	return pass
}

// wiringOptions connect a sim port to something (peer first, as
// sim.WiringOptions lists them); the self-test's peer gets none of them.
var wiringOptions = sim.WiringOptions()

// simPeer builds the spec pair of a cable for a sim device: DEV gets
// peer=, and the far end, a model of the same kind with DEV's other
// options (soc=, mode=, ...), gets peer= back. A peer DEV already names
// is used as the far end.
func simPeer(sp driver.Spec) (a, b, bName string, err error) {
	kind := strings.TrimRight(sp.Name, "0123456789")
	n, _ := strconv.Atoi(sp.Name[len(kind):])
	bName = sp.Options.Get("peer")
	for _, k := range wiringOptions[1:] {
		if sp.Options.Has(k) {
			return "", "", "", badInput("%s: option %s= would feed the self-test frames elsewhere: drop it", sp.Raw, k)
		}
	}
	if bName == "" {
		bName = fmt.Sprintf("sim:%s%d", kind, n+100)
	}
	o := url.Values{}
	for k, v := range sp.Options {
		if k != "peer" && k != "vf" && k != "link" {
			o[k] = v
		}
	}
	o.Set("peer", "sim:"+sp.Name)
	bsp, perr := driver.ParseSpec(bName)
	if perr != nil || bsp.Scheme != "sim" {
		return "", "", "", badInput("%s: peer %q is not a sim device: the cable self-test joins two models (peer=sim:%sN), or drop peer= for one picked for you", sp.Raw, bName, kind)
	}
	for k, v := range bsp.Options {
		o[k] = v
	}
	body, _, _ := strings.Cut(bName, "?")
	return withOption(sp, "peer", body), body + "?" + encodeOptions(o), body, nil
}

// fill puts frame into a freshly allocated packet.
func fill(pk *driver.Packet, frame []byte) error {
	pk.SetLen(0)
	b := pk.Append(len(frame))
	if b == nil {
		return fmt.Errorf("a %d-byte frame does not fit a %d-byte buffer", len(frame), pk.BufSize())
	}
	copy(b, frame)
	return nil
}

// patternFrames are the self-test frames: sizes from 60 to 1514 bytes,
// each with a distinct payload.
func patternFrames(n int, src []byte, seed int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		size := 60 + (i*97)%(1514-60+1)
		out[i] = testFrame(size, src, seed+i*7)
	}
	return out
}

// counterDelta finds a device counter by one of its names (drivers name
// them after their reference) and returns after-before.
func counterDelta(before, after map[string]uint64, names ...string) (string, uint64, bool) {
	for _, n := range names {
		if a, ok := after[n]; ok {
			return n, a - before[n], true
		}
	}
	return "", 0, false
}

var txFrameCounters = []string{"TFRM", "PM0_TFRM", "IEEE_T_FRAME_OK"}
var rxFrameCounters = []string{"RFRM", "PM0_RFRM", "IEEE_R_FRAME_OK"}

// exchange sends frames from a to b and checks what arrives. looped
// frames never reach the wire: whether the MAC's TX counters count them
// is not documented, so only the RX side is required then.
func exchange(r *selftestResult, dir string, a, b driver.Port, frames [][]byte, timeout time.Duration, looped bool) {
	sa0, sb0 := a.Stats(), b.Stats()
	sent := 0
	var sendErr error
	for sent < len(frames) && sendErr == nil {
		pk := a.RxQueue(0).Pool().Alloc()
		if pk == nil {
			sendErr = fmt.Errorf("no free buffer")
			break
		}
		if sendErr = fill(pk, frames[sent]); sendErr != nil {
			pk.Free()
			break
		}
		if a.TxQueue(0).TxBurst([]*driver.Packet{pk}) != 1 {
			pk.Free()
			sendErr = fmt.Errorf("TX queue full")
			break
		}
		sent++
	}
	if !r.add(dir+": transmit", sent == len(frames), "%d of %d frames queued%s", sent, len(frames), errSuffix(sendErr)) {
		return
	}
	var got [][]byte
	pkts := make([]*driver.Packet, 32)
	deadline := time.Now().Add(timeout)
	for len(got) < len(frames) && time.Now().Before(deadline) {
		a.TxQueue(0).Reclaim()
		n := b.RxQueue(0).RxBurst(pkts)
		for _, pk := range pkts[:n] {
			got = append(got, append([]byte(nil), pk.Data()...))
			pk.Free()
		}
		if n == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	bad := -1
	for i := range got {
		if i >= len(frames) || !bytes.Equal(trimFCS(got[i], len(frames[i])), frames[i]) {
			bad = i
			break
		}
	}
	switch {
	case len(got) != len(frames):
		r.add(dir+": frames come back", false, "%d of %d arrived within %s", len(got), len(frames), timeout)
	case bad >= 0:
		r.add(dir+": frames come back", false, "frame %d differs from what was sent (%d bytes, want %d)", bad, len(got[bad]), len(frames[bad]))
	default:
		r.add(dir+": frames come back", true, "%d frames, bytes identical", len(got))
	}
	for i := 0; i < 100 && a.TxQueue(0).Pending() > 0; i++ {
		a.TxQueue(0).Reclaim()
		time.Sleep(time.Millisecond)
	}
	sa1, sb1 := a.Stats(), b.Stats()
	n := uint64(len(frames))
	txd, rxd := sa1.Tx.Packets-sa0.Tx.Packets, sb1.Rx.Packets-sb0.Rx.Packets
	drops := sb1.Rx.TotalDrops() - sb0.Rx.TotalDrops() + sa1.Tx.TotalDrops() - sa0.Tx.TotalDrops()
	r.add(dir+": queue counters", txd == n && rxd == n && drops == 0, "tx %d, rx %d, drops %d (want %d, %d, 0)", txd, rxd, drops, n, n)
	tn, td, tok := counterDelta(sa0.HW, sa1.HW, txFrameCounters...)
	rn, rd, rok := counterDelta(sb0.HW, sb1.HW, rxFrameCounters...)
	switch {
	case tok && rok && looped:
		r.add(dir+": MAC counters", rd == n, "%s +%d (want +%d; %s +%d, not required in MAC loopback)", rn, rd, n, tn, td)
	case tok && rok:
		r.add(dir+": MAC counters", td == n && rd == n, "%s +%d, %s +%d (want +%d each)", tn, td, rn, rd, n)
	}
}

// trimFCS drops a trailing FCS a device may have kept on a received frame.
func trimFCS(got []byte, want int) []byte {
	if len(got) == want+4 {
		return got[:want]
	}
	return got
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

func selftestCmd(e *env, dev, loopback string, frames int, timeout time.Duration) (any, error) {
	sp, err := parseDev(dev)
	if err != nil {
		return nil, err
	}
	if loopback == "" {
		loopback = "phy"
		if sp.Scheme == "sim" {
			loopback = "cable"
		}
	}
	if loopback == "cable" && sp.Scheme != "sim" {
		return nil, badInput("--loopback cable is for sim devices; on hardware use phy (needs --force) or external")
	}
	if loopback == "phy" && !e.force {
		return nil, badInput("--loopback phy sets the PHY's BMCR loopback bit (and restores it after): add --force, or use --loopback external with a loopback plug")
	}
	if loopback == "mac" && sp.Scheme != "sim" {
		return nil, badInput("--loopback mac needs a register write the drivers do not offer yet; on hardware use phy (with --force) or external")
	}
	if loopback == "mac" && !e.force {
		return nil, badInput("--loopback mac sets the MAC's loopback bit (and restores it after): add --force")
	}
	r := &selftestResult{Dev: dev, Loopback: loopback}
	cfg := driver.Config{RxRingSize: 256, TxRingSize: 256}
	var a, b driver.Port
	if loopback == "cable" {
		as, bs, bName, err := simPeer(sp)
		if err != nil {
			return nil, err
		}
		r.Peer = bName
		if a, _, err = openPort(e, as, cfg); err != nil {
			return nil, err
		}
		defer a.Close()
		if b, _, err = openPort(e, bs, cfg); err != nil {
			return nil, err
		}
		defer b.Close()
		r.add("open", sim.CableOf(sp.Name) != nil, "%s and %s on a cable", dev, bName)
	} else {
		if a, _, err = openPort(e, dev, cfg); err != nil {
			return nil, err
		}
		defer a.Close()
		b = a
		r.add("open", true, "%s (%s)", dev, a.Info().Device)
	}
	for _, p := range uniq(a, b) {
		if err := p.Start(); err != nil {
			r.add("start "+p.Info().Name, false, "%v", err)
			return finish(r)
		}
	}
	restore := func() {}
	if loopback == "mac" {
		undo, err := macLoopback(sp)
		if !r.add("MAC loopback on", err == nil, "%s", errText(err, "loopback bit set")) {
			return finish(r)
		}
		restore = func() {
			undo()
			r.add("MAC loopback off", true, "loopback bit restored")
		}
	} else if loopback == "phy" {
		undo, err := phyLoopback(a)
		if !r.add("PHY loopback on", err == nil, "%s", errText(err, "BMCR.LOOPBACK set")) {
			return finish(r)
		}
		restore = func() {
			err := undo()
			r.add("PHY loopback off", err == nil, "%s", errText(err, "BMCR restored"))
		}
	} else {
		ok := true
		var detail []string
		for _, p := range uniq(a, b) {
			l := currentLink(p)
			ok = ok && l.Up
			detail = append(detail, p.Info().Name+" "+l.String())
		}
		if !r.add("link up", ok, "%s", strings.Join(detail, "; ")) {
			return finish(r)
		}
	}
	exchange(r, "A->B", a, b, patternFrames(frames, a.MAC(), 1), timeout, loopback == "mac")
	if b != a {
		exchange(r, "B->A", b, a, patternFrames(frames, b.MAC(), 2), timeout, false)
	}
	restore()
	return finish(r)
}

func errText(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

func uniq(a, b driver.Port) []driver.Port {
	if a == b {
		return []driver.Port{a}
	}
	return []driver.Port{a, b}
}

// finish sets the verdict: a failed step makes the command fail (exit 1)
// after the steps are printed.
func finish(r *selftestResult) (any, error) {
	failed := 0
	for _, s := range r.Steps {
		if !s.Pass {
			failed++
		}
	}
	r.Pass = failed == 0
	if failed > 0 {
		return r, fmt.Errorf("%d of %d steps failed", failed, len(r.Steps))
	}
	return r, nil
}

// phyLoopback sets BMCR.LOOPBACK on the port's PHY and returns how to
// put BMCR back.
func phyLoopback(p driver.Port) (func() error, error) {
	m, ok := p.(mdio22)
	addr, known := phyAddress(p)
	if !ok || !known || addr < 0 {
		return nil, fmt.Errorf("the port has no PHY on MDIO: use --loopback external with a loopback plug")
	}
	old, err := m.MDIORead(addr, mii.BMCR)
	if err != nil {
		return nil, err
	}
	if err := m.MDIOWrite(addr, mii.BMCR, old|mii.BMCR_LOOPBACK); err != nil {
		return nil, err
	}
	return func() error { return m.MDIOWrite(addr, mii.BMCR, old) }, nil
}

// macLooper is a device model whose MAC can loop frames back.
type macLooper interface{ SetMACLoopback(on bool) (was bool) }

// macLoopback sets the MAC loopback bit of a model and returns how to put
// it back.
func macLoopback(sp driver.Spec) (func(), error) {
	sm, err := simModelOf(sp)
	if err != nil {
		return nil, fmt.Errorf("no model open under %s", sp.Name)
	}
	m := sm.looper
	if m == nil {
		return nil, fmt.Errorf("a VF has no MAC: use the PF or --loopback cable")
	}
	was := m.SetMACLoopback(true)
	return func() { m.SetMACLoopback(was) }, nil
}

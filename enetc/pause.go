package enetc

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
)

// Flow control (docs/hardware-enetc.md §6.2). Linux programs it at every
// link-up from what phylink resolved (enetc_pl_mac_link_up): with TX pause
// every RX ring's RBMR.CM, PM0_PAUSE_QUANTA 0xFFFF, PM0_PAUSE_THRESH
// 0x7FFF, PPAUONTR 3 and PPAUOFFTR 1 times 9600 bytes; without, all of
// those 0; PM0_CMD_CFG.PAUSE_IGN clear with RX pause, set without. On a
// fixed link (the LS1028A's internal ports) phylink's answer is the
// device tree's fixed-link "pause" property: both directions with it,
// none without. gopmd does the same from the pause= option, else from the
// device tree's fixed-link node; a port with a PHY and neither keeps what
// it had (gopmd does not read the PHY's pause resolution).

// pauseMode is what the port programs at link-up.
type pauseMode uint8

const (
	pauseKeep pauseMode = iota // nothing said: the registers are left as they are
	pauseOff
	pauseRx // honour received PAUSE frames, send none
	pauseTx // send PAUSE frames on congestion, ignore received ones
	pauseOn
)

func (m pauseMode) String() string {
	return [...]string{"keep", "off", "rx", "tx", "on"}[m]
}

const (
	regPPAUONTR  = portBase + 0x0410
	regPPAUOFFTR = portBase + 0x0414

	pauseQuanta  = 0xFFFF          // quanta of the first PAUSE frame
	pauseRefresh = pauseQuanta / 2 // refresh timer while congestion lasts
	pauseOn3     = 3 * MaxFrame    // FIFO bytes that start PAUSE frames
	pauseOff1    = 1 * MaxFrame    // FIFO bytes that stop them
)

const pauseAccepted = "on (send and honour PAUSE frames), off, rx (honour only) or tx (send only)"

// resolvePause reads pause= and, without it, the device tree's fixed-link
// node. Called from parseOptions' caller after resolvePHYMode.
func (p *Port) resolvePause() error {
	o := p.dev.Spec.Options
	if o != nil && o.Has("pause") {
		v := o.Get("pause")
		m := map[string]pauseMode{"on": pauseOn, "off": pauseOff, "rx": pauseRx, "tx": pauseTx}[v]
		if m == pauseKeep {
			return driver.BadOption("pause", v, "not a flow-control setting", pauseAccepted)
		}
		if !p.pf {
			return driver.BadOption("pause", v, "a VF has no MAC of its own", "no pause= on a VF; give it to the PF")
		}
		p.pause, p.pauseWhy = m, "the pause= option"
		return nil
	}
	if !p.pf {
		return nil
	}
	fl := p.dev.Node.Child("fixed-link")
	if !fl.IsNode() {
		return nil
	}
	p.pause, p.pauseWhy = pauseOff, "the device tree's fixed-link (no pause property)"
	if fl.Has("pause") {
		p.pause, p.pauseWhy = pauseOn, "the device tree's fixed-link pause property"
	} else if fl.Has("asym-pause") {
		return fmt.Errorf("device tree %s has asym-pause without pause, which gopmd does not resolve into a direction: give pause= (%s)", fl, pauseAccepted)
	}
	return nil
}

// applyPauseLocked programs flow control as the link comes up and returns
// cmd (PM0_CMD_CFG) with PAUSE_IGN set for it. Caller holds ctl.
func (p *Port) applyPauseLocked(cmd uint32) uint32 {
	if p.pause == pauseKeep {
		return cmd
	}
	tx := p.pause == pauseOn || p.pause == pauseTx
	rx := p.pause == pauseOn || p.pause == pauseRx
	r := p.regs
	for _, q := range p.rx {
		v := r.Read32(rxRingReg(q.idx, regRBMR)) &^ rbmr_CM
		if tx {
			v |= rbmr_CM
		}
		r.Write32(rxRingReg(q.idx, regRBMR), v)
	}
	var quanta, refresh, on, off uint32
	if tx {
		quanta, refresh, on, off = pauseQuanta, pauseRefresh, pauseOn3, pauseOff1
	}
	r.Write32(regPM0_PAUSE_QUANTA, quanta)
	r.Write32(regPM0_PAUSE_THRESH, refresh)
	r.Write32(regPPAUONTR, on)
	r.Write32(regPPAUOFFTR, off)
	if rx {
		return cmd &^ pm_cmd_cfg_PAUSE_IGN
	}
	return cmd | pm_cmd_cfg_PAUSE_IGN
}

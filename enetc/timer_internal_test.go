package enetc

import (
	"testing"

	"github.com/gopmd/gopmd/enetc/model"
)

// TestTimerRegistersMatchModel checks the driver's and the model's
// transcriptions of the timer's register map against each other.
func TestTimerRegistersMatchModel(t *testing.T) {
	for _, c := range []struct {
		name          string
		driver, model uint32
	}{
		{"TMR_CTRL", tmrCTRL, model.TmrCTRL},
		{"TMR_TEVENT", tmrTEVENT, model.TmrTEVENT},
		{"TMR_TEMASK", tmrTEMASK, model.TmrTEMASK},
		{"TMR_CNT_H", tmrCNTH, model.TmrCNTH},
		{"TMR_CNT_L", tmrCNTL, model.TmrCNTL},
		{"TMR_ADD", tmrADD, model.TmrADD},
		{"TMR_PRSC", tmrPRSC, model.TmrPRSC},
		{"TMR_OFF_H", tmrOFFH, model.TmrOFFH},
		{"TMR_OFF_L", tmrOFFL, model.TmrOFFL},
		{"TMR_ALARM1_H", tmrALARM1H, model.TmrALARM1H},
		{"TMR_ALARM1_L", tmrALARM1L, model.TmrALARM1L},
		{"TMR_FIPER1", tmrFIPER1, model.TmrFIPER1},
		{"TE", tmrCtrlTE, model.TmrCtrlTE},
		{"FRD", tmrCtrlFRD, model.TmrCtrlFRD},
		{"FS", tmrCtrlFS, model.TmrCtrlFS},
		{"TCLK_PERIOD shift", tmrCtrlTclkSh, model.TmrCtrlTclkSh},
		{"TCLK_PERIOD mask", tmrCtrlTclkMask, model.TmrCtrlTclkMsk},
		{"reference clock", defaultTimerRefHz, model.DefaultTimerHz},
	} {
		if c.driver != c.model {
			t.Errorf("%s: driver %#x, model %#x", c.name, c.driver, c.model)
		}
	}
}

// TestTimerAutoConfig: ptp_qoriq_auto_config's arithmetic gives, for the
// LS1028A's 400 MHz, what the first enetc_ptp.c hard-coded.
func TestTimerAutoConfig(t *testing.T) {
	for _, c := range []struct {
		ref        uint64
		tclk, add  uint32
		maxAdjOver float64
	}{
		{400_000_000, 5, 0x80000000, 999_999_998},
		{250_000_000, 5, 0xCCCCCCCD, 249_999_998},
		{150_000_000, 10, 0xAAAAAAAB, 499_999_998},
	} {
		s := autoConfig(c.ref)
		if s.tclk != c.tclk || s.add != c.add || s.maxAdj < c.maxAdjOver {
			t.Errorf("autoConfig(%d) = tclk %d add %#x maxAdj %g, want tclk %d add %#x", c.ref, s.tclk, s.add, s.maxAdj, c.tclk, c.add)
		}
	}
}

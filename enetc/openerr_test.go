package enetc_test

import (
	"testing"

	"github.com/gopmd/gopmd/internal/drvtest"
	_ "github.com/gopmd/gopmd/sim"
)

// The ports here are sim:enetc890 to 894: openSim numbers the package's
// other ports from 100 up, and these must be opened by nothing else.

// TestOpenErrorsNameTheSpecOnce: drvtest.OpenErrorsNameTheSpecOnce with
// the ENETC's refusals: more queues than the SI owns, a ring and an MTU
// out of range.
func TestOpenErrorsNameTheSpecOnce(t *testing.T) {
	t.Parallel()
	drvtest.OpenErrorsNameTheSpecOnce(t, drvtest.SpecErrors{
		Driver: "enetc",
		BadPHY: "sim:enetc890?phy=99",
		Refused: []drvtest.Refusal{
			{Spec: "sim:enetc891?queues=64", Want: []string{"64 RX / 64 TX queues", "SICAPR0"}},
			{Spec: "sim:enetc892?rx-ring=65536", Want: []string{"rx-ring size 65536", "[64, 32768]"}},
			{Spec: "sim:enetc893?mtu=20000", Want: []string{"MTU 20000 must be in [68, 9578]"}},
		},
	})
}

// TestPortErrorsLeaveTheSpecToTheCaller: drvtest's, on an ENETC PF.
func TestPortErrorsLeaveTheSpecToTheCaller(t *testing.T) {
	t.Parallel()
	drvtest.PortErrorsLeaveTheSpecToTheCaller(t, "sim:enetc894")
}

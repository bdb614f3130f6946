package fec_test

import (
	"testing"

	"github.com/gopmd/gopmd/internal/drvtest"
	_ "github.com/gopmd/gopmd/sim"
)

// The ports here are sim:fec190 to 194: openSim numbers the package's
// other ports from 200 up, and these must be opened by nothing else.

// TestOpenErrorsNameTheSpecOnce: drvtest.OpenErrorsNameTheSpecOnce with
// the FEC's refusals: more queues than the SoC's FEC has, a buffer size
// MRBR cannot hold and an MTU out of range.
func TestOpenErrorsNameTheSpecOnce(t *testing.T) {
	t.Parallel()
	drvtest.OpenErrorsNameTheSpecOnce(t, drvtest.SpecErrors{
		Driver: "fec",
		BadPHY: "sim:fec190?phy=99",
		Refused: []drvtest.Refusal{
			{Spec: "sim:fec191?soc=imx6ul&queues=3", Want: []string{"3 RX / 3 TX queues", "fsl,imx6ul-fec has 1"}},
			{Spec: "sim:fec192?buf-size=65536", Want: []string{"buf-size=65536", "MRBR"}},
			{Spec: "sim:fec193?mtu=20000", Want: []string{"MTU 20000 must be in [68, 1962]", "fsl,imx8mp-fec"}},
		},
	})
}

// TestPortErrorsLeaveTheSpecToTheCaller: drvtest's, on a FEC.
func TestPortErrorsLeaveTheSpecToTheCaller(t *testing.T) {
	t.Parallel()
	drvtest.PortErrorsLeaveTheSpecToTheCaller(t, "sim:fec194")
}

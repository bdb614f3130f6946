package fec_test

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/internal/drvtest"
)

// TestStopUnderTrafficCountsRingFrames runs drvtest.StopUnderTraffic on a
// sim:fecN: every frame the MAC had written into the RX ring and no
// RxBurst took is counted at Stop (stopped, or crc for an error bit), in
// engine mode (a rate-limited generator) and in sync mode with jumbo
// frames (the i.MX8QM only), so one frame spans several BDs of a 64-BD
// ring.
func TestStopUnderTrafficCountsRingFrames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, opts string
		engine     bool
	}{
		{"engine, generator", "soc=imx8mp&mode=engine&gen=1&gen-rate=20k", true},
		{"sync, Receive", "soc=imx8qm&mode=sync&mtu=9000&rx-ring=64", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, m := openSim(t, c.opts)
			drvtest.StopUnderTraffic(t, drvtest.StopRig{
				Port:        p,
				Engine:      c.engine,
				Written:     func() uint64 { return m.Stats().RxFrames },
				NoBuffer:    func() uint64 { return m.Stats().RxNoBuffer },
				Errored:     func() uint64 { return m.Stats().RxErrors },
				ErrorCause:  driver.CauseCRC,
				InjectError: func() error { return m.InjectRxErrors(model.RxCRC, 1) },
				Receive:     func(size, k int) bool { return m.Port().Receive(udpFrame(t, size, -1, k)) },
				BigSize:     5000,
				Describe:    func() string { return fmt.Sprintf("%+v, last error %v", m.Stats(), m.LastModelError()) },
			})
		})
	}
}

package enetc_test

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/internal/drvtest"
)

// TestStopUnderTrafficCountsRingFrames runs drvtest.StopUnderTraffic on a
// sim:enetcN: every frame the device had written back into the RX ring and
// no RxBurst took is counted at Stop (stopped, or frame for an error
// byte), in engine mode (a rate-limited generator) and in sync mode with
// 1 KiB buffers, so a 1200-byte frame spans two BDs.
func TestStopUnderTrafficCountsRingFrames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, opts string
		engine     bool
	}{
		{"engine, generator", "mode=engine&gen=1&gen-rate=20k", true},
		{"sync, Receive", "mode=sync&buf-size=1024", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := openSim(t, c.opts, driver.Config{RxRingSize: 256, TxRingSize: 64, PoolSize: 512})
			m := s.model
			drvtest.StopUnderTraffic(t, drvtest.StopRig{
				Port:        s.port,
				Engine:      c.engine,
				Written:     func() uint64 { return m.Stats().RxFrames },
				NoBuffer:    func() uint64 { return m.Stats().NoBufferDrops },
				Errored:     func() uint64 { return m.Stats().RxErrorFrames },
				ErrorCause:  driver.CauseFrame,
				InjectError: func() error { return m.InjectRxErrors(model.RxCRC, 1) },
				Receive:     func(size, k int) bool { return m.Port().Receive(udp4(t, size, uint16(k))) },
				BigSize:     1200,
				Describe:    func() string { return fmt.Sprintf("%+v, errors %v", m.Stats(), m.ModelErrors()) },
			})
		})
	}
}

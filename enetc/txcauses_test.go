package enetc_test

import (
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/drvtest"
)

// TestTxCauses runs drvtest.TxCauses on a sim:enetcN.
func TestTxCauses(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{})
	s.wire.keep = false
	drvtest.TxCauses(t, drvtest.TxRig{
		Port: s.port,
		Wire: func() int {
			s.wire.mu.Lock()
			defer s.wire.mu.Unlock()
			return s.wire.count
		},
		InjectDMAFault: s.model.InjectTxDMAFault,
		SetLink: func(up bool) {
			s.model.SetLink(up)
			s.port.UpdateLink()
		},
		SetStall: s.model.SetTxStall,
		TooBig:   s.port.Info().MTU + 100,
	})
}

// TestCloseReportsUndrainedRing closes a port whose TX engine hangs with
// frames queued: Close says the ring did not drain (and the frames it
// dropped), and still takes every buffer back.
func TestCloseReportsUndrainedRing(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	s.model.SetTxStall(true)
	for i := 0; i < 5; i++ {
		s.model.Port().Receive(udp4(t, 100, uint16(i)))
	}
	got := s.rxAll(0, 5, 5)
	if n := s.port.TxQueue(0).TxBurst(got); n != 5 {
		t.Fatalf("TxBurst took %d of 5", n)
	}
	err := s.port.Close()
	if err == nil || !strings.Contains(err.Error(), "did not drain") || !strings.Contains(err.Error(), "5 frames dropped") {
		t.Fatalf("Close with a hung TX ring returned %v, want the undrained ring named", err)
	}
	if st := s.port.Stats().Tx; st.Drops[driver.CauseStopped] != 5 || st.Packets != 0 {
		t.Errorf("TX counts %d sent, drops %v; want the 5 frames stopped", st.Packets, st.Drops)
	}
}

package fec_test

import (
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestRxDMAFaultCounted injects receive DMA faults (the model writes the
// frame to an unmapped address: the frame is lost, its BDs stay empty, only
// EIR.EBERR says so) among good frames: each is counted as dma_fault, so
// every frame put on the wire is received or counted; a transmit DMA fault
// (its frame a TX frame error) does not count again as a receive one.
func TestRxDMAFaultCounted(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&bd=enhanced&link-poll=0")
	m.SetWire(&capture{})
	rx := p.RxQueue(0)
	buf := make([]*pool.Packet, 32)
	got := 0
	for round := 0; round < 3; round++ {
		m.InjectRxDMAFault(1)
		for i := 0; i < 10; i++ {
			m.Port().Receive(udpFrame(t, 200, -1, i))
		}
		n := rx.RxBurst(buf)
		got += n
		pool.FreeBulk(buf[:n])
		st := p.Stats().Rx
		if want := uint64(round + 1); st.Drops[driver.CauseDMAFault] != want {
			t.Fatalf("round %d: dma_fault = %d, want %d (drops %v)", round, st.Drops[driver.CauseDMAFault], want, st.Drops)
		}
		if st.Packets+st.TotalDrops() != uint64(10*(round+1)) || st.Packets != uint64(got) {
			t.Fatalf("round %d: %d frames on the wire, %d received and %d dropped (%v)", round, 10*(round+1), st.Packets, st.TotalDrops(), st.Drops)
		}
	}
	if f := m.IOMMU().FaultCount(); f != 3 {
		t.Fatalf("the model's IOMMU saw %d faults, want the 3 injected", f)
	}
	// A TX DMA fault: a frame error on TX, no receive fault.
	m.InjectTxDMAFault(1)
	pk := rx.Pool().Alloc()
	copy(pk.Append(200), udpFrame(t, 200, -1, 1))
	tx := p.TxQueue(0)
	if tx.TxBurst([]*pool.Packet{pk}) != 1 {
		t.Fatal("TxBurst refused the frame")
	}
	for i := 0; i < 100 && tx.Pending() > 0; i++ {
		tx.Reclaim()
	}
	st := p.Stats()
	if st.Rx.Drops[driver.CauseDMAFault] != 3 || st.Tx.Drops[driver.CauseFrame] != 1 || st.Tx.Packets != 0 {
		t.Fatalf("after a TX DMA fault: rx dma_fault %d (want 3), tx frame errors %d (want 1), tx sent %d (want 0)", st.Rx.Drops[driver.CauseDMAFault], st.Tx.Drops[driver.CauseFrame], st.Tx.Packets)
	}
}

package fec_test

import (
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// drainRx takes up to want frames from RX queue 0 and frees them.
func drainRx(p driver.Port, want int) int {
	buf := make([]*pool.Packet, 32)
	got := 0
	for i := 0; i < 100 && got < want; i++ {
		n := p.RxQueue(0).RxBurst(buf)
		pool.FreeBulk(buf[:n])
		got += n
	}
	return got
}

// TestMACDiscardsAreCounted: every frame the FEC MAC discards before a
// ring shows in Stats().Rx by cause, from MIB counters the driver reads: a
// runt as undersize (RMON_R_UNDERSIZE), frames while the port is stopped
// (ETHEREN clear) or the link is down as mac_discard (RMON_R_DROP).
func TestMACDiscardsAreCounted(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	want := func(what string, c driver.Cause, n uint64) {
		t.Helper()
		st := p.Stats()
		if got := st.Rx.Drops[c]; got != n {
			t.Errorf("%s: Rx.Drops[%s] = %d, want %d (all drops %v)", what, c, got, n, st.Rx.Drops)
		}
	}
	good := udpFrame(t, 100, -1, 1)
	m.Receive(good[:5]) // 0-5 bytes: not even a header
	m.Receive(good[:0])
	m.Receive(good[:13])
	want("runts", driver.CauseUndersize, 3)

	m.SetLink(false)
	p.UpdateLink()
	for i := 0; i < 3; i++ {
		m.Receive(good)
	}
	m.SetLink(true)
	p.UpdateLink()
	want("link down", driver.CauseMACDiscard, 3)

	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		m.Receive(good)
	}
	want("stopped", driver.CauseMACDiscard, 7)
	if err := p.Start(); err != nil { // resets the MAC: the totals stay
		t.Fatal(err)
	}
	want("after a restart", driver.CauseMACDiscard, 7)
	want("after a restart", driver.CauseUndersize, 3)

	m.Receive(good)
	if n := drainRx(p, 1); n != 1 {
		t.Errorf("received %d frames after the discards, want 1", n)
	}
	st := p.Stats()
	if st.Rx.Packets != 1 || st.Rx.TotalDrops() != 3+7 {
		t.Errorf("rx %d frames, drops %v: want 1 and 10 dropped", st.Rx.Packets, st.Rx.Drops)
	}
	if ms := m.Stats(); ms.RxDropped != 3+3+4 {
		t.Errorf("the model dropped %d frames before a ring, want 10", ms.RxDropped)
	}
}

// TestMIBCountersDoNotWrap: the MIB counters are 32-bit registers; the
// driver accumulates them into 64-bit totals, so RMON_R_OCTETS taken past
// 2^32 reads as its full value.
func TestMIBCountersDoNotWrap(t *testing.T) {
	t.Parallel()
	const (
		mibc      = 0x064
		mibcDIS   = 1 << 31
		rOctets   = 0x2C4
		nearWrap  = 1<<32 - 1000
		frameSize = 1000
	)
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	frame := udpFrame(t, frameSize, -1, 1)
	m.Receive(frame)
	drainRx(p, 1)
	before := p.Stats().HW["RMON_R_OCTETS"]
	per := uint64(m.Read32(rOctets)) // one frame's octets as the MAC counts them
	if before != per || per < frameSize {
		t.Fatalf("RMON_R_OCTETS %d after one frame, register %d", before, per)
	}
	// Take the counter to just below 2^32 (writable while MIB_DIS holds
	// the counters), read, then let frames carry it past the wrap.
	m.Write32(mibc, mibcDIS)
	m.Write32(rOctets, nearWrap)
	m.Write32(mibc, 0)
	if v := p.Stats().HW["RMON_R_OCTETS"]; v != nearWrap {
		t.Fatalf("RMON_R_OCTETS %d, want %d", v, uint64(nearWrap))
	}
	for i := 0; i < 5; i++ {
		m.Receive(frame)
	}
	drainRx(p, 5)
	want := uint64(nearWrap) + 5*per
	if reg := m.Read32(rOctets); uint64(reg) != want-1<<32 {
		t.Fatalf("the register reads %d, want it wrapped to %d", reg, want-1<<32)
	}
	if got := p.Stats().HW["RMON_R_OCTETS"]; got != want {
		t.Errorf("RMON_R_OCTETS %d, want %d (past 2^32)", got, want)
	}
}

// TestSharedCounterNames: Stats carries every name of driver.HWStatNames,
// counting what the port saw.
func TestSharedCounterNames(t *testing.T) {
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	frame := udpFrame(t, 100, -1, 1)
	for i := 0; i < 7; i++ {
		m.Receive(frame)
	}
	m.Receive(frame[:10])
	drainRx(p, 7)
	hw := p.Stats().HW
	for _, n := range driver.HWStatNames {
		if _, ok := hw[n]; !ok {
			t.Errorf("HW has no %s", n)
		}
	}
	if hw["rx_frames_ok"] != 7 || hw["rx_undersize"] != 1 || hw["rx_octets"] != hw["RMON_R_OCTETS"] || hw["rx_octets"] < 7*100 {
		t.Errorf("rx_frames_ok %d, rx_undersize %d, rx_octets %d: want 7, 1 and at least 700", hw["rx_frames_ok"], hw["rx_undersize"], hw["rx_octets"])
	}
}

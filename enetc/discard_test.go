package enetc_test

import (
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
)

// TestMACDiscardsAreCounted: every frame the MAC or the port discards
// before a ring shows in Stats().Rx by cause, from counters the driver
// reads like any other register: a runt (below the 60-byte minimum) as
// undersize (RUND), frames while the port is stopped (MAC receive
// disabled) or the link is down as mac_discard (RDRP), a unicast frame for
// another station with promiscuous mode off as filtered (UFDMF).
func TestMACDiscardsAreCounted(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{})
	in := s.model.Port()
	want := func(what string, c driver.Cause, n uint64) {
		t.Helper()
		st := s.port.Stats()
		if got := st.Rx.Drops[c]; got != n {
			t.Errorf("%s: Rx.Drops[%s] = %d, want %d (all drops %v)", what, c, got, n, st.Rx.Drops)
		}
	}
	good := udp4(t, 64, 1)

	in.Receive(good[:30]) // a runt: the fault no sender makes on purpose
	in.Receive(good[:0])
	want("runts", driver.CauseUndersize, 2)

	if err := s.port.SetPromiscuous(false); err != nil {
		t.Fatal(err)
	}
	other := append([]byte(nil), good...)
	copy(other, []byte{0x02, 0, 0, 0, 0x99, 0x99}) // not the port's MAC
	in.Receive(other)
	want("unicast for another station", driver.CauseFiltered, 1)
	if err := s.port.SetPromiscuous(true); err != nil {
		t.Fatal(err)
	}

	s.model.SetLink(false)
	for i := 0; i < 3; i++ {
		in.Receive(good)
	}
	s.model.SetLink(true)
	want("link down", driver.CauseMACDiscard, 3)

	if err := s.port.Stop(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		in.Receive(good)
	}
	want("stopped", driver.CauseMACDiscard, 8)
	if err := s.port.Start(); err != nil {
		t.Fatal(err)
	}

	// The frames that got through are the only ones received.
	in.Receive(good)
	got := s.rxAll(0, 1, 100)
	if len(got) != 1 {
		t.Errorf("received %d frames after the discards, want 1", len(got))
	}
	pool.FreeBulk(got)
	st := s.port.Stats()
	if st.Rx.Packets != 1 || st.Rx.TotalDrops() != 2+1+8 {
		t.Errorf("rx %d frames, drops %v: want 1 and 11 dropped", st.Rx.Packets, st.Rx.Drops)
	}
	if ms := s.model.Stats(); ms.RxRunts != 2 || ms.RxFiltered != 1 || ms.RxLinkDown != 3 || ms.RxMACDisabled != 5 {
		t.Errorf("model counts runts %d, filtered %d, link down %d, MAC off %d", ms.RxRunts, ms.RxFiltered, ms.RxLinkDown, ms.RxMACDisabled)
	}
	s.close(false)
}

// TestMACCountersDoNotWrap: an eMAC counter taken past 2^32 reads as its
// full value (the driver reads the 64-bit register), and so does the
// undersize drop count built on RUND.
func TestMACCountersDoNotWrap(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{})
	s.wire.keep = false
	in := s.model.Port()
	frame := udp4(t, 1000, 1)
	for i := 0; i < 4; i++ {
		in.Receive(frame)
	}
	pool.FreeBulk(s.rxAll(0, 4, 100))
	if v := s.port.Stats().HW["REOCT"]; v != s.model.MACCounter(modelReg("REOCT")) {
		t.Fatalf("REOCT %d, model %d", v, s.model.MACCounter(modelReg("REOCT")))
	}
	// Within 3 frames of the wrap, read, then past it.
	s.model.AdvanceMACCounter(modelReg("REOCT"), 1<<32-s.model.MACCounter(modelReg("REOCT"))-3*1004)
	s.model.AdvanceMACCounter(modelReg("RUND"), 1<<32-1)
	if v := s.port.Stats().HW["REOCT"]; v != 1<<32-3*1004 {
		t.Fatalf("REOCT %d before the wrap, want %d", v, uint64(1<<32-3*1004))
	}
	for i := 0; i < 10; i++ {
		in.Receive(frame)
	}
	in.Receive(frame[:20]) // one more runt: RUND wraps to 0
	pool.FreeBulk(s.rxAll(0, 10, 100))
	st := s.port.Stats()
	want := s.model.MACCounter(modelReg("REOCT"))
	if want <= 1<<32 {
		t.Fatalf("the model's REOCT %d did not pass 2^32", want)
	}
	if got := st.HW["REOCT"]; got != want {
		t.Errorf("REOCT %d, want %d (the register reads %d)", got, want, s.model.Read32(modelReg("REOCT")))
	}
	if got := st.HW["RUND"]; got != 1<<32 {
		t.Errorf("RUND %d, want 2^32", got)
	}
	if got := st.Rx.Drops[driver.CauseUndersize]; got != 1<<32 {
		t.Errorf("undersize drops %d, want 2^32", got)
	}
	s.close(false)
}

// TestSharedCounterNames: a PF's Stats carries every name of
// driver.HWStatNames, counting what the port saw.
func TestSharedCounterNames(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{})
	s.wire.keep = false
	frame := udp4(t, 100, 1)
	for i := 0; i < 7; i++ {
		s.model.Port().Receive(frame)
	}
	s.model.Port().Receive(frame[:20])
	pool.FreeBulk(s.rxAll(0, 7, 100))
	hw := s.port.Stats().HW
	for _, n := range driver.HWStatNames {
		if _, ok := hw[n]; !ok {
			t.Errorf("HW has no %s", n)
		}
	}
	if hw["rx_frames_ok"] != 7 || hw["rx_undersize"] != 1 || hw["rx_octets"] != hw["REOCT"] || hw["rx_octets"] < 7*100 {
		t.Errorf("rx_frames_ok %d, rx_undersize %d, rx_octets %d (REOCT %d): want 7, 1 and at least 700", hw["rx_frames_ok"], hw["rx_undersize"], hw["rx_octets"], hw["REOCT"])
	}
	s.close(false)
}

// TestMACCountersRead64Bit: the eMAC counters are 64-bit registers (Linux
// reads them whole since 2025, enetc_port_rd64): a counter that moves by
// more than 2^32 between two reads still reads right, which no 32-bit
// read and accumulation could give.
func TestMACCountersRead64Bit(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{})
	before := s.port.Stats().HW["TEOCT"]
	s.model.AdvanceMACCounter(modelReg("TEOCT"), 3<<32+5)
	if got := s.port.Stats().HW["TEOCT"]; got != before+3<<32+5 {
		t.Fatalf("TEOCT %d after moving by 3·2^32 + 5, want %d", got, before+3<<32+5)
	}
	s.close(false)
}

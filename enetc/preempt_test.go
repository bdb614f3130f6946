package enetc_test

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/wire"
)

// mergeLink is a cable that carries mPackets: whole frames to the other
// model's Receive, mPackets to its ReceiveMPacket, counting them.
type mergeLink struct {
	to       *model.Device
	mu       sync.Mutex
	mpackets int
}

func (l *mergeLink) Transmit(f []byte) { l.to.Receive(f) }

func (l *mergeLink) TransmitMPacket(m wire.MPacket) {
	l.mu.Lock()
	l.mpackets++
	l.mu.Unlock()
	l.to.ReceiveMPacket(m)
}

// openMergePair opens port a (two TX queues, on the test's timer) and port
// b on one chip, cabled with mergeLinks: priority 1 in class 1 on queue 1
// (express, shaped to 20% so it leaves gaps), class 0 on queue 0.
func openMergePair(t *testing.T) (a, b *simPort, ta driver.TSN, toB *mergeLink) {
	t.Helper()
	a, ta, _ = openTSN(t, 2)
	b = openSim(t, "", driver.Config{})
	toB = &mergeLink{to: b.model}
	a.model.SetWire(toB)
	b.model.SetWire(&mergeLink{to: a.model})
	if err := ta.SetTCMap(twoClasses()); err != nil {
		t.Fatal(err)
	}
	if err := ta.SetCBS(1, 200_000); err != nil {
		t.Fatal(err)
	}
	return a, b, ta, toB
}

// bigFrame is a 1500-byte frame whose payload is its number.
func bigFrame(n byte) []byte {
	f := bytes.Repeat([]byte{n}, 1500)
	copy(f, macB)
	copy(f[6:], macA)
	f[12], f[13] = 0x88, 0xb5
	return f
}

func sendFrame(t *testing.T, s *simPort, q int, f []byte) {
	t.Helper()
	pk := s.port.RxQueue(0).Pool().Alloc()
	copy(pk.Append(len(f)), f)
	if s.port.TxQueue(q).TxBurst([]*driver.Packet{pk}) != 1 {
		t.Fatalf("TX queue %d refused a frame", q)
	}
}

func preemptState(t *testing.T, s *simPort) driver.PreemptState {
	t.Helper()
	st, err := s.port.PreemptState()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Verification against a partner whose pMAC is on succeeds; class 0's
// 1500-byte frames then leave as fragments in the gaps class 1's shaped
// express frames leave, never on top of one, and the partner's pMAC
// reassembles them byte for byte. The MAC merge counters of both ends
// agree.
func TestPreemptionFragmentsReassembled(t *testing.T) {
	t.Parallel()
	a, b, _, toB := openMergePair(t)
	if err := b.port.SetPreemption(driver.PreemptConfig{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := a.port.SetPreemption(driver.PreemptConfig{Enabled: true, Verify: true, VerifyTime: 10 * time.Millisecond, PreemptableTCs: 1}); err != nil {
		t.Fatal(err)
	}
	st := preemptState(t, a)
	if !st.Supported || !st.Enabled || !st.Active || st.VerifyStatus != driver.VerifySucceeded || st.VerifyTime != 10*time.Millisecond || st.PreemptableTCs != 1 {
		t.Fatalf("state after verification %+v: want supported, enabled, active, succeeded, 10ms, class 0", st)
	}
	for i := 0; i < 10; i++ {
		sendFrame(t, a, 1, udp4(t, 100, uint16(i)))
	}
	sendFrame(t, a, 0, bigFrame(1))
	sendFrame(t, a, 0, bigFrame(2))

	deps := a.model.Departures()
	var express, frags []model.Departure
	for _, d := range deps {
		if d.MPacket {
			frags = append(frags, d)
		} else {
			express = append(express, d)
		}
	}
	if len(express) != 10 {
		t.Fatalf("%d express departures, want 10", len(express))
	}
	// Gaps of 3968 ns (496 bytes) between the express frames: fragments of
	// 472 data bytes (8 preamble and SMD, 4 mCRC, 12 gap): 472+472+472+84,
	// then 364 (after the first frame's end) +472+472+192.
	wantLens := []int{472, 472, 472, 84, 364, 472, 472, 192}
	if len(frags) != len(wantLens) {
		t.Fatalf("%d fragments %+v, want %d", len(frags), frags, len(wantLens))
	}
	for i, f := range frags {
		if f.Len != wantLens[i] {
			t.Errorf("fragment %d: %d data bytes, want %d", i, f.Len, wantLens[i])
		}
		for _, e := range express {
			// Each holds the wire from its preamble to its FCS and the 96 bit times after.
			if f.Start < e.End+96 && e.Start < f.End+96 {
				t.Errorf("fragment %d (%d-%d) overlaps the express frame at %d-%d", i, f.Start, f.End, e.Start, e.End)
			}
		}
	}
	if frags[0].Start >= express[9].Start {
		t.Errorf("first fragment at %d, after the last express frame (%d): nothing was preempted", frags[0].Start, express[9].Start)
	}
	for i := 1; i < 10; i++ {
		if gap := express[i].Start - express[i-1].Start; gap != 4960 {
			t.Errorf("express frames %d and %d %d ns apart, want 4960 (the shaper's, untouched)", i-1, i, gap)
		}
	}

	got := b.rxAll(0, 12, 100)
	var big [][]byte
	for _, pk := range got {
		if pk.Len() == 1500 {
			big = append(big, append([]byte(nil), pk.Data()...))
		}
		pk.Free()
	}
	if len(got) != 12 || len(big) != 2 || !bytes.Equal(big[0], bigFrame(1)) || !bytes.Equal(big[1], bigFrame(2)) {
		t.Fatalf("partner received %d frames, %d of 1500 bytes; want 12 with both 1500-byte frames byte for byte", len(got), len(big))
	}
	sa, sb := preemptState(t, a), preemptState(t, b)
	if sa.FragmentsTx != 6 || sb.FragmentsRx != 6 || sb.AssemblyOK != 2 || sb.AssemblyErrors != 0 || sb.SMDErrors != 0 {
		t.Errorf("counters: sent %d continuation fragments, partner received %d, reassembled %d, %d assembly and %d SMD errors; want 6, 6, 2, 0, 0",
			sa.FragmentsTx, sb.FragmentsRx, sb.AssemblyOK, sb.AssemblyErrors, sb.SMDErrors)
	}
	if toB.mpackets != 8+1 { // the fragments and the verify mPacket
		t.Errorf("%d mPackets crossed the cable, want 9", toB.mpackets)
	}
	a.close(false)
	b.close(false)
}

// A partner whose pMAC is off never answers: verification fails after
// three verify times and class 0's frames leave whole.
func TestPreemptionVerifyFails(t *testing.T) {
	t.Parallel()
	a, b, _, _ := openMergePair(t)
	if err := a.port.SetPreemption(driver.PreemptConfig{Enabled: true, Verify: true, VerifyTime: 5 * time.Millisecond, PreemptableTCs: 1}); err != nil {
		t.Fatal(err)
	}
	if st := preemptState(t, a); st.VerifyStatus != driver.VerifyVerifying || st.Active {
		t.Fatalf("before the verify time passed: %+v, want verifying, not active", st)
	}
	a.model.Chip().Timer().Advance(15 * time.Millisecond)
	if st := preemptState(t, a); st.VerifyStatus != driver.VerifyFailed || st.Active {
		t.Fatalf("after three verify times: %+v, want failed, not active", st)
	}
	sendFrame(t, a, 1, udp4(t, 100, 1))
	sendFrame(t, a, 0, bigFrame(3))
	for _, d := range a.model.Departures() {
		if d.MPacket {
			t.Errorf("an mPacket left with verification failed: %+v", d)
		}
	}
	got := b.rxAll(0, 2, 100)
	if len(got) != 2 || !bytes.Equal(got[1].Data(), bigFrame(3)) {
		t.Errorf("partner received %d frames, want 2 with the whole 1500-byte frame", len(got))
	}
	for _, pk := range got {
		pk.Free()
	}
	a.close(false)
	b.close(false)
}

// With verification off the port preempts whatever the partner is: a
// partner whose pMAC is off counts every mPacket as an SMD error, and the
// express frames still arrive; nothing goes uncounted.
func TestPreemptionPartnerWithoutPMAC(t *testing.T) {
	t.Parallel()
	a, b, _, toB := openMergePair(t)
	if err := a.port.SetPreemption(driver.PreemptConfig{Enabled: true, PreemptableTCs: 1}); err != nil {
		t.Fatal(err)
	}
	if st := preemptState(t, a); !st.Active || st.VerifyStatus != driver.VerifyDisabled {
		t.Fatalf("state %+v: want active with verification disabled", st)
	}
	for i := 0; i < 3; i++ {
		sendFrame(t, a, 1, udp4(t, 100, uint16(i)))
	}
	sendFrame(t, a, 0, bigFrame(4))
	got := b.rxAll(0, 4, 50)
	for _, pk := range got {
		pk.Free()
	}
	sb := preemptState(t, b)
	if len(got) != 3 || sb.SMDErrors != uint64(toB.mpackets) || toB.mpackets < 2 {
		t.Errorf("partner received %d frames and counted %d SMD errors for %d mPackets; want the 3 express frames and one error per mPacket", len(got), sb.SMDErrors, toB.mpackets)
	}
	a.close(false)
	b.close(false)
}

// The settings Linux refuses, refused by name.
func TestPreemptionRefused(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{})
	for _, c := range []struct {
		cfg  driver.PreemptConfig
		want string
	}{
		{driver.PreemptConfig{Enabled: true, VerifyTime: 200 * time.Millisecond}, "verify-time 200ms"},
		{driver.PreemptConfig{Enabled: true, VerifyTime: 1500 * time.Microsecond}, "whole milliseconds"},
		{driver.PreemptConfig{Enabled: true, AddFragSize: 4}, "additional fragment size 4"},
	} {
		if err := s.port.SetPreemption(c.cfg); err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%+v: %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}

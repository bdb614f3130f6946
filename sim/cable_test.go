package sim

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func frameN(i int) []byte {
	b := make([]byte, 60)
	b[0], b[58], b[59] = byte(i), byte(i>>16), byte(i>>8)
	return b
}

func TestCableSynchronous(t *testing.T) {
	t.Parallel()
	a, ca := newFake(t, "tsync0", false, "sim:tsync0?peer=sim:tsync1")
	a.send(frameN(1)) // peer not open yet: lost, counted
	b, cb := newFake(t, "tsync1", false, "sim:tsync1")
	a.send(frameN(2))
	b.send(frameN(3))
	if got := b.frames(); len(got) != 1 || !bytes.Equal(got[0], frameN(2)) {
		t.Fatalf("b received %d frames, want exactly frame 2 at once", len(got))
	}
	if got := a.frames(); len(got) != 1 || !bytes.Equal(got[0], frameN(3)) {
		t.Fatalf("a received %d frames, want exactly frame 3 at once", len(got))
	}
	c := CableOf("sim:tsync0")
	if c == nil || CableOf("tsync1") != c {
		t.Fatal("both ends must report the same cable")
	}
	ab, ba := c.Stats()
	if ab.Frames != 1 || ba.Frames != 1 || ab.Bytes != 60 {
		t.Fatalf("cable stats a->b %+v b->a %+v", ab, ba)
	}
	// A receiver without buffers drops; the frame was still carried.
	b.setRoom(0)
	a.send(frameN(4))
	if b.dropped != 1 {
		t.Fatalf("receiver drops = %d, want 1", b.dropped)
	}
	// Closing one end unplugs the other.
	if err := cb(); err != nil {
		t.Fatal(err)
	}
	a.send(frameN(5))
	ab, _ = c.Stats()
	if ab.Unplugged != 1 {
		t.Fatalf("unplugged = %d, want 1", ab.Unplugged)
	}
	// And the closed end plugs back in when it reopens.
	b2, cb2 := newFake(t, "tsync1", false, "sim:tsync1")
	a.send(frameN(6))
	if got := b2.frames(); len(got) != 1 || !bytes.Equal(got[0], frameN(6)) {
		t.Fatalf("reopened peer received %d frames, want frame 6", len(got))
	}
	cb2()
	ca()
}

func TestCableConflicts(t *testing.T) {
	t.Parallel()
	_, c0 := newFake(t, "tcf0", false, "sim:tcf0?peer=sim:tcf1")
	defer c0()
	_, _, err := tryFake("tcf2", false, "sim:tcf2?peer=sim:tcf1")
	if err == nil || !strings.Contains(err.Error(), "already waiting") {
		t.Fatalf("second port waiting for tcf1: %v", err)
	}
	_, _, err = tryFake("tcf1", false, "sim:tcf1?sink=1")
	if err == nil || !strings.Contains(err.Error(), "peer of tcf0") {
		t.Fatalf("cable end with a sink: %v", err)
	}
	_, c1 := newFake(t, "tcf1", false, "sim:tcf1?peer=sim:tcf0")
	defer c1()
	_, _, err = tryFake("tcf3", false, "sim:tcf3?peer=sim:tcf0")
	if err == nil || !strings.Contains(err.Error(), "already cabled") {
		t.Fatalf("third port on a complete cable: %v", err)
	}
	_, c4 := newFake(t, "tcf4", false, "sim:tcf4?sink=1")
	defer c4()
	_, _, err = tryFake("tcf5", false, "sim:tcf5?peer=sim:tcf4")
	if err == nil || !strings.Contains(err.Error(), "transmits elsewhere") {
		t.Fatalf("cable to a port with a sink: %v", err)
	}
}

func TestCableEngineRing(t *testing.T) {
	t.Parallel()
	a, ca := newFake(t, "teng0", true, "sim:teng0?peer=sim:teng1")
	defer ca()
	b, cb := newFake(t, "teng1", true, "sim:teng1")
	defer cb()
	const n = 100000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a's TX engine
		defer wg.Done()
		for i := 0; i < n; i++ {
			a.send(frameN(i))
		}
	}()
	got := 0
	for got < n {
		got += b.pump() // b's engine
		ab, _ := CableOf("teng0").Stats()
		if uint64(got)+ab.Full == n && ab.Frames+ab.Full == n {
			break
		}
	}
	wg.Wait()
	got += b.pump()
	ab, _ := CableOf("teng0").Stats()
	if uint64(got) != ab.Frames || ab.Frames+ab.Full != n {
		t.Fatalf("received %d, cable carried %d and dropped %d (ring full) of %d", got, ab.Frames, ab.Full, n)
	}
	// In order and intact.
	prev := -1
	for _, f := range b.frames() {
		i := int(f[0]) | int(f[59])<<8 | int(f[58])<<16
		if i <= prev {
			t.Fatalf("frame %d after %d: out of order", i, prev)
		}
		prev = i
	}
}

func TestCablePadsShortFrames(t *testing.T) {
	t.Parallel()
	// A cable stands for the sending MAC: a frame below the Ethernet
	// minimum (a model told not to pad, or fault injection) arrives padded
	// to 60 bytes, synchronous or through the ring, and is counted.
	for _, engine := range []bool{false, true} {
		a, ca := newFake(t, "tpad0", engine, "sim:tpad0?peer=sim:tpad1")
		b, cb := newFake(t, "tpad1", engine, "sim:tpad1")
		short := bytes.Repeat([]byte{0xab}, 42)
		a.send(short)
		a.send(frameN(7))
		if engine {
			b.pump()
		}
		got := b.frames()
		want := append(append([]byte(nil), short...), make([]byte, 18)...)
		if len(got) != 2 || !bytes.Equal(got[0], want) || !bytes.Equal(got[1], frameN(7)) {
			t.Fatalf("engine %v: received %d frames, first % x", engine, len(got), got)
		}
		ab, _ := CableOf("tpad0").Stats()
		if ab.Padded != 1 || ab.Frames != 2 || ab.Delivered != 2 || ab.Bytes != 120 {
			t.Fatalf("engine %v: cable stats %+v", engine, ab)
		}
		cb()
		ca()
	}
}

// TestCableCountsLinkDown: a cable carries nothing to a port whose PHY
// has no link: frames sent into it meanwhile are dropped at the cable and
// counted as cable:link_down among the sender's losses; with the link
// back they are carried again. Both ways of carrying: straight between
// two synchronous models, and through the ring an engine pulls.
func TestCableCountsLinkDown(t *testing.T) {
	t.Parallel()
	for i, mode := range []string{"", "&mode=engine"} {
		an, bn := fmt.Sprintf("enetc%d", 164+2*i), fmt.Sprintf("enetc%d", 165+2*i)
		a, err := openSpec(t, "sim:"+an+"?peer=sim:"+bn)
		if err != nil {
			t.Fatal(err)
		}
		b, err := openSpec(t, "sim:"+bn+"?chip=cable"+mode)
		if err != nil {
			t.Fatal(err)
		}
		c := CableOf(an)
		ENETCModel(bn).SetLink(false)
		for k := 0; k < 3; k++ {
			c.ab.Transmit(frameN(k))
		}
		ab, _ := c.Stats()
		lost := map[string]uint64{}
		for _, l := range ViewOf(an).Losses() {
			lost[l.Cause] = l.N
		}
		if ab.LinkDown != 3 || ab.Frames != 0 || lost["cable:link_down"] != 3 || ViewOf(an).Carried() != 3 {
			t.Fatalf("%s: 3 frames into a cable whose far end has no link: %+v, losses %v", mode, ab, lost)
		}
		ENETCModel(bn).SetLink(true)
		c.ab.Transmit(frameN(4))
		if ab, _ = c.Stats(); ab.Frames != 1 || ab.LinkDown != 3 {
			t.Fatalf("%s: with the link back: %+v", mode, ab)
		}
		if err := errors.Join(b.Release(), a.Release()); err != nil {
			t.Fatal(err)
		}
	}
}

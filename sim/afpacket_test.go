package sim

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopmd/gopmd/internal/testnote"
)

// vethPair makes two joined veth interfaces for the test's life, or skips.
func vethPair(t *testing.T, a, b string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the AF_PACKET wire test", "needs root (CAP_NET_ADMIN to make a veth pair, CAP_NET_RAW for the socket); run as root to include it")
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("afpacket test needs iproute2's ip command to make a veth pair")
	}
	run := func(args ...string) error {
		out, err := exec.Command(ip, args...).CombinedOutput()
		if err != nil {
			t.Logf("ip %v: %v: %s", args, err, out)
		}
		return err
	}
	_ = exec.Command(ip, "link", "del", a).Run() // left over from an interrupted run
	if err := run("link", "add", a, "type", "veth", "peer", "name", b); err != nil {
		t.Skip("cannot make a veth pair here")
	}
	t.Cleanup(func() { _ = run("link", "del", a) })
	for _, n := range []string{a, b} {
		// No IPv6 on them, so the kernel sends nothing of its own.
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+n+"/disable_ipv6", []byte("1"), 0o644)
		if err := run("link", "set", n, "up"); err != nil {
			t.Fatal("cannot bring up", n)
		}
	}
}

func TestAFPacketAcrossVeth(t *testing.T) {
	t.Parallel()
	testnote.SkipEmulated(t, "the AF_PACKET wire test", "qemu-user does not pass AF_PACKET's socket options through (promiscuous membership fails with protocol not available)")
	// Names per process: another run of this test may make its own pair.
	sfx := strconv.Itoa(os.Getpid() % 100000)
	ifA, ifB := "gpmdtA"+sfx, "gpmdtB"+sfx
	vethPair(t, ifA, ifB)
	a, ca := newFake(t, "tafp0", true, "sim:tafp0?afpacket="+ifA)
	defer ca()
	b, cb := newFake(t, "tafp1", true, "sim:tafp1?afpacket="+ifB)
	defer cb()
	frame := frameN(7)
	copy(frame, []byte{0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x88, 0xb5}) // local experimental ethertype
	frame[20] = 0x5a
	a.send(frame)
	var got [][]byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b.pump()
		got = b.frames()
		if len(got) > 0 {
			break
		}
	}
	if len(got) != 1 || !bytes.Equal(got[0], frame) {
		t.Fatalf("the far port received %d frames, want the one sent, intact", len(got))
	}
	if a.pump() != 0 {
		t.Fatal("the sending port received its own frame back")
	}
	if err := cb(); err != nil {
		t.Fatal(err)
	}
	if err := ca(); err != nil {
		t.Fatal(err)
	}
}

// TestAFPacketFollowsCarrier: the interface's carrier is the port's link.
// Taking the veth's peer down takes the model's PHY link down (the driver
// sees a link event), frames the port sends meanwhile are dropped and
// counted as afpacket:link_down, and the peer coming back up brings the
// link back. The reader sleeps in poll(2): the port's engine sleeps too.
func TestAFPacketFollowsCarrier(t *testing.T) {
	t.Parallel()
	testnote.SkipEmulated(t, "the AF_PACKET link test", "qemu-user does not pass AF_PACKET's socket options through")
	sfx := strconv.Itoa(os.Getpid() % 100000)
	ifA, ifB := "gpmdlA"+sfx, "gpmdlB"+sfx
	vethPair(t, ifA, ifB)
	dev, err := openSpec(t, "sim:enetc160?mode=engine&afpacket="+ifA)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	m, a, v := ENETCModel("enetc160"), AFPacketOf("enetc160"), ViewOf("enetc160")
	if !m.LinkUp() || !a.Stats().LinkUp {
		t.Fatalf("link %v, afpacket link %v with the veth up", m.LinkUp(), a.Stats().LinkUp)
	}
	ip := func(args ...string) {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	waitLink := func(up bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); m.LinkUp() != up; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the model's link stayed %v after the carrier went %v", !up, up)
			}
		}
	}
	ip("link", "set", ifB, "down")
	waitLink(false)
	if st := a.Stats(); st.LinkUp || st.LinkChanges != 1 {
		t.Fatalf("after the carrier went: %+v", st)
	}
	for i := 0; i < 5; i++ {
		a.Transmit(frameN(i))
	}
	lost := map[string]uint64{}
	for _, l := range v.Losses() {
		lost[l.Cause] = l.N
	}
	if st := a.Stats(); st.TxLinkDown != 5 || st.TxFrames != 0 || lost["afpacket:link_down"] != 5 {
		t.Fatalf("5 frames sent without a carrier: %+v, losses %v", st, lost)
	}
	ip("link", "set", ifB, "up")
	waitLink(true)
	if st := a.Stats(); !st.LinkUp || st.LinkChanges != 2 {
		t.Fatalf("after the carrier came back: %+v", st)
	}
	for deadline := time.Now().Add(10 * time.Second); !m.EngineSleeping(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the engine of an idle afpacket port never slept")
		}
	}
}

// TestAFPacketFloodAccounted: a flood from the far side of a veth, faster
// than the port takes frames, is accounted frame for frame at the port's
// wire: queued for the port, dropped because the queue was full, or
// dropped by the kernel (PACKET_STATISTICS for the socket, rx_dropped for
// the interface), each among the port's losses by cause.
func TestAFPacketFloodAccounted(t *testing.T) {
	t.Parallel()
	testnote.SkipEmulated(t, "the AF_PACKET flood test", "qemu-user does not pass AF_PACKET's socket options through")
	sfx := strconv.Itoa(os.Getpid() % 100000)
	ifA, ifB := "gpmdfA"+sfx, "gpmdfB"+sfx
	vethPair(t, ifA, ifB)
	_, ca := newFake(t, "tafp5", false, "sim:tafp5?afpacket="+ifA)
	defer ca()
	a, v := AFPacketOf("tafp5"), ViewOf("tafp5")
	var (
		wg   sync.WaitGroup
		sent atomic.Uint64
	)
	const senders, per = 4, 50000
	for g := 0; g < senders; g++ {
		b, err := OpenAFPacket(ifB)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := frameN(g)
			copy(f, []byte{0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x88, 0xb5})
			for i := 0; i < per; i++ {
				b.Transmit(f)
			}
			sent.Add(b.Stats().TxFrames)
		}()
	}
	wg.Wait()
	var st AFPacketStats
	accounted := func() uint64 {
		st = a.Stats()
		return st.RxFrames + st.RxDropped + st.RxTooBig + st.KernelDrops + st.IfDropped
	}
	for deadline := time.Now().Add(20 * time.Second); accounted() < sent.Load() && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	if n := accounted(); n != sent.Load() {
		t.Fatalf("%d frames sent into the veth, %d accounted at the port: %+v", sent.Load(), n, st)
	}
	lost := map[string]uint64{}
	for _, l := range v.Losses() {
		lost[l.Cause] = l.N
	}
	if lost["afpacket:kernel"] < st.KernelDrops || lost["afpacket:queue_full"] != st.RxDropped {
		t.Fatalf("losses %v do not carry the wire's counts %+v", lost, st)
	}
	t.Logf("%d sent: %d queued, %d queue full, %d kernel (socket), %d kernel (interface)", sent.Load(), st.RxFrames, st.RxDropped, st.KernelDrops, st.IfDropped)
}

// TestAFPacketInterfaceDeleted: the interface deleted under an open port
// takes its link down, frames sent since count as link down, and Close
// says what happened.
func TestAFPacketInterfaceDeleted(t *testing.T) {
	t.Parallel()
	testnote.SkipEmulated(t, "the AF_PACKET link test", "qemu-user does not pass AF_PACKET's socket options through")
	sfx := strconv.Itoa(os.Getpid() % 100000)
	ifA, ifB := "gpmddA"+sfx, "gpmddB"+sfx
	vethPair(t, ifA, ifB)
	a, err := OpenAFPacket(ifA)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "link", "del", ifA).CombinedOutput(); err != nil {
		t.Fatalf("ip link del: %v: %s", err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); a.LinkUp(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the link stayed up after the interface was deleted")
		}
	}
	a.Transmit(frameN(1))
	if st := a.Stats(); st.TxLinkDown != 1 || st.TxErrors != 0 {
		t.Fatalf("a frame sent after the deletion: %+v", st)
	}
	if err := a.Close(); err == nil || !strings.Contains(err.Error(), ifA) || !strings.Contains(err.Error(), "deleted") {
		t.Fatalf("Close: %v, want one saying %s was deleted", err, ifA)
	}
}

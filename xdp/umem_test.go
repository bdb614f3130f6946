package xdp

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"golang.org/x/sys/unix"
)

// forward receives n test frames sent from a's peer on port pa and sends
// each as it came out of port pb, as a forwarder does; it returns what
// b's peer received.
func forward(t *testing.T, a, b *vethPair, pa, pb driver.Port, n, base int) (sent, got [][]byte) {
	t.Helper()
	fa, fb := a.packetSocket(), b.packetSocket()
	rx, tx := pa.RxQueue(0), pb.TxQueue(0)
	var burst [32]*pool.Packet
	fwd := 0
	for i := 0; i < n; i++ {
		f := frame(b.peerMAC, a.peerMAC, base+i)
		sent = append(sent, f)
		if err := unix.Send(fa, f, 0); err != nil {
			t.Fatalf("send frame %d: %v", i, err)
		}
		// A burst at a time, so neither ring fills on a loaded machine.
		if i%32 == 31 || i == n-1 {
			for deadline := time.Now().Add(20 * time.Second); fwd <= i && time.Now().Before(deadline); {
				k := rx.RxBurst(burst[:])
				if k == 0 {
					time.Sleep(100 * time.Microsecond)
					continue
				}
				for m := 0; m < k; {
					m += tx.TxBurst(burst[m:k])
					tx.Reclaim()
				}
				fwd += k
			}
		}
	}
	for deadline := time.Now().Add(20 * time.Second); tx.Pending() > 0 && time.Now().Before(deadline); {
		tx.Reclaim()
	}
	return sent, recvFrames(t, fb, n)
}

// Two ports opened with the same umem= share one UMEM: a frame one port
// received is sent by the other as it is, byte for byte, with no copy
// (tx_copies 0), and Close finds every buffer home, whichever port closes
// first. Without umem= each frame is copied, and counted.
func TestSharedUMEM(t *testing.T) {
	for _, c := range []struct {
		name, opts  string
		copies      bool
		closeBFirst bool
	}{
		{"shared", "&umem=fwd", false, false},
		{"shared, the receiving port closed last", "&umem=fwd", false, true},
		{"own UMEMs", "", true, false},
		{"shared, frames of 4096 bytes", "&umem=fwd&frame-size=4096", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := newPair(t, false), newPair(t, false)
			pa, err := driver.Open("xdp:" + a.host + "?mode=generic" + c.opts)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := driver.Open("xdp:" + b.host + "?mode=generic" + c.opts)
			if err != nil {
				pa.Close()
				t.Fatal(err)
			}
			for _, p := range []driver.Port{pa, pb} {
				if err := p.Start(); err != nil {
					t.Fatal(err)
				}
				if d := p.Info().Device; c.opts != "" && !strings.Contains(d, "UMEM fwd shared by 1 of 1 queues") || strings.Contains(d, "not shared") {
					t.Errorf("%s: %q", p.Info().Name, d)
				}
			}
			const n = 200
			sent, got := forward(t, a, b, pa, pb, n, 0)
			if len(got) != n {
				t.Fatalf("b's peer received %d of %d frames; stats %+v %+v", len(got), n, pa.Stats(), pb.Stats())
			}
			for i := range sent {
				if !bytes.Equal(got[i], sent[i]) {
					t.Fatalf("frame %d differs:\n sent % x\n got  % x", i, sent[i], got[i])
				}
			}
			copies := pb.Stats().HW["xdp_tx_copies"]
			if c.copies && copies != n || !c.copies && copies != 0 {
				t.Errorf("tx_copies %d after forwarding %d frames", copies, n)
			}
			first, second := pa, pb
			if c.closeBFirst {
				first, second = pb, pa
			}
			if err := first.Close(); err != nil {
				t.Errorf("close %s: %v", first.Info().Name, err)
			}
			if err := second.Close(); err != nil {
				t.Errorf("close %s: %v", second.Info().Name, err)
			}
			umems.Lock()
			left := len(umems.m)
			umems.Unlock()
			if left != 0 {
				t.Errorf("%d shared UMEMs left after both ports closed", left)
			}
		})
	}
}

// A port that cannot join the shared UMEM (here: another frame size) gets
// one of its own, says why, and copies what it sends from the others.
func TestSharedUMEMRefusedSaysWhy(t *testing.T) {
	a, b := newPair(t, false), newPair(t, false)
	pa := openPort(t, "xdp:"+a.host+"?mode=generic&umem=fwd2")
	pb := openPort(t, "xdp:"+b.host+"?mode=generic&umem=fwd2&frame-size=4096")
	if d := pb.Info().Device; !strings.Contains(d, "shared by 0 of 1 queues") || !strings.Contains(d, "frame-size= must match") {
		t.Fatalf("info of the port that could not share: %q", d)
	}
	const n = 64
	sent, got := forward(t, a, b, pa, pb, n, 500)
	if len(got) != n {
		t.Fatalf("b's peer received %d of %d frames", len(got), n)
	}
	for i := range sent {
		if !bytes.Equal(got[i], sent[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if c := pb.Stats().HW["xdp_tx_copies"]; c != n {
		t.Errorf("tx_copies %d after %d frames from a port of another UMEM", c, n)
	}
	for _, bad := range []string{"&umem=", "&umem=a/b", "&umem-ports=2", "&umem=x&umem-ports=0"} {
		if _, err := driver.Open("xdp:" + a.host + "?mode=generic" + bad); err == nil || !strings.Contains(err.Error(), "umem") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

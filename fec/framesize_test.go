package fec_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec/model"
)

// TestFrameSizePerSoC: every model profile advertises the MTU its SoC
// takes (1962: 1984-byte frames with a VLAN tag, sent store-and-forward;
// the i.MX8QM's jumbo limit), refuses one more with an error naming the
// part and the limit, and programs TFWR for it (docs/hardware-fec.md §2.8,
// §4.1).
func TestFrameSizePerSoC(t *testing.T) {
	t.Parallel()
	for _, soc := range model.Profiles() {
		prof, _ := model.LookupProfile(soc)
		p, _ := openSim(t, "soc="+soc+"&link-poll=0")
		want := 1984 - 14 - 4 - 4
		if prof.Jumbo {
			want = 16383 - 14 - 4 - 4 - 2 // RCR.MAX_FL's 14 bits, less the SHIFT16 pad
		}
		if got := p.Info().MaxMTU; got != want {
			t.Errorf("%s: MaxMTU %d, want %d", soc, got, want)
		}
		err := p.SetMTU(want + 1)
		if err == nil || !strings.Contains(err.Error(), prof.Compatible[0]) || !strings.Contains(err.Error(), "must be in [68, ") {
			t.Errorf("%s: SetMTU(%d) = %v, want an error naming %s and the range", soc, want+1, err, prof.Compatible[0])
		}
		if err := p.SetMTU(want); err != nil {
			t.Errorf("%s: SetMTU(%d): %v", soc, want, err)
		}
		tfwr := regValue(t, p, "TFWR")
		if cut := tfwr&(1<<8) == 0; cut != prof.Jumbo {
			t.Errorf("%s at MTU %d: TFWR %#x: cut-through %v, want %v", soc, want, tfwr, cut, prof.Jumbo)
		}
		if err := p.SetMTU(1500); err != nil {
			t.Fatal(err)
		}
		if tfwr := regValue(t, p, "TFWR"); tfwr != 1<<8 {
			t.Errorf("%s at MTU 1500: TFWR %#x, want store-and-forward (0x100)", soc, tfwr)
		}
	}
}

// TestJumboCutThrough: on the i.MX8QM a jumbo MTU on a running port
// restarts the MAC into cut-through and a 9000-byte frame leaves intact;
// the same frame with store-and-forward forced back is refused by the
// model (its TX FIFO cannot hold it) and counted, not sent.
func TestJumboCutThrough(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8qm&link-poll=0&rx-ring=64")
	w := &capture{}
	m.SetWire(w)
	if err := p.SetMTU(9000); err != nil {
		t.Fatal(err)
	}
	if p.MACRestarts() != 1 {
		t.Fatalf("%d MAC restarts for the switch to cut-through, want 1", p.MACRestarts())
	}
	if tfwr := regValue(t, p, "TFWR"); tfwr != 0xF {
		t.Fatalf("TFWR %#x at MTU 9000, want cut-through 0xF", tfwr)
	}
	if m.Stats().RunningReconfig != 0 {
		t.Fatal(m.LastModelError())
	}
	txq, pl := p.TxQueue(0), p.RxQueue(0).Pool()
	send := func(f []byte) {
		var head, last *driver.Packet
		for off := 0; off < len(f); {
			pk := pl.Alloc()
			n := min(len(f)-off, 1500)
			copy(pk.Append(n), f[off:off+n])
			off += n
			if head == nil {
				head = pk
			} else {
				last.SetNext(pk)
			}
			last = pk
		}
		if txq.TxBurst([]*driver.Packet{head}) != 1 {
			t.Fatal("TxBurst refused the jumbo frame")
		}
		txq.Reclaim()
	}
	f := udpFrame(t, 9000+14, -1, 9)
	send(f)
	if out := w.take(); len(out) != 1 || !bytes.Equal(out[0], f) {
		t.Fatalf("%d frames on the wire, want the 9014-byte frame intact", len(out))
	}
	// Store-and-forward forced back under the driver: the TX FIFO cannot
	// hold the frame.
	m.Write32(0x144, 1<<8)
	send(f)
	if out := w.take(); len(out) != 0 {
		t.Fatal("a jumbo frame left store-and-forward")
	}
	if n := m.Stats().TxFIFOTooLong; n != 1 {
		t.Fatalf("model counted %d frames too long for the TX FIFO, want 1", n)
	}
}

package fec

import (
	"testing"

	"github.com/gopmd/gopmd/pool"
)

func TestRegisterMapOffsetsUniqueAndAligned(t *testing.T) {
	t.Parallel()
	seen := map[uint32]string{}
	names := map[string]bool{}
	for _, r := range RegisterMap() {
		if r.Offset%4 != 0 {
			t.Errorf("%s at %#x: not 32-bit aligned", r.Name, r.Offset)
		}
		if o, dup := seen[r.Offset]; dup {
			t.Errorf("%s and %s share offset %#x", r.Name, o, r.Offset)
		}
		if names[r.Name] {
			t.Errorf("%s listed twice", r.Name)
		}
		seen[r.Offset], names[r.Name] = r.Name, true
		for _, f := range r.Fields {
			if f.Lo > f.Hi || f.Hi > 31 {
				t.Errorf("%s.%s: bits %d..%d", r.Name, f.Name, f.Lo, f.Hi)
			}
		}
	}
	// Spot checks against the reference table (docs/hardware-fec.md §2, §2.12).
	for name, off := range map[string]uint32{
		"EIR": 0x004, "RDAR": 0x010, "TDAR": 0x014, "ECR": 0x024, "MMFR": 0x040, "MSCR": 0x044,
		"RCR": 0x084, "TCR": 0x0C4, "PALR": 0x0E4, "PAUR": 0x0E8, "OPD": 0x0EC, "TFWR": 0x144,
		"RDSR": 0x180, "TDSR": 0x184, "MRBR": 0x188, "FTRL": 0x1B0, "TACC": 0x1C0, "RACC": 0x1C4,
		"RDAR1": 0x1E0, "TDAR2": 0x1EC, "RMON_T_DROP": 0x200, "IEEE_T_OCTETS_OK": 0x274,
		"RMON_R_PACKETS": 0x284, "IEEE_R_MACERR": 0x2D8, "IEEE_R_OCTETS_OK": 0x2E0,
	} {
		if seen[off] != name {
			t.Errorf("offset %#x is %q in RegisterMap, want %s", off, seen[off], name)
		}
	}
}

func TestMSCRValue(t *testing.T) {
	t.Parallel()
	// The reference's worked example: 66 MHz ipg on an ENET-MAC part gives
	// MII_SPEED 13, HOLDTIME 0, MSCR 0x1A.
	if got := mscrValue(true, 66_000_000); got != 0x1A {
		t.Errorf("mscrValue(66 MHz) = %#x, want 0x1a", got)
	}
	// The driver's bound: MDC stays at or under 2.5 MHz for every clock up to it.
	v := mscrValue(true, ipgHzBound)
	speed := int(v>>mscr_MII_SPEED_SHIFT) & 0x3F
	if mdc := ipgHzBound / ((speed + 1) * 2); mdc > mdcHz {
		t.Errorf("MDC %d Hz at %d Hz ipg exceeds 2.5 MHz", mdc, ipgHzBound)
	}
}

func TestProfilesByCompatible(t *testing.T) {
	t.Parallel()
	cases := []struct {
		compat  []string
		want    string
		queues  int
		bdEx    bool
		err6358 bool
	}{
		{[]string{"fsl,imx6ul-fec", "fsl,imx6q-fec"}, "fsl,imx6ul-fec", 1, true, false},
		{[]string{"fsl,imx6q-fec"}, "fsl,imx6q-fec", 1, true, true},
		{[]string{"fsl,imx8mp-fec", "fsl,imx8mq-fec", "fsl,imx6sx-fec"}, "fsl,imx8mp-fec", 3, true, false},
		{[]string{"fsl,imx93-fec", "fsl,imx8mq-fec"}, "fsl,imx93-fec", 3, true, false},
		{[]string{"vendor,unknown", "fsl,imx6sx-fec"}, "fsl,imx6sx-fec", 3, true, false},
		{[]string{"fsl,imx25-fec"}, "fsl,imx25-fec", 1, false, false},
	}
	for _, c := range cases {
		p, ok := lookupProfile(c.compat)
		if !ok {
			t.Errorf("%v: no profile", c.compat)
			continue
		}
		if p.compatible != c.want || p.maxQueues() != c.queues || p.has(qBufDescEx) != c.bdEx || p.has(qERR006358) != c.err6358 {
			t.Errorf("%v: got %s queues %d bdex %v err006358 %v", c.compat, p.compatible, p.maxQueues(), p.has(qBufDescEx), p.has(qERR006358))
		}
	}
	if _, ok := lookupProfile([]string{"snps,dwmac"}); ok {
		t.Error("an EQOS compatible matched a FEC profile")
	}
}

func TestDescriptorWord0(t *testing.T) {
	t.Parallel()
	v := w0(rxbd_E|rxbd_W, 1518)
	if st, l := sc(v); st != rxbd_E|rxbd_W || l != 1518 {
		t.Errorf("sc(w0) = %#x, %d", st, l)
	}
	// Byte layout as the device reads it: u16 length at +0, u16 sc at +2 (LE).
	mem := make([]byte, 64)
	r := newBDRing(mem, 0x1000, 2, bdEnhancedSize)
	r.publish(1, w0(txbd_R|txbd_L, 0x0102))
	if mem[32] != 0x02 || mem[33] != 0x01 || mem[34] != 0x00 || mem[35] != 0x88 {
		t.Errorf("BD 1 bytes % x, want 02 01 00 88", mem[32:36])
	}
}

// forwardNaive forwards as a naive driver does, one frame per RxBurst and
// per TxBurst: one RDAR and one TDAR write per frame, against one per
// burst. It returns the frames received and sent.
func forwardNaive(rx *rxQueue, tx *txQueue, pkts []*pool.Packet) (n, sent int) {
	for n < len(pkts) && rx.RxBurst(pkts[n:n+1]) == 1 {
		n++
	}
	for sent < n {
		k := tx.TxBurst(pkts[sent : sent+1])
		if k == 0 && tx.Reclaim() == 0 {
			break // ring full and nothing sent yet: the caller keeps the rest
		}
		sent += k
	}
	return n, sent
}

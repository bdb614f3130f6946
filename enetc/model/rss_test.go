package model

import (
	"encoding/binary"
	"net"
	"testing"
)

// cbdr drives the control BD ring as §2.5 describes.
type cbdr struct {
	h    *harness
	ring mem
	data mem
	l    uint32
	pi   uint32
}

func newCBDR(h *harness) *cbdr {
	c := &cbdr{h: h, l: 64}
	c.ring = h.alloc(int(c.l)*CBDSize, "cbdr")
	c.data = h.alloc(4096, "cbdr-data")
	d := h.d
	d.Write32(regSICAR2, 0x2B2B6727)
	d.Write32(regSICBDRBAR0, uint32(c.ring.iova))
	d.Write32(regSICBDRBAR1, uint32(c.ring.iova>>32))
	d.Write32(regSICBDRLENR, c.l)
	d.Write32(regSICBDRPIR, 0)
	d.Write32(regSICBDRCIR, 0)
	d.Write32(regSICBDRMR, sicbdrmr_EN)
	return c
}

// run queues one command and returns its completion status.
func (c *cbdr) run(fill func(b []byte)) uint8 {
	c.h.t.Helper()
	b := c.ring.b[c.pi*CBDSize : c.pi*CBDSize+CBDSize]
	clear(b)
	fill(b)
	c.pi = (c.pi + 1) % c.l
	c.h.d.Write32(regSICBDRPIR, c.pi)
	if ci := c.h.d.Read32(regSICBDRCIR); ci != c.pi {
		c.h.t.Fatalf("control ring: CIR %d after PIR %d (synchronous mode)", ci, c.pi)
	}
	return b[31] & 0xF
}

func (c *cbdr) rssSet(table []byte) uint8 {
	copy(c.data.b, table)
	return c.run(func(b []byte) {
		binary.LittleEndian.PutUint32(b[0:], uint32(c.data.iova))
		binary.LittleEndian.PutUint32(b[4:], uint32(c.data.iova>>32))
		binary.LittleEndian.PutUint16(b[26:], uint16(len(table)))
		b[28], b[29] = CBDCmdRSSSet, CBDClassRSS
	})
}

func (c *cbdr) rssQuery(n int) ([]byte, uint8) {
	clear(c.data.b)
	st := c.run(func(b []byte) {
		binary.LittleEndian.PutUint32(b[0:], uint32(c.data.iova))
		binary.LittleEndian.PutUint32(b[4:], uint32(c.data.iova>>32))
		binary.LittleEndian.PutUint16(b[26:], uint16(n))
		b[28], b[29] = CBDCmdRSSQuery, CBDClassRSS
	})
	return append([]byte(nil), c.data.b[:n]...), st
}

func (c *cbdr) macEntry(idx int, mac []byte, siMap uint32) uint8 {
	return c.run(func(b []byte) {
		copy(b[0:6], mac) // addr[0] = bytes 0–3, addr[1] = bytes 4–5
		binary.LittleEndian.PutUint32(b[8:], 1<<31)
		binary.LittleEndian.PutUint32(b[20:], siMap)
		binary.LittleEndian.PutUint16(b[24:], uint16(idx))
		b[29] = CBDClassMAC
	})
}

// msKey is the verification key of the Microsoft RSS specification.
var msKey = [RSSKeyLen]byte{
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
}

func setKey(d *Device, k *[RSSKeyLen]byte) {
	for n := 0; n < RSSKeyLen/4; n++ {
		d.Write32(regPRSSK+uint32(4*n), binary.LittleEndian.Uint32(k[4*n:]))
	}
}

func TestToeplitzVectors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	setKey(h.d, &msKey)
	for _, c := range []struct {
		src, dst  string
		sp, dp    uint16
		tcp, ipv4 uint32
	}{
		{"66.9.149.187", "161.142.100.80", 2794, 1766, 0x51ccc178, 0x323e8fc2},
		{"199.92.111.2", "65.69.140.83", 14230, 4739, 0xc626b0ea, 0xd718262a},
		{"24.19.198.95", "12.22.207.184", 12898, 38024, 0x5c2b394a, 0xd2d0a5de},
	} {
		f := tcp4(net.ParseIP(c.src), net.ParseIP(c.dst), c.sp, c.dp)
		var p parsed
		parseFrame(f, &p)
		if got := h.d.rssHash(&p); got != c.tcp {
			t.Errorf("%s:%d -> %s:%d TCP: hash %#x, want %#x", c.src, c.sp, c.dst, c.dp, got, c.tcp)
		}
		if got := Toeplitz(&msKey, p.in[:8]); got != c.ipv4 {
			t.Errorf("%s -> %s IPv4: hash %#x, want %#x", c.src, c.dst, got, c.ipv4)
		}
	}
}

func TestRSSRingSelection(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	for n := 0; n < 4; n++ {
		h.setupRx(n, 64, 2048, 0)
	}
	c := newCBDR(h)
	table := make([]byte, RSSTableLen)
	for i := range table {
		table[i] = byte(i % 4)
	}
	if st := c.rssSet(table); st != CBDErrNone {
		t.Fatalf("RSS set status %d", st)
	}
	got, st := c.rssQuery(RSSTableLen)
	if st != CBDErrNone || string(got) != string(table) {
		t.Fatalf("RSS query status %d table %v", st, got)
	}
	setKey(h.d, &msKey)
	h.d.Write32(regSIRBGCR, 4)
	h.d.Write32(regSIMR, simr_EN|simr_RSSE)
	perRing := [4]int{}
	for i := 0; i < 40; i++ {
		f := udp4(uint16(1000+i*7), 53, 64)
		hash, _ := h.d.FlowHash(f)
		want := int(table[hash%RSSTableLen])
		if !h.d.Receive(f) {
			t.Fatalf("flow %d not accepted", i)
		}
		bds, ok := h.recv(want)
		if !ok {
			t.Fatalf("flow %d (hash %#x) not on ring %d", i, hash, want)
		}
		if bds[0].hash != hash {
			t.Fatalf("BD hash %#x, want %#x", bds[0].hash, hash)
		}
		perRing[want]++
	}
	for n, k := range perRing {
		if k == 0 {
			t.Errorf("no flow landed on ring %d: %v", n, perRing)
		}
	}
	// A table naming a ring the SI does not have is refused.
	table[5] = 12
	if st := c.rssSet(table); st != CBDErrArgument {
		t.Errorf("table with ring 12 of 8: status %d, want %d", st, CBDErrArgument)
	}
	if st := c.rssSet(make([]byte, RSSTableLen+1)); st != CBDErrLength {
		t.Errorf("oversized table: status %d", st)
	}
	h.noModelErrors()
}

func TestRSSOffUsesRingZero(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupRx(0, 64, 2048, 0)
	h.setupRx(1, 64, 2048, 0)
	for i := 0; i < 10; i++ {
		h.d.Receive(udp4(uint16(i), 1, 64))
	}
	for i := 0; i < 10; i++ {
		bds, ok := h.recv(0)
		if !ok || bds[0].hash != 0 {
			t.Fatalf("frame %d: ok %v hash %#x", i, ok, bds)
		}
	}
	if _, ok := h.recv(1); ok {
		t.Fatal("frame on ring 1 with RSS off")
	}
}

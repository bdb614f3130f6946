package fec_test

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
)

var simSeq atomic.Int32

// openSim opens a fresh sim:fecN with the given options and closes it at
// the end of the test, failing it if Close reports an error (leaks).
func openSim(t testing.TB, opts string) (*fec.Port, *model.Device) {
	t.Helper()
	// From 200: the tests that name a port themselves use fec90..fec99,
	// and tests run in parallel, so a sequence number must never reach them.
	name := fmt.Sprintf("fec%d", 200+simSeq.Add(1))
	spec := "sim:" + name
	if opts != "" {
		spec += "?" + opts
	}
	p, err := driver.Open(spec)
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	fp, ok := p.(*fec.Port)
	if !ok {
		t.Fatalf("open %s: got a %T, want *fec.Port", spec, p)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close %s: %v", spec, err)
		}
	})
	if err := p.Start(); err != nil {
		t.Fatalf("start %s: %v", spec, err)
	}
	return fp, sim.FECModel(name)
}

// capture is a wire that keeps copies of the frames a model transmits.
type capture struct {
	mu     sync.Mutex
	frames [][]byte
}

func (c *capture) Transmit(f []byte) {
	c.mu.Lock()
	c.frames = append(c.frames, append([]byte(nil), f...))
	c.mu.Unlock()
}

func (c *capture) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.frames
	c.frames = nil
	return f
}

// udpFrame builds an Ethernet/[VLAN]/IPv4/UDP frame of exactly size bytes
// (FCS not included) with gopacket.
func udpFrame(t testing.TB, size int, pcp int, seed int) []byte {
	t.Helper()
	eth := &layers.Ethernet{
		SrcMAC:       net.HardwareAddr{0x02, 0, 0, 0, 0, byte(seed)},
		DstMAC:       net.HardwareAddr{0x02, 0, 0, 0xFE, 0, 1},
		EthernetType: layers.EthernetTypeIPv4,
	}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, Id: uint16(seed),
		SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2)}
	udp := &layers.UDP{SrcPort: layers.UDPPort(1000 + seed), DstPort: 9}
	udp.SetNetworkLayerForChecksum(ip)
	hdr := 14 + 20 + 8
	ls := []gopacket.SerializableLayer{eth}
	if pcp >= 0 {
		eth.EthernetType = layers.EthernetTypeDot1Q
		ls = append(ls, &layers.Dot1Q{Priority: uint8(pcp), VLANIdentifier: 7, Type: layers.EthernetTypeIPv4})
		hdr += 4
	}
	payload := make([]byte, size-hdr)
	for i := range payload {
		payload[i] = byte(i*131 + seed*7)
	}
	ls = append(ls, ip, udp, gopacket.Payload(payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	if len(buf.Bytes()) != size {
		t.Fatalf("built %d bytes, want %d", len(buf.Bytes()), size)
	}
	return buf.Bytes()
}

// socOptions lists every model SoC profile with each descriptor format it has.
func socOptions() []string {
	var out []string
	for _, soc := range model.Profiles() {
		prof, _ := model.LookupProfile(soc)
		out = append(out, "soc="+soc+"&bd=legacy")
		if prof.EnhancedBD {
			out = append(out, "soc="+soc+"&bd=enhanced")
		}
	}
	return out
}

var frameSizes = []int{60, 64, 65, 128, 255, 511, 1000, 1514}

// TestFramesByteIdentical receives gopacket-built frames through RxBurst and
// sends them back with TxBurst, on every SoC profile and descriptor format:
// every byte must arrive as sent, both ways, and no buffer may leak.
func TestFramesByteIdentical(t *testing.T) {
	t.Parallel()
	for _, opts := range socOptions() {
		t.Run(opts, func(t *testing.T) {
			p, m := openSim(t, opts+"&rx-ring=16&tx-ring=16")
			w := &capture{}
			m.SetWire(w)
			rxq, txq := p.RxQueue(0), p.TxQueue(0)
			var sent [][]byte
			pkts := make([]*driver.Packet, 64)
			for round := 0; round < 5; round++ { // 40 frames through 16-entry rings: they wrap
				var want [][]byte
				for i, sz := range frameSizes {
					pcp := -1
					if i%3 == 0 {
						pcp = 0
					}
					f := udpFrame(t, sz, pcp, round*10+i)
					if !m.Port().Receive(f) {
						t.Fatalf("model refused frame %d (%d bytes): %v", i, sz, m.LastModelError())
					}
					want = append(want, f)
				}
				n := rxq.RxBurst(pkts)
				if n != len(want) {
					t.Fatalf("round %d: RxBurst got %d frames, want %d (stats %+v)", round, n, len(want), p.Stats().Rx)
				}
				for i := 0; i < n; i++ {
					if !bytes.Equal(pkts[i].Data(), want[i]) {
						t.Fatalf("round %d frame %d (%d bytes): received bytes differ from sent\n got % x\nwant % x", round, i, len(want[i]), head(pkts[i].Data()), head(want[i]))
					}
					if pkts[i].PktLen != len(want[i]) || pkts[i].NSegs != 1 {
						t.Fatalf("frame %d: PktLen %d NSegs %d", i, pkts[i].PktLen, pkts[i].NSegs)
					}
				}
				if k := txq.TxBurst(pkts[:n]); k != n {
					t.Fatalf("TxBurst took %d of %d", k, n)
				}
				sent = append(sent, want...)
			}
			txq.Reclaim()
			got := w.take()
			if len(got) != len(sent) {
				t.Fatalf("wire got %d frames, want %d", len(got), len(sent))
			}
			for i := range got {
				if !bytes.Equal(got[i], sent[i]) {
					t.Fatalf("wire frame %d differs from what was received and forwarded\n got % x\nwant % x", i, head(got[i]), head(sent[i]))
				}
			}
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			if n := rxq.Pool().InFlight(); n != 0 {
				t.Fatalf("%d buffers still out after Stop", n)
			}
			st := p.Stats()
			if st.Rx.Packets != uint64(len(sent)) || st.Tx.Packets != uint64(len(sent)) || st.Rx.TotalDrops() != 0 || st.Tx.TotalDrops() != 0 {
				t.Fatalf("stats rx %+v tx %+v", st.Rx, st.Tx)
			}
			var total uint64
			for _, f := range sent {
				total += uint64(len(f))
			}
			if st.Rx.Bytes != total || st.Tx.Bytes != total {
				t.Fatalf("bytes counted rx %d tx %d, want %d each (the frames without FCS)", st.Rx.Bytes, st.Tx.Bytes, total)
			}
		})
	}
}

func head(b []byte) []byte {
	if len(b) > 48 {
		return b[:48]
	}
	return b
}

// TestRxErrorsCountedAndRecycled injects every receive error the model
// offers: each is counted under its cause, its buffer goes back to the
// pool, and the next good frame still arrives intact.
func TestRxErrorsCountedAndRecycled(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind  model.RxError
		cause driver.Cause
	}{
		{model.RxCRC, driver.CauseCRC},
		{model.RxOversize, driver.CauseOversize},
		{model.RxTruncate, driver.CauseOversize},
		{model.RxOverrun, driver.CauseFrame},
		{model.RxNonOctet, driver.CauseFrame},
		{model.RxShort, driver.CauseFrame},
	}
	for _, opts := range []string{"soc=imx8mp&bd=enhanced", "soc=imx6ul&bd=legacy"} {
		p, m := openSim(t, opts+"&rx-ring=8")
		rxq := p.RxQueue(0)
		pkts := make([]*driver.Packet, 8)
		for _, c := range cases {
			if err := m.InjectRxErrors(c.kind, 2); err != nil {
				t.Fatal(err)
			}
			good := udpFrame(t, 200, -1, int(c.kind))
			for i := 0; i < 2; i++ {
				m.Port().Receive(udpFrame(t, 300, -1, i))
			}
			m.Port().Receive(good)
			before := p.Stats().Rx.Drops[c.cause]
			n := rxq.RxBurst(pkts)
			if n != 1 || !bytes.Equal(pkts[0].Data(), good) {
				t.Fatalf("%s error %d: got %d frames after 2 errored and 1 good", opts, c.kind, n)
			}
			pkts[0].Free()
			if d := p.Stats().Rx.Drops[c.cause] - before; d != 2 {
				t.Fatalf("%s error %d: %d drops counted as %v, want 2 (%+v)", opts, c.kind, d, c.cause, p.Stats().Rx)
			}
		}
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
		if n := rxq.Pool().InFlight(); n != 0 {
			t.Fatalf("%d buffers leaked", n)
		}
	}
}

// TestCorruptWritebackCaught garbles the length the device writes back: the
// driver must drop those frames as bad descriptors, not read past a buffer.
func TestCorruptWritebackCaught(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&rx-ring=16")
	rxq := p.RxQueue(0)
	if err := m.CorruptRxWriteback(model.CorruptLength, 3); err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for i := 0; i < 6; i++ {
		f := udpFrame(t, 100+i, -1, i)
		m.Port().Receive(f)
		want = append(want, f)
	}
	pkts := make([]*driver.Packet, 16)
	n := rxq.RxBurst(pkts)
	st := p.Stats().Rx
	bad := st.Drops[driver.CauseBadDescriptor]
	if uint64(n)+st.TotalDrops() != 6 || bad == 0 {
		t.Fatalf("got %d frames, drops %+v: every corrupted length must be dropped as bad_descriptor", n, st.Drops)
	}
	for i := 0; i < n; i++ {
		ok := false
		for _, w := range want {
			ok = ok || bytes.Equal(pkts[i].Data(), w)
		}
		if !ok {
			t.Fatalf("frame %d (%d bytes) delivered with a corrupted length", i, pkts[i].Len())
		}
		pkts[i].Free()
	}
}

// TestDMAFaultSurvived makes device buffer accesses fault: frames are lost
// (counted by the model), the driver keeps working and leaks nothing.
func TestDMAFaultSurvived(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&rx-ring=8&tx-ring=8")
	w := &capture{}
	m.SetWire(w)
	rxq, txq := p.RxQueue(0), p.TxQueue(0)
	m.InjectRxDMAFault(2)
	for i := 0; i < 4; i++ {
		m.Port().Receive(udpFrame(t, 128, -1, i))
	}
	pkts := make([]*driver.Packet, 8)
	n := rxq.RxBurst(pkts)
	if n != 2 {
		t.Fatalf("got %d frames after 2 faulted of 4, want 2", n)
	}
	if txq.TxBurst(pkts[:n]) != n {
		t.Fatal("TxBurst refused")
	}
	txq.Reclaim()
	if got := len(w.take()); got != 2 {
		t.Fatalf("wire got %d frames, want 2", got)
	}
	if m.IOMMU().FaultCount() == 0 {
		t.Fatal("the IOMMU recorded no fault: the injection did not happen")
	}
}

// TestERR006358Recovered arms the i.MX6Q erratum: a TDAR write is lost and
// frames sit on the ring until the driver's reclaim pass sees BDs pending
// with TDAR idle and writes TDAR again.
func TestERR006358Recovered(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx6q&tx-ring=16&link-poll=0") // no stall detector: the reclaim pass must do it
	w := &capture{}
	m.SetWire(w)
	txq := p.TxQueue(0)
	pool := p.RxQueue(0).Pool()
	send := func(k int) {
		var pkts []*driver.Packet
		for i := 0; i < k; i++ {
			pk := pool.Alloc()
			copy(pk.Append(100), udpFrame(t, 100, -1, i))
			pkts = append(pkts, pk)
		}
		if txq.TxBurst(pkts) != k {
			t.Fatal("TxBurst refused")
		}
	}
	send(1) // the engine then finds the ring without a ready BD
	if err := m.ArmERR006358(); err != nil {
		t.Fatal(err)
	}
	send(3)
	if lost := m.Stats().LostTDAR; lost != 1 {
		t.Fatalf("model lost %d TDAR writes, want 1: the erratum did not fire", lost)
	}
	if got := len(w.take()); got != 1 {
		t.Fatalf("wire has %d frames before recovery, want 1", got)
	}
	txq.Reclaim() // re-kicks TDAR
	txq.Reclaim() // frees what the re-kick sent
	if got := len(w.take()); got != 3 {
		t.Fatalf("after reclaim the wire got %d of the 3 stuck frames", got)
	}
	if txq.Pending() != 0 {
		t.Fatalf("%d frames still pending", txq.Pending())
	}
	if n := p.Stats().HW["drv_tx0_rekicks"]; n == 0 {
		t.Fatal("Stats shows no ERR006358 re-kick (drv_tx0_rekicks is 0)")
	}
}

// TestStopWithStalledTX stops a port whose TX engine hangs: Stop gives up
// after its bound, says so, and still takes every buffer back.
func TestStopWithStalledTX(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&tx-ring=16")
	txq := p.TxQueue(0)
	pool := p.RxQueue(0).Pool()
	m.SetTxStall(true)
	var pkts []*driver.Packet
	for i := 0; i < 5; i++ {
		pk := pool.Alloc()
		copy(pk.Append(60), udpFrame(t, 60, -1, i))
		pkts = append(pkts, pk)
	}
	if txq.TxBurst(pkts) != 5 {
		t.Fatal("TxBurst refused")
	}
	err := p.Stop()
	if err == nil || !strings.Contains(err.Error(), "still owned by the MAC") {
		t.Fatalf("Stop with a hung TX engine returned %v, want a bounded-wait error", err)
	}
	if n := pool.InFlight(); n != 0 {
		t.Fatalf("%d buffers still out after Stop", n)
	}
	if st := p.Stats().Tx; st.Drops[driver.CauseStopped] != 5 || st.Packets != 0 || st.TotalDrops() != 5 {
		t.Fatalf("TX counts %d sent and drops %v; want the 5 stranded frames as stopped, none sent", st.Packets, st.Drops)
	}
}

// TestRestart stops and starts a port: rings rewind and frames flow again.
func TestRestart(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx93&rx-ring=8")
	rxq := p.RxQueue(0)
	pkts := make([]*driver.Packet, 8)
	for round := 0; round < 3; round++ {
		for i := 0; i < 5; i++ {
			m.Port().Receive(udpFrame(t, 90, -1, i))
		}
		if n := rxq.RxBurst(pkts); n != 5 {
			t.Fatalf("round %d: %d frames", round, n)
		}
		pool.FreeBulk(pkts[:5])
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMultiBufferFrames sends and receives frames longer than one buffer:
// RX reassembles a chain, TX sends a chain as one frame.
func TestMultiBufferFrames(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8qm&mtu=9000&rx-ring=32") // jumbo frames: the i.MX8QM only
	w := &capture{}
	m.SetWire(w)
	rxq, txq := p.RxQueue(0), p.TxQueue(0)
	f := udpFrame(t, 5000, -1, 3)
	if !m.Port().Receive(f) {
		t.Fatalf("model refused a 5000-byte frame: %v", m.LastModelError())
	}
	pkts := make([]*driver.Packet, 4)
	if n := rxq.RxBurst(pkts); n != 1 {
		t.Fatalf("got %d frames (stats %+v)", n, p.Stats().Rx)
	}
	var got []byte
	for s := pkts[0]; s != nil; s = s.Next() {
		got = append(got, s.Data()...)
	}
	if pkts[0].NSegs < 3 || pkts[0].PktLen != len(f) || !bytes.Equal(got, f) {
		t.Fatalf("reassembled %d bytes in %d segments (PktLen %d), want the 5000-byte frame", len(got), pkts[0].NSegs, pkts[0].PktLen)
	}
	if txq.TxBurst(pkts[:1]) != 1 {
		t.Fatal("TxBurst refused a chained frame")
	}
	txq.Reclaim()
	out := w.take()
	if len(out) != 1 || !bytes.Equal(out[0], f) {
		t.Fatalf("wire got %d frames; the chained frame must leave as one identical frame", len(out))
	}
}

// TestMultiQueue uses the three rings of an AVB part: frames sent on each
// TX ring leave intact; VLAN priorities 4-7 land on RX ring 2, 0-3 on ring 1,
// untagged on ring 0 (RCMR1/RCMR2 as the driver programs them).
func TestMultiQueue(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&queues=3")
	w := &capture{}
	m.SetWire(w)
	if p.Info().RxQueues != 3 || p.Info().TxQueues != 3 {
		t.Fatalf("info %+v", p.Info())
	}
	frames := map[int][]byte{0: udpFrame(t, 100, -1, 1), 1: udpFrame(t, 100, 2, 2), 2: udpFrame(t, 100, 6, 3)}
	for q := 0; q < 3; q++ {
		m.Port().Receive(frames[q])
	}
	pkts := make([]*driver.Packet, 4)
	for q := 0; q < 3; q++ {
		n := p.RxQueue(q).RxBurst(pkts)
		if n != 1 || !bytes.Equal(pkts[0].Data(), frames[q]) || pkts[0].Queue != uint16(q) {
			t.Fatalf("ring %d got %d frames, want its one frame", q, n)
		}
		if p.TxQueue(q).TxBurst(pkts[:1]) != 1 {
			t.Fatalf("tx ring %d refused", q)
		}
		p.TxQueue(q).Reclaim()
	}
	out := w.take()
	if len(out) != 3 {
		t.Fatalf("wire got %d frames from 3 TX rings", len(out))
	}
	for _, o := range out {
		if !bytes.Equal(o, frames[0]) && !bytes.Equal(o, frames[1]) && !bytes.Equal(o, frames[2]) {
			t.Fatalf("wire frame differs from every sent frame")
		}
	}
	if _, err := driver.Open("sim:fec99?soc=imx6ul&queues=2"); err == nil || !strings.Contains(err.Error(), "has 1 of each") {
		t.Fatalf("2 queues on a single-queue part: %v", err)
	}
}

// TestMDIOAndLink reads the model's PHY over MDIO and checks that the
// resolved speed reaches the MAC (the model passes no frame otherwise).
func TestMDIOAndLink(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		soc   string
		speed int
	}{{"imx8mp", 1000}, {"imx6ul", 100}, {"imx6q", 1000}} { // i.MX6UL: RMII, 100 Mb/s at most
		p, m := openSim(t, "soc="+c.soc)
		if p.PHYAddr() != m.PHYAddr() {
			t.Fatalf("%s: driver found PHY %d, model has it at %d", c.soc, p.PHYAddr(), m.PHYAddr())
		}
		id1, err1 := p.MDIORead(p.PHYAddr(), 2)
		id2, err2 := p.MDIORead(p.PHYAddr(), 3)
		if err1 != nil || err2 != nil || id1 != 0x0022 || id2 != 0x1622 {
			t.Fatalf("%s: PHY ID %04x:%04x (%v %v), want 0022:1622", c.soc, id1, id2, err1, err2)
		}
		if l := p.Link(); !l.Up || l.SpeedMbps != c.speed || !l.FullDuplex {
			t.Fatalf("%s: link %v", c.soc, l)
		}
		m.Port().Receive(udpFrame(t, 64, -1, 0))
		pkts := make([]*driver.Packet, 1)
		if p.RxQueue(0).RxBurst(pkts) != 1 {
			t.Fatalf("%s: no frame passed: MAC speed bits do not match the PHY (model speed mismatches %d)", c.soc, m.Stats().SpeedMismatch)
		}
		pkts[0].Free()
		if err := p.MDIOWrite(p.PHYAddr(), 4, 0x01E1); err != nil {
			t.Fatal(err)
		}
		if v, _ := p.MDIORead(p.PHYAddr(), 4); v != 0x01E1 {
			t.Fatalf("ANAR reads %#x after writing 0x1e1", v)
		}
	}
	p, _ := openSim(t, "soc=imx8mp&link=down")
	if l := p.Link(); l.Up {
		t.Fatalf("link=down model: driver reports %v", l)
	}
}

// TestMIBStats checks that the device's counters reach PortStats.HW under
// the reference's names.
func TestMIBStats(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp")
	pkts := make([]*driver.Packet, 8)
	for i := 0; i < 5; i++ {
		m.Port().Receive(udpFrame(t, 100, -1, i))
	}
	n := p.RxQueue(0).RxBurst(pkts)
	p.TxQueue(0).TxBurst(pkts[:3])
	pool.FreeBulk(pkts[3:n])
	p.TxQueue(0).Reclaim()
	hw := p.Stats().HW
	if hw["RMON_R_PACKETS"] != 5 || hw["RMON_T_PACKETS"] != 3 {
		t.Fatalf("MIB RMON_R_PACKETS %d RMON_T_PACKETS %d, want 5 and 3", hw["RMON_R_PACKETS"], hw["RMON_T_PACKETS"])
	}
	if len(hw) < 50 {
		t.Fatalf("only %d MIB counters reported", len(hw))
	}
}

// TestRegisterMapMatchesModel cross-checks two independent transcriptions
// of the reference: every register the model has must be at the same
// offset under the same name (or the reference's alias) in the driver's map.
func TestRegisterMapMatchesModel(t *testing.T) {
	t.Parallel()
	byOff := map[uint32]string{}
	for _, r := range fec.RegisterMap() {
		byOff[r.Offset] = r.Name
	}
	matched := 0
	for _, r := range model.Registers() {
		name, ok := byOff[r.Offset]
		switch {
		case !ok:
			t.Errorf("model register %s at %#x is missing from fec.RegisterMap", r.Name, r.Offset)
		case name != r.Name && name != r.Alias:
			t.Errorf("offset %#x: driver calls it %s, model %s (alias %q)", r.Offset, name, r.Name, r.Alias)
		default:
			matched++
		}
	}
	if matched < 40 {
		t.Fatalf("only %d registers matched", matched)
	}
	// And the other way: every register the driver names is in the model's
	// table, so the driver uses no offset the reference lacks.
	inModel := map[uint32]bool{}
	for _, r := range model.Registers() {
		inModel[r.Offset] = true
	}
	for _, r := range fec.RegisterMap() {
		if !inModel[r.Offset] {
			t.Errorf("driver register %s at %#x is not in the model's table", r.Name, r.Offset)
		}
	}
}

// TestBadOptions checks that wrong spec options are refused with errors
// that name the fix.
func TestBadOptions(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{
		"sim:fec90?soc=imx8mp&bd=fancy":              `option bd="fancy": unknown descriptor format (accepted: legacy or enhanced)`,
		"sim:fec91?soc=imx8mp&phy=40":                `option phy="40": not a PHY address (accepted: 0 to 31, none`,
		"sim:fec92?soc=imx8mp&mtu=20000":             "MTU 20000 must be in [68, 1962]",
		"sim:fec93?soc=imx8mp&mac=00:00:00:00:00:00": `option mac="00:00:00:00:00:00": the all-zero address is no station's (accepted: a unicast address other than 00:00:00:00:00:00`,
		"sim:fec93?soc=imx8mp&mac=ff:ff:ff:ff:ff:ff": "broadcast address cannot be a port's own",
		"sim:fec93?soc=imx8mp&mac=33:33:00:00:00:01": "multicast address",
		"sim:fec93?soc=imx8mp&mac=02:00:00":          `option mac="02:00:00": not a 6-byte MAC address`,
		"sim:fec93?soc=imx8mp&vlan-strip=1":          "option vlan-strip: unknown option",
		"sim:fec94?vf=1":                             "option vf: unknown option",
	} {
		p, err := driver.Open(spec)
		if err == nil {
			p.Close()
			t.Errorf("%s: opened", spec)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to say %q", spec, err, want)
		}
	}
}

// TestEngineMode runs the model's DMA engine in its own goroutine, as
// silicon runs concurrently with the driver: frames injected while the
// driver polls arrive intact and in order, and frames sent leave intact.
func TestEngineMode(t *testing.T) {
	t.Parallel()
	for _, opts := range []string{"soc=imx8mp&bd=enhanced", "soc=imx6q&bd=legacy"} {
		p, m := openSim(t, opts+"&mode=engine&rx-ring=32&tx-ring=32")
		w := &capture{}
		m.SetWire(w)
		rxq, txq := p.RxQueue(0), p.TxQueue(0)
		const total = 500
		var want [][]byte
		for i := 0; i < total; i++ {
			want = append(want, udpFrame(t, frameSizes[i%len(frameSizes)], -1, i))
		}
		done := make(chan struct{})
		var quit atomic.Bool
		go func() { // the wire side: offer frames while there is room
			defer close(done)
			for i := 0; i < total && !quit.Load(); {
				if m.Port().RxRoom() > 0 && m.Port().Receive(want[i]) {
					i++
				}
			}
		}()
		pkts := make([]*driver.Packet, 32)
		got, idle := 0, 0
		for got < total {
			n := rxq.RxBurst(pkts)
			if n == 0 {
				if idle++; idle > 50_000_000 { // a bound on polls, not on time
					quit.Store(true)
					<-done
					t.Fatalf("%s: %d of %d frames arrived; the rest never came (model %+v)", opts, got, total, m.Stats())
				}
				continue
			}
			idle = 0
			for i := 0; i < n; i++ {
				if !bytes.Equal(pkts[i].Data(), want[got+i]) {
					t.Fatalf("%s: frame %d differs", opts, got+i)
				}
			}
			for sent := 0; sent < n; {
				sent += txq.TxBurst(pkts[sent:n])
			}
			got += n
		}
		<-done
		for i := 0; txq.Pending() > 0; i++ {
			if i > 50_000_000 {
				t.Fatalf("%s: %d frames never completed", opts, txq.Pending())
			}
			txq.Reclaim()
		}
		out := w.take()
		if len(out) != total {
			t.Fatalf("%s: wire got %d of %d frames", opts, len(out), total)
		}
		for i := range out {
			if !bytes.Equal(out[i], want[i]) {
				t.Fatalf("%s: wire frame %d differs", opts, i)
			}
		}
	}
}

// TestShift16Off receives and forwards with RACC.SHIFT16 off (shift16=0).
func TestShift16Off(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx6ul&bd=legacy&shift16=0")
	w := &capture{}
	m.SetWire(w)
	f := udpFrame(t, 333, -1, 5)
	m.Port().Receive(f)
	pkts := make([]*driver.Packet, 1)
	if p.RxQueue(0).RxBurst(pkts) != 1 || !bytes.Equal(pkts[0].Data(), f) {
		t.Fatal("frame not received intact without SHIFT16")
	}
	p.TxQueue(0).TxBurst(pkts)
	p.TxQueue(0).Reclaim()
	if out := w.take(); len(out) != 1 || !bytes.Equal(out[0], f) {
		t.Fatal("frame not sent intact")
	}
}

// TestLinkChange takes the model's link down and up: UpdateLink follows it
// and frames pass again afterwards.
func TestLinkChange(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&link-poll=0")
	m.SetLink(false)
	if l := p.UpdateLink(); l.Up {
		t.Fatalf("link %v after the PHY went down", l)
	}
	// While the PHY says down, TxBurst takes frames, frees them and counts
	// them as link_down: nothing reaches the wire, nothing leaks.
	w := &capture{}
	m.SetWire(w)
	pl := p.RxQueue(0).Pool()
	out := []*driver.Packet{pl.Alloc(), pl.Alloc()}
	for _, pk := range out {
		copy(pk.Append(100), udpFrame(t, 100, -1, 2))
	}
	if n := p.TxQueue(0).TxBurst(out); n != 2 || p.TxQueue(0).Pending() != 0 {
		t.Fatalf("link down: TxBurst took %d of 2, %d pending", n, p.TxQueue(0).Pending())
	}
	if d := p.Stats().Tx.Drops[driver.CauseLinkDown]; d != 2 || len(w.take()) != 0 {
		t.Fatalf("link down: %d link_down drops counted, want 2 (and none on the wire)", d)
	}
	m.SetLink(true)
	if l := p.UpdateLink(); !l.Up || l.SpeedMbps != 1000 {
		t.Fatalf("link %v after the PHY came back", l)
	}
	f := udpFrame(t, 128, -1, 1)
	m.Port().Receive(f)
	pkts := make([]*driver.Packet, 1)
	if p.RxQueue(0).RxBurst(pkts) != 1 || !bytes.Equal(pkts[0].Data(), f) {
		t.Fatal("no frame after the link came back")
	}
	pkts[0].Free()
}

// TestRingFullCountedAsNoBuffer overruns an unpolled RX ring: the frames
// the MAC had no BD for show up as no_buffer drops (IEEE_R_DROP), and
// polling resumes reception.
func TestRingFullCountedAsNoBuffer(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&rx-ring=8")
	for i := 0; i < 12; i++ {
		m.Port().Receive(udpFrame(t, 100, -1, i))
	}
	if d := p.Stats().Rx.Drops[driver.CauseNoBuffer]; d != 4 {
		t.Fatalf("%d no_buffer drops for 12 frames into 8 BDs, want 4", d)
	}
	pkts := make([]*driver.Packet, 16)
	n := p.RxQueue(0).RxBurst(pkts)
	pool.FreeBulk(pkts[:n])
	f := udpFrame(t, 100, -1, 99)
	m.Port().Receive(f)
	if n := p.RxQueue(0).RxBurst(pkts); n != 1 || !bytes.Equal(pkts[0].Data(), f) {
		t.Fatalf("after the refill %d frames arrived", n)
	}
	pkts[0].Free()
}

// TestControlPath changes MAC, promiscuity and MTU on a running port and
// reads the registers back through Registers.
func TestControlPath(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp")
	mac := net.HardwareAddr{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}
	if err := p.SetMAC(mac); err != nil {
		t.Fatal(err)
	}
	if got := m.MAC(); !bytes.Equal(got[:], mac) || !bytes.Equal(p.MAC(), mac) {
		t.Fatalf("PALR/PAUR hold %x, want %v", got, mac)
	}
	// Addresses no station may have are refused, naming the operation and
	// the fix (the caller names the port), and change nothing.
	for _, bad := range []net.HardwareAddr{{0x01, 0, 0, 0, 0, 1}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0, 0, 0, 0, 0, 0}, {2, 0, 0}} {
		err := p.SetMAC(bad)
		if err == nil || !strings.HasPrefix(err.Error(), "set MAC: ") || strings.Contains(err.Error(), "sim:fec") || !strings.Contains(err.Error(), "such as the locally administered 02:00:00:00:00:01") {
			t.Fatalf("SetMAC(%v): %v", bad, err)
		}
		if got := m.MAC(); !bytes.Equal(got[:], mac) || !bytes.Equal(p.MAC(), mac) {
			t.Fatalf("SetMAC(%v) refused, yet PALR/PAUR hold %x", bad, got)
		}
	}
	reg := func(name string) uint32 {
		for _, r := range p.Registers() {
			if r.Name == name {
				return r.Value
			}
		}
		t.Fatalf("Registers has no %s", name)
		return 0
	}
	if reg("RCR")&(1<<3) == 0 {
		t.Fatal("RCR.PROM clear on a promiscuous port")
	}
	p.SetPromiscuous(false)
	if reg("RCR")&(1<<3) != 0 {
		t.Fatal("RCR.PROM still set")
	}
	if reg("ECR")&(1<<1) == 0 || reg("RCR")&1 != 0 {
		t.Fatalf("ECR %#x RCR %#x: MAC not enabled or loopback left on", reg("ECR"), reg("RCR"))
	}
	for _, r := range p.Registers() {
		if r.Name == "ECR" && !strings.Contains(r.String(), "ETHEREN") {
			t.Fatalf("ECR dump %q does not name ETHEREN", r.String())
		}
	}
	p.SetPromiscuous(true) // the test frames are not addressed to the new MAC
	pkts := make([]*driver.Packet, 2)
	big := udpFrame(t, 4000, -1, 1)
	m.Port().Receive(big)
	if n := p.RxQueue(0).RxBurst(pkts); n != 0 {
		t.Fatalf("a 4000-byte frame passed an MTU of 1500")
	}
	if p.Stats().Rx.Drops[driver.CauseOversize] != 1 {
		t.Fatalf("oversize drop not counted: %+v model %+v hw %v", p.Stats().Rx.Drops, m.Stats(), p.Stats().HW)
	}
	if err := p.SetMTU(1962); err != nil {
		t.Fatal(err)
	}
	mid := udpFrame(t, 1900, -1, 1)
	m.Port().Receive(mid)
	if n := p.RxQueue(0).RxBurst(pkts); n != 1 || pkts[0].PktLen != len(mid) {
		t.Fatalf("a 1900-byte frame did not pass an MTU of 1962")
	}
	pkts[0].Free()
}

// regValue reads one register by name through Registers.
func regValue(t *testing.T, p *fec.Port, name string) uint32 {
	t.Helper()
	for _, r := range p.Registers() {
		if r.Name == name {
			return r.Value
		}
	}
	t.Fatalf("Registers has no %s", name)
	return 0
}

// checkSpeedBits checks that ECR.SPEED and RCR.RMII_10T say speed and
// that a frame passes the model, which refuses frames while the MAC's
// speed differs from the PHY's.
func checkSpeedBits(t *testing.T, p *fec.Port, m *model.Device, speed int, what string) {
	t.Helper()
	ecr, rcr := regValue(t, p, "ECR"), regValue(t, p, "RCR")
	if got := ecr&(1<<5) != 0; got != (speed == 1000) {
		t.Fatalf("%s: ECR %#x: SPEED is %v at %d Mb/s", what, ecr, got, speed)
	}
	if got := rcr&(1<<9) != 0; got != (speed == 10) {
		t.Fatalf("%s: RCR %#x: RMII_10T is %v at %d Mb/s", what, rcr, got, speed)
	}
	f := udpFrame(t, 128, -1, speed)
	mis := m.Stats().SpeedMismatch
	m.Port().Receive(f)
	pkts := make([]*driver.Packet, 1)
	if p.RxQueue(0).RxBurst(pkts) != 1 || !bytes.Equal(pkts[0].Data(), f) {
		t.Fatalf("%s: no frame passed at %d Mb/s (model speed mismatches +%d)", what, speed, m.Stats().SpeedMismatch-mis)
	}
	pkts[0].Free()
}

// TestLinkSpeedSetsMACBits: the speed the PHY resolves (read over MDIO
// clause 22) reaches ECR.SPEED and RCR.RMII_10T at Start, and again after
// the PHY renegotiates to another speed on a running port.
func TestLinkSpeedSetsMACBits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		soc          string
		speed, later int
	}{{"imx8mp", 1000, 100}, {"imx8mp", 100, 10}, {"imx8mp", 10, 1000}, {"imx6ul", 100, 10}, {"imx6q", 1000, 10}} {
		name := fmt.Sprintf("%s/%d-then-%d", c.soc, c.speed, c.later)
		p, m := openSim(t, fmt.Sprintf("soc=%s&speed=%d&link-poll=0", c.soc, c.speed))
		if l := p.Link(); !l.Up || l.SpeedMbps != c.speed || !l.FullDuplex {
			t.Fatalf("%s: link %v, want up %d Mb/s full duplex", name, l, c.speed)
		}
		checkSpeedBits(t, p, m, c.speed, name+" at start")
		if err := m.SetLinkSpeed(c.later); err != nil {
			t.Fatal(err)
		}
		m.Port().Receive(udpFrame(t, 128, -1, 1))
		pkts := make([]*driver.Packet, 1)
		if p.RxQueue(0).RxBurst(pkts) != 0 {
			t.Fatalf("%s: a frame passed while the MAC still ran at the old speed: the check below proves nothing", name)
		}
		if l := p.UpdateLink(); l.SpeedMbps != c.later {
			t.Fatalf("%s: UpdateLink says %v after the PHY went to %d Mb/s", name, l, c.later)
		}
		checkSpeedBits(t, p, m, c.later, name+" after renegotiation")
	}
	if _, err := driver.Open("sim:fec98?soc=imx6ul&speed=5"); err == nil || !strings.Contains(err.Error(), "10, 100 or 1000") {
		t.Fatalf("speed=5: %v", err)
	}
}

// TestLinkWatcherFollowsPHY: with the link watcher on (link-poll=), a
// renegotiated speed reaches the MAC without anyone calling UpdateLink.
func TestLinkWatcherFollowsPHY(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&link-poll=1ms")
	if err := m.SetLinkSpeed(100); err != nil {
		t.Fatal(err)
	}
	// A bound on polls (each at least one watcher period), not a timing check.
	for i := 0; p.Link().SpeedMbps != 100; i++ {
		if i == 20_000 {
			t.Fatalf("the watcher never saw the PHY at 100 Mb/s: link %v", p.Link())
		}
		time.Sleep(time.Millisecond)
	}
	checkSpeedBits(t, p, m, 100, "after the watcher")
	if err := p.Stop(); err != nil { // ends the watcher first
		t.Fatal(err)
	}
}

// TestERR006358StallDetector: frames whose TDAR write the i.MX6Q erratum
// swallowed after the last burst of a quiet spell leave without the queue's
// owner polling again: the port's watcher sees ready BDs with TDAR idle and
// writes TDAR.
func TestERR006358StallDetector(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx6q&tx-ring=16&link-poll=1ms")
	w := &capture{}
	m.SetWire(w)
	txq := p.TxQueue(0)
	pl := p.RxQueue(0).Pool()
	send := func(k int) {
		pkts := make([]*driver.Packet, k)
		for i := range pkts {
			pkts[i] = pl.Alloc()
			copy(pkts[i].Append(100), udpFrame(t, 100, -1, i))
		}
		if txq.TxBurst(pkts) != k {
			t.Fatal("TxBurst refused")
		}
	}
	send(1)
	if err := m.ArmERR006358(); err != nil {
		t.Fatal(err)
	}
	send(3)
	if lost := m.Stats().LostTDAR; lost != 1 {
		t.Fatalf("model lost %d TDAR writes, want 1: the erratum did not fire", lost)
	}
	// A bound on polls (each at least one watcher period), not a timing check.
	got := 0
	for i := 0; got < 4; i++ {
		if i == 20_000 {
			t.Fatalf("the stall detector never re-kicked TDAR: %d of 4 frames on the wire", got)
		}
		got += len(w.take())
		time.Sleep(time.Millisecond)
	}
	if err := p.Stop(); err != nil { // ends the watcher, then reclaims
		t.Fatal(err)
	}
	if n := pl.InFlight(); n != 0 {
		t.Fatalf("%d buffers out after Stop", n)
	}
}

// TestClosedPortRefusesControl: once Close released the device, the
// setters say so instead of writing to a window that is gone.
func TestClosedPortRefusesControl(t *testing.T) {
	t.Parallel()
	p, err := driver.Open("sim:fec97?soc=imx8mp&link-poll=0")
	if err != nil {
		t.Fatal(err)
	}
	fp := p.(*fec.Port)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	l := fp.Link()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Start":          p.Start(),
		"SetMTU":         p.SetMTU(1500),
		"SetPromiscuous": p.SetPromiscuous(true),
		"SetMAC":         p.SetMAC(net.HardwareAddr{2, 0, 0, 0, 0, 9}),
	} {
		if err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("%s after Close: %v, want a closed-port error", name, err)
		}
	}
	if !l.Up {
		t.Errorf("link before Close: %v, want up", l)
	}
	// A released device has no link to report: the zero Link, down.
	if got := fp.UpdateLink(); got != (driver.Link{}) {
		t.Errorf("UpdateLink after Close: %v, want down (the zero Link)", got)
	}
}

// TestQueueOutOfRange: a queue index out of range gets nil, as from every
// driver (driver.Port), not a panic.
func TestQueueOutOfRange(t *testing.T) {
	t.Parallel()
	p, _ := openSim(t, "")
	in := p.Info()
	for _, i := range []int{-1, in.RxQueues, in.RxQueues + 7} {
		if q := p.RxQueue(i); q != nil {
			t.Errorf("RxQueue(%d) of %d queues = %v, want nil", i, in.RxQueues, q)
		}
	}
	for _, i := range []int{-1, in.TxQueues} {
		if q := p.TxQueue(i); q != nil {
			t.Errorf("TxQueue(%d) of %d queues = %v, want nil", i, in.TxQueues, q)
		}
	}
	if p.RxQueue(0) == nil || p.TxQueue(0) == nil {
		t.Error("queue 0 missing")
	}
}

// TestStopRefusesBursts: after Stop every burst returns 0 and touches
// neither ring nor register, as in every driver (internal/gate): RxBurst
// writes no RDAR (it used to refill the drained ring and ring the
// doorbell of a disabled MAC), TxBurst takes no frame and writes no TDAR,
// Reclaim frees nothing, and no counter moves; the caller keeps its frame.
// After Start frames flow again. enetc has the same test.
func TestStopRefusesBursts(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "")
	rx, tx := p.RxQueue(0), p.TxQueue(0)
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	pk := rx.Pool().Alloc()
	copy(pk.Append(64), udpFrame(t, 64, 0, 1))
	before, st0 := m.Stats(), p.Stats()
	pkts := make([]*driver.Packet, 8)
	if n := rx.RxBurst(pkts); n != 0 {
		t.Errorf("RxBurst after Stop returned %d", n)
	}
	if n := tx.TxBurst([]*driver.Packet{pk}); n != 0 {
		t.Errorf("TxBurst after Stop took %d frames", n)
	}
	if n := tx.Reclaim(); n != 0 {
		t.Errorf("Reclaim after Stop freed %d", n)
	}
	after, st1 := m.Stats(), p.Stats()
	if after.RDARWrites != before.RDARWrites || after.TDARWrites != before.TDARWrites {
		t.Errorf("after Stop: %d RDAR and %d TDAR writes", after.RDARWrites-before.RDARWrites, after.TDARWrites-before.TDARWrites)
	}
	if st1.Rx.Packets != st0.Rx.Packets || st1.Tx.Packets != st0.Tx.Packets ||
		st1.Rx.TotalDrops() != st0.Rx.TotalDrops() || st1.Tx.TotalDrops() != st0.Tx.TotalDrops() {
		t.Errorf("counters moved after Stop: %+v -> %+v", st0, st1)
	}
	pk.Free() // the caller kept it
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	f := udpFrame(t, 128, 0, 2)
	m.Port().Receive(f)
	if n := rx.RxBurst(pkts); n != 1 || !bytes.Equal(pkts[0].Data(), f) {
		t.Fatalf("after a restart: %d frames", n)
	}
	pkts[0].Free()
}

// TestMACOption: mac= is the port's address from open, in PALR/PAUR, as
// on the ENETC.
func TestMACOption(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&mac=02:00:00:00:00:42")
	want := net.HardwareAddr{2, 0, 0, 0, 0, 0x42}
	if got := m.MAC(); !bytes.Equal(got[:], want) || !bytes.Equal(p.MAC(), want) {
		t.Fatalf("mac=%v: PALR/PAUR hold %x, the port says %v", want, got, p.MAC())
	}
}

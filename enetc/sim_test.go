package enetc_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
)

// simPort is an open sim:enetcN port with its model.
type simPort struct {
	t     testing.TB
	spec  string
	port  *enetc.Port
	model *model.Device
	wire  *capture
}

// capture is a wire that keeps copies of transmitted frames.
type capture struct {
	mu     sync.Mutex
	frames [][]byte
	count  int
	keep   bool
}

func (c *capture) Transmit(f []byte) {
	c.mu.Lock()
	c.count++
	if c.keep {
		c.frames = append(c.frames, append([]byte(nil), f...))
	}
	c.mu.Unlock()
}

func (c *capture) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.frames
	c.frames = nil
	return f
}

// Every port one test opens is on one simulated LS1028A of its own
// (chip=, see testChip): its ports share the ERR050089 lock and data-path
// gate with each other, as the functions of one chip must, and with no
// other test's. So an MDIO transaction on one test's port (PHY discovery at
// Open, a link poll, an MDIO read) holds off only that test's ports, and
// tests run in parallel.
var simSeq struct {
	sync.Mutex
	n int
}

// testChips maps a test to the name of its simulated chip.
var testChips struct {
	sync.Mutex
	m map[testing.TB]string
	n int
}

// testChip is the chip= of t's ports: one per test (a subtest has its own),
// forgotten when t ends.
func testChip(t testing.TB) string {
	testChips.Lock()
	defer testChips.Unlock()
	if c, ok := testChips.m[t]; ok {
		return c
	}
	if testChips.m == nil {
		testChips.m = map[testing.TB]string{}
	}
	testChips.n++
	c := fmt.Sprintf("test%d", testChips.n)
	testChips.m[t] = c
	t.Cleanup(func() {
		testChips.Lock()
		delete(testChips.m, t)
		testChips.Unlock()
	})
	return c
}

// openSim opens a fresh sim:enetcN (a new N per call, so tests never share a
// device) with extra spec options and cfg, started, with a capturing wire.
func openSim(t testing.TB, opts string, cfg driver.Config) *simPort {
	t.Helper()
	simSeq.Lock()
	simSeq.n++
	name := fmt.Sprintf("enetc%d", 100+simSeq.n)
	simSeq.Unlock()
	// Without a link watcher unless asked for: its MDIO polls close the
	// ERR050089 gate, and an RX burst that meets it returns 0, which tests
	// that count frames per poll would see.
	if !strings.Contains(opts, "link-poll=") {
		if opts != "" {
			opts += "&"
		}
		opts += "link-poll=0"
	}
	if !strings.Contains(opts, "chip=") {
		opts += "&chip=" + testChip(t)
	}
	spec := "sim:" + name + "?" + opts
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = 50 * time.Millisecond
	}
	p, err := driver.OpenConfig(spec, cfg)
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	ep, ok := p.(*enetc.Port)
	if !ok {
		t.Fatalf("open %s: got a %T, want *enetc.Port", spec, p)
	}
	sp := &simPort{t: t, spec: spec, port: ep, model: sim.ENETCModel(name), wire: &capture{keep: true}}
	if sp.model == nil {
		t.Fatalf("no model behind %s", spec)
	}
	sp.model.SetWire(sp.wire)
	t.Cleanup(sp.finalCheck)
	if err := ep.Start(); err != nil {
		t.Fatalf("start %s: %v", spec, err)
	}
	return sp
}

// finalCheck runs after every test that opened a sim port, whether or not
// the test closed it: every buffer of every RX pool must be back (the
// pool's in-flight count zero), and the port ends closed.
func (s *simPort) finalCheck() {
	if err := s.port.Stop(); err != nil && !errors.Is(err, driver.ErrClosed) {
		s.t.Logf("%s: Stop after the test: %v", s.spec, err)
	}
	for i := 0; i < s.port.Info().RxQueues; i++ {
		if n := s.port.RxQueue(i).Pool().InFlight(); n != 0 {
			s.t.Errorf("%s: RX queue %d: %d buffers still in flight after the test", s.spec, i, n)
		}
	}
	_ = s.port.Close() // a no-op when the test closed it
}

// stopCheck stops the port, checks that every buffer is back in its pool,
// and returns the final stats.
func (s *simPort) stopCheck() driver.PortStats {
	s.t.Helper()
	if err := s.port.Stop(); err != nil {
		s.t.Errorf("%s: Stop: %v", s.spec, err)
	}
	for i := 0; i < s.port.Info().RxQueues; i++ {
		if n := s.port.RxQueue(i).Pool().InFlight(); n != 0 {
			s.t.Errorf("%s: RX queue %d: %d buffers in flight after Stop", s.spec, i, n)
		}
	}
	return s.port.Stats()
}

// close stops and closes the port and checks the model saw no misuse.
func (s *simPort) close(allowModelErrors bool) {
	s.t.Helper()
	s.stopCheck()
	ms := s.model.Stats()
	if err := s.port.Close(); err != nil {
		s.t.Errorf("%s: Close: %v", s.spec, err)
	}
	if ms.ERR050089 != 0 {
		s.t.Errorf("%s: %d register accesses during MDIO (ERR050089)", s.spec, ms.ERR050089)
	}
	if !allowModelErrors {
		for _, e := range s.model.ModelErrors() {
			s.t.Errorf("%s: model error: %s", s.spec, e)
		}
		if f := s.model.IOMMU().FaultCount(); f != 0 {
			s.t.Errorf("%s: %d DMA faults: %v", s.spec, f, s.model.IOMMU().Faults())
		}
	}
}

// rxAll polls RX queue q until want frames arrived or polls run out.
func (s *simPort) rxAll(q, want, polls int) []*pool.Packet {
	var got []*pool.Packet
	buf := make([]*pool.Packet, 32)
	for i := 0; i < polls && len(got) < want; i++ {
		n := s.port.RxQueue(q).RxBurst(buf)
		got = append(got, buf[:n]...)
	}
	return got
}

func frameOf(pk *pool.Packet) []byte {
	var b []byte
	for s := pk; s != nil; s = s.Next() {
		b = append(b, s.Data()...)
	}
	return b
}

var (
	macA = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xa}
	macB = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xb}
)

// build serialises layers and pads the payload to size bytes (without FCS).
// gopacket pads short Ethernet frames to 60 bytes itself, so the padding is
// found by trying.
func build(t testing.TB, size int, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	pad := 0
	for {
		buf := gopacket.NewSerializeBuffer()
		all := ls
		if pad > 0 {
			all = append(append([]gopacket.SerializableLayer(nil), ls...), gopacket.Payload(bytes.Repeat([]byte{0xa5}, pad)))
		}
		if err := gopacket.SerializeLayers(buf, opts, all...); err != nil {
			t.Fatal(err)
		}
		if n := len(buf.Bytes()); n >= size {
			return append([]byte(nil), buf.Bytes()...)
		} else {
			pad += size - n
		}
	}
}

func udp4(t testing.TB, size int, sport uint16) []byte {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IP{10, 0, byte(sport >> 8), byte(sport)}, DstIP: net.IP{10, 1, 0, 1}}
	u := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: 4789}
	_ = u.SetNetworkLayerForChecksum(ip)
	return build(t, size, &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeIPv4}, ip, u)
}

func tcp6(t testing.TB, size int, sport uint16) []byte {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP,
		SrcIP: net.ParseIP("2001:db8::1"), DstIP: net.ParseIP("2001:db8::2")}
	tc := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: 443, Seq: 1, ACK: true, Window: 1024}
	_ = tc.SetNetworkLayerForChecksum(ip)
	return build(t, size, &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeIPv6}, ip, tc)
}

func arp(t testing.TB) []byte {
	a := &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6,
		ProtAddressSize: 4, Operation: layers.ARPRequest, SourceHwAddress: macA, SourceProtAddress: []byte{10, 0, 0, 1},
		DstHwAddress: make([]byte, 6), DstProtAddress: []byte{10, 0, 0, 2}}
	return build(t, 60, &layers.Ethernet{SrcMAC: macA, DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP}, a)
}

func vlanUDP(t testing.TB, size int, vid uint16) []byte {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
	u := &layers.UDP{SrcPort: 1234, DstPort: 5678}
	_ = u.SetNetworkLayerForChecksum(ip)
	return build(t, size, &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeDot1Q},
		&layers.Dot1Q{VLANIdentifier: vid, Priority: 3, Type: layers.EthernetTypeIPv4}, ip, u)
}

// TestFramesLeaveByteIdentical sends gopacket-built frames of every kind
// and size into the model, receives them with RxBurst, transmits them with
// TxBurst and checks they leave the model's wire unchanged.
func TestFramesLeaveByteIdentical(t *testing.T) {
	t.Parallel()
	s := openSim(t, "ierb=prepared", driver.Config{MTU: 9000})
	var frames [][]byte
	frames = append(frames, arp(t))
	for i, size := range []int{60, 64, 128, 256, 512, 1000, 1514, 1518} {
		frames = append(frames, udp4(t, size, uint16(i)), tcp6(t, size, uint16(i)), vlanUDP(t, size, uint16(i+1)))
	}
	frames = append(frames, udp4(t, 9000, 7), tcp6(t, 4000, 8), vlanUDP(t, 9018, 9))
	for i, f := range frames {
		if !s.model.Port().Receive(f) {
			t.Fatalf("frame %d (%d bytes) not accepted by the model", i, len(f))
		}
		got := s.rxAll(0, 1, 10)
		if len(got) != 1 {
			t.Fatalf("frame %d (%d bytes): received %d frames", i, len(f), len(got))
		}
		pk := got[0]
		if !bytes.Equal(frameOf(pk), f) || pk.PktLen != len(f) {
			t.Fatalf("frame %d (%d bytes): received %d bytes (PktLen %d), not the frame sent", i, len(f), len(frameOf(pk)), pk.PktLen)
		}
		if n := s.port.TxQueue(0).TxBurst(got); n != 1 {
			t.Fatalf("frame %d: TxBurst = %d", i, n)
		}
	}
	out := s.wire.take()
	if len(out) != len(frames) {
		t.Fatalf("%d frames on the wire, want %d", len(out), len(frames))
	}
	for i := range frames {
		if !bytes.Equal(out[i], frames[i]) {
			t.Errorf("frame %d (%d bytes) left the wire changed (%d bytes)", i, len(frames[i]), len(out[i]))
		}
	}
	st := s.stopCheck()
	if st.Rx.Packets != uint64(len(frames)) || st.Tx.Packets != uint64(len(frames)) || st.Rx.TotalDrops() != 0 {
		t.Errorf("stats: rx %d tx %d rx drops %v", st.Rx.Packets, st.Tx.Packets, st.Rx.Drops)
	}
	if st.HW["SIRFRM"] != uint64(len(frames)) || st.HW["SITFRM"] != uint64(len(frames)) {
		t.Errorf("SI counters: SIRFRM %d SITFRM %d, want %d", st.HW["SIRFRM"], st.HW["SITFRM"], len(frames))
	}
	s.close(false)
}

// TestRxFrameLongerThanBuffer uses 1 KiB buffers (four per page), so a
// full-size frame spans two BDs and comes back as two segments.
func TestRxFrameLongerThanBuffer(t *testing.T) {
	t.Parallel()
	s := openSim(t, "buf-size=1024", driver.Config{})
	f := udp4(t, 1514, 1)
	if !s.model.Port().Receive(f) {
		t.Fatal("not accepted")
	}
	got := s.rxAll(0, 1, 10)
	if len(got) != 1 {
		t.Fatalf("received %d frames", len(got))
	}
	if got[0].NSegs != 2 || got[0].Next() == nil || got[0].Len() != 896 {
		t.Errorf("frame: %d segments, first %d bytes; want 2 segments of 896 + 618", got[0].NSegs, got[0].Len())
	}
	if !bytes.Equal(frameOf(got[0]), f) {
		t.Error("segments do not add up to the frame")
	}
	pool.FreeBulk(got)
	s.close(false)
}

// TestRingWrapManyLaps pushes 200 laps' worth of frames through 64-BD
// rings in bursts, checking every frame and that one TBPIR write covers
// each burst.
func TestRingWrapManyLaps(t *testing.T) {
	t.Parallel()
	s := openSim(t, "", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	s.wire.keep = false
	rx, tx := s.port.RxQueue(0), s.port.TxQueue(0)
	buf := make([]*pool.Packet, 32)
	total := 0
	for lap := 0; lap < 200*64/24; lap++ {
		var sent [][]byte
		for i := 0; i < 24; i++ {
			f := udp4(t, 60+(lap*31+i*17)%1400, uint16(i))
			if !s.model.Port().Receive(f) {
				t.Fatalf("lap %d: frame %d dropped by the model", lap, i)
			}
			sent = append(sent, f)
		}
		n := rx.RxBurst(buf)
		if n != 24 {
			t.Fatalf("lap %d: RxBurst = %d, want 24", lap, n)
		}
		for i := 0; i < n; i++ {
			if !bytes.Equal(frameOf(buf[i]), sent[i]) {
				t.Fatalf("lap %d frame %d differs", lap, i)
			}
		}
		before := s.port.TxDoorbells(0)
		if m := tx.TxBurst(buf[:n]); m != n {
			t.Fatalf("lap %d: TxBurst = %d", lap, m)
		}
		if d := s.port.TxDoorbells(0) - before; d != 1 {
			t.Fatalf("lap %d: %d doorbells for one burst", lap, d)
		}
		total += n
	}
	st := s.stopCheck()
	if st.Tx.Packets != uint64(total) || s.wire.count != total {
		t.Errorf("tx %d, wire %d, want %d", st.Tx.Packets, s.wire.count, total)
	}
	ms := s.model.Stats()
	if ms.TxDoorbells[0] != uint64(total/24) {
		t.Errorf("model saw %d TX doorbells for %d bursts", ms.TxDoorbells[0], total/24)
	}
	s.close(false)
}

// TestRSSSpreadsFlows opens four RX queues: every frame must land on the
// ring the model's RSS table names for its hash, with the hash reported,
// and all four rings must see traffic.
func TestRSSSpreadsFlows(t *testing.T) {
	t.Parallel()
	s := openSim(t, "queues=4", driver.Config{})
	if s.port.Info().Caps&driver.CapRSS == 0 {
		t.Error("RSS capability not reported")
	}
	tbl := s.model.RSSTable()
	per := make([]int, 4)
	for flow := 0; flow < 200; flow++ {
		f := udp4(t, 80, uint16(1000+flow))
		hash, _ := s.model.FlowHash(f)
		want := int(tbl[hash%uint32(len(tbl))])
		if !s.model.Port().Receive(f) {
			t.Fatalf("flow %d not accepted", flow)
		}
		found := -1
		for q := 0; q < 4; q++ {
			got := s.rxAll(q, 1, 2)
			if len(got) == 1 {
				found = q
				if got[0].Hash() != hash || got[0].Flags()&pool.FlagRSSHash == 0 || int(got[0].Queue) != q {
					t.Errorf("flow %d: hash %#x flags %v queue %d; model hash %#x", flow, got[0].Hash(), got[0].Flags(), got[0].Queue, hash)
				}
				got[0].Free()
			}
		}
		if found != want {
			t.Fatalf("flow %d: hash %#x landed on queue %d, table says %d", flow, hash, found, want)
		}
		per[found]++
	}
	for q, n := range per {
		if n == 0 {
			t.Errorf("queue %d got no flow (spread %v)", q, per)
		}
	}
	s.close(false)
}

// TestRegisterMapMatchesModel compares the driver's register table with the
// model's independent transcription of the reference: every instance of
// every indexed register (all 8 rings, PSIPMAR0(0..2), PRSSK(0..9), ...), so
// a slip in a stride shows up as well as one in a base offset.
func TestRegisterMapMatchesModel(t *testing.T) {
	t.Parallel()
	type inst struct {
		off   uint32
		count int
		step  uint32
	}
	mod := map[string]inst{}
	for _, r := range model.Registers() {
		mod[r.Name] = inst{r.Offset, r.Count, r.Stride}
	}
	common, instances := 0, 0
	var driverOnly []string
	seen := map[string]bool{}
	for _, d := range enetc.RegisterMap(8, 8) {
		name, n := d.Name, 0
		if i := strings.IndexByte(name, '('); i > 0 && name[len(name)-1] == ')' {
			if _, err := fmt.Sscanf(name[i:], "(%d)", &n); err != nil {
				t.Fatalf("driver register name %q: %v", d.Name, err)
			}
			name = name[:i]
		}
		m, ok := mod[name]
		if !ok {
			driverOnly = append(driverOnly, d.Name)
			continue
		}
		if n >= m.count {
			t.Errorf("%s: the model has only %d instances of %s", d.Name, m.count, name)
			continue
		}
		instances++
		if !seen[name] {
			seen[name] = true
			common++
		}
		if want := m.off + uint32(n)*m.step; d.Offset != want {
			t.Errorf("%s: driver %#x, model %#x (base %#x + %d x stride %#x)", d.Name, d.Offset, want, m.off, n, m.step)
		}
	}
	byOff := map[uint32]string{}
	for _, d := range enetc.RegisterMap(8, 8) {
		byOff[d.Offset] = d.Name
	}
	for name, m := range mod {
		for n := 0; n < m.count; n++ {
			off := m.off + uint32(n)*m.step
			dn, ok := byOff[off]
			if !ok {
				continue
			}
			want := name
			if m.count > 1 {
				want = fmt.Sprintf("%s(%d)", name, n)
			}
			if dn != want && dn != name {
				t.Errorf("offset %#x: driver calls it %s, model %s", off, dn, want)
			}
		}
	}
	var modelOnly []string
	for name := range mod {
		if !seen[name] {
			modelOnly = append(modelOnly, name)
		}
	}
	t.Logf("%d registers (%d instances) in common; in the driver only: %v; in the model only (the driver does not use them): %v", common, instances, driverOnly, modelOnly)
	if common < 100 || instances < 250 {
		t.Errorf("only %d registers (%d instances) in common: the naming conventions drifted apart", common, instances)
	}
}

// TestBitsMatchModel compares the bits, masks and layouts the driver uses
// (its regs.go and bd.go) with the model's own transcription: register
// bits, descriptor flags and sizes, and the named fields of the driver's
// register table.
func TestBitsMatchModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		driver, model uint64
	}{
		{"SIMR.EN", enetc.SIMR_EN, modelField("SIMR.EN")},
		{"SIMR.RSSE", enetc.SIMR_RSSE, modelField("SIMR.RSSE")},
		{"SIPCAPR0.RSS", enetc.SIPCAPR0_RSS, modelField("SIPCAPR0.RSS")},
		{"SICBDRMR.EN", enetc.SICBDRMR_EN, modelField("SICBDRMR.EN")},
		{"TBMR.EN", enetc.TBMR_EN, modelField("TBMR.EN")},
		{"TBSR.BUSY", enetc.TBSR_BUSY, modelField("TBSR.BUSY")},
		{"TBCIR index mask", enetc.TBCIR_IDX_MSK, modelField("TBCIR.INDEX")},
		{"RBMR.EN", enetc.RBMR_EN, modelField("RBMR.EN")},
		{"RBMR.VTE", enetc.RBMR_VTE, modelField("RBMR.VTE")},
		{"RBMR.CM", enetc.RBMR_CM, modelField("RBMR.CM")},
		{"RBMR.BDS", enetc.RBMR_BDS, modelField("RBMR.BDS")},
		{"RBBSR mask", enetc.RBBSR_MAX, modelField("RBBSR.SIZE")},
		{"PMR.EN", enetc.PMR_EN, modelField("PMR.EN")},
		{"PSIPMR.UP0", uint64(enetc.PSIPMRUP(0)), modelField("PSIPMR.UP0")},
		{"PSIPMR.MP0", uint64(enetc.PSIPMRMP(0)), modelField("PSIPMR.MP0")},
		{"PCAPR0.IMDIO", enetc.PCAPR0_IMDIO, modelField("PCAPR0.IMDIO")},
		{"PM_CMD_CFG.TX_EN", enetc.PM_CMD_CFG_TX_EN, modelField("PM0_CMD_CFG.TX_EN")},
		{"PM_CMD_CFG.RX_EN", enetc.PM_CMD_CFG_RX_EN, modelField("PM0_CMD_CFG.RX_EN")},
		{"PM_CMD_CFG.PROMIS", enetc.PM_CMD_CFG_PROMIS, modelField("PM0_CMD_CFG.PROMIS")},
		{"PM_CMD_CFG.CRC_FWD", enetc.PM_CMD_CFG_CRC_FWD, modelField("PM0_CMD_CFG.CRC_FWD")},
		{"PM_CMD_CFG.PAUSE_IGN", enetc.PM_CMD_CFG_PAUSE_IGN, modelField("PM0_CMD_CFG.PAUSE_IGN")},
		{"PM_CMD_CFG.XGLP", enetc.PM_CMD_CFG_XGLP, modelField("PM0_CMD_CFG.XGLP")},
		{"PM_CMD_CFG.TXP", enetc.PM_CMD_CFG_TXP, modelField("PM0_CMD_CFG.TXP")},
		{"PM_CMD_CFG.PHY_TX_EN", enetc.PM_CMD_CFG_PHY_TX_EN, modelField("PM0_CMD_CFG.PHY_TX_EN")},
		{"PM0_STATUS.LINK", enetc.PM0_STATUS_LINK, modelField("PM0_STATUS.LINK")},
		{"MDIO_CFG.BSY", enetc.MDIO_CFG_BSY, modelField("MDIO_CFG.BSY")},
		{"MDIO_CFG.RD_ER", enetc.MDIO_CFG_RD_ER, modelField("MDIO_CFG.RD_ER")},
		{"MDIO_CFG.ENC45", enetc.MDIO_CFG_ENC45, modelField("MDIO_CFG.ENC45")},
		{"MDIO_CTL.READ", enetc.MDIO_CTL_READ, modelField("MDIO_CTL.READ")},
		{"MDIO_CFG", enetc.MDIO_CFG, uint64(modelReg("EMDIO_CFG") - model.EMDIOBase)},
		{"MDIO_CTL", enetc.MDIO_CTL, uint64(modelReg("EMDIO_CTL") - model.EMDIOBase)},
		{"MDIO_DATA", enetc.MDIO_DATA, uint64(modelReg("EMDIO_DATA") - model.EMDIOBase)},
		{"MDIO_ADDR", enetc.MDIO_ADDR, uint64(modelReg("EMDIO_ADDR") - model.EMDIOBase)},
		{"max frame", enetc.MaxFrame, model.MaxFrame},
		{"BD size", enetc.BDSize, model.BDSize},
		{"BD ring alignment", enetc.BDRingAlign, model.RingAlign},
		{"control BD size", enetc.CBDSize, model.CBDSize},
		{"CBD class RSS", enetc.CBDClassRSS, model.CBDClassRSS},
		{"CBD cmd RSS set", enetc.CBDCmdSet, model.CBDCmdRSSSet},
		{"TX BD F (flags byte)", enetc.TXBD_FLAGS_F, model.TxFlagF},
		{"TX BD EX (flags byte)", enetc.TXBD_FLAGS_EX, model.TxFlagEX},
		{"TX BD W (flags byte)", enetc.TXBD_FLAGS_W, model.TxFlagW},
		{"RX BD lstatus R", enetc.RXBD_LSTATUS_R, model.RxStatusR},
		{"RX BD lstatus F", enetc.RXBD_LSTATUS_F, model.RxStatusF},
		{"RX BD error shift", enetc.RXBD_LSTATUS_ERR_SHIFT, model.RxErrShift},
		{"RX BD flag VLAN", enetc.RXBD_FLAG_VLAN, model.RxFlagVLAN},
		{"parse summary error bit", enetc.RXBD_PARSE_ERROR, model.ParseError},
	} {
		if c.driver != c.model {
			t.Errorf("%s: driver %#x, model %#x", c.name, c.driver, c.model)
		}
	}
	// The named fields of the driver's register table, where the model has
	// the same bit or mask.
	fields := map[string]uint64{
		"SIMR.EN": modelField("SIMR.EN"), "SIMR.RSSE": modelField("SIMR.RSSE"), "SIPCAPR0.RSS": modelField("SIPCAPR0.RSS"),
		"SICBDRMR.EN": modelField("SICBDRMR.EN"), "TBMR(0).EN": modelField("TBMR.EN"), "TBSR(0).BUSY": modelField("TBSR.BUSY"),
		"TBPIR(0).INDEX": modelField("TBCIR.INDEX"), "TBCIR(0).INDEX": modelField("TBCIR.INDEX"),
		"RBMR(0).EN": modelField("RBMR.EN"), "RBMR(0).VTE": modelField("RBMR.VTE"), "RBMR(0).CM": modelField("RBMR.CM"),
		"RBMR(0).BDS": modelField("RBMR.BDS"), "RBBSR(0).SIZE": modelField("RBBSR.SIZE"),
		"PMR.EN": modelField("PMR.EN"), "PCAPR0.IMDIO": modelField("PCAPR0.IMDIO"),
		"PM0_CMD_CFG.TX_EN": modelField("PM0_CMD_CFG.TX_EN"), "PM0_CMD_CFG.RX_EN": modelField("PM0_CMD_CFG.RX_EN"),
		"PM0_CMD_CFG.PROMIS": modelField("PM0_CMD_CFG.PROMIS"), "PM0_CMD_CFG.CRC_FWD": modelField("PM0_CMD_CFG.CRC_FWD"),
		"PM0_CMD_CFG.PAUSE_IGN": modelField("PM0_CMD_CFG.PAUSE_IGN"), "PM0_CMD_CFG.XGLP": modelField("PM0_CMD_CFG.XGLP"),
		"PM0_CMD_CFG.TXP": modelField("PM0_CMD_CFG.TXP"), "PM0_CMD_CFG.PHY_TX_EN": modelField("PM0_CMD_CFG.PHY_TX_EN"),
		"PM0_MAXFRM.MAXFRM": modelField("PM0_MAXFRM.MAXFRM"),
		"PM0_STATUS.LINK":   modelField("PM0_STATUS.LINK"), "PM0_STATUS.SPEED": modelField("PM0_STATUS.SPEED"), "PM0_STATUS.DUPLEX": modelField("PM0_STATUS.DUPLEX"),
		"EMDIO_CFG.BSY": modelField("MDIO_CFG.BSY"), "EMDIO_CFG.RD_ER": modelField("MDIO_CFG.RD_ER"),
		"EMDIO_CFG.ENC45": modelField("MDIO_CFG.ENC45"), "EMDIO_CTL.READ": modelField("MDIO_CTL.READ"),
	}
	checked := 0
	for _, d := range enetc.RegisterMap(1, 1) {
		for _, f := range d.Fields {
			want, ok := fields[d.Name+"."+f.Name]
			if !ok {
				continue
			}
			checked++
			mask := uint32((uint64(1)<<(f.Hi-f.Lo+1) - 1) << f.Lo)
			if uint64(mask) != want {
				t.Errorf("%s.%s: driver bits %d..%d (%#x), model %#x", d.Name, f.Name, f.Lo, f.Hi, mask, want)
			}
		}
	}
	if checked != len(fields) {
		t.Errorf("checked %d of %d named fields: a field was renamed or dropped", checked, len(fields))
	}
}

// TestQueueOutOfRange: a queue index out of range gets nil, as from every
// driver (driver.Port), not a panic.
func TestQueueOutOfRange(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0", driver.Config{})
	in := s.port.Info()
	for _, i := range []int{-1, in.RxQueues, in.RxQueues + 7} {
		if q := s.port.RxQueue(i); q != nil {
			t.Errorf("RxQueue(%d) of %d queues = %v, want nil", i, in.RxQueues, q)
		}
	}
	for _, i := range []int{-1, in.TxQueues} {
		if q := s.port.TxQueue(i); q != nil {
			t.Errorf("TxQueue(%d) of %d queues = %v, want nil", i, in.TxQueues, q)
		}
	}
	if s.port.RxQueue(0) == nil || s.port.TxQueue(0) == nil {
		t.Error("queue 0 missing")
	}
	s.close(false)
}

// TestStopRefusesBursts: after Stop every burst returns 0 and touches
// neither ring nor register, as in every driver (internal/gate): RxBurst
// writes no RBCIR, TxBurst takes no frame and writes no TBPIR, Reclaim
// frees nothing, and no counter moves; the caller keeps its frame. After
// Start frames flow again. fec has the same test.
func TestStopRefusesBursts(t *testing.T) {
	t.Parallel()
	s := openSim(t, "link-poll=0", driver.Config{})
	rx, tx := s.port.RxQueue(0), s.port.TxQueue(0)
	if err := s.port.Stop(); err != nil {
		t.Fatal(err)
	}
	pk := rx.Pool().Alloc()
	f := make([]byte, 64)
	copy(f, macB)
	copy(f[6:], macA)
	copy(pk.Append(len(f)), f)
	before, st0 := s.model.Stats(), s.port.Stats()
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
	after, st1 := s.model.Stats(), s.port.Stats()
	if after.RxDoorbells[0] != before.RxDoorbells[0] || after.TxDoorbells[0] != before.TxDoorbells[0] {
		t.Errorf("after Stop: %d RBCIR and %d TBPIR writes", after.RxDoorbells[0]-before.RxDoorbells[0], after.TxDoorbells[0]-before.TxDoorbells[0])
	}
	if st1.Rx.Packets != st0.Rx.Packets || st1.Tx.Packets != st0.Tx.Packets ||
		st1.Rx.TotalDrops() != st0.Rx.TotalDrops() || st1.Tx.TotalDrops() != st0.Tx.TotalDrops() {
		t.Errorf("counters moved after Stop: %+v -> %+v", st0, st1)
	}
	pk.Free() // the caller kept it
	if err := s.port.Start(); err != nil {
		t.Fatal(err)
	}
	if !s.model.Receive(f) {
		t.Fatal("the model refused the frame")
	}
	got := s.rxAll(0, 1, 100)
	if len(got) != 1 || !bytes.Equal(frameOf(got[0]), f) {
		t.Fatalf("after a restart: %d frames", len(got))
	}
	got[0].Free()
	s.close(false)
}

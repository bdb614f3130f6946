package sim

import (
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	enetcmodel "github.com/gopmd/gopmd/enetc/model"
)

// Generated frames are Ethernet/IPv4/UDP. The UDP payload starts with a
// stamp the Sink reads back: magic, stream, flow count, flow, sequence.
const (
	stampOffset = 14 + 20 + 8 // Ethernet + IPv4 (no options) + UDP headers
	stampMagic  = 0x67706d64  // "gpmd"
	stampLen    = 4 + 2 + 2 + 2 + 8
	// GenMinSize is the smallest frame the generator builds: 64 bytes on
	// the wire with the FCS, 60 without.
	GenMinSize = 64
	// GenMaxSize is the largest (a 9600-byte jumbo frame).
	GenMaxSize = 9600
	// GenMaxFlows bounds the number of flows.
	GenMaxFlows = 65535
	// GenMaxRate is the highest gen-rate, in frames per second.
	GenMaxRate = 1e9
	// fcsLen: sizes are given with the FCS, frames carried without it.
	fcsLen = 4
	// genCreditMax bounds how many frames a rate-limited generator sends
	// back to back after a pause.
	genCreditMax = 256
)

// GenConfig configures a Generator.
type GenConfig struct {
	// Size is the frame size on the wire including the 4-byte FCS, as
	// packet generators count it (default 64). Frames are carried without
	// the FCS, so a 64-byte frame is 60 bytes of data.
	Size int
	// Flows is the number of distinct flows, sent round robin (default
	// 1). Flow f comes from IPv4 source address 10.0.f/256.f%256 and a UDP
	// source port chosen so that the flow's RSS hash (Toeplitz over the
	// addresses and ports, with RSSKey) falls in bucket f mod 64: with an
	// indirection table that maps bucket i to queue i mod N, as drivers
	// set it by default, the flows spread evenly over N receive queues
	// (N a power of two up to 64), however few of them there are.
	Flows int
	// RSSKey is the 40-byte Toeplitz key the receiving port hashes with;
	// nil is the Microsoft RSS specification's example key, the one the
	// ENETC driver programs. With another key the flows still differ, but
	// spread over the queues only as their hashes fall.
	RSSKey *[40]byte
	// Rate is the frame rate in frames per second; 0 is as fast as the port
	// takes them, never losing one for lack of receive buffers.
	Rate float64
	// Count stops the generator after that many frames; 0 never stops.
	Count uint64
	// Src and Dst are the Ethernet addresses (default 02:00:00:00:00:fe
	// and 02:00:00:00:01:00).
	Src, Dst net.HardwareAddr
}

// GeneratorStats are a generator's counters.
type GeneratorStats struct {
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
	// TooBig counts frames longer than the buffer the port offered: built
	// and numbered but not handed to the port (never cut). They are not in
	// Frames.
	TooBig uint64 `json:"too_big"`
}

// Generator is a built-in traffic source (a wire.Source): every frame is
// built once up front with gopacket, and Next only copies a template and
// writes the flow's sequence number, so it never allocates.
type Generator struct {
	frameLen  int
	flows     int
	templates []byte // flows * frameLen bytes
	seq       []uint64
	next      int // flow of the next frame
	rate      float64
	count     uint64
	stream    uint16

	// Owner state (the goroutine that calls Next).
	sent    uint64
	credit  int64
	start   time.Time
	skipped bool // the last Next kept a frame out (too big): the next one is due now

	frames, tooBig atomic.Uint64
	held           atomic.Bool // set by PortView.Hold: no more frames
	waker                      // woken by Release (PortView)
}

var streamIDs atomic.Uint32

// NewGenerator builds the frames of every flow.
func NewGenerator(cfg GenConfig) (*Generator, error) {
	if cfg.Size == 0 {
		cfg.Size = GenMinSize
	}
	if cfg.Flows == 0 {
		cfg.Flows = 1
	}
	if cfg.Size < GenMinSize || cfg.Size > GenMaxSize {
		return nil, fmt.Errorf("generator frame size %d out of range: use gen-size between %d and %d (bytes, FCS included)", cfg.Size, GenMinSize, GenMaxSize)
	}
	if cfg.Flows < 1 || cfg.Flows > GenMaxFlows {
		return nil, fmt.Errorf("generator flow count %d out of range: use gen-flows between 1 and %d", cfg.Flows, GenMaxFlows)
	}
	if cfg.Rate < 0 {
		return nil, fmt.Errorf("generator rate %g is negative: use gen-rate=max or a positive rate such as 1M", cfg.Rate)
	}
	if cfg.Src == nil {
		cfg.Src = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xfe}
	}
	if cfg.Dst == nil {
		cfg.Dst = net.HardwareAddr{0x02, 0, 0, 0, 0x01, 0}
	}
	g := &Generator{
		frameLen: cfg.Size - fcsLen, flows: cfg.Flows, rate: cfg.Rate, count: cfg.Count,
		seq: make([]uint64, cfg.Flows), stream: uint16(streamIDs.Add(1)),
	}
	g.templates = make([]byte, g.flows*g.frameLen)
	payload := make([]byte, g.frameLen-stampOffset)
	buf := gopacket.NewSerializeBuffer()
	key := cfg.RSSKey
	if key == nil {
		key = &msRSSKey
	}
	ports := newFlowPorts(key)
	for f := 0; f < g.flows; f++ {
		eth := &layers.Ethernet{SrcMAC: cfg.Src, DstMAC: cfg.Dst, EthernetType: layers.EthernetTypeIPv4}
		src := [4]byte{10, 0, byte(f >> 8), byte(f)}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
			SrcIP: net.IP(src[:]), DstIP: net.IP(genDstIP[:])}
		udp := &layers.UDP{SrcPort: layers.UDPPort(ports.forFlow(src, f)), DstPort: genDstPort}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			return nil, fmt.Errorf("generator: %w", err)
		}
		err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			eth, ip, udp, gopacket.Payload(payload))
		if err != nil {
			return nil, fmt.Errorf("generator: building flow %d: %w", f, err)
		}
		t := g.templates[f*g.frameLen : (f+1)*g.frameLen]
		copy(t, buf.Bytes())
		// The sequence number changes per frame: send without a UDP
		// checksum (zero is allowed over IPv4) rather than a wrong one.
		t[40], t[41] = 0, 0
		s := t[stampOffset:]
		binary.BigEndian.PutUint32(s[0:], stampMagic)
		binary.BigEndian.PutUint16(s[4:], g.stream)
		binary.BigEndian.PutUint16(s[6:], uint16(g.flows))
		binary.BigEndian.PutUint16(s[8:], uint16(f))
	}
	return g, nil
}

// genDstIP and genDstPort are where generated frames go: 10.1.0.1, UDP
// port 9 (discard).
var genDstIP = [4]byte{10, 1, 0, 1}

const genDstPort = 9

// msRSSKey is the Toeplitz key of the Microsoft RSS specification's
// examples ("Verifying the RSS Hash Calculation"), which the ENETC driver
// programs (enetc/rss.go).
var msRSSKey = [40]byte{
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb3, 0x8f, 0xa1, 0xf8, 0x74, 0xfa,
}

// rssBuckets is how many low bits of the hash the flows are steered by:
// 64 buckets, as many as the ENETC's indirection table has.
const rssBuckets = 64

// flowPorts picks each flow's UDP source port. The Toeplitz hash is
// linear (XOR) in its input bits, so a flow's hash is the hash of its
// addresses and destination port XOR the hash of its source port alone:
// for each wanted low-bits value there is a source port whose own hash
// supplies it. (Varying the source address and port together by the flow
// number, as this generator once did, let their contributions cancel in
// the low bits with this key: 16 flows all hashed to one queue of two.)
type flowPorts struct {
	key  *[40]byte
	port [rssBuckets]uint16 // a source port whose own hash has these low bits; 0: none
}

func newFlowPorts(key *[40]byte) *flowPorts {
	fp := &flowPorts{key: key}
	found := 0
	for p := 1024; p <= 0xffff && found < rssBuckets; p++ {
		in := [12]byte{8: byte(p >> 8), 9: byte(p)}
		b := enetcmodel.Toeplitz(key, in[:]) % rssBuckets
		if fp.port[b] == 0 {
			fp.port[b] = uint16(p)
			found++
		}
	}
	return fp
}

// forFlow is the source port of flow f from address src: one that puts
// the flow's hash in bucket f mod 64, or 1024+f when the key leaves that
// bucket out of reach.
func (fp *flowPorts) forFlow(src [4]byte, f int) uint16 {
	in := [12]byte{src[0], src[1], src[2], src[3], genDstIP[0], genDstIP[1], genDstIP[2], genDstIP[3], 10: genDstPort >> 8, 11: genDstPort & 0xff}
	rest := enetcmodel.Toeplitz(fp.key, in[:]) % rssBuckets
	if p := fp.port[rest^uint32(f%rssBuckets)]; p != 0 {
		return p
	}
	return uint16(1024 + f)
}

// ParseRate parses a frame rate: "max" (or "" or "0") is 0, otherwise a
// number with an optional k, M or G suffix and an optional "pps" ("1M",
// "250kpps", "1500").
func ParseRate(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "pps")
	if t == "" || t == "max" || t == "0" {
		return 0, nil
	}
	mul := 1.0
	switch t[len(t)-1] {
	case 'k', 'K':
		mul, t = 1e3, t[:len(t)-1]
	case 'M':
		mul, t = 1e6, t[:len(t)-1]
	case 'G':
		mul, t = 1e9, t[:len(t)-1]
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v*mul > GenMaxRate {
		return 0, fmt.Errorf("rate %q: use max or a frame rate from 1 to 1G such as 1M, 250k or 1500", s)
	}
	return v * mul, nil
}

// Next implements wire.Source: it writes the next frame into dst.
func (g *Generator) Next(dst []byte) (int, bool) {
	if g.count != 0 && g.sent >= g.count || g.held.Load() {
		return 0, false
	}
	if g.rate > 0 {
		if g.credit <= 0 && !g.refillCredit() {
			return 0, false
		}
		g.credit--
	}
	f := g.next
	g.next++
	if g.next == g.flows {
		g.next = 0
	}
	t := g.templates[f*g.frameLen : (f+1)*g.frameLen]
	g.seq[f]++
	g.sent++
	if len(t) > len(dst) {
		// The sink sees a gap in the flow's numbers: the loss shows
		// there too.
		g.tooBig.Add(1)
		g.skipped = true
		return 0, false
	}
	n := copy(dst, t)
	binary.BigEndian.PutUint64(dst[stampOffset+10:], g.seq[f]-1)
	g.frames.Add(1)
	return n, true
}

// refillCredit computes how many frames are due at the configured rate.
func (g *Generator) refillCredit() bool {
	if g.start.IsZero() {
		g.start = time.Now()
	}
	due := uint64(float64(time.Since(g.start).Nanoseconds()) * g.rate / 1e9)
	if due <= g.sent {
		return false
	}
	c := due - g.sent
	if c > genCreditMax {
		c = genCreditMax
	}
	g.credit = int64(c)
	return true
}

// Lossless implements wire.Source: at max rate the generator waits for
// receive buffers; at a set rate it is a wire that runs on regardless.
func (g *Generator) Lossless() bool { return g.rate == 0 }

// Due implements wire.Waker: at a set rate, when the next frame is due
// (the engine pulling it sleeps until then); nothing at max rate (the
// receive room it waits for comes with the driver's doorbells) or once
// its count is sent.
func (g *Generator) Due() (time.Time, bool) {
	if g.skipped {
		g.skipped = false
		return time.Now(), true
	}
	if g.rate == 0 || g.count != 0 && g.sent >= g.count || g.held.Load() {
		return time.Time{}, false
	}
	if g.start.IsZero() {
		return time.Now(), true
	}
	// The frame after the last one sent (refillCredit's arithmetic).
	return g.start.Add(time.Duration(float64(g.sent+1) * 1e9 / g.rate)), true
}

// Done reports whether a generator with a Count has sent everything.
func (g *Generator) Done() bool { return g.count != 0 && g.frames.Load()+g.tooBig.Load() >= g.count }

// Stream is the stream number stamped in every frame.
func (g *Generator) Stream() uint16 { return g.stream }

// FrameLen is the length of each generated frame (without FCS).
func (g *Generator) FrameLen() int { return g.frameLen }

// Stats returns the counters (safe from any goroutine).
func (g *Generator) Stats() GeneratorStats {
	n := g.frames.Load()
	return GeneratorStats{Frames: n, Bytes: n * uint64(g.frameLen), TooBig: g.tooBig.Load()}
}

package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/sim/simdma"
)

func init() {
	var window, at, send int
	var from string
	register(&command{
		name: "rings", args: "DEV", min: 1, max: 1,
		summary: "descriptor ring state: indices and a window of decoded BDs",
		flags: func(fs *flag.FlagSet) func() error {
			fs.IntVar(&window, "window", 4, "decode `N` BDs per ring")
			fs.IntVar(&at, "at", -1, "first BD of the window, `INDEX` (default: the driver's next-to-clean index)")
			fs.IntVar(&send, "send", 0, "transmit `N` test frames on TX queue 0 first (so TX BDs have something to show)")
			telemetryFlag(fs, &from)
			return func() error {
				if from != "" && send > 0 {
					return badInput("--send %d with --telemetry: nicctl does not transmit on a port another process runs; stop it, or drop --send", send)
				}
				if window < 0 || window > 4096 {
					return badInput("--window %d: give 0 to 4096 BDs", window)
				}
				if at < -1 {
					return badInput("--at %d: give a BD index, 0 up to the ring's size less one", at)
				}
				if send < 0 || send > 4096 {
					return badInput("--send %d: give 0 to 4096 frames", send)
				}
				return nil
			}
		},
		run: func(e *env, a []string) (any, error) {
			if from != "" {
				return ringsTelemetry(a[0], from)
			}
			return ringsCmd(e, a[0], window, at, send)
		},
	})
}

// ringInfo is one descriptor ring.
type ringInfo struct {
	Kind  string `json:"kind"` // "tx" or "rx"
	Queue int    `json:"queue"`
	Size  int    `json:"size"`
	IOVA  uint64 `json:"iova,omitempty"`
	// Regs are the ring's device registers (ENETC TBMR/TBPIR/TBCIR or
	// RBMR/RBPIR/RBCIR: enable bit, device producer and consumer; FEC
	// TDAR or RDAR: the doorbell state).
	Regs []driver.RegValue `json:"regs"`
	// NextToUse and NextToClean are the driver's own indices.
	NextToUse   int      `json:"next_to_use"`
	NextToClean int      `json:"next_to_clean"`
	Owned       *int     `json:"owned_by_device,omitempty"`
	Doorbells   *uint64  `json:"doorbells,omitempty"`
	BDs         []bdInfo `json:"bds"`
	// NoBDs says why no BD could be decoded.
	NoBDs string `json:"no_bds,omitempty"`
}

// ringInfoOf is what a driver reports of a ring, BDs left for the caller.
func ringInfoOf(s driver.RingState) ringInfo {
	g := ringInfo{Kind: s.Kind, Queue: s.Queue, Size: s.Size, IOVA: s.IOVA, Regs: []driver.RegValue{},
		NextToUse: s.NextToUse, NextToClean: s.NextToClean, BDs: []bdInfo{}}
	g.Regs = append(g.Regs, s.Regs...)
	if s.Owned >= 0 {
		g.Owned = intp(s.Owned)
	}
	db := s.Doorbells
	g.Doorbells = &db
	return g
}

// bdInfo is one decoded buffer descriptor.
type bdInfo struct {
	Index  int      `json:"index"`
	Raw    string   `json:"raw"` // the BD's bytes in hex, as in memory
	Addr   uint64   `json:"addr"`
	Len    int      `json:"len"`
	FrmLen int      `json:"frame_len,omitempty"`
	Flags  []string `json:"flags"`
	Note   string   `json:"note,omitempty"`
}

type ringsResult struct {
	Dev   string     `json:"dev"`
	Rings []ringInfo `json:"rings"`
	// Source names the process and socket the rings were read from
	// (--telemetry); the driver's indices are then -1 (that process's
	// own) and no BD is decoded.
	Source string `json:"source,omitempty"`
}

func (r *ringsResult) text(w io.Writer) {
	if r.Source != "" {
		fmt.Fprintf(w, "%s, read from %s\n", r.Dev, r.Source)
	}
	for _, g := range r.Rings {
		fmt.Fprintf(w, "%s ring %d: %d BDs", g.Kind, g.Queue, g.Size)
		if g.IOVA != 0 {
			fmt.Fprintf(w, ", base %#x", g.IOVA)
		}
		fmt.Fprintln(w)
		for _, v := range g.Regs {
			var fs []string
			for _, f := range v.Fields {
				if f.Hi == f.Lo {
					fs = append(fs, fmt.Sprintf("%s=%d", f.Name, f.Of(v.Value)))
				} else {
					fs = append(fs, fmt.Sprintf("%s=%#x", f.Name, f.Of(v.Value)))
				}
			}
			fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  device: %s 0x%08x %s", v.Name, v.Value, strings.Join(fs, " ")), " "))
		}
		if g.NextToUse < 0 {
			fmt.Fprint(w, "  driver: indices are the serving process's own")
		} else {
			fmt.Fprintf(w, "  driver: next-to-use %d next-to-clean %d", g.NextToUse, g.NextToClean)
		}
		if g.Owned != nil {
			fmt.Fprintf(w, ", %d owned by the device", *g.Owned)
		}
		if g.Doorbells != nil {
			fmt.Fprintf(w, ", %d doorbells", *g.Doorbells)
		}
		fmt.Fprintln(w)
		if g.NoBDs != "" {
			fmt.Fprintf(w, "  BDs: %s\n", g.NoBDs)
		}
		for _, b := range g.BDs {
			fmt.Fprintf(w, "  [%4d] addr %#012x len %5d", b.Index, b.Addr, b.Len)
			if b.FrmLen != 0 {
				fmt.Fprintf(w, " frame %5d", b.FrmLen)
			}
			fmt.Fprintf(w, "  %s", strings.Join(b.Flags, " "))
			if b.Note != "" {
				fmt.Fprintf(w, "  (%s)", b.Note)
			}
			fmt.Fprintln(w)
		}
	}
}

func intp(v int) *int { return &v }

// etherTypeLocalExperimental is IEEE 802's EtherType for local
// experiments (Local Experimental Ethertype 1), used by nicctl's test frames.
const etherTypeLocalExperimental = 0x88B5

// testFrame is a broadcast frame of the local-experimental EtherType
// whose payload counts up from seq: easy to spot in a capture.
func testFrame(size int, src []byte, seq int) []byte {
	f := make([]byte, size)
	copy(f[0:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(f[6:12], src)
	binary.BigEndian.PutUint16(f[12:14], etherTypeLocalExperimental)
	for i := 14; i < size; i++ {
		f[i] = byte(seq + i)
	}
	return f
}

// sendFrames transmits n test frames of size bytes on TX queue 0, built
// in buffers of RX queue 0's pool, and returns how many the queue took.
func sendFrames(p driver.Port, n, size int, seq int) (int, error) {
	pl := p.RxQueue(0).Pool()
	tx := p.TxQueue(0)
	sent := 0
	for sent < n {
		pk := pl.Alloc()
		if pk == nil {
			return sent, fmt.Errorf("no free buffer in RX queue 0's pool after %d frames", sent)
		}
		f := testFrame(size, p.MAC(), seq+sent)
		if err := fill(pk, f); err != nil {
			pk.Free()
			return sent, err
		}
		if tx.TxBurst([]*driver.Packet{pk}) != 1 {
			pk.Free()
			return sent, nil
		}
		sent++
	}
	return sent, nil
}

func ringsCmd(e *env, dev string, window, at, send int) (any, error) {
	p, sp, err := openPort(e, dev, driver.Config{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", dev, err)
	}
	if send > 0 {
		if _, err := sendFrames(p, send, 64, 0); err != nil {
			return nil, fmt.Errorf("%s: --send: %w", dev, err)
		}
	}
	r := &ringsResult{Dev: dev}
	// --at names a BD in every ring: it must fit the smallest.
	checkAt := func(kind string, queue, size int) error {
		if at >= size {
			return badInput("--at %d: %s ring %d has %d BDs (give 0 to %d)", at, kind, queue, size, size-1)
		}
		return nil
	}
	ri, ok := p.(driver.Inspector)
	if !ok {
		return nil, fmt.Errorf("%s: the %s driver does not report its rings", dev, p.Info().Driver)
	}
	// BD memory is reachable only on a model, through its IOMMU: a driver
	// does not hand its ring memory out.
	var mem *simdma.IOMMU
	if sp.Scheme == "sim" {
		if m, err := simModelOf(sp); err == nil {
			mem = m.iommu
		}
	}
	noBDs := "BD memory is only readable on sim devices (the driver does not export its rings)"
	for _, s := range ri.Rings() {
		if err := checkAt(s.Kind, s.Queue, s.Size); err != nil {
			return nil, err
		}
		g := ringInfoOf(s)
		if mem != nil {
			rx := s.Kind == "rx"
			g.BDs = readBDs(mem, s.IOVA, s.BDSize, s.Size, start(at, s.NextToClean), window, func(i int, b []byte) bdInfo { return bdOf(i, b, ri.DecodeBD(rx, b)) })
		} else {
			g.NoBDs = noBDs
		}
		r.Rings = append(r.Rings, g)
	}
	return r, nil
}

func start(at, clean int) int {
	if at >= 0 {
		return at
	}
	return clean
}

// readBDs reads n BDs from index first (wrapping) of a ring at iova.
func readBDs(mem *simdma.IOMMU, iova uint64, bdSize, size, first, n int, dec func(int, []byte) bdInfo) []bdInfo {
	out := []bdInfo{}
	if size == 0 {
		return out
	}
	n = min(n, size)
	for k := 0; k < n; k++ {
		i := (first + k) % size
		b := make([]byte, bdSize)
		if !mem.Read(iova+uint64(i*bdSize), b) {
			out = append(out, bdInfo{Index: i, Flags: []string{}, Note: "not readable through the IOMMU"})
			continue
		}
		out = append(out, dec(i, b))
	}
	return out
}

// bdOf is a driver's decoding of BD i, whose bytes are b.
func bdOf(i int, b []byte, d driver.BD) bdInfo {
	flags := d.Flags
	if flags == nil {
		flags = []string{}
	}
	return bdInfo{Index: i, Raw: fmt.Sprintf("%x", b), Addr: d.Addr, Len: d.Len, FrmLen: d.FrameLen, Flags: flags, Note: d.Note}
}

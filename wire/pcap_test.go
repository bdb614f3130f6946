package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeFrames writes frames 0..n-1 (60 bytes each) into a new pcap file.
func writeFrames(t *testing.T, n int) (string, time.Time) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.pcap")
	w, err := CreatePcap(p)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 123456789)
	for i := 0; i < n; i++ {
		w.Write(t0.Add(time.Duration(i)*time.Millisecond), frameN(i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Frames() != uint64(n) {
		t.Fatalf("writer counted %d frames, want %d", w.Frames(), n)
	}
	return p, t0
}

func readAll(t *testing.T, p string) ([][]byte, error) {
	t.Helper()
	r, err := OpenPcap(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var got [][]byte
	for {
		f, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, append([]byte(nil), f...))
	}
}

func TestPcapRoundTrip(t *testing.T) {
	p, t0 := writeFrames(t, 5)
	r, err := OpenPcap(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; i < 5; i++ {
		f, ts, err := r.Next()
		if err != nil || !bytes.Equal(f, frameN(i)) || !ts.Equal(t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("record %d: err %v, ts %v, % x", i+1, err, ts, f)
		}
	}
	if _, _, err := r.Next(); err != io.EOF || r.Records() != 5 {
		t.Fatalf("end: %v after %d records", err, r.Records())
	}
}

// edit rewrites a file through fn.
func edit(t *testing.T, p string, fn func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, fn(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPcapDamageIsAnError(t *testing.T) {
	const rec = 16 + 60 // one record of frameN
	rec3 := func(b []byte) []byte { return b[24+2*rec:] }
	for _, c := range []struct {
		name   string
		fn     func([]byte) []byte
		good   int
		record int
		want   string
	}{
		{"last record cut short", func(b []byte) []byte { return b[:len(b)-10] }, 4, 5, "truncated: the header says 60 bytes, the file holds 50"},
		{"record header cut short", func(b []byte) []byte { return b[:24+4*rec+9] }, 4, 5, "truncated: the file ends 9 bytes into the 16-byte record header"},
		{"captured length past the snapshot length", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(rec3(b)[8:], 0x7fffffff)
			return b
		}, 2, 3, "past the file's snapshot length"},
		{"frame cut by the snapshot length", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(rec3(b)[12:], 1514)
			return b
		}, 2, 3, "frame of 1514 bytes cut to 60"},
		{"original shorter than captured", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(rec3(b)[12:], 20)
			return b
		}, 2, 3, "original length 20 is less than the captured length 60"},
		{"empty record", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(rec3(b)[8:], 0)
			return b
		}, 2, 3, "empty record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, _ := writeFrames(t, 5)
			edit(t, p, c.fn)
			got, err := readAll(t, p)
			var pe *PcapError
			if !errors.As(err, &pe) || pe.Record != c.record || pe.File != p || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want a PcapError for record %d saying %q", err, c.record, c.want)
			}
			if !strings.Contains(err.Error(), p+": record ") {
				t.Fatalf("message does not name the file and record: %v", err)
			}
			if len(got) != c.good {
				t.Fatalf("%d good frames before the damage, want %d", len(got), c.good)
			}
		})
	}
}

func TestPcapFileHeaderChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func([]byte) []byte
		want string
	}{
		{"pcapng magic on a pcap file", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b, 0x0a0d0d0a)
			return b
		}, "byte-order magic 0x00000000 is damaged"},
		{"raw IP link type", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[20:], 101)
			return b
		}, "link type 101, not Ethernet"},
		{"not a capture", func([]byte) []byte { return []byte("not a capture file at all") }, "not a pcap or pcapng file"},
		{"too short", func(b []byte) []byte { return b[:10] }, "too short for a pcap file header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, _ := writeFrames(t, 1)
			edit(t, p, c.fn)
			_, err := OpenPcap(p)
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one naming %s and saying %q", err, p, c.want)
			}
		})
	}
}

func TestPcapBigEndianMicroseconds(t *testing.T) {
	// A file written on a big-endian host with microsecond stamps.
	var b bytes.Buffer
	h := make([]byte, 24)
	binary.BigEndian.PutUint32(h[0:], 0xa1b2c3d4)
	binary.BigEndian.PutUint16(h[4:], 2)
	binary.BigEndian.PutUint16(h[6:], 4)
	binary.BigEndian.PutUint32(h[16:], 65535)
	binary.BigEndian.PutUint32(h[20:], 1)
	b.Write(h)
	r := make([]byte, 16)
	binary.BigEndian.PutUint32(r[0:], 1000)
	binary.BigEndian.PutUint32(r[4:], 250000)
	binary.BigEndian.PutUint32(r[8:], 60)
	binary.BigEndian.PutUint32(r[12:], 60)
	b.Write(r)
	b.Write(frameN(3))
	p := filepath.Join(t.TempDir(), "be.pcap")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := OpenPcap(p)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	f, ts, err := rd.Next()
	if err != nil || !bytes.Equal(f, frameN(3)) || !ts.Equal(time.Unix(1000, 250000000)) {
		t.Fatalf("err %v ts %v", err, ts)
	}
}

func TestPcapWriterDoesNotAllocate(t *testing.T) {
	w, err := CreatePcap(filepath.Join(t.TempDir(), "a.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, now := frameN(1), time.Now()
	if a := testing.AllocsPerRun(1000, func() { w.Write(now, f) }); a != 0 {
		t.Fatalf("Write allocates %v per frame", a)
	}
}

func TestPad(t *testing.T) {
	b := bytes.Repeat([]byte{0xee}, 64)
	if n := Pad(b, 42); n != MinFrame || !bytes.Equal(b[42:60], make([]byte, 18)) || b[41] != 0xee || b[60] != 0xee {
		t.Fatalf("Pad(42) = %d, % x", n, b)
	}
	if n := Pad(b, 61); n != 61 {
		t.Fatalf("Pad(61) = %d", n)
	}
}

// writeNg writes frames 0..n-1 into a new pcapng file through CreatePcap,
// which picks pcapng by the name.
func writeNg(t *testing.T, n int) (string, time.Time) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.pcapng")
	w, err := CreatePcap(p)
	if err != nil {
		t.Fatal(err)
	}
	if w.Format() != FormatPcapng {
		t.Fatalf("CreatePcap(%s) writes %v, want pcapng", p, w.Format())
	}
	t0 := time.Unix(1700000000, 123456789)
	for i := 0; i < n; i++ {
		w.Write(t0.Add(time.Duration(i)*time.Millisecond), frameN(i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p, t0
}

func TestPcapngRoundTrip(t *testing.T) {
	p, t0 := writeNg(t, 5)
	b, err := os.ReadFile(p)
	if err != nil || binary.LittleEndian.Uint32(b) != 0x0a0d0d0a {
		t.Fatalf("%s does not start with a pcapng section header: % x (%v)", p, b[:min(8, len(b))], err)
	}
	// pcapgo reads what the writer wrote, as Wireshark would.
	f, _ := os.Open(p)
	defer f.Close()
	ng, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil || ng.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("pcapgo: %v, link type %v", err, ng.LinkType())
	}
	for i := 0; i < 5; i++ {
		data, ci, err := ng.ReadPacketData()
		if err != nil || !bytes.Equal(data, frameN(i)) || !ci.Timestamp.Equal(t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("pcapgo record %d: %v %v", i+1, err, ci.Timestamp)
		}
	}
	// And so does OpenPcap, told by the magic number, not the name.
	q := filepath.Join(t.TempDir(), "named-like-a.pcap")
	if err := os.WriteFile(q, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenPcap(q)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Format() != FormatPcapng {
		t.Fatalf("format %v, want pcapng", r.Format())
	}
	for i := 0; i < 5; i++ {
		f, ts, err := r.Next()
		if err != nil || !bytes.Equal(f, frameN(i)) || !ts.Equal(t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("record %d: err %v, ts %v, % x", i+1, err, ts, f)
		}
	}
	if _, _, err := r.Next(); err != io.EOF || r.Records() != 5 {
		t.Fatalf("end: %v after %d records", err, r.Records())
	}
}

// TestPcapngFromOtherWriters reads pcapng as other tools write it:
// microsecond timestamps, an interface without a snapshot length, a
// statistics block between frames, a big-endian section.
func TestPcapngFromOtherWriters(t *testing.T) {
	var b bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&b, pcapgo.NgInterface{Name: "eth0", LinkType: layers.LinkTypeEthernet, TimestampResolution: 6},
		pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "Dumpcap (Wireshark)"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 250000000)
	for i := 0; i < 3; i++ {
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: 60, Length: 60}, frameN(i)); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if err := w.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{PacketsReceived: 2}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "dumpcap.pcapng")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, p)
	if err != nil || len(got) != 3 || !bytes.Equal(got[2], frameN(2)) {
		t.Fatalf("read %d frames, err %v", len(got), err)
	}
	// The same file big-endian, as a big-endian host writes it.
	be := bigEndianNg(t, b.Bytes())
	q := filepath.Join(t.TempDir(), "be.pcapng")
	if err := os.WriteFile(q, be, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = readAll(t, q)
	if err != nil || len(got) != 3 || !bytes.Equal(got[1], frameN(1)) {
		t.Fatalf("big-endian: read %d frames, err %v", len(got), err)
	}
}

// bigEndianNg swaps the block framing and the fixed fields this test's
// blocks carry (lengths, link type, interface id, timestamps, lengths)
// to big-endian; options are dropped.
func bigEndianNg(t *testing.T, le []byte) []byte {
	t.Helper()
	var out []byte
	put32 := func(v uint32) { out = binary.BigEndian.AppendUint32(out, v) }
	for off := 0; off < len(le); {
		typ := binary.LittleEndian.Uint32(le[off:])
		l := int(binary.LittleEndian.Uint32(le[off+4:]))
		blk := le[off : off+l]
		switch typ {
		case 0x0a0d0d0a: // SHB: BOM, version, section length
			put32(typ)
			put32(28)
			put32(0x1a2b3c4d)
			out = binary.BigEndian.AppendUint16(out, 1)
			out = binary.BigEndian.AppendUint16(out, 0)
			out = binary.BigEndian.AppendUint64(out, ^uint64(0))
			put32(28)
		case 1: // IDB: link type, reserved, snaplen; resolution option 6
			put32(1)
			put32(32)
			out = binary.BigEndian.AppendUint16(out, 1)
			out = binary.BigEndian.AppendUint16(out, 0)
			put32(0)
			out = binary.BigEndian.AppendUint16(out, 9)
			out = binary.BigEndian.AppendUint16(out, 1)
			out = append(out, 6, 0, 0, 0)
			put32(0)
			put32(32)
		case 6: // EPB
			put32(6)
			put32(uint32(l))
			for i := 8; i < 28; i += 4 {
				put32(binary.LittleEndian.Uint32(blk[i:]))
			}
			out = append(out, blk[28:l-4]...)
			put32(uint32(l))
		default:
		}
		off += l
	}
	return out
}

func TestPcapngDamageIsAnError(t *testing.T) {
	// The file CreatePcap writes: SHB, IDB, then 76-byte EPBs (28 + 60
	// bytes of frame... padded: 32 + 60 = 92).
	first := func(b []byte) int { // offset of the first EPB
		off := 0
		for binary.LittleEndian.Uint32(b[off:]) != 6 {
			off += int(binary.LittleEndian.Uint32(b[off+4:]))
		}
		return off
	}
	const epb = 92
	for _, c := range []struct {
		name string
		fn   func([]byte) []byte
		good int
		want string
	}{
		{"last block cut short", func(b []byte) []byte { return b[:len(b)-10] }, 4, "truncated: the block says 92 bytes, the file holds 82"},
		{"block header cut short", func(b []byte) []byte { return b[:first(b)+4*epb+5] }, 4, "truncated: the file ends 5 bytes into the block header"},
		{"captured length past the block", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[first(b)+2*epb+20:], 0x7fffffff)
			return b
		}, 2, "captured length 2147483647 is past the end of its 92-byte block"},
		{"block length damaged", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[first(b)+2*epb+4:], 0x7ffffff0)
			return b
		}, 2, "block length 2147483632 is not a pcapng block's"},
		{"lengths differ", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[first(b)+3*epb-4:], 96)
			return b
		}, 2, "the block's two lengths differ (92, 96)"},
		{"frame cut by the snapshot length", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[first(b)+2*epb+24:], 1514)
			return b
		}, 2, "frame of 1514 bytes cut to 60"},
		{"empty record", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[first(b)+2*epb+20:], 0)
			return b
		}, 2, "empty record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, _ := writeNg(t, 5)
			edit(t, p, c.fn)
			got, err := readAll(t, p)
			var pe *PcapError
			if !errors.As(err, &pe) || pe.Record != c.good+1 || pe.File != p || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want a PcapError for record %d saying %q", err, c.good+1, c.want)
			}
			if len(got) != c.good {
				t.Fatalf("%d good frames before the damage, want %d", len(got), c.good)
			}
		})
	}
	// Not Ethernet: the interface block's 16-bit link type (pcapgo keeps
	// only 8 bits of it: 257 would pass for Ethernet).
	p, _ := writeNg(t, 1)
	edit(t, p, func(b []byte) []byte {
		off := int(binary.LittleEndian.Uint32(b[4:])) // the IDB follows the SHB
		binary.LittleEndian.PutUint16(b[off+8:], 257)
		return b
	})
	if _, err := OpenPcap(p); err == nil || !strings.Contains(err.Error(), "link type 257, not Ethernet") {
		t.Fatalf("err %v, want a refusal of link type 257", err)
	}
}

func TestPcapngWriterDoesNotAllocate(t *testing.T) {
	w, err := CreatePcap(filepath.Join(t.TempDir(), "a.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, now := frameN(1), time.Now()
	if a := testing.AllocsPerRun(1000, func() { w.Write(now, f) }); a != 0 {
		t.Fatalf("Write allocates %v per frame", a)
	}
}

func TestPcapReaderDoesNotAllocate(t *testing.T) {
	for _, mk := range []func(*testing.T, int) (string, time.Time){writeFrames, writeNg} {
		p, _ := mk(t, 2100)
		r, err := OpenPcap(p)
		if err != nil {
			t.Fatal(err)
		}
		r.Next() // the first record sizes the buffers
		if a := testing.AllocsPerRun(2000, func() {
			if _, _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Fatalf("%v: Next allocates %v per frame", r.Format(), a)
		}
		r.Close()
	}
}

func TestPcapFormatFor(t *testing.T) {
	for p, want := range map[string]PcapFormat{"a.pcap": FormatPcap, "a.PCAPNG": FormatPcapng, "dir.pcapng/a": FormatPcap, "a": FormatPcap, "a.ntar": FormatPcapng} {
		if got := FormatFor(p); got != want {
			t.Errorf("FormatFor(%q) = %v, want %v", p, got, want)
		}
	}
	if f, err := ParsePcapFormat("pcapng"); err != nil || f != FormatPcapng {
		t.Fatal(f, err)
	}
	if _, err := ParsePcapFormat("erf"); err == nil || !strings.Contains(err.Error(), "pcap or pcapng") {
		t.Fatalf("ParsePcapFormat(erf): %v", err)
	}
}

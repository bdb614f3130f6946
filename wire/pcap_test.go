package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
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
		{"pcapng", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b, 0x0a0d0d0a)
			return b
		}, "editcap -F pcap"},
		{"raw IP link type", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[20:], 101)
			return b
		}, "link type 101, not Ethernet"},
		{"not a capture", func([]byte) []byte { return []byte("not a capture file at all") }, "is not a pcap file"},
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

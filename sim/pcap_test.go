package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/wire"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

func TestPcapOutThenIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.pcap")
	a, ca := newFake(t, "tpcap0", false, "sim:tpcap0?pcap-out="+out)
	var sent [][]byte
	before := time.Now()
	for i := 0; i < 10; i++ {
		f := frameN(i)
		f = append(f, make([]byte, i*10)...)
		sent = append(sent, f)
		a.send(f)
	}
	if err := ca(); err != nil {
		t.Fatal(err)
	}
	// The file is a pcap anyone can read, with the frames and times.
	fh, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pcapgo.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("link type %v", r.LinkType())
	}
	for i := range sent {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(data, sent[i]) {
			t.Fatalf("frame %d differs in the file", i)
		}
		if ci.Timestamp.Before(before.Add(-time.Second)) || ci.Timestamp.After(time.Now().Add(time.Second)) {
			t.Fatalf("frame %d timestamp %v is not the time of sending", i, ci.Timestamp)
		}
	}
	fh.Close()

	// Replay: lossless, so a port with 3 buffers gets 3 frames and the
	// rest wait.
	b, cb := newFake(t, "tpcap1", false, "sim:tpcap1?pcap-in="+out)
	defer cb()
	src := PcapSourceOf("sim:tpcap1")
	if src == nil || PcapSourceOf("tpcap0") != nil {
		t.Fatal("PcapSourceOf does not find the replay of the port with pcap-in (or finds one without)")
	}
	b.setRoom(3)
	if n := b.pump(); n != 3 {
		t.Fatalf("pulled %d frames into 3 buffers", n)
	}
	if src.Done() || src.Frames() != 3 {
		t.Fatalf("after 3 of 10 frames: done %v, frames %d", src.Done(), src.Frames())
	}
	b.setRoom(100)
	b.pump()
	if !src.Done() || src.Frames() != uint64(len(sent)) || src.Err() != nil {
		t.Fatalf("after the whole file: done %v, frames %d, err %v", src.Done(), src.Frames(), src.Err())
	}
	got := b.frames()
	if len(got) != len(sent) || b.dropped != 0 {
		t.Fatalf("replayed %d frames with %d drops, want %d and none", len(got), b.dropped, len(sent))
	}
	for i := range sent {
		if !bytes.Equal(got[i], sent[i]) {
			t.Fatalf("replayed frame %d differs", i)
		}
	}
}

func TestPcapFileSpeed(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "timed.pcap")
	w, err := wire.CreatePcap(out)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	w.Write(t0, frameN(0))
	w.Write(t0.Add(time.Hour), frameN(1)) // due in an hour
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenPcapSource(out, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Lossless() {
		t.Fatal("file-speed replay must not be lossless")
	}
	var buf [128]byte
	if _, ok := s.Next(buf[:]); !ok {
		t.Fatal("first frame is due at once")
	}
	if _, ok := s.Next(buf[:]); ok {
		t.Fatal("second frame came before its time")
	}
	if s.Frames() != 1 || s.Done() {
		t.Fatalf("frames %d done %v", s.Frames(), s.Done())
	}
}

func TestPcapInRejectsNonEthernet(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "raw.pcap")
	f, _ := os.Create(p)
	w := pcapgo.NewWriter(f)
	w.WriteFileHeader(65535, layers.LinkTypeRaw)
	f.Close()
	if _, err := OpenPcapSource(p, false); err == nil {
		t.Fatal("a raw-IP capture was accepted")
	}
	bad := filepath.Join(t.TempDir(), "bad.pcap")
	os.WriteFile(bad, []byte("not a capture file at all"), 0o644)
	if _, err := OpenPcapSource(bad, false); err == nil {
		t.Fatal("garbage accepted as a capture")
	}
}

func TestPcapngReplayed(t *testing.T) {
	t.Parallel()
	// pcapng, as Wireshark and tshark save by default, replays like a
	// pcap: here one written by pcapgo with its default interface.
	p := filepath.Join(t.TempDir(), "in.pcapng")
	f, _ := os.Create(p)
	w, err := pcapgo.NewNgWriter(f, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		fr := frameN(i)
		w.WritePacket(ciFor(fr), fr)
	}
	w.Flush()
	f.Close()
	s, err := OpenPcapSource(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var buf [2048]byte
	for i := 0; i < 4; i++ {
		n, ok := s.Next(buf[:])
		if !ok || !bytes.Equal(buf[:n], frameN(i)) {
			t.Fatalf("frame %d: ok %v, % x", i, ok, buf[:n])
		}
	}
	if _, ok := s.Next(buf[:]); ok || !s.Done() || s.Err() != nil || s.Frames() != 4 {
		t.Fatalf("end: done %v err %v frames %d", s.Done(), s.Err(), s.Frames())
	}
}

func TestPcapInPadsRuntsAndCountsTooBig(t *testing.T) {
	t.Parallel()
	// A capture taken on the sending host holds frames before its MAC
	// padded them: the replay pads them to 60 bytes, as that MAC did. A
	// frame longer than the port's buffer is kept out and counted.
	p := filepath.Join(t.TempDir(), "runts.pcap")
	w, err := wire.CreatePcap(p)
	if err != nil {
		t.Fatal(err)
	}
	arp := make([]byte, 42)
	for i := range arp {
		arp[i] = 0xa0 + byte(i%16)
	}
	now := time.Now()
	w.Write(now, arp)
	w.Write(now, make([]byte, 3000))
	w.Write(now, frameN(7))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenPcapSource(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	buf := make([]byte, 2048)
	for i := range buf {
		buf[i] = 0xff
	}
	n, ok := s.Next(buf)
	if !ok || n != wire.MinFrame || !bytes.Equal(buf[:42], arp) || !bytes.Equal(buf[42:60], make([]byte, 18)) {
		t.Fatalf("42-byte frame: n=%d ok=%v % x", n, ok, buf[:n])
	}
	n, ok = s.Next(buf)
	if !ok || n != 60 || buf[0] != 7 {
		t.Fatalf("after the 3000-byte frame: n=%d ok=%v first byte %d", n, ok, buf[0])
	}
	if _, ok := s.Next(buf); ok || !s.Done() || s.Err() != nil {
		t.Fatalf("end: ok=%v done=%v err=%v", ok, s.Done(), s.Err())
	}
	if s.Frames() != 2 || s.Padded() != 1 || s.TooBig() != 1 {
		t.Fatalf("frames %d padded %d too big %d, want 2 1 1", s.Frames(), s.Padded(), s.TooBig())
	}
}

func ciFor(b []byte) gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: time.Now(), CaptureLength: len(b), Length: len(b)}
}

// TestPcapOutRefusesLinksAndExistingFiles: pcap-out= never follows a
// symbolic link and replaces an existing file only with pcap-overwrite=1.
func TestPcapOutRefusesLinksAndExistingFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(dir, "shadow")
	os.WriteFile(victim, []byte("root:x:0:0"), 0o600)
	link := filepath.Join(dir, "planted.pcap")
	os.Symlink(victim, link)
	old := filepath.Join(dir, "old.pcap")
	os.WriteFile(old, []byte("old capture"), 0o644)
	for _, tc := range []struct{ spec, want string }{
		{"sim:tpcapx0?pcap-out=" + link, "symbolic link"},
		{"sim:tpcapx0?pcap-out=" + link + "&pcap-overwrite=1", "symbolic link"},
		{"sim:tpcapx0?pcap-out=" + old, "pcap-overwrite=1"},
		{"sim:tpcapx0?pcap-overwrite=1", "add pcap-out"},
		{"sim:tpcapx0?pcap-out=" + filepath.Join(dir, "n.pcap") + "&pcap-overwrite=maybe", "pcap-overwrite"},
	} {
		_, _, err := tryFake("tpcapx0", false, tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "pcap-") {
			t.Errorf("%s: error %v, want one mentioning %q", tc.spec, err, tc.want)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "root:x:0:0" {
		t.Fatalf("the link's target was written: %q", b)
	}
	if b, _ := os.ReadFile(old); string(b) != "old capture" {
		t.Fatalf("the existing file was written: %q", b)
	}
	a, ca := newFake(t, "tpcapx0", false, "sim:tpcapx0?pcap-out="+old+"&pcap-overwrite=1")
	a.send(frameN(1))
	if err := ca(); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(old)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := pcapgo.NewReader(fh)
	if err != nil {
		t.Fatalf("overwritten file is not a pcap: %v", err)
	}
	if data, _, err := r.ReadPacketData(); err != nil || !bytes.Equal(data, frameN(1)) {
		t.Fatalf("overwritten file's first frame: %v", err)
	}
}

// TestPcapOutNeverTheInputFile: a pcap-out naming the file a pcap-in
// replays, under its own name, a symbolic link or a hard link, in the same
// spec or another port's, is refused before anything is written, whatever
// pcap-overwrite says; the capture is left as it was.
func TestPcapOutNeverTheInputFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	w, err := wire.CreatePcap(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		w.Write(time.Now(), frameN(i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(in)
	sym, hard := filepath.Join(dir, "sym.pcap"), filepath.Join(dir, "hard.pcap")
	if err := os.Symlink(in, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, spec string }{
		{"same name, overwrite", "sim:tsame0?pcap-in=" + in + "&pcap-out=" + in + "&pcap-overwrite=1"},
		{"same name", "sim:tsame0?pcap-in=" + in + "&pcap-out=" + in},
		{"hard link, overwrite", "sim:tsame0?pcap-in=" + in + "&pcap-out=" + hard + "&pcap-overwrite=1"},
		{"input through a symbolic link", "sim:tsame0?pcap-in=" + sym + "&pcap-out=" + hard + "&pcap-overwrite=1"},
		{"pcapng output", "sim:tsame0?pcap-in=" + in + "&pcap-out=" + in + "&pcap-overwrite=1&pcap-format=pcapng"},
	} {
		_, _, err := tryFake("tsame0", false, c.spec)
		if err == nil || !strings.Contains(err.Error(), "pcap-in of sim:tsame0") || !strings.Contains(err.Error(), "the same file") {
			t.Errorf("%s: %v, want a refusal naming the pcap-in it would destroy", c.name, err)
		}
		if got, _ := os.ReadFile(in); !bytes.Equal(got, want) {
			t.Fatalf("%s: the capture changed (%d bytes, was %d)", c.name, len(got), len(want))
		}
	}
	// Across ports: one replays the file, another may not write it, and
	// a file being written may not be replayed.
	_, cin := newFake(t, "tsame1", false, "sim:tsame1?pcap-in="+in)
	if _, _, err := tryFake("tsame2", false, "sim:tsame2?pcap-out="+hard+"&pcap-overwrite=1"); err == nil || !strings.Contains(err.Error(), "pcap-in of sim:tsame1") {
		t.Errorf("another port's pcap-out of the replayed file: %v", err)
	}
	// Two replays of one file are fine.
	_, cin2 := newFake(t, "tsame3", false, "sim:tsame3?pcap-in="+sym)
	if err := cin2(); err != nil {
		t.Fatal(err)
	}
	if err := cin(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(in); !bytes.Equal(got, want) {
		t.Fatal("the capture changed")
	}
	out := filepath.Join(dir, "out.pcap")
	_, cout := newFake(t, "tsame4", false, "sim:tsame4?pcap-out="+out)
	if _, _, err := tryFake("tsame5", false, "sim:tsame5?pcap-in="+out); err == nil || !strings.Contains(err.Error(), "pcap-out of sim:tsame4") {
		t.Errorf("replaying the file a pcap-out writes: %v", err)
	}
	if err := cout(); err != nil {
		t.Fatal(err)
	}
	// Once closed, the file is free again.
	_, cin3 := newFake(t, "tsame5", false, "sim:tsame5?pcap-in="+out)
	if err := cin3(); err != nil {
		t.Fatal(err)
	}
}

// TestPcapOutFormat: pcap-out writes pcapng for a .pcapng name or with
// pcap-format=pcapng, and a pcapng replays like a pcap.
func TestPcapOutFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		file, opt string
		want      wire.PcapFormat
	}{
		{"a.pcapng", "", wire.FormatPcapng},
		{"b.cap", "&pcap-format=pcapng", wire.FormatPcapng},
		{"c.pcapng", "&pcap-format=pcap", wire.FormatPcap},
		{"d.pcap", "", wire.FormatPcap},
	} {
		p := filepath.Join(dir, c.file)
		name := "tfmt" + c.file[:1]
		a, ca := newFake(t, name, false, "sim:"+name+"?pcap-out="+p+c.opt)
		for i := 0; i < 3; i++ {
			a.send(frameN(i))
		}
		if err := ca(); err != nil {
			t.Fatal(err)
		}
		r, err := wire.OpenPcap(p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Format() != c.want {
			t.Errorf("%s%s: wrote %v, want %v", c.file, c.opt, r.Format(), c.want)
		}
		r.Close()
		b, cb := newFake(t, name+"r", false, "sim:"+name+"r?pcap-in="+p)
		b.pump()
		if got := b.frames(); len(got) != 3 || !bytes.Equal(got[2], frameN(2)) {
			t.Errorf("%s: replayed %d frames", c.file, len(got))
		}
		if err := cb(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := tryFake("tfmtx", false, "sim:tfmtx?pcap-out="+filepath.Join(dir, "x")+"&pcap-format=erf"); err == nil || !strings.Contains(err.Error(), "pcap-format") {
		t.Errorf("pcap-format=erf: %v", err)
	}
	if _, _, err := tryFake("tfmtx", false, "sim:tfmtx?pcap-format=pcap"); err == nil || !strings.Contains(err.Error(), "applies to pcap-out") {
		t.Errorf("pcap-format without pcap-out: %v", err)
	}
}

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

func TestPcapNgRefused(t *testing.T) {
	t.Parallel()
	// pcapng is not replayed: the error names the file and
	// says how to convert it.
	p := filepath.Join(t.TempDir(), "in.pcapng")
	f, _ := os.Create(p)
	w, err := pcapgo.NewNgWriter(f, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	fr := frameN(0)
	w.WritePacket(ciFor(fr), fr)
	w.Flush()
	f.Close()
	_, err = OpenPcapSource(p, false)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "editcap -F pcap") {
		t.Fatalf("pcapng: %v", err)
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

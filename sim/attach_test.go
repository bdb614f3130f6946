package sim

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/wire"
)

// fakePort is a model port reduced to what wiring sees: it keeps every
// frame it receives while it has room, and counts the rest.
type fakePort struct {
	mu      sync.Mutex
	room    int
	got     [][]byte
	dropped int
	sources []wire.Source
	tx      wire.Wire
}

func (f *fakePort) Receive(frame []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.room == 0 {
		f.dropped++
		return false
	}
	f.room--
	f.got = append(f.got, append([]byte(nil), frame...))
	return true
}

func (f *fakePort) RxRoom() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.room
}

func (f *fakePort) setRoom(n int) { f.mu.Lock(); f.room = n; f.mu.Unlock() }

func (f *fakePort) frames() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.got...)
}

// pump pulls from the sources as a model would: lossless sources only
// while there is room, the others until they have nothing.
func (f *fakePort) pump() int {
	var buf [2048]byte
	n := 0
	for _, s := range f.sources {
		for {
			if s.Lossless() && f.RxRoom() == 0 {
				break
			}
			l, ok := s.Next(buf[:])
			if !ok {
				break
			}
			f.Receive(buf[:l])
			n++
		}
	}
	return n
}

// send transmits as the model's TX engine would.
func (f *fakePort) send(frame []byte) { f.tx.Transmit(frame) }

func newFake(t *testing.T, name string, engine bool, spec string) (*fakePort, func() error) {
	t.Helper()
	f, cleanup, err := tryFake(name, engine, spec)
	if err != nil {
		t.Fatalf("attach %s: %v", spec, err)
	}
	return f, cleanup
}

func tryFake(name string, engine bool, spec string) (*fakePort, func() error, error) {
	f := &fakePort{room: 1 << 30, tx: &wire.Discard{}}
	ep := &Endpoint{Name: name, Port: f, Engine: engine,
		SetWire:   func(w wire.Wire) { f.tx = w },
		AddSource: func(s wire.Source) { f.sources = append(f.sources, s) }}
	s, err := driver.ParseSpec(spec)
	if err != nil {
		return nil, nil, err
	}
	cleanup, err := attach(ep, s)
	return f, cleanup, err
}

func TestAttachRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ spec, want string }{
		{"sim:tbad0?gen-size=10", "gen-size"},
		{"sim:tbad0?gen=maybe", "gen="},
		{"sim:tbad0?gen-rate=fast", "gen-rate"},
		{"sim:tbad0?gen=0&gen-size=128", "generator is off"},
		{"sim:tbad0?pcap-speed=slow&pcap-in=x.pcap", "pcap-speed"},
		{"sim:tbad0?pcap-speed=file", "applies to pcap-in"},
		{"sim:tbad0?pcap-in=/nonexistent/x.pcap", "pcap-in"},
		{"sim:tbad0?pcap-out=/nonexistent/dir/x.pcap", "pcap-out"},
		{"sim:tbad0?peer=pci:0000:01:00.0", "another simulated port"},
		{"sim:tbad0?peer=sim:tbad0", "itself"},
		{"sim:tbad0?peer=", "needs a value"},
		{"sim:tbad0?peer=sim:tbad1&sink=1", "cannot be combined"},
		{"sim:tbad0?afpacket=no-such-if0", "no-such-if0"},
	} {
		_, _, err := tryFake("tbad0", false, tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.spec, err, tc.want)
		}
	}
	// Nothing stays registered after a failed attach.
	f, cleanup := newFake(t, "tbad0", false, "sim:tbad0?sink=1")
	defer cleanup()
	if SinkOf("sim:tbad0") == nil || f == nil {
		t.Fatal("a good attach after failed ones found no sink")
	}
}

func TestAttachTwiceRefused(t *testing.T) {
	t.Parallel()
	_, c := newFake(t, "tdup0", false, "sim:tdup0?sink=1")
	_, _, err := tryFake("tdup0", false, "sim:tdup0")
	if err == nil || !strings.Contains(err.Error(), "already open") {
		t.Fatalf("second attach of the same name: %v, want 'already open'", err)
	}
	if err := c(); err != nil {
		t.Fatal(err)
	}
	if SinkOf("tdup0") != nil {
		t.Fatal("sink still registered after cleanup")
	}
	var se *driver.SpecError
	_, _, err = tryFake("tdup1", false, "sim:tdup1?gen-size=1")
	if !errors.As(err, &se) {
		t.Fatalf("bad option error %T is not a *driver.SpecError", err)
	}
}

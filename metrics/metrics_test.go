package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/metrics"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim"
)

func open(t *testing.T, name string) driver.Port {
	t.Helper()
	p, err := driver.Open("sim:" + name + "?link-poll=0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// TestHandlerCountsFrames: frames a port received show in the scrape under
// the port's name, per port and per queue, and the other port's counters
// stay 0.
func TestHandlerCountsFrames(t *testing.T) {
	a, b := open(t, "fec81"), open(t, "fec82")
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x00})
	m := sim.FECModel("fec82")
	for i := 0; i < 3; i++ {
		if !m.Port().Receive(frame) {
			t.Fatal("the model refused a frame")
		}
	}
	burst := make([]*pool.Packet, 8)
	got := 0
	for i := 0; i < 10 && got < 3; i++ {
		n := b.RxQueue(0).RxBurst(burst)
		pool.FreeBulk(burst[:n])
		got += n
	}
	if got != 3 {
		t.Fatalf("received %d frames, want 3", got)
	}
	out := scrape(t, metrics.Handler(a, b))
	for _, want := range []string{
		`gopmd_port_packets_total{dir="rx",port="sim:fec82?link-poll=0"} 3`,
		`gopmd_port_packets_total{dir="rx",port="sim:fec81?link-poll=0"} 0`,
		`gopmd_queue_packets_total{dir="rx",port="sim:fec82?link-poll=0",queue="0"} 3`,
		`gopmd_port_drops_total{cause="no_buffer",dir="rx",port="sim:fec82?link-poll=0"} 0`,
		`gopmd_pool_buffers{port="sim:fec82?link-poll=0",queue="0"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", out)
	}
}

// TestServe binds a free loopback port and serves /metrics there.
func TestServe(t *testing.T) {
	p := open(t, "fec83")
	addr, stop, err := metrics.Serve("127.0.0.1:0", p)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `gopmd_port_packets_total{dir="tx",port="sim:fec83?link-poll=0"} 0`) {
		t.Fatalf("GET /metrics: %s\n%s", resp.Status, b)
	}
	if _, _, err := metrics.Serve(addr, p); err == nil {
		t.Error("a second Serve on the same address succeeded")
	}
}

// TestStoppedFramesShow: frames the device wrote into the RX ring and Stop
// found there unread show in the scrape as cause="stopped", per port and
// per queue.
func TestStoppedFramesShow(t *testing.T) {
	p := open(t, "fec86")
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x00})
	m := sim.FECModel("fec86")
	for i := 0; i < 4; i++ {
		if !m.Port().Receive(frame) {
			t.Fatal("the model refused a frame")
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	out := scrape(t, metrics.Handler(p))
	for _, want := range []string{
		`gopmd_port_drops_total{cause="stopped",dir="rx",port="sim:fec86?link-poll=0"} 4`,
		`gopmd_queue_drops_total{cause="stopped",dir="rx",port="sim:fec86?link-poll=0",queue="0"} 4`,
		`gopmd_port_packets_total{dir="rx",port="sim:fec86?link-poll=0"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", out)
	}
}

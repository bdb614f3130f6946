package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRegsEndpoint: a running l2fwd serves its ports' registers on the
// metrics listener (the live register dump nicctl regs cannot take from a
// port l2fwd holds), says on stderr which address it bound, and refuses a
// bad port number.
func TestRegsEndpoint(t *testing.T) {
	addrCh := make(chan string, 1)
	old := listenMetrics
	listenMetrics = func(a string) (net.Listener, error) {
		ln, err := net.Listen("tcp", a)
		if err == nil {
			addrCh <- ln.Addr().String()
		}
		return ln, err
	}
	defer func() { listenMetrics = old }()
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var addr, all, one, bad string
	var badCode int
	code, _, errOut := runUntil(t, []string{"--metrics", "127.0.0.1:0", "--stats-interval", "0",
		"sim:enetc0?gen=1&sink=1&link-poll=0", "sim:fec0?gen=1&sink=1&soc=imx8mp"}, func() bool {
		if sinkFrames("enetc0") == 0 || sinkFrames("fec0") == 0 {
			return false
		}
		addr = <-addrCh
		_, all = get("http://" + addr + "/regs")
		_, one = get("http://" + addr + "/regs?port=1")
		badCode, bad = get("http://" + addr + "/regs?port=7")
		return true
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "metrics on http://"+addr+"/metrics") || strings.HasSuffix(addr, ":0") {
		t.Errorf("stderr does not say the bound address %s: %q", addr, errOut)
	}
	for _, want := range []string{"# port 0 sim:enetc0?gen=1&sink=1&link-poll=0 (enetc)", "SIMR", "PM0_CMD_CFG", "# port 1 sim:fec0?gen=1&sink=1&soc=imx8mp (fec)", "ECR"} {
		if !strings.Contains(all, want) {
			t.Errorf("/regs lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(one, "(enetc)") || !strings.Contains(one, "(fec)") {
		t.Errorf("/regs?port=1 is not port 1 alone:\n%s", one)
	}
	if badCode != http.StatusBadRequest || !strings.Contains(bad, "from 0 to 1") {
		t.Errorf("/regs?port=7: %d %q", badCode, bad)
	}
}

// TestRegsLoopbackOnly: on a non-loopback listener (--metrics-any) the
// register dump is refused.
func TestRegsLoopbackOnly(t *testing.T) {
	t.Parallel() // no port, no process-wide state
	rec := httptest.NewRecorder()
	regsHandler(&app{}, false)(rec, httptest.NewRequest("GET", "/regs", nil))
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "loopback") {
		t.Fatalf("non-loopback /regs: %d %q", rec.Code, rec.Body.String())
	}
	if isLoopback(&net.TCPAddr{IP: net.ParseIP("192.0.2.1")}) || !isLoopback(&net.TCPAddr{IP: net.ParseIP("::1")}) {
		t.Fatal("isLoopback")
	}
}

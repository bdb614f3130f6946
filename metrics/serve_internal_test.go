package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipeListener is a net.Listener of in-process connections (net.Pipe):
// dial queues one, Accept takes them in dial order.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn, 256), done: make(chan struct{})}
}

func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	l.conns <- s
	return c
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// TestSilentClientsCannotLockOutAScrape: clients beyond the connection
// cap that connect and send nothing (or half a request) neither raise the
// open connections above MaxConns nor keep a scrape from being served;
// the oldest of them are closed to make room.
func TestSilentClientsCannotLockOutAScrape(t *testing.T) {
	ln := newPipeListener()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "gopmd_up 1\n")
	})
	stop, lim := serve(ln, h)
	defer stop()

	const silent = MaxConns + 8
	clients := make([]net.Conn, silent)
	for i := range clients {
		clients[i] = ln.dial()
		if i%2 == 1 {
			// Half a request header, never finished.
			go clients[i].Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n"))
		}
	}
	tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return ln.dial(), nil }}
	// A guard against a hang, not a timed assertion: the scrape needs
	// no client to time out.
	cl := &http.Client{Transport: tr, Timeout: time.Minute}
	resp, err := cl.Get("http://gopmd/metrics")
	if err != nil {
		t.Fatalf("scrape behind %d silent clients: %v", silent, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "gopmd_up 1") {
		t.Fatalf("scrape: %s %q", resp.Status, b)
	}
	if n := lim.open(); n > MaxConns {
		t.Errorf("%d connections open, cap %d", n, MaxConns)
	}
	// The oldest silent clients were closed: a read sees the end.
	for i := 0; i < silent+1-MaxConns; i++ {
		clients[i].SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
		if _, err := clients[i].Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("silent client %d still open: %v", i, err)
		}
	}
	for _, c := range clients {
		c.Close()
	}
}

package metrics

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gopmd/gopmd/driver"
)

// The metrics server's limits. A scrape is one short request: a client
// that takes longer than these to send it, or to read the answer, is cut
// off; at most MaxConns connections are open at once (file descriptors are
// the process's, shared with its devices), and a new one beyond that
// closes the oldest that has not yet sent a whole request or sits idle
// between requests, so clients that connect and say nothing cannot lock
// a scraper out.
const (
	MaxConns          = 16
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 10 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 2 * time.Minute
)

// Handler is an http.Handler serving the ports' metrics in the Prometheus
// text format, from a registry of its own.
func Handler(ports ...driver.Port) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(For(ports...))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// Serve listens on addr ("127.0.0.1:9100"; port 0 picks a free one) and
// serves the ports' metrics on /metrics until stop is called. It returns
// the address actually bound. The counters carry no secrets, but the
// listener is reachable by whoever reaches addr: bind to loopback unless
// the scraper is elsewhere. The server keeps the limits above.
func Serve(addr string, ports ...driver.Port) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(ports...))
	return ln.Addr().String(), ServeListener(ln, mux), nil
}

// ServeListener serves h on ln with the limits above until stop is
// called, which closes ln and every connection (waiting up to a second for
// requests under way).
func ServeListener(ln net.Listener, h http.Handler) (stop func()) {
	stop, _ = serve(ln, h)
	return stop
}

// serve is ServeListener, returning its limiter too.
func serve(ln net.Listener, h http.Handler) (stop func(), l *limitListener) {
	l = newLimitListener(ln, MaxConns)
	srv := &http.Server{Handler: h, ConnState: l.state,
		ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: IdleTimeout}
	go func() { _ = srv.Serve(l) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
		cancel()
	}, l
}

// limitListener caps the connections open at once. Accept never blocks on
// the cap (a blocked Accept would leave a scraper queued behind the
// clients that hold the connections): at the cap it closes the oldest
// connection that has no request under way, or, when every one has, the
// new connection.
type limitListener struct {
	net.Listener
	max int

	mu    sync.Mutex
	seq   uint64
	conns map[net.Conn]*connInfo // open connections Accept returned
}

type connInfo struct {
	seq  uint64       // accept order
	busy bool         // a request is being read or answered (StateActive)
	conn *limitedConn // the wrapper handed to the server
}

type limitedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

// Close closes the connection and forgets it.
func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.forget(c) })
	return c.Conn.Close()
}

func newLimitListener(ln net.Listener, max int) *limitListener {
	return &limitListener{Listener: ln, max: max, conns: make(map[net.Conn]*connInfo)}
}

// Accept implements net.Listener.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l}
		l.mu.Lock()
		var victim *limitedConn
		if len(l.conns) >= l.max {
			var oldest *connInfo
			for _, ci := range l.conns {
				if !ci.busy && (oldest == nil || ci.seq < oldest.seq) {
					oldest = ci
				}
			}
			if oldest == nil {
				l.mu.Unlock()
				_ = c.Close() // every connection is answering a request
				continue
			}
			victim = oldest.conn
			delete(l.conns, victim)
		}
		l.seq++
		l.conns[lc] = &connInfo{seq: l.seq, conn: lc}
		l.mu.Unlock()
		if victim != nil {
			_ = victim.Close()
		}
		return lc, nil
	}
}

// state is the server's ConnState hook: it tracks which connections have
// a request under way.
func (l *limitListener) state(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	default:
		if ci := l.conns[c]; ci != nil {
			ci.busy = s == http.StateActive
		}
	}
}

func (l *limitListener) forget(c *limitedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// open is the number of connections open now.
func (l *limitListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strings"
)

// Client is a connection to a telemetry socket.
type Client struct {
	c    *net.UnixConn
	path string
	buf  []byte
	// Info is what the server said when the client connected.
	Info Info
}

// Dial connects to the telemetry socket at path.
func Dial(path string) (*Client, error) {
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("telemetry socket %s: %w (is the process that serves it running? its socket is named when it starts)", path, err)
	}
	cl := &Client{c: c, path: path, buf: make([]byte, MaxOutputLen+1024)}
	n, err := c.Read(cl.buf)
	if err == nil {
		err = json.Unmarshal(cl.buf[:n], &cl.Info)
	}
	if err == nil && !strings.HasPrefix(cl.Info.Version, "gopmd telemetry ") {
		err = fmt.Errorf("it speaks %q, not %q", cl.Info.Version, Version)
	}
	if err != nil {
		c.Close()
		var m map[string]string
		if json.Unmarshal(cl.buf[:n], &m) == nil && m["error"] != "" {
			err = errors.New(m["error"])
		}
		return nil, fmt.Errorf("telemetry socket %s: %w", path, err)
	}
	return cl, nil
}

// Path is the socket's path.
func (c *Client) Path() string { return c.path }

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// Call sends one command and decodes its answer into v.
func (c *Client) Call(cmd string, v any) error {
	if _, err := c.c.Write([]byte(cmd)); err != nil {
		return fmt.Errorf("telemetry socket %s: %s: %w", c.path, cmd, err)
	}
	n, err := c.c.Read(c.buf)
	if err != nil {
		return fmt.Errorf("telemetry socket %s: %s: %w", c.path, cmd, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c.buf[:n], &m); err != nil {
		return fmt.Errorf("telemetry socket %s: %s: %w", c.path, cmd, err)
	}
	if e, ok := m["error"]; ok {
		var s string
		_ = json.Unmarshal(e, &s)
		return fmt.Errorf("%s (%s, pid %d): %s", c.path, c.Info.App, c.Info.PID, s)
	}
	key, _, _ := strings.Cut(strings.TrimSpace(cmd), ",")
	return json.Unmarshal(m[key], v)
}

// Ports lists the process's ports.
func (c *Client) Ports() ([]Port, error) {
	var out []Port
	return out, c.Call("/ports", &out)
}

// Stats reads a port's counters.
func (c *Client) Stats(port string) (*Stats, error) {
	var out Stats
	if err := c.Call("/stats,"+port, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Rings reads a port's rings as the device shows them.
func (c *Client) Rings(port string) ([]Ring, error) {
	var out []Ring
	return out, c.Call("/rings,"+port, &out)
}

// Find returns the path of the one telemetry socket in dir (DefaultDir
// when empty) whose process has the port named port (a spec, with or
// without its ?options). Sockets that do not answer (left by a process
// that died) are skipped; none or several serving the port is an error
// that lists what there is.
func Find(dir, port string) (string, error) {
	if dir == "" {
		dir = DefaultDir()
	}
	socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	sort.Strings(socks)
	var hits, seen []string
	for _, s := range socks {
		c, err := Dial(s)
		if err != nil {
			continue
		}
		ps, err := c.Ports()
		c.Close()
		if err != nil {
			continue
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
			if SamePort(p.Name, port) {
				hits = append(hits, s)
			}
		}
		seen = append(seen, fmt.Sprintf("%s (%s, pid %d: %s)", s, c.Info.App, c.Info.PID, strings.Join(names, ", ")))
	}
	switch {
	case len(hits) == 1:
		return hits[0], nil
	case len(hits) > 1:
		return "", fmt.Errorf("%d processes in %s serve %s: %s; give --telemetry PATH", len(hits), dir, port, strings.Join(hits, ", "))
	case len(seen) == 0:
		return "", fmt.Errorf("no gopmd process serves telemetry in %s (l2fwd does unless --telemetry off; an appliance calls telemetry.Listen)", dir)
	}
	return "", fmt.Errorf("no gopmd process in %s has port %s; there are: %s", dir, port, strings.Join(seen, "; "))
}

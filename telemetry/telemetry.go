package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/gopmd/gopmd/driver"
)

// ErrInUse is the error of Listen on a socket another process answers on.
var ErrInUse = errors.New("another process serves it")

// Version names the protocol in Info.
const Version = "gopmd telemetry 1"

const (
	// MaxOutputLen is the longest answer the server sends (one message);
	// a longer one is replaced by an error.
	MaxOutputLen = 128 << 10
	// MaxClients is how many clients may be connected at once; one more
	// gets an error message and is closed.
	MaxClients = 16
	maxCommand = 1024
)

// Info is the server's first message.
type Info struct {
	Version      string `json:"version"`
	App          string `json:"app"` // the serving program's name
	PID          int    `json:"pid"`
	MaxOutputLen int    `json:"max_output_len"`
}

// Link is a port's link state.
type Link struct {
	Up         bool `json:"up"`
	SpeedMbps  int  `json:"speed_mbps"`
	FullDuplex bool `json:"full_duplex"`
}

// Port is one port in /ports.
type Port struct {
	Index    int    `json:"index"`
	Name     string `json:"name"` // the spec the process opened it with
	Driver   string `json:"driver"`
	Device   string `json:"device"`
	Backend  string `json:"backend"`
	MAC      string `json:"mac"`
	RxQueues int    `json:"rx_queues"`
	TxQueues int    `json:"tx_queues"`
	Link     Link   `json:"link"`
}

// Queue is one queue's counters, or their sum for a direction; Drops
// holds the non-zero drop counters by cause (driver.Cause names).
type Queue struct {
	Packets uint64            `json:"packets"`
	Bytes   uint64            `json:"bytes"`
	Drops   map[string]uint64 `json:"drops,omitempty"`
}

// Stats is /stats: driver.PortStats in JSON.
type Stats struct {
	Port     string            `json:"port"`
	Rx       Queue             `json:"rx"`
	Tx       Queue             `json:"tx"`
	RxQueues []Queue           `json:"rx_queues"`
	TxQueues []Queue           `json:"tx_queues"`
	HW       map[string]uint64 `json:"hw"`
}

// Ring is one ring in /rings: driver.RingState in JSON. The driver's own
// indices are -1 (see driver.LiveInspector).
type Ring struct {
	Kind        string `json:"kind"`
	Queue       int    `json:"queue"`
	Size        int    `json:"size"`
	IOVA        uint64 `json:"iova"`
	BDSize      int    `json:"bd_size"`
	NextToUse   int    `json:"next_to_use"`
	NextToClean int    `json:"next_to_clean"`
	Owned       int    `json:"owned"`
	Doorbells   uint64 `json:"doorbells"`
	Regs        []Reg  `json:"regs"`
}

// Reg is one register in JSON: driver.RegValue.
type Reg struct {
	Name   string  `json:"name"`
	Offset uint32  `json:"offset"`
	Block  string  `json:"block,omitempty"`
	Value  uint32  `json:"value"`
	Fields []Field `json:"fields,omitempty"`
}

// Field is a named bit field of a Reg: bits Lo..Hi.
type Field struct {
	Name string `json:"name"`
	Lo   uint   `json:"lo"`
	Hi   uint   `json:"hi"`
}

// RingState is the ring as driver.RingState.
func (r Ring) RingState() driver.RingState {
	s := driver.RingState{Kind: r.Kind, Queue: r.Queue, Size: r.Size, IOVA: r.IOVA, BDSize: r.BDSize,
		NextToUse: r.NextToUse, NextToClean: r.NextToClean, Owned: r.Owned, Doorbells: r.Doorbells}
	for _, g := range r.Regs {
		v := driver.RegValue{RegDesc: driver.RegDesc{Name: g.Name, Offset: g.Offset, Block: g.Block}, Value: g.Value}
		for _, f := range g.Fields {
			v.Fields = append(v.Fields, driver.RegField{Name: f.Name, Lo: f.Lo, Hi: f.Hi})
		}
		s.Regs = append(s.Regs, v)
	}
	return s
}

func ringOf(r driver.RingState) Ring {
	out := Ring{Kind: r.Kind, Queue: r.Queue, Size: r.Size, IOVA: r.IOVA, BDSize: r.BDSize,
		NextToUse: r.NextToUse, NextToClean: r.NextToClean, Owned: r.Owned, Doorbells: r.Doorbells,
		Regs: []Reg{}}
	for _, v := range r.Regs {
		g := Reg{Name: v.Name, Offset: v.Offset, Block: v.Block, Value: v.Value}
		for _, f := range v.Fields {
			g.Fields = append(g.Fields, Field{Name: f.Name, Lo: f.Lo, Hi: f.Hi})
		}
		out.Regs = append(out.Regs, g)
	}
	return out
}

func queueOf(q driver.QueueStats) Queue {
	out := Queue{Packets: q.Packets, Bytes: q.Bytes}
	for c := driver.Cause(0); c < driver.NumCauses; c++ {
		if q.Drops[c] != 0 {
			if out.Drops == nil {
				out.Drops = map[string]uint64{}
			}
			out.Drops[c.String()] = q.Drops[c]
		}
	}
	return out
}

func (q Queue) queueStats() driver.QueueStats {
	out := driver.QueueStats{Packets: q.Packets, Bytes: q.Bytes}
	for c := driver.Cause(0); c < driver.NumCauses; c++ {
		out.Drops[c] = q.Drops[c.String()]
	}
	return out
}

// PortStats is the counters as driver.PortStats (a cause this build does
// not know is left out).
func (s *Stats) PortStats() driver.PortStats {
	out := driver.PortStats{Rx: s.Rx.queueStats(), Tx: s.Tx.queueStats(), HW: s.HW}
	for _, q := range s.RxQueues {
		out.RxQueues = append(out.RxQueues, q.queueStats())
	}
	for _, q := range s.TxQueues {
		out.TxQueues = append(out.TxQueues, q.queueStats())
	}
	return out
}

// DefaultDir is where telemetry sockets live: /run/gopmd for root, else
// $XDG_RUNTIME_DIR/gopmd, else gopmd-UID in the temporary directory.
func DefaultDir() string {
	if os.Geteuid() == 0 {
		return "/run/gopmd"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "gopmd")
	}
	return filepath.Join(os.TempDir(), "gopmd-"+strconv.Itoa(os.Geteuid()))
}

// DefaultPath is the socket of program app in this process:
// DefaultDir()/APP.PID.sock.
func DefaultPath(app string) string {
	return filepath.Join(DefaultDir(), fmt.Sprintf("%s.%d.sock", app, os.Getpid()))
}

// Server serves a process's ports on a telemetry socket.
type Server struct {
	path  string
	ln    *net.UnixListener
	ports func() []driver.Port
	info  []byte

	mu     sync.Mutex
	conns  map[*net.UnixConn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Listen creates the socket at path and serves the ports ports returns at
// each command (nil entries, ports already closed, are left out). ports
// must be safe to call from the server's goroutines; the ports' Stats and
// LiveRings are called from them while the process polls its queues.
// DefaultDir is created (mode 0750) when path lies in it; any other
// directory must exist. See the package doc for what Listen refuses.
func Listen(path string, ports func() []driver.Port) (*Server, error) {
	if path == "" {
		return nil, errors.New("telemetry: empty socket path (give a path such as " + DefaultPath("app") + ")")
	}
	path = filepath.Clean(path)
	dir := filepath.Dir(path)
	if err := checkDir(dir, dir == DefaultDir()); err != nil {
		return nil, err
	}
	if err := clearStale(path); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("telemetry socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, fmt.Errorf("telemetry socket %s: %w", path, err)
	}
	info, _ := json.Marshal(Info{Version: Version, App: filepath.Base(os.Args[0]), PID: os.Getpid(), MaxOutputLen: MaxOutputLen})
	s := &Server{path: path, ln: ln, ports: ports, info: info, conns: map[*net.UnixConn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// checkDir makes sure dir is a directory, not a symbolic link, that
// nobody else can put a socket in: a directory of the caller's own,
// writable by it alone, for the default one (created if missing); any
// other must not be writable by all unless sticky (like /tmp).
func checkDir(dir string, own bool) error {
	if own {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("telemetry directory %s: %w", dir, err)
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("telemetry directory %s: %w", dir, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("telemetry directory %s is a symbolic link: refusing to follow it (remove it, or give a socket path in a real directory)", dir)
	case !fi.IsDir():
		return fmt.Errorf("telemetry directory %s is not a directory", dir)
	}
	perm := fi.Mode().Perm()
	if own {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && int(st.Uid) != os.Geteuid() {
			return fmt.Errorf("telemetry directory %s belongs to uid %d, not to this process (uid %d): refusing to serve from it (remove it, or give another path)", dir, st.Uid, os.Geteuid())
		}
		if perm&0o022 != 0 {
			return fmt.Errorf("telemetry directory %s is writable by others (mode %#o): refusing to serve from it (chmod go-w %s)", dir, perm, dir)
		}
	} else if perm&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("telemetry directory %s is writable by everyone without the sticky bit (mode %#o): refusing to serve from it", dir, perm)
	}
	return nil
}

// clearStale removes a socket at path that no process answers on, and
// refuses anything else that is there.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("telemetry socket %s: %w", path, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("telemetry socket %s is a symbolic link: refusing to follow it (remove it, or give another path)", path)
	case fi.Mode()&fs.ModeSocket == 0:
		return fmt.Errorf("telemetry socket %s exists and is not a socket: refusing to replace it (give another path)", path)
	}
	if c, err := net.Dial("unixpacket", path); err == nil {
		c.Close()
		return fmt.Errorf("telemetry socket %s: %w (read it with nicctl stats --telemetry %s, or give another path)", path, ErrInUse, path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("telemetry socket %s: a stale socket is in the way: %w", path, err)
	}
	return nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Close stops serving, disconnects the clients and removes the socket.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.ln.Close() // removes the socket file
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			return // closed (Close), or the socket is gone
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		if len(s.conns) >= MaxClients {
			s.mu.Unlock()
			c.Write([]byte(fmt.Sprintf(`{"error":"%d clients already connected; try again later"}`, MaxClients)))
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *Server) serve(c *net.UnixConn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	if _, err := c.Write(s.info); err != nil {
		return
	}
	buf := make([]byte, maxCommand)
	for {
		n, err := c.Read(buf)
		if err != nil || n == 0 {
			return
		}
		if _, err := c.Write(s.answer(string(buf[:n]))); err != nil {
			return
		}
	}
}

// commands are the commands and what they answer, for "/".
var commands = []string{"/", "/info", "/ports", "/stats,PORT", "/rings,PORT"}

// answer runs one command.
func (s *Server) answer(cmd string) []byte {
	cmd = strings.TrimSpace(cmd)
	key, arg, _ := strings.Cut(cmd, ",")
	var v any
	var err error
	switch key {
	case "/":
		v = commands
	case "/info":
		v = json.RawMessage(s.info)
	case "/ports":
		v = s.portList()
	case "/stats", "/rings":
		var p driver.Port
		if p, err = s.find(arg); err == nil {
			if key == "/stats" {
				v = statsOf(p)
			} else {
				v, err = ringsOf(p)
			}
		}
	default:
		err = fmt.Errorf("unknown command %q (the commands: %s)", cmd, strings.Join(commands, " "))
	}
	out := map[string]any{key: v}
	if err != nil {
		out["error"] = err.Error()
	}
	b, merr := json.Marshal(out)
	if merr == nil && len(b) > MaxOutputLen {
		merr = fmt.Errorf("the answer is %d bytes, more than %d", len(b), MaxOutputLen)
	}
	if merr != nil {
		b, _ = json.Marshal(map[string]any{key: nil, "error": merr.Error()})
	}
	return b
}

func (s *Server) portList() []Port {
	out := []Port{}
	for i, p := range s.ports() {
		if p == nil {
			continue
		}
		in, l := p.Info(), p.Link()
		out = append(out, Port{Index: i, Name: in.Name, Driver: in.Driver, Device: in.Device, Backend: in.Backend,
			MAC: in.MAC.String(), RxQueues: in.RxQueues, TxQueues: in.TxQueues,
			Link: Link{Up: l.Up, SpeedMbps: l.SpeedMbps, FullDuplex: l.FullDuplex}})
	}
	return out
}

// find is the port a command names: by name, by name without its
// options, or by index.
func (s *Server) find(name string) (driver.Port, error) {
	if name == "" {
		return nil, errors.New("name a port: /stats,NAME or /stats,INDEX (/ports lists them)")
	}
	ports := s.ports()
	if i, err := strconv.Atoi(name); err == nil {
		if i >= 0 && i < len(ports) && ports[i] != nil {
			return ports[i], nil
		}
		return nil, fmt.Errorf("no port %d (/ports lists them)", i)
	}
	for _, p := range ports {
		if p != nil && SamePort(p.Info().Name, name) {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no port %q here (/ports lists them)", name)
}

// SamePort reports whether a port opened as spec is the one a user names
// as name: the same spec, or the same without its ?options.
func SamePort(spec, name string) bool {
	if spec == name {
		return true
	}
	base, _, _ := strings.Cut(spec, "?")
	return base == name
}

func statsOf(p driver.Port) *Stats {
	st := p.Stats()
	out := &Stats{Port: p.Info().Name, Rx: queueOf(st.Rx), Tx: queueOf(st.Tx), HW: st.HW,
		RxQueues: []Queue{}, TxQueues: []Queue{}}
	if out.HW == nil {
		out.HW = map[string]uint64{}
	}
	for _, q := range st.RxQueues {
		out.RxQueues = append(out.RxQueues, queueOf(q))
	}
	for _, q := range st.TxQueues {
		out.TxQueues = append(out.TxQueues, queueOf(q))
	}
	return out
}

func ringsOf(p driver.Port) ([]Ring, error) {
	li, ok := p.(driver.LiveInspector)
	if !ok {
		return nil, fmt.Errorf("the %s driver does not report its rings while they run", p.Info().Driver)
	}
	out := []Ring{}
	for _, r := range li.LiveRings() {
		out = append(out, ringOf(r))
	}
	return out, nil
}

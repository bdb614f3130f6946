package tap

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/tap/internal/tun"
)

// MaxBurst is the most frames one Down call reads.
const MaxBurst = 256

// Defaults.
const (
	DefaultBurst   = 32
	DefaultBuffers = 512
	DefaultMTU     = 1500
)

// frameOverhead is what a frame adds to its MTU: the Ethernet header and
// one VLAN tag (no FCS: neither the TAP nor the drivers' packets carry it).
const frameOverhead = ethHdrLen + vlanTagLen

// Config sets up a twin.
type Config struct {
	// Name is the TAP interface's name (at most 15 bytes); empty lets the
	// kernel pick (tap0, tap1, ...). An existing interface of that name is
	// refused, never taken over.
	Name string
	// MAC is the TAP's Ethernet address: the port's, so the kernel's ARP
	// replies and neighbour advertisements name the port. OpenPort sets it.
	MAC net.HardwareAddr
	// MTU of the TAP; default 1500 (OpenPort: the port's).
	MTU int
	// Rules choose the frames that go up; nil means DefaultRules(MAC).
	Rules *Rules
	// Burst is the most frames one Down call reads; default 32, at most
	// MaxBurst.
	Burst int
	// Pool holds the buffers Down reads kernel frames into: it must be
	// mapped for the TX port's DMA domain and its allocating side belongs
	// to the goroutine that calls Down. OpenPort makes one.
	Pool *pool.Pool
	// Buffers is the size of the pool OpenPort makes; default 512.
	Buffers int
	// LeaveDown leaves the interface administratively down (default: up).
	LeaveDown bool
	// Logger receives the twin's few log lines (open, close); nil means
	// slog.Default().
	Logger *slog.Logger
}

// Twin is a TAP interface paired with a port: the exception path.
type Twin struct {
	fd    int
	name  string
	mac   net.HardwareAddr
	mtu   int
	cls   *Classifier
	burst int
	pool  *pool.Pool
	log   *slog.Logger
	c     counters

	// Owned by Down's goroutine.
	spare *driver.Packet // allocated, read into without success: used next
	out   [MaxBurst]*driver.Packet

	// Set by OpenPort: the pool and memory the twin made and closes.
	region  *dma.Region
	ownPool bool
	closed  bool
}

// Open creates a TAP interface and configures it (name, MAC, MTU, up) with
// the TUN ioctls. It needs CAP_NET_ADMIN. cfg.Pool and cfg.MAC are
// required; OpenPort fills them from a port.
func Open(cfg Config) (*Twin, error) {
	t, err := newTwin(cfg)
	if err != nil {
		return nil, err
	}
	if err := CheckName(cfg.Name); err != nil {
		return nil, err
	}
	fd, err := unix.Open(tun.Device, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("tap %s: open %s: %w (%s)", orKernel(cfg.Name), tun.Device, err, hint(err))
	}
	t.fd = fd
	if err := t.create(cfg); err != nil {
		unix.Close(fd)
		return nil, err
	}
	t.log.Info("tap twin open", "name", t.name, "mac", t.mac.String(), "mtu", t.mtu, "burst", t.burst)
	return t, nil
}

// Attach runs the exception path over a file descriptor that is already a
// TAP queue (or anything that moves one frame per read and write, such as
// a SOCK_SEQPACKET socket): one handed over by a privileged process that
// created the interface, or a test's fake. It configures nothing and makes
// fd non-blocking; the twin owns fd once Attach succeeds (Close closes it),
// the caller keeps it when Attach fails.
func Attach(fd int, cfg Config) (*Twin, error) {
	t, err := newTwin(cfg)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("tap %s: descriptor %d: %w", orKernel(cfg.Name), fd, err)
	}
	t.fd, t.name = fd, cfg.Name
	return t, nil
}

// OpenPort opens the TAP twin of port p: MAC and MTU are the port's unless
// cfg sets them, and Down's buffers come from a pool of cfg.Buffers
// buffers the twin makes in the port's DMA domain. Close the twin after
// the port has stopped, so its buffers are back.
func OpenPort(p driver.Port, cfg Config) (*Twin, error) {
	info := p.Info()
	if cfg.MAC == nil {
		cfg.MAC = p.MAC()
	}
	if cfg.MTU == 0 {
		cfg.MTU = info.MTU
	}
	if cfg.Pool != nil {
		return Open(cfg)
	}
	if info.RxQueues == 0 || p.RxQueue(0).Pool() == nil || p.RxQueue(0).Pool().Region() == nil {
		return nil, fmt.Errorf("tap %s: port %s has no RX pool to learn its DMA domain from; give Config.Pool", orKernel(cfg.Name), info.Name)
	}
	if cfg.Buffers == 0 {
		cfg.Buffers = DefaultBuffers
	}
	if cfg.Buffers < 1 {
		return nil, fmt.Errorf("tap %s: Buffers %d must be positive", orKernel(cfg.Name), cfg.Buffers)
	}
	m := p.RxQueue(0).Pool().Region().Mapper()
	name := "tap-" + orKernel(cfg.Name) + "-down"
	r, err := dma.Alloc(m, cfg.Buffers*pool.DefaultBufSize, dma.Options{Attr: dma.Attr{Name: name}})
	if err != nil {
		return nil, fmt.Errorf("tap %s: buffers for port %s: %w", orKernel(cfg.Name), info.Name, err)
	}
	pl, err := pool.New(r, pool.Config{Name: name, Count: cfg.Buffers})
	if err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("tap %s: %w", orKernel(cfg.Name), err)
	}
	cfg.Pool = pl
	t, err := Open(cfg)
	if err != nil {
		_ = pl.Close(0)
		_ = r.Close()
		return nil, err
	}
	t.region, t.ownPool = r, true
	return t, nil
}

// newTwin checks cfg and builds the twin without a file.
func newTwin(cfg Config) (*Twin, error) {
	name := orKernel(cfg.Name)
	if len(cfg.MAC) != 6 || cfg.MAC[0]&1 != 0 {
		return nil, fmt.Errorf("tap %s: MAC %v is not a 6-byte unicast Ethernet address (give the port's)", name, cfg.MAC)
	}
	if cfg.Pool == nil {
		return nil, fmt.Errorf("tap %s: no Config.Pool for the frames coming down: give a pool mapped for the TX port, or use OpenPort", name)
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	room := cfg.Pool.BufSize() - cfg.Pool.Headroom()
	if cfg.MTU < 68 || cfg.MTU+frameOverhead >= room {
		return nil, fmt.Errorf("tap %s: MTU %d does not fit: frames of MTU+%d bytes must be shorter than the %d bytes a buffer of pool %s holds after its headroom (use an MTU from 68 to %d, or larger buffers)",
			name, cfg.MTU, frameOverhead, room, cfg.Pool.Name(), room-frameOverhead-1)
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	if cfg.Burst < 1 || cfg.Burst > MaxBurst {
		return nil, fmt.Errorf("tap %s: burst %d out of range: use 1 to %d", name, cfg.Burst, MaxBurst)
	}
	r := DefaultRules(cfg.MAC)
	if cfg.Rules != nil {
		r = *cfg.Rules
	}
	cls, err := NewClassifier(r)
	if err != nil {
		return nil, fmt.Errorf("tap %s: %w", name, err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Twin{fd: -1, mac: append(net.HardwareAddr(nil), cfg.MAC...), mtu: cfg.MTU, cls: cls,
		burst: cfg.Burst, pool: cfg.Pool, log: log}, nil
}

// create names the TAP (TUNSETIFF) and sets its address, MTU and state.
func (t *Twin) create(cfg Config) error {
	ifr, err := unix.NewIfreq(cfg.Name)
	if err != nil {
		return fmt.Errorf("tap %s: %w", cfg.Name, err)
	}
	// IFF_TUN_EXCL: an interface of that name, TAP or not, is refused
	// rather than joined.
	ifr.SetUint16(tun.FlagTAP | tun.FlagNoPI | tun.FlagExcl)
	if err := unix.IoctlIfreq(t.fd, tun.SetIff, ifr); err != nil {
		if errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("tap %s: an interface of that name exists already: give another name, or delete it (ip link del %s) if it is a leftover", cfg.Name, cfg.Name)
		}
		return fmt.Errorf("tap %s: TUNSETIFF: %w (%s)", orKernel(cfg.Name), err, hint(err))
	}
	t.name = ifr.Name()
	sock, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("tap %s: socket for interface ioctls: %w", t.name, err)
	}
	defer unix.Close(sock)
	hw := tun.NewIfreqHwaddr(t.name, [6]byte(t.mac))
	if err := tun.Ioctl(sock, tun.SetHwaddr, &hw); err != nil {
		return fmt.Errorf("tap %s: set MAC %s (SIOCSIFHWADDR): %w", t.name, t.mac, err)
	}
	ifr, _ = unix.NewIfreq(t.name)
	ifr.SetUint32(uint32(t.mtu))
	if err := unix.IoctlIfreq(sock, tun.SetMTU, ifr); err != nil {
		return fmt.Errorf("tap %s: set MTU %d (SIOCSIFMTU): %w", t.name, t.mtu, err)
	}
	if cfg.LeaveDown {
		return nil
	}
	ifr, _ = unix.NewIfreq(t.name)
	if err := unix.IoctlIfreq(sock, tun.GetFlags, ifr); err != nil {
		return fmt.Errorf("tap %s: read flags (SIOCGIFFLAGS): %w", t.name, err)
	}
	ifr.SetUint16(ifr.Uint16() | tun.IffUp)
	if err := unix.IoctlIfreq(sock, tun.SetFlags, ifr); err != nil {
		return fmt.Errorf("tap %s: set up (SIOCSIFFLAGS): %w", t.name, err)
	}
	return nil
}

// CheckName refuses an interface name the kernel would refuse, saying why.
func CheckName(n string) error {
	switch {
	case len(n) >= unix.IFNAMSIZ:
		return fmt.Errorf("tap %q: name is %d bytes; interface names have at most %d", n, len(n), unix.IFNAMSIZ-1)
	case n == "." || n == ".." || strings.ContainsAny(n, "/: \t\n"):
		return fmt.Errorf("tap %q: not a valid interface name (no '/', ':' or white space; not . or ..)", n)
	}
	return nil
}

func orKernel(name string) string {
	if name == "" {
		return "(kernel-named)"
	}
	return name
}

// hint says what to do about an error from the TUN device.
func hint(err error) string {
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return "creating a TAP interface needs CAP_NET_ADMIN: run as root or grant the capability"
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENODEV):
		return "the kernel has no TUN/TAP driver here: load it with modprobe tun"
	}
	return "see dmesg"
}

// Name is the TAP interface's name.
func (t *Twin) Name() string { return t.name }

// MAC is the TAP interface's Ethernet address.
func (t *Twin) MAC() net.HardwareAddr { return t.mac }

// MTU is the TAP interface's MTU.
func (t *Twin) MTU() int { return t.mtu }

// Classifier is the twin's compiled rules.
func (t *Twin) Classifier() *Classifier { return t.cls }

// Pool is the pool Down reads kernel frames into.
func (t *Twin) Pool() *pool.Pool { return t.pool }

// Stats reads the counters; any goroutine may call it.
func (t *Twin) Stats() Stats { return t.c.snapshot() }

// Close closes the TAP (the interface disappears with it) and, for a twin
// OpenPort made, its pool and memory: call it after the port has stopped,
// when Down's buffers have come back from the TX ring. It waits up to
// timeout for them and reports those still out as a *pool.LeakError.
// No Up or Down call may run during or after Close.
func (t *Twin) Close(timeout time.Duration) error {
	if t.closed {
		return nil
	}
	t.closed = true
	var errs []error
	if t.spare != nil {
		t.pool.Recycle(t.spare)
		t.spare = nil
	}
	if t.fd >= 0 {
		if err := unix.Close(t.fd); err != nil {
			errs = append(errs, fmt.Errorf("tap %s: close: %w", t.name, err))
		}
		t.fd = -1
	}
	if t.ownPool {
		if err := t.pool.Close(timeout); err != nil {
			errs = append(errs, fmt.Errorf("tap %s: %w", t.name, err))
		} else if err := t.region.Close(); err != nil {
			errs = append(errs, fmt.Errorf("tap %s: %w", t.name, err))
		}
	}
	s := t.Stats()
	t.log.Info("tap twin closed", "name", t.name, "up", s.UpFrames, "up_copies", s.UpCopies, "up_dropped", s.UpDrops(),
		"down", s.DownFrames, "down_dropped", s.DownDrops())
	return errors.Join(errs...)
}
